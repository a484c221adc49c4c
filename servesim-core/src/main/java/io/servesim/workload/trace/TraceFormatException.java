package io.servesim.workload.trace;

/** A malformed trace row or file, with {@code file:line}, the field and what was expected. */
public final class TraceFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** Creates an error; {@code message} already names the location. */
    public TraceFormatException(String message) {
        super(message);
    }

    /** An error about one field of the row at {@code location}. */
    public static TraceFormatException field(String location, String field, String problem) {
        return new TraceFormatException(location + ": " + field + ": " + problem);
    }
}
