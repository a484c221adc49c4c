package io.servesim.metrics;

/** How a request left the system, with the reason written to requests.csv. */
public enum RequestStatus {
    /** Generated all requested output tokens. */
    COMPLETED("completed", "stop"),
    /** Stopped early because prompt + output reached max_model_len (vLLM FINISHED_LENGTH_CAPPED). */
    LENGTH_CAPPED("completed", "max_model_len"),
    /** Rejected at arrival: the prompt leaves no room for an output token within max_model_len. */
    REJECTED_PROMPT_TOO_LONG("rejected", "prompt_too_long"),
    /** Rejected because no worker was left to serve it (every worker failed). */
    REJECTED_NO_WORKER("rejected", "no_worker"),
    /** Still in the system when the run's time limit was reached. */
    INCOMPLETE("incomplete", "time_limit"),
    /**
     * A later turn of a trace session that was never sent: an earlier turn of its session was rejected (or found
     * no worker), so the session ended there; recorded when the session ended or when the row was read, whichever
     * is later.
     */
    ABANDONED("abandoned", "session_ended"),
    /**
     * Its client gave up before the last token ({@code workload.client_timeout_s}): recorded at the client's deadline
     * with what it had received by then; the engine aborted it at its next step.
     */
    TIMED_OUT("timed_out", "client_timeout");

    private final String status;
    private final String reason;

    RequestStatus(String status, String reason) {
        this.status = status;
        this.reason = reason;
    }

    /** {@code completed}, {@code rejected}, {@code incomplete}, {@code abandoned} or {@code timed_out}. */
    public String status() {
        return status;
    }

    /** The finish reason. */
    public String reason() {
        return reason;
    }

    /** Whether the request produced output (counts toward latency metrics). */
    public boolean completed() {
        return status.equals("completed");
    }

    /** The status with this status and finish-reason text (as written to requests.csv). */
    public static RequestStatus of(String status, String reason) {
        for (RequestStatus s : values()) {
            if (s.status.equals(status) && s.reason.equals(reason)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown status '" + status + "' with finish reason '" + reason + "'");
    }
}
