package io.servesim.cli;

/** Whether a person is watching: the console is an interactive terminal (JDK 22+ always returns a console). */
final class Terminal {
    private Terminal() {}

    /** True when stdin/stdout are a terminal: {@code Console.isTerminal()} on JDK 22+, a console's presence before. */
    @SuppressWarnings("SystemConsoleNull") // checked on purpose: on JDK 21 null is the only signal
    static boolean interactive() {
        java.io.Console c = System.console();
        if (c == null) {
            return false;
        }
        try {
            return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(c); // JDK 22+
        } catch (NoSuchMethodException e) {
            return true; // JDK 21: a console exists only for a terminal
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }
}
