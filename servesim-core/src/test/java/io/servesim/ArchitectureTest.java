package io.servesim;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.servesim.config.ArchCycleFixture;
import io.servesim.sim.ArchRuleViolationFixture;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package layering of servesim-core, checked on its compiled main classes with ArchUnit (docs/architecture.md,
 * "Packages"). Every rule is also evaluated against a deliberately wrong class set ({@link ArchRuleViolationFixture},
 * {@link ArchCycleFixture}) and must fail there, so a rule that could never fail (a misspelt package, an empty
 * selection) is caught.
 */
class ArchitectureTest {
    /** The simulation core: what a replay needs. */
    static final String[] CORE = {
        "io.servesim.sim..",
        "io.servesim.workload..",
        "io.servesim.kv..",
        "io.servesim.transfer..",
        "io.servesim.timing..",
        "io.servesim.engine..",
        "io.servesim.router..",
        "io.servesim.metrics..",
        "io.servesim.run..",
        "io.servesim.config.."
    };

    /** What is built on the core: front ends, charts, Spark, sweeps, report files, validation. */
    static final String[] OUTER = {
        "io.servesim.cli..",
        "io.servesim.html..",
        "io.servesim.spark..",
        "io.servesim.sweep..",
        "io.servesim.report..",
        "io.servesim.validate.."
    };

    /** (1) The core never reaches up into the layers built on it. */
    static final ArchRule CORE_DOES_NOT_DEPEND_ON_OUTER_LAYERS = noClasses()
            .that()
            .resideInAnyPackage(CORE)
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(OUTER)
            .because("sim, workload, kv, transfer, timing, engine, router, metrics, run and config are the"
                    + " simulation core; cli, html, spark, sweep, report and validate are built on it");

    /** (2) The event kernel is the base layer. */
    static final ArchRule SIM_DEPENDS_ON_NOTHING_ELSE_IN_SERVESIM = noClasses()
            .that()
            .resideInAPackage("io.servesim.sim..")
            .should()
            .dependOnClassesThat(resideInAPackage("io.servesim..").and(resideOutsideOfPackage("io.servesim.sim..")))
            .because("io.servesim.sim (event queue, clock, random streams) is the base every package builds on");

    /** (3) No cycles among the top-level packages (a subpackage such as workload.trace counts as its parent). */
    static final ArchRule NO_PACKAGE_CYCLES =
            slices().matching("io.servesim.(*)..").should().beFreeOfCycles();

    /**
     * (4) No network from a replay: nothing in servesim uses sockets, URLs or HTTP clients (a live-server module,
     * when there is one, lives in {@code io.servesim.live}; the Spark engine is in its own module, not on this
     * classpath).
     */
    static final ArchRule NO_NETWORK = noClasses()
            .that()
            .resideInAPackage("io.servesim..")
            .and()
            .resideOutsideOfPackage("io.servesim.live..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("java.net..", "javax.net..", "java.nio.channels..")
            .because("a replay is a pure function of its config: it never talks to the network");

    static final List<ArchRule> RULES = List.of(
            CORE_DOES_NOT_DEPEND_ON_OUTER_LAYERS,
            SIM_DEPENDS_ON_NOTHING_ELSE_IN_SERVESIM,
            NO_PACKAGE_CYCLES,
            NO_NETWORK);

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.servesim");
    }

    @Test
    void theImport_isServesimCoresMainClasses_withoutTests() {
        assertThat(main.contain("io.servesim.sim.EventQueue")).isTrue();
        assertThat(main.contain("io.servesim.run.Simulation")).isTrue();
        assertThat(main.contain("io.servesim.sweep.Sweeps")).isTrue();
        assertThat(main.contain(ArchRuleViolationFixture.class)).isFalse();
        assertThat(main.contain(ArchitectureTest.class)).isFalse();
        assertThat(main.stream().map(JavaClass::getPackageName).distinct().count())
                .isGreaterThanOrEqualTo(14);
    }

    @Test
    void coreDoesNotDependOnOuterLayers() {
        CORE_DOES_NOT_DEPEND_ON_OUTER_LAYERS.check(main);
    }

    @Test
    void simDependsOnNothingElseInServesim() {
        SIM_DEPENDS_ON_NOTHING_ELSE_IN_SERVESIM.check(main);
    }

    @Test
    void noPackageCycles() {
        NO_PACKAGE_CYCLES.check(main);
    }

    @Test
    void noNetwork() {
        NO_NETWORK.check(main);
    }

    // ---- self-check: each rule fails on classes that break it --------------------------------------------------

    private static final JavaClasses BROKEN =
            new ClassFileImporter().importClasses(ArchRuleViolationFixture.class, ArchCycleFixture.class);

    private static String violations(ArchRule rule) {
        EvaluationResult r = rule.evaluate(BROKEN);
        assertThat(r.hasViolation())
                .as("rule must fail on the fixture: %s", rule.getDescription())
                .isTrue();
        return String.join("\n", r.getFailureReport().getDetails());
    }

    @Test
    void selfCheck_coreRule_reportsSimDependingOnReport() {
        assertThat(violations(CORE_DOES_NOT_DEPEND_ON_OUTER_LAYERS))
                .contains(ArchRuleViolationFixture.class.getName())
                .contains("io.servesim.report.Summary")
                .doesNotContain("io.servesim.config.SimConfig"); // config is core: allowed
    }

    @Test
    void selfCheck_simRule_reportsSimDependingOnConfig() {
        assertThat(violations(SIM_DEPENDS_ON_NOTHING_ELSE_IN_SERVESIM))
                .contains("io.servesim.config.SimConfig")
                .contains("io.servesim.report.Summary");
    }

    @Test
    void selfCheck_cycleRule_reportsTheSimConfigCycle() {
        assertThat(violations(NO_PACKAGE_CYCLES))
                .contains(ArchRuleViolationFixture.class.getName())
                .contains(ArchCycleFixture.class.getName());
    }

    @Test
    void selfCheck_networkRule_reportsTheSocket() {
        assertThat(violations(NO_NETWORK)).contains("java.net.Socket");
    }

    @Test
    void selfCheck_everyRuleHasOne() {
        for (ArchRule rule : RULES) {
            assertThat(rule.evaluate(BROKEN).hasViolation())
                    .as(rule.getDescription())
                    .isTrue();
        }
    }
}
