package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Mutated configs and trace rows (every format) never crash servesim, and every refusal names its key path or
 * {@code file:line} ({@link Fuzz}); {@code servesim bench fuzz --tries 100000} runs the same targets at scale.
 */
class FuzzProperties {
    private static Path scratch;

    @BeforeContainer
    static void scratch() throws IOException {
        scratch = Files.createTempDirectory("fuzz-properties");
    }

    @AfterContainer
    static void clean() throws IOException {
        try (var files = Files.list(scratch)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(scratch);
    }

    @Provide
    Arbitrary<String> targets() {
        return Arbitraries.of(Fuzz.TARGETS);
    }

    @Property(tries = 6000) // about 1,000 per target
    void aMutatedInput_isAcceptedOrRefusedClearly_neverACrash(@ForAll("targets") String target, @ForAll long seed) {
        Fuzz.Outcome r = Fuzz.run(target, seed, scratch);
        assertThat(r.kind()).as("%s seed %d: %s", target, seed, r.detail()).isIn(Fuzz.Kind.OK, Fuzz.Kind.CLEAR_ERROR);
    }

    @Property(tries = 50)
    void theSameSeed_givesTheSameOutcome(@ForAll("targets") String target, @ForAll long seed) {
        assertThat(Fuzz.run(target, seed, scratch)).isEqualTo(Fuzz.run(target, seed, scratch));
    }
}
