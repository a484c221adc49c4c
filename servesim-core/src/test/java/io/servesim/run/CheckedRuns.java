package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestRecord;

/** Runs a config with the engine invariants watching every step, and looks rows up: the rule tests' shared harness. */
public final class CheckedRuns {
    private CheckedRuns() {}

    /** Runs {@code c}, failing the test on any invariant violation. */
    public static RunResult run(SimConfig c) {
        Simulation sim = new Simulation(c);
        Invariants checks = new Invariants(c).watch(sim);
        RunResult r = sim.run();
        checks.atEnd(sim, r, c);
        assertThat(checks.violations()).isEmpty();
        return r;
    }

    /** The row of request {@code id}. */
    public static RequestRecord row(RunResult r, int id) {
        RequestLog log = r.log();
        return log.get(log.indicesByRequestId()[id]);
    }
}
