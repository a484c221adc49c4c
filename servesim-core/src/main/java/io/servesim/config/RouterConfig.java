package io.servesim.config;

/** Which router places requests on (worker, rank); the name is checked against the router registry. */
public record RouterConfig(String policy) {
    /** Validates presence. */
    public RouterConfig {
        Check.present("policy", policy);
    }
}
