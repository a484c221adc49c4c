package io.servesim.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ClientFrontend;
import io.servesim.config.ConfigLoader;
import io.servesim.config.RooflineConfig;
import io.servesim.config.SimConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The corpus fit on the two committed small runs: it improves on a poor start, and its profile loads back. */
class CorpusFitTest {
    private static final Path CORPUS = Path.of("src/test/resources/corpus");

    @TempDir
    Path tmp;

    private static List<CorpusFit.Case> cases() {
        List<CorpusFit.Case> out = new ArrayList<>();
        for (RunFolder r : RunFolder.corpus(CORPUS)) {
            out.add(CorpusFit.caseOf(r, null, List.of()));
        }
        return out;
    }

    private static RooflineConfig defaults() {
        return ConfigLoader.fromYaml("", "t", List.of()).timing().roofline();
    }

    /** The defaults at 0.4 of the memory efficiency: every decode step about twice as slow as it should be. */
    private static CorpusFit.Profile poorStart(RooflineConfig defaults, double clientOverheadMs) {
        // the frontend's time per request inside its range, not at a bound (where its search coordinate saturates)
        return new CorpusFit.Profile(defaults.with("mbu", 0.4).with("kv_mbu", 0.4), clientOverheadMs, 20);
    }

    private static double cost(CorpusFit fit, CorpusFit.Profile p) {
        double c = 0;
        for (CorpusFit.Score s : fit.score(p, x -> true)) {
            for (String m : List.of("ttft_ms", "tpot_ms", "e2e_ms")) {
                double e = Math.log1p(s.meanErrorPct(m) / 100);
                c += e * e;
            }
        }
        return c;
    }

    @Test
    void fit_improvesOnAPoorStart_andStaysInsideEachCoefficientsPhysicalRange() {
        List<CorpusFit.Case> cases = cases();
        assertThat(cases).extracting(CorpusFit.Case::clientSide).containsExactly(true, false);
        CorpusFit.Profile poor = poorStart(defaults(), 0);
        CorpusFit fit = new CorpusFit(cases, 2, 3);
        CorpusFit.Profile fitted = fit.fit(poor, c -> true);
        assertThat(cost(fit, fitted)).isLessThan(cost(fit, poor));
        for (String k : CorpusFit.FITTED) {
            double[] b = CorpusFit.bounds(k);
            assertThat(fitted.get(k)).as(k).isBetween(b[0], b[1]);
        }
        assertThat(fit.simulations()).isPositive();
    }

    @Test
    void priorWeight_holdsEveryCoefficientAtItsPrior_whenItOutweighsTheRuns() {
        List<CorpusFit.Case> cases = cases();
        RooflineConfig defaults = defaults();
        CorpusFit.Profile poor = poorStart(defaults, 5);
        CorpusFit.Profile free = new CorpusFit(cases, 2, 3).priorWeight(0).fit(poor, c -> true);
        CorpusFit.Profile held = new CorpusFit(cases, 2, 3).priorWeight(1e4).fit(poor, c -> true);
        // the runs alone move mbu off the poor start by more than 5 % in two iterations; the prior holds it within 1 %
        assertThat(free.get("mbu")).as("the runs alone move mbu").isGreaterThan(0.42);
        for (String k : CorpusFit.FITTED) {
            assertThat(held.get(k)).as(k).isCloseTo(poor.get(k), org.assertj.core.data.Percentage.withPercentage(1));
        }
        assertThatThrownBy(() -> new CorpusFit(cases, 1, 1).priorWeight(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prior weight");
    }

    @Test
    void severalStarts_keepTheFitWithTheLowerTrainingCost_whateverTheirOrder() {
        List<CorpusFit.Case> cases = cases();
        RooflineConfig defaults = defaults();
        CorpusFit.Profile poor = poorStart(defaults, 5);
        CorpusFit.Profile good = new CorpusFit.Profile(defaults, 5);
        CorpusFit fit = new CorpusFit(cases, 2, 2);
        CorpusFit.Profile fromPoor = fit.fit(poor, c -> true);
        CorpusFit.Profile fromGood = fit.fit(good, c -> true);
        assertThat(fromPoor).isNotEqualTo(fromGood); // two iterations do not bring the poor start to the good one
        CorpusFit.Profile both = fit.fit(List.of(poor, good), c -> true);
        assertThat(fit.fit(List.of(good, poor), c -> true)).isEqualTo(both);
        assertThat(both).isIn(fromPoor, fromGood);
        // the kept fit is the one whose runs' errors are smaller (the prior term is small beside them)
        assertThat(both).isEqualTo(cost(fit, fromPoor) < cost(fit, fromGood) ? fromPoor : fromGood);
        // the second start is the measured kernels nearly as measured: the efficiencies at the GEMMs' in-layer 0.95
        // and 1 us per layer beyond them; the all-reduce and the frontend as the prior has them
        List<CorpusFit.Profile> starts = CorpusFit.starts(defaults);
        assertThat(starts.get(0)).isEqualTo(CorpusFit.prior(defaults));
        for (String k : List.of("mfu", "mbu", "kv_mbu", "moe_efficiency")) {
            assertThat(starts.get(1).get(k)).as(k).isEqualTo(0.95);
        }
        assertThat(starts.get(1).get("layer_overhead_us")).isEqualTo(1.0);
        assertThat(starts.get(1).get("collective_efficiency"))
                .isEqualTo(starts.get(0).get("collective_efficiency"));
        assertThat(starts.get(1).clientOverheadMs()).isEqualTo(starts.get(0).clientOverheadMs());
    }

    @Test
    void hold_keepsAHeldCoefficientAtItsGivenValue_inEveryStartAndFit_andFitsTheRest() throws IOException {
        List<CorpusFit.Case> cases = cases();
        RooflineConfig given = defaults().with("mfu", 0.95);
        List<CorpusFit.Profile> starts =
                CorpusFit.starts(given, new ClientFrontend(6.5, 40), List.of("mfu", CorpusFit.CLIENT_OVERHEAD));
        // the starts carry the given values (the plain starts put mfu at 0.7 and 0.95, the frontend at 5 ms); they
        // differ in more than mfu, so both are left, and two starts that became equal would be kept once
        assertThat(starts).hasSize(2);
        assertThat(starts).extracting(p -> p.get("mfu")).containsExactly(0.95, 0.95);
        assertThat(starts).extracting(CorpusFit.Profile::clientOverheadMs).containsExactly(6.5, 6.5);
        assertThat(starts.get(0).get("mbu")).isEqualTo(CorpusFit.prior(given).get("mbu"));
        assertThat(CorpusFit.starts(
                        given,
                        new ClientFrontend(6.5, 40),
                        List.of("mfu", "mbu", "kv_mbu", "moe_efficiency", "layer_overhead_us")))
                .hasSize(1);
        assertThat(CorpusFit.starts(given, new ClientFrontend(6.5, 40), List.of(CorpusFit.CLIENT_OVERHEAD)))
                .as("holding the frontend alone keeps both mfu starts")
                .extracting(p -> p.get("mfu"))
                .containsExactly(0.7, 0.95);
        CorpusFit fit = new CorpusFit(cases, 2, 2).hold(List.of("mfu", CorpusFit.CLIENT_OVERHEAD));
        assertThat(fit.fitted())
                .doesNotContain("mfu", CorpusFit.CLIENT_OVERHEAD)
                .contains("mbu", "kv_mbu");
        CorpusFit.Profile p = fit.fit(starts, c -> true);
        assertThat(p.get("mfu")).isEqualTo(0.95);
        assertThat(p.clientOverheadMs()).isEqualTo(6.5);
        assertThat(p.get("mbu"))
                .as("the rest is fitted")
                .isNotEqualTo(starts.get(0).get("mbu"));
        for (CorpusFit.Fold f : fit.leaveOneOut("run", starts, CorpusFit.Case::name)) {
            assertThat(f.profile().get("mfu")).as(f.heldOut()).isEqualTo(0.95);
        }
        String yaml = CorpusFit.profileYaml(p, fit.fitted(), "corpus", 0, List.of(), List.of());
        assertThat(yaml)
                .contains("  fitted: " + fit.fitted())
                .contains("  held:")
                .contains("    mfu: 0.95");
        assertThatThrownBy(() -> new CorpusFit(cases, 1, 1).hold(List.of("step_overhead_us")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot hold 'step_overhead_us'");
        assertThatThrownBy(() -> new CorpusFit(cases, 1, 1).hold(CorpusFit.FITTED))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nothing to fit");
    }

    @Test
    void clientOverhead_addsToTtftAndE2eOfClientSideRunsOnly() {
        List<CorpusFit.Case> cases = cases();
        RooflineConfig r = ConfigLoader.fromYaml("", "t", List.of()).timing().roofline();
        CorpusFit fit = new CorpusFit(cases, 1, 1);
        Validation none = fit.validation(cases.get(0), new CorpusFit.Profile(r, 0), false);
        Validation five = fit.validation(cases.get(0), new CorpusFit.Profile(r, 5), false);
        for (String m : List.of("ttft_ms", "e2e_ms")) {
            assertThat(Validation.Metric.value(five.metrics().get(m).simulated(), "mean")
                            - Validation.Metric.value(none.metrics().get(m).simulated(), "mean"))
                    .isCloseTo(5.0, org.assertj.core.data.Offset.offset(1e-9));
        }
        assertThat(five.metrics().get("tpot_ms").simulated())
                .isEqualTo(none.metrics().get("tpot_ms").simulated()); // a constant shift leaves TPOT alone
        Validation engineSide = fit.validation(cases.get(1), new CorpusFit.Profile(r, 5), false);
        Validation engineSide0 = fit.validation(cases.get(1), new CorpusFit.Profile(r, 0), false);
        assertThat(engineSide.metrics().get("ttft_ms").simulated())
                .isEqualTo(engineSide0.metrics().get("ttft_ms").simulated());
    }

    @Test
    void profile_loadsBackThroughTimingCalibration_withItsFrontendTerm() throws IOException {
        RooflineConfig r = ConfigLoader.fromYaml("", "t", List.of())
                .timing()
                .roofline()
                .with("mbu", 0.77)
                .with("layer_overhead_us", 12.5)
                .with("kv_mbu", 0.61);
        CorpusFit.Profile p = new CorpusFit.Profile(r, 4.25, 35.5);
        Path file = tmp.resolve("profile.yaml");
        Files.writeString(file, CorpusFit.profileYaml(p, "corpus", 0.05, List.of(), List.of()));
        SimConfig c = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "timing.calibration=" + file));
        RooflineConfig loaded = io.servesim.timing.Deployment.resolve(c).roofline();
        for (String k : RooflineConfig.KEYS) {
            assertThat(loaded.get(k)).as(k).isCloseTo(r.get(k), org.assertj.core.data.Percentage.withPercentage(1e-4));
        }
        assertThat(CorpusFit.clientOverheadMs(c)).isEqualTo(4.25);
        assertThat(CorpusFit.clientFrontend(c)).isEqualTo(new ClientFrontend(4.25, 35.5));
        SimConfig noProfile = ConfigLoader.fromYaml("", "t", List.of());
        assertThat(CorpusFit.clientOverheadMs(noProfile)).isEqualTo(CorpusFit.DEFAULT_CLIENT_OVERHEAD_MS);
        assertThat(CorpusFit.clientFrontend(noProfile))
                .isEqualTo(new ClientFrontend(
                        CorpusFit.DEFAULT_CLIENT_OVERHEAD_MS, CorpusFit.DEFAULT_CLIENT_PER_REQUEST_US));
        Path negative = tmp.resolve("negative.yaml");
        Files.writeString(negative, "frontend:\n  client_per_request_us: -3\n");
        assertThatThrownBy(() -> CorpusFit.clientFrontend(
                        ConfigLoader.fromYaml("", "t", List.of("timing.calibration=" + negative))))
                .hasMessageContaining("frontend.client_per_request_us: expected a number >= 0");
        Path misspelt = tmp.resolve("misspelt.yaml");
        Files.writeString(misspelt, "frontend:\n  client_per_requests_us: 50\n");
        assertThatThrownBy(() -> CorpusFit.clientFrontend(
                        ConfigLoader.fromYaml("", "t", List.of("timing.calibration=" + misspelt))))
                .hasMessageContaining("frontend.client_per_requests_us: unknown key (allowed: client_overhead_ms, "
                        + "client_per_request_us)");
    }
}
