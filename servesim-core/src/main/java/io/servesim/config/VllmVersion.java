package io.servesim.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A vLLM release as far as servesim's behaviour depends on it: its major and minor number (0.19.0, v0.19.0rc1 and
 * 0.19.1+fork are all 0.19).
 *
 * @param major the major number
 * @param minor the minor number
 */
public record VllmVersion(int major, int minor) implements Comparable<VllmVersion> {
    /** Major and minor, then anything after a dot, plus, hyphen or letter (0.12.0, v0.19.0rc1, 0.15.1+inference). */
    private static final Pattern FORM = Pattern.compile("v?(\\d{1,4})\\.(\\d{1,4})(?:[.+\\-a-z].*)?");

    /** The version a string names, or null when it does not have that form. */
    public static VllmVersion find(String text) {
        Matcher m = FORM.matcher(text);
        return m.matches() ? new VllmVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))) : null;
    }

    /**
     * The version a config value names (null stays null).
     *
     * @throws ConfigException naming {@code field} when the value is not a vLLM version
     */
    public static VllmVersion parse(String text, String field) {
        if (text == null) {
            return null;
        }
        VllmVersion v = find(text);
        if (v == null) {
            throw new ConfigException(field, "expected a vLLM version such as \"0.19.0\", got \"" + text + "\"");
        }
        return v;
    }

    @Override
    public int compareTo(VllmVersion o) {
        return major != o.major ? Integer.compare(major, o.major) : Integer.compare(minor, o.minor);
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
