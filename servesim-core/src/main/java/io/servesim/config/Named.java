package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.ArrayList;
import java.util.List;

/**
 * A named choice of a config key: an enum constant with the exact name used in YAML and a one-line description.
 *
 * <p>Every closed set of names in a config is an enum implementing this interface, so the names live in one place:
 * binding looks them up (each enum has a {@code @JsonCreator of(String)} calling {@link #parse}), serialisation
 * writes {@link #configName()} back (the recorded config is byte-identical to the string form), and unknown names
 * fail listing the known ones in declaration order.
 *
 * <p>Strategy families ({@link RouterPolicy}, {@link TimingType}, {@link TraceFormat}, {@link WorkloadType},
 * {@link EngineKind}) are such enums that also declare capabilities; each is built by an exhaustive {@code switch}
 * in its own package's registry class (e.g. {@code io.servesim.router.Routers}), so a new constant does not compile
 * until it has a factory.
 */
public interface Named {
    /** The name in YAML and in every written config. */
    @JsonValue
    String configName();

    /** One line saying what the choice does. */
    String description();

    /** The names of {@code type}'s constants in declaration order. */
    static <E extends Enum<E> & Named> List<String> names(Class<E> type) {
        List<String> names = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            names.add(e.configName());
        }
        return List.copyOf(names);
    }

    /** The constant of {@code type} named {@code name}, or null. */
    static <E extends Enum<E> & Named> E find(Class<E> type, String name) {
        for (E e : type.getEnumConstants()) {
            if (e.configName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    /**
     * The constant named {@code name}; otherwise a {@link ConfigException} (its path filled in by the loader):
     * {@code unknown value 'x' (expected one of: a, b)}.
     */
    static <E extends Enum<E> & Named> E parse(Class<E> type, String name) {
        E e = find(type, name);
        if (e == null) {
            throw new ConfigException(
                    "", "unknown value '" + name + "' (expected one of: " + String.join(", ", names(type)) + ")");
        }
        return e;
    }

    /**
     * The constant named {@code name}; otherwise a {@link ConfigException} saying what kind of thing is unknown:
     * {@code unknown router 'x' (known: a, b)}.
     */
    static <E extends Enum<E> & Named> E parse(Class<E> type, String name, String what) {
        E e = find(type, name);
        if (e == null) {
            throw new ConfigException(
                    "", "unknown " + what + " '" + name + "' (known: " + String.join(", ", names(type)) + ")");
        }
        return e;
    }
}
