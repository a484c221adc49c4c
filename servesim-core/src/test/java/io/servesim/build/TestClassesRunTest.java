package io.servesim.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every test class of every module runs in {@code ./check}: a source file under {@code src/test/java} that declares
 * a JUnit {@code @Test} or a jqwik {@code @Property}/{@code @Example} must be named so that the Surefire includes in
 * the parent {@code pom.xml} pick it up (a class named otherwise would compile and never run).
 */
class TestClassesRunTest {
    /** The parent pom's Surefire includes, as class-name patterns. */
    static final Pattern RUN_BY_SUREFIRE = Pattern.compile("Test.*|.*Test|.*Tests|.*TestCase|.*Properties");

    private static final Pattern TEST_ANNOTATION =
            Pattern.compile("^\\s*@(Test|Property|Example|ParameterizedTest|RepeatedTest)\\b", Pattern.MULTILINE);

    static Path root() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("servesim-core")) ? here : here.getParent();
    }

    @Test
    void everyClassWithTests_isNamedSoSurefireRunsIt() throws IOException {
        List<Path> testClasses = new ArrayList<>();
        List<String> notRun = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root())) {
            for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("servesim-"))
                    .sorted()
                    .toList()) {
                Path tests = module.resolve("src/test/java");
                if (!Files.isDirectory(tests)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(tests)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java"))
                            .sorted()
                            .toList()) {
                        if (TEST_ANNOTATION.matcher(Files.readString(f)).find()) {
                            testClasses.add(f);
                            String name = f.getFileName().toString().replace(".java", "");
                            if (!RUN_BY_SUREFIRE.matcher(name).matches()) {
                                notRun.add(root().relativize(f).toString());
                            }
                        }
                    }
                }
            }
        }
        assertThat(testClasses).as("test classes found").hasSizeGreaterThan(30);
        assertThat(notRun)
                .as("test classes Surefire would not run (rename them to *Test, or add an include to pom.xml)")
                .isEmpty();
    }

    @Test
    void theNamingRule_acceptsSurefirePatterns_andRejectsOthers() {
        assertThat(RUN_BY_SUREFIRE.matcher("EngineInvariantProperties").matches())
                .isTrue();
        assertThat(RUN_BY_SUREFIRE.matcher("RouterTest").matches()).isTrue();
        assertThat(RUN_BY_SUREFIRE.matcher("TestRouter").matches()).isTrue();
        assertThat(RUN_BY_SUREFIRE.matcher("RouterChecks").matches()).isFalse();
        assertThat(RUN_BY_SUREFIRE.matcher("RouterSpec").matches()).isFalse();
    }
}
