package io.servesim.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs name only code that exists. In {@code docs/*.md} and {@code README.md}, every code span that reads as a
 * Java reference must resolve:
 *
 * <ul>
 *   <li>{@code Type}, {@code pkg.Type}: a type declared in a {@code .java} file in a servesim module's {@code src}
 *       (main, or test for test classes the docs cite; a {@code pkg.} prefix must match the file's directories), a
 *       JDK or fastutil type, or a name the code reads as a string literal (a trace column, a Hugging Face
 *       architecture);
 *   <li>{@code Type.member} or {@code Type.method(...)}: the type resolves and the member name occurs in its source
 *       (for a JDK or library type: it has such a method or field);
 *   <li>{@code method()}: some main source declares a method of that name (a record's accessor is not enough: a
 *       bare {@code arm()} would match any record with an {@code arm} component; write {@code Type.arm()}).
 * </ul>
 *
 * Spans that are prose or commands are searched for CamelCase names and {@code Type.member} forms; plain fenced
 * blocks (no language tag) too, line by line. Snake_case names (vLLM's Python) and ALL_CAPS constants are not Java
 * references here and are not checked.
 */
class DocCodeNamesTest {
    /** Names the docs show in code font that are not servesim's Java, with why. */
    static final Map<String, String> NOT_JAVA = Map.of(
            "True", "a YAML spelling the config rejects",
            "GiB", "a unit",
            "DPEngineCoreProc", "vLLM's Python class",
            "AgRsAll2AllManager", "vLLM's Python class",
            "FusedMoEParallelConfig", "vLLM's Python class",
            "AsyncLLM", "vLLM's Python class",
            "OutputProcessor", "vLLM's Python class",
            "CompressedTensorsWNA16MarlinMoEMethod", "vLLM's Python class",
            "CompressedTensorsWNA16MoEMethod", "vLLM's Python class");

    /** File extensions: {@code Name.ext} is a file name, not a member. */
    static final Set<String> FILE_EXTENSIONS =
            Set.of("java", "md", "yaml", "yml", "json", "jsonl", "csv", "sh", "txt", "html", "gz", "zst", "parquet");

    /** Packages tried for names that are not servesim's own. */
    static final List<String> LIBRARY_PACKAGES = List.of(
            "java.lang",
            "java.util",
            "java.util.concurrent",
            "java.math",
            "java.io",
            "java.nio.file",
            "it.unimi.dsi.fastutil.longs",
            "it.unimi.dsi.fastutil.ints",
            "it.unimi.dsi.fastutil.objects");

    private static final String TYPE = "[A-Z][A-Za-z0-9]*";

    /** A whole span that is one reference: optional package, a type, optional members, optional call. */
    private static final Pattern QUALIFIED =
            Pattern.compile("((?:[a-z][a-z0-9_]*\\.)*)(" + TYPE + ")((?:\\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\\(.*\\))?");

    /** A whole span that is a bare call: {@code name()} or {@code name(args)} with Java-like arguments. */
    private static final Pattern BARE_CALL = Pattern.compile("([a-z][A-Za-z0-9]*)\\(([\\w\\s,.]*)\\)");

    /** Inside prose or a plain block: {@code Type.member}, not part of a path, option or larger word. */
    private static final Pattern EMBEDDED_MEMBER =
            Pattern.compile("(?<![\\w.+\\-/$])(" + TYPE + ")\\.([a-z][A-Za-z0-9_]*)(?![\\w/])");

    /** Inside prose or a plain block: a CamelCase name of two or more humps (not a JVM flag such as -XX:Name). */
    private static final Pattern EMBEDDED_CAMEL =
            Pattern.compile("(?<![\\w.+\\-/$])(?<!XX:)([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\\w./])");

    /** Inside prose or a plain block: a bare {@code name()} call. */
    private static final Pattern EMBEDDED_CALL = Pattern.compile("(?<![\\w.])([a-z][A-Za-z0-9]*)\\(\\)");

    private static final Pattern DECLARED_TYPE =
            Pattern.compile("\\b(?:class|interface|enum|record|@interface)\\s+(" + TYPE + ")");

    private static final Pattern DECLARED_METHOD =
            Pattern.compile("\\b(?!return\\b|new\\b|throw\\b|else\\b|case\\b)[\\w>\\]]+\\s+([a-z][A-Za-z0-9]*)\\s*\\(");

    private static final Pattern STRING_LITERAL = Pattern.compile("\"([A-Za-z][A-Za-z0-9_]*)\"");

    /** What the source tree declares, read once. */
    static final class SourceTree {
        final Map<String, List<Path>> types = new HashMap<>();
        final Set<String> methods = new HashSet<>();
        final Set<String> literals = new HashSet<>();
        private final Map<Path, String> text = new HashMap<>();

        SourceTree(Path root) throws IOException {
            try (Stream<Path> modules = Files.list(root)) {
                for (Path module : modules.filter(
                                m -> m.getFileName().toString().startsWith("servesim-"))
                        .sorted()
                        .toList()) {
                    for (String tree : List.of("src/main/java", "src/test/java")) {
                        Path dir = module.resolve(tree);
                        if (!Files.isDirectory(dir)) {
                            continue;
                        }
                        try (Stream<Path> files = Files.walk(dir)) {
                            for (Path f : files.filter(p -> p.toString().endsWith(".java"))
                                    .sorted()
                                    .toList()) {
                                add(f, Files.readString(f), tree.equals("src/main/java"));
                            }
                        }
                    }
                }
            }
        }

        /** A tree of the given sources only (for the matcher's self-check). */
        SourceTree(Map<Path, String> sources) {
            sources.forEach((f, s) -> add(f, s, true));
        }

        private void add(Path file, String source, boolean main) {
            text.put(file, source);
            String name = file.getFileName().toString().replace(".java", "");
            types.computeIfAbsent(name, k -> new ArrayList<>()).add(file);
            Matcher nested = DECLARED_TYPE.matcher(source);
            while (nested.find()) {
                if (!nested.group(1).equals(name)) {
                    types.computeIfAbsent(nested.group(1), k -> new ArrayList<>())
                            .add(file);
                }
            }
            if (!main) {
                return;
            }
            Matcher m = DECLARED_METHOD.matcher(source);
            while (m.find()) {
                methods.add(m.group(1));
            }
            Matcher l = STRING_LITERAL.matcher(source);
            while (l.find()) {
                literals.add(l.group(1));
            }
        }

        String source(Path file) {
            return text.get(file);
        }
    }

    /** One problem: where, the span, what is wrong. */
    record Problem(String where, String span, String problem) {
        @Override
        public String toString() {
            return where + ": `" + span + "`: " + problem;
        }
    }

    /** Checks the code references of one Markdown text. */
    static List<Problem> check(String markdown, String docName, SourceTree tree) {
        List<Problem> problems = new ArrayList<>();
        StringBuilder prose = new StringBuilder();
        String[] lines = markdown.split("\n", -1);
        String fence = null;
        boolean plainBlock = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            String trimmed = line.strip();
            if (fence == null && trimmed.startsWith("```")) {
                fence = "```";
                plainBlock = trimmed.substring(3).isBlank();
                prose.append('\n');
                continue;
            }
            if (fence != null) {
                if (trimmed.startsWith(fence)) {
                    fence = null;
                } else if (plainBlock) {
                    checkEmbedded(line, docName + ":" + (i + 1), tree, problems);
                }
                prose.append('\n'); // keeps offsets on their line numbers
                continue;
            }
            prose.append(line).append('\n');
        }
        for (Span s : inlineSpans(prose.toString())) {
            checkSpan(s.text(), docName + ":" + s.line(), tree, problems);
        }
        return problems;
    }

    record Span(String text, int line) {}

    /** CommonMark inline code: a run of n backticks up to the next run of exactly n, within one paragraph. */
    static List<Span> inlineSpans(String text) {
        List<Span> spans = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            if (text.charAt(i) != '`') {
                i++;
                continue;
            }
            int n = run(text, i);
            int search = i + n;
            int close = -1;
            while (search < text.length()) {
                int next = text.indexOf('`', search);
                if (next < 0) {
                    break;
                }
                int m = run(text, next);
                if (m == n) {
                    close = next;
                    break;
                }
                search = next + m;
            }
            if (close < 0 || text.substring(i + n, close).contains("\n\n")) {
                i += n; // no closing run in this paragraph: literal backticks
                continue;
            }
            String content = text.substring(i + n, close).replace('\n', ' ').strip();
            int line = 1
                    + (int) text.substring(0, i).chars().filter(c -> c == '\n').count();
            spans.add(new Span(content, line));
            i = close + n;
        }
        return spans;
    }

    private static int run(String text, int from) {
        int j = from;
        while (j < text.length() && text.charAt(j) == '`') {
            j++;
        }
        return j - from;
    }

    private static void checkSpan(String span, String where, SourceTree tree, List<Problem> problems) {
        Matcher q = QUALIFIED.matcher(span);
        if (q.matches()) {
            String type = q.group(2);
            String pkg = q.group(1);
            String members = q.group(3);
            String member = members.isEmpty() ? null : members.substring(1).split("\\.", -1)[0];
            checkReference(pkg, type, member, span, where, tree, problems);
            return;
        }
        Matcher b = BARE_CALL.matcher(span);
        if (b.matches()) {
            if (!tree.methods.contains(b.group(1))) {
                problems.add(new Problem(where, span, "no method " + b.group(1) + "() is declared in any main source"));
            }
            return;
        }
        checkEmbedded(span, where, tree, problems);
    }

    private static void checkEmbedded(String text, String where, SourceTree tree, List<Problem> problems) {
        Set<Integer> covered = new HashSet<>();
        Matcher m = EMBEDDED_MEMBER.matcher(text);
        while (m.find()) {
            covered.add(m.start());
            checkReference("", m.group(1), m.group(2), m.group(), where, tree, problems);
        }
        Matcher c = EMBEDDED_CAMEL.matcher(text);
        while (c.find()) {
            if (!covered.contains(c.start())) {
                checkReference("", c.group(1), null, c.group(1), where, tree, problems);
            }
        }
        Matcher call = EMBEDDED_CALL.matcher(text);
        while (call.find()) {
            if (!tree.methods.contains(call.group(1))) {
                problems.add(new Problem(
                        where, call.group(), "no method " + call.group(1) + "() is declared in any main source"));
            }
        }
    }

    private static void checkReference(
            String pkg,
            String type,
            String memberOrExtension,
            String span,
            String where,
            SourceTree tree,
            List<Problem> problems) {
        if (type.chars().noneMatch(Character::isLowerCase) || NOT_JAVA.containsKey(type)) {
            return; // a constant (PASS_COMPLETION), a file such as CONFIG.yaml, or a listed non-Java name
        }
        // Name.yaml is a file name: then only the type must exist
        String member =
                memberOrExtension != null && FILE_EXTENSIONS.contains(memberOrExtension) ? null : memberOrExtension;
        List<Path> files = tree.types.getOrDefault(type, List.of());
        if (!pkg.isEmpty()) {
            String dirs = "/" + pkg.replace('.', '/');
            files = files.stream()
                    .filter(f -> f.toString().replace('\\', '/').contains(dirs))
                    .toList();
        }
        if (!files.isEmpty()) {
            if (member != null
                    && files.stream()
                            .noneMatch(f -> Pattern.compile("\\b" + Pattern.quote(member) + "\\b")
                                    .matcher(tree.source(f))
                                    .find())) {
                problems.add(new Problem(where, span, member + " does not occur in " + files));
            }
            return;
        }
        if (pkg.isEmpty()) {
            Class<?> library = library(type);
            if (library != null) {
                if (member != null && !hasMember(library, member)) {
                    problems.add(new Problem(where, span, library.getName() + " has no member " + member));
                }
                return;
            }
            if (member == null && tree.literals.contains(type)) {
                return; // a name the code reads (trace column, model architecture)
            }
        }
        problems.add(new Problem(
                where,
                span,
                "no type " + (pkg.isEmpty() ? "" : pkg) + type + " in servesim-*/src, the JDK or fastutil"));
    }

    private static Class<?> library(String simpleName) {
        for (String p : LIBRARY_PACKAGES) {
            try {
                return Class.forName(p + "." + simpleName, false, DocCodeNamesTest.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                // try the next package
            }
        }
        return null;
    }

    private static boolean hasMember(Class<?> c, String name) {
        for (Method m : c.getMethods()) { // public ones, interface defaults included
            if (m.getName().equals(name)) {
                return true;
            }
        }
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                if (m.getName().equals(name)) {
                    return true;
                }
            }
            for (Field f : k.getDeclaredFields()) {
                if (f.getName().equals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---- the docs ----------------------------------------------------------------------------------------------

    @Test
    void everyCodeNameInTheDocs_existsInTheSourceTree() throws IOException {
        Path root = TestClassesRunTest.root();
        SourceTree tree = new SourceTree(root);
        List<Path> docs = new ArrayList<>();
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            docs.addAll(files.filter(p -> p.toString().endsWith(".md")).sorted().toList());
        }
        docs.add(root.resolve("README.md"));
        assertThat(docs).contains(root.resolve("docs/architecture.md"));
        List<Problem> problems = new ArrayList<>();
        for (Path doc : docs) {
            problems.addAll(check(Files.readString(doc), root.relativize(doc).toString(), tree));
        }
        assertThat(problems)
                .as("code names in the docs that the source tree does not have (fix the doc, or the code)")
                .isEmpty();
    }

    // ---- the matcher itself ------------------------------------------------------------------------------------

    private static final SourceTree TINY = new SourceTree(Map.of(
            Path.of("servesim-core/src/main/java/io/servesim/sim/EventQueue.java"),
            """
            package io.servesim.sim;
            public final class EventQueue {
                public void schedule(long t) {}
                public record Slot(long time, int phase) {}
            }
            """,
            Path.of("servesim-core/src/main/java/io/servesim/workload/trace/AzureReader.java"),
            """
            package io.servesim.workload.trace;
            final class AzureReader { static final String COLUMN = "ContextTokens"; }
            """));

    private static List<String> problemsIn(String markdown) {
        return check(markdown, "t.md", TINY).stream().map(Problem::span).toList();
    }

    @Test
    void matcher_acceptsNamesThatExist() {
        assertThat(problemsIn("""
                        The `EventQueue` (`sim.EventQueue`, `io.servesim.sim.EventQueue`) has `EventQueue.schedule(t)`
                        and `schedule()`; `EventQueue.Slot`, `Slot`, `Slot.phase()`, `PASS_COMPLETION`, `True`,
                        `ContextTokens`, `SplittableRandom.nextDouble()`, `Locale.ROOT`, `Long2IntOpenHashMap`,
                        `-XX:+UseParallelGC`, `-XX:MaxTenuringThreshold=1`, `update_from_output()`,
                        `bash scripts/bench.sh -Xmx2g`.

                        ```
                        → EventQueue.schedule → schedule()
                        ```

                        ```yaml
                        x: NotAType.notAMember()
                        ```
                        """)).isEmpty();
    }

    @Test
    void matcher_rejectsMadeUpNames() {
        assertThat(problemsIn("""
                        `ExactDistribution`, `EventQueue.noSuchMethod()`, `arm()`, `kv.EventQueue`, `Locale.NOPE`, `phase()`,
                        and in prose `run MadeUpThing now`.

                        ```
                        → EventQueue.wake → arm()
                        ```
                        """))
                .containsExactly(
                        "EventQueue.wake",
                        "arm()",
                        "ExactDistribution",
                        "EventQueue.noSuchMethod()",
                        "arm()",
                        "kv.EventQueue",
                        "Locale.NOPE",
                        "phase()",
                        "MadeUpThing");
    }

    @Test
    void inlineSpans_followCommonMark() {
        assertThat(inlineSpans("a `x` b ``y ` z`` c `unclosed\n\nnext `w`"))
                .containsExactly(new Span("x", 1), new Span("y ` z", 1), new Span("w", 3));
    }
}
