package io.servesim.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * An output directory's integrity: which of its files belong to one run (or one sweep). Every output file is written
 * atomically, but a run that is killed (or runs out of disk) while writing into a directory that holds an earlier
 * run leaves a mix of both. So a run first deletes the directory's {@code manifest.json} ({@link #begin}), then
 * writes its files, and writes a new manifest last ({@link #finish}) listing each file with its size and SHA-256: a
 * directory is one complete run exactly when its manifest is present and matches ({@link #verify}). Readers
 * ({@code servesim report}, {@code servesim compare}) refuse a directory that is not.
 */
public final class RunDirectory {
    /** The manifest's file name. */
    public static final String MANIFEST = "manifest.json";

    /** A replay's directory ({@code servesim replay}, {@code Result.writeTo}). */
    public static final RunDirectory RUN = new RunDirectory(
            "run",
            List.of(
                    "canonical.json",
                    "report.html",
                    "requests.csv",
                    "requests.csv.zst",
                    "summary.json",
                    "timeseries.csv",
                    "workers.csv"));

    /** A sweep's directory ({@code servesim sweep}; results.parquet is a directory Spark writes). */
    public static final RunDirectory SWEEP = new RunDirectory(
            "sweep",
            List.of("best.yaml", "capacity.csv", "pareto.csv", "results.csv", "results.parquet", "sweep.html"));

    /**
     * A corpus validation's directory ({@code servesim validate --corpus}): {@code corpus.csv} and one
     * {@code <run>/validation.json} and {@code <run>/requests.csv} per run folder.
     */
    public static final RunDirectory CORPUS =
            new RunDirectory("corpus", List.of("corpus.csv"), List.of("validation.json", "requests.csv"));

    /** {@code servesim bench fixture}'s directory (its table, rewritten after every cell). */
    public static final RunDirectory BENCH_FIXTURE = new RunDirectory("bench", List.of("fixture.csv", "fixture.json"));

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private final String kind;
    private final List<String> outputs;
    /** The files each immediate subdirectory may hold as outputs ({@code <sub>/<name>}); empty for none. */
    private final List<String> perSubdirectory;

    private RunDirectory(String kind, List<String> outputs) {
        this(kind, outputs, List.of());
    }

    private RunDirectory(String kind, List<String> outputs, List<String> perSubdirectory) {
        this.kind = kind;
        this.outputs = outputs;
        this.perSubdirectory = perSubdirectory;
    }

    /** Whether {@code name} (relative to the directory, {@code /}-separated) is one of this kind's outputs. */
    private boolean isOutput(String name) {
        if (outputs.contains(name)) {
            return true;
        }
        int slash = name.indexOf('/');
        return slash > 0
                && name.indexOf('/', slash + 1) < 0
                && perSubdirectory.contains(name.substring(slash + 1))
                && !name.startsWith(".");
    }

    /** The per-subdirectory outputs present in {@code dir}, in name order. */
    private List<String> subdirectoryOutputs(Path dir) {
        List<String> out = new ArrayList<>();
        if (perSubdirectory.isEmpty() || !Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> subs = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path sub : subs) {
                for (String file : perSubdirectory) {
                    String name = sub.getFileName() + "/" + file;
                    if (Files.isRegularFile(sub.resolve(file)) && isOutput(name)) {
                        out.add(name);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dir + ": " + e.getMessage(), e);
        }
        out.sort(null);
        return out;
    }

    /** Every file (or Spark directory) this kind of run may write, in the manifest's order. */
    public List<String> outputs() {
        return outputs;
    }

    /**
     * Marks {@code dir} as being written: creates it, deletes its manifest (so a kill from here on leaves a
     * directory that says it is incomplete) and the temporary files an interrupted write left behind.
     */
    public void begin(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.deleteIfExists(dir.resolve(MANIFEST));
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, ".*.tmp")) {
                for (Path f : files) {
                    if (isOurTemporary(f.getFileName().toString())) {
                        Files.deleteIfExists(f);
                    }
                }
            }
            if (!perSubdirectory.isEmpty()) {
                try (DirectoryStream<Path> subs = Files.newDirectoryStream(dir, Files::isDirectory)) {
                    for (Path sub : subs) {
                        try (DirectoryStream<Path> files = Files.newDirectoryStream(sub, ".*.tmp")) {
                            for (Path f : files) {
                                String name = f.getFileName().toString();
                                if (perSubdirectory.stream().anyMatch(o -> name.startsWith("." + o + "."))) {
                                    Files.deleteIfExists(f);
                                }
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Whether a file name is one {@link AtomicFiles} or the request stream creates for an output or the manifest. */
    boolean isOurTemporary(String name) {
        if (!name.startsWith(".") || !name.endsWith(".tmp")) {
            return false;
        }
        for (String output : outputs) {
            if (name.startsWith("." + output + ".")) {
                return true;
            }
        }
        return name.startsWith("." + MANIFEST + ".");
    }

    /**
     * Deletes the outputs this run did not write (left by an earlier run) and writes the manifest of the ones it did:
     * the last write of a run.
     */
    public void finish(Path dir, List<String> written) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("servesim_output_directory", 1);
        root.put("kind", kind);
        ArrayNode files = root.putArray("files");
        try {
            List<String> names = new ArrayList<>(outputs);
            names.addAll(subdirectoryOutputs(dir));
            for (String name : names) {
                Path f = dir.resolve(name);
                if (!written.contains(name)) {
                    deleteTree(f); // an earlier run's (for a corpus: a run folder no longer validated)
                    continue;
                }
                ObjectNode entry = files.addObject();
                entry.put("name", name);
                entry.put("bytes", bytes(f));
                entry.put("sha256", sha256(f));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir + ": " + e.getMessage(), e);
        }
        AtomicFiles.writeString(
                dir.resolve(MANIFEST), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
    }

    /** The outputs present in {@code dir} (after a run wrote them), in {@link #outputs} order. */
    public List<String> present(Path dir) {
        List<String> out = new ArrayList<>();
        for (String name : outputs) {
            if (Files.exists(dir.resolve(name))) {
                out.add(name);
            }
        }
        out.addAll(subdirectoryOutputs(dir));
        return out;
    }

    /**
     * Why {@code dir} is not one complete run (or sweep), or null when it is: its manifest is missing or unreadable, a file it
     * lists is missing or differs in size or SHA-256, or an output it does not list is present (left by another run).
     */
    public String verify(Path dir) {
        Path manifest = dir.resolve(MANIFEST);
        JsonNode root;
        try {
            root = JSON.readTree(manifest.toFile());
        } catch (tools.jackson.core.JacksonException e) {
            if (e.getCause() instanceof NoSuchFileException || !Files.exists(manifest)) {
                return dir + " is not a complete " + noun() + ": it has no " + MANIFEST + " (a " + noun()
                        + " writing into it was interrupted or failed, or an older servesim wrote it); " + rerun();
            }
            return manifest + " is unreadable (" + e.getOriginalMessage() + "); " + rerun();
        }
        JsonNode files = root.path("files");
        if (!files.isArray() || !kind.equals(root.path("kind").asString(""))) {
            return manifest + ": not the manifest of a " + kind + " directory; " + rerun();
        }
        List<String> listed = new ArrayList<>();
        try {
            for (JsonNode entry : files) {
                String name = entry.path("name").asString("");
                if (!isOutput(name)) {
                    return manifest + ": unknown file '" + name + "'; " + rerun();
                }
                listed.add(name);
                Path f = dir.resolve(name);
                if (!Files.exists(f)) {
                    return dir + " is not a complete " + noun() + ": " + name + " is missing; " + rerun();
                }
                if (bytes(f) != entry.path("bytes").asLong(-1)
                        || !sha256(f).equals(entry.path("sha256").asString(""))) {
                    return dir + " mixes two " + noun() + "s: " + name + " differs from the one its manifest lists"
                            + " (written by another " + noun() + ", or edited); " + rerun();
                }
            }
        } catch (IOException e) {
            return "cannot read " + dir + ": " + e.getMessage();
        }
        for (String name : present(dir)) {
            if (!listed.contains(name)) {
                return dir + " mixes two " + noun() + "s: " + name + " is not part of the " + noun()
                        + " its manifest lists; delete it or " + rerun();
            }
        }
        return null;
    }

    /** What the directory holds, in messages. */
    private String noun() {
        return switch (kind) {
            case "corpus" -> "corpus validation";
            case "bench" -> "benchmark table";
            default -> kind;
        };
    }

    private String rerun() {
        return switch (kind) {
            case "run" -> "re-run the replay";
            case "corpus" -> "re-run the validation";
            case "bench" -> "re-run the benchmark";
            default -> "re-run the " + kind;
        };
    }

    /** A file's size, or the total size of the files under a directory (Spark's results.parquet). */
    private static long bytes(Path f) throws IOException {
        if (!Files.isDirectory(f)) {
            return Files.size(f);
        }
        long total = 0;
        for (Path p : filesUnder(f)) {
            total += Files.size(p);
        }
        return total;
    }

    /** The regular files under a directory, in name order (a stable hash). */
    private static List<Path> filesUnder(Path dir) throws IOException {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(Files::isRegularFile)
                    .sorted(java.util.Comparator.comparing(
                            p -> dir.relativize(p).toString()))
                    .toList();
        }
    }

    private static void deleteTree(Path f) throws IOException {
        if (!Files.isDirectory(f)) {
            Files.deleteIfExists(f);
            return;
        }
        try (java.util.stream.Stream<Path> walk = Files.walk(f)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** SHA-256 of a file, or of a directory's files (each relative name, then its bytes, in name order). */
    private static String sha256(Path f) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
        byte[] buf = new byte[1 << 16];
        List<Path> parts = Files.isDirectory(f) ? filesUnder(f) : List.of(f);
        for (Path p : parts) {
            if (Files.isDirectory(f)) {
                md.update((f.relativize(p) + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            try (InputStream in = Files.newInputStream(p)) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    md.update(buf, 0, n);
                }
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
