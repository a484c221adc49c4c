package io.servesim.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.SimConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A run folder's meta.json with one to three of its fields replaced by values of every JSON type (strings of
 * numbers, negative and huge numbers, fractions, arrays, objects, null): reading it and building its config either
 * succeeds or fails with an input error whose message names the run, never with another exception — the corpus
 * command's promise that a malformed run is reported and skipped, not a crash.
 */
class MetaFuzzProperties {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Path RUN = Path.of("src/test/resources/corpus/blis_H100_Llama-2-7b_tp1_codegen");
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    @Property(tries = 150)
    void aMutatedMetaJson_isReadOrRefusedWithAnErrorNamingTheRun(
            @ForAll("fields") List<String> fields, @ForAll("values") List<JsonNode> values) throws IOException {
        Path dir = Files.createTempDirectory("metafuzz");
        try {
            Path run = dir.resolve("fuzzed");
            Files.createDirectories(run);
            for (String f : List.of(RunFolder.WORKLOAD, RunFolder.MEASURED)) {
                Files.copy(RUN.resolve(f), run.resolve(f));
            }
            ObjectNode meta =
                    (ObjectNode) JSON.readTree(RUN.resolve(RunFolder.META).toFile());
            for (int i = 0; i < fields.size(); i++) {
                meta.set(fields.get(i), values.get(i % values.size()));
            }
            Files.writeString(run.resolve(RunFolder.META), JSON.writeValueAsString(meta));
            boolean read;
            try {
                SimConfig c = RunFolder.read(run).config(null, List.of());
                assertThat(c).isNotNull();
                read = true;
            } catch (RuntimeException e) {
                assertThat(RunFolder.isInputError(e))
                        .as("an input error, not %s: %s", e.getClass().getName(), e.getMessage())
                        .isTrue();
                assertThat(e.getMessage()).startsWith("run fuzzed: ");
                read = false;
            }
            Statistics.label("read").collect(read);
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.delete(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
    }

    @Provide
    Arbitrary<List<String>> fields() {
        // every field the replay reads, and the workload profile's nested shared prefix
        List<String> all = new java.util.ArrayList<>(RunFolder.FIELDS);
        all.add("notes");
        all.add("source");
        all.add("collected");
        return Arbitraries.of(all).list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<JsonNode>> values() {
        Arbitrary<JsonNode> one = Arbitraries.of(
                F.nullNode(),
                F.stringNode(""),
                F.stringNode("2"),
                F.stringNode("fp8"),
                F.stringNode("auto (stated)"),
                F.stringNode("inf"),
                F.stringNode("NVIDIA H100_SXM"),
                F.stringNode("meta-llama/Llama-2-70b-hf (annotated)"),
                F.numberNode(0),
                F.numberNode(1),
                F.numberNode(-3),
                F.numberNode(2),
                F.numberNode(7),
                F.numberNode(1.5),
                F.numberNode(1e12),
                F.numberNode(Long.MAX_VALUE),
                F.booleanNode(true),
                F.arrayNode().add(1).add("x"),
                F.objectNode().put("k", 1),
                F.objectNode()
                        .set(
                                "shared_prefix",
                                F.objectNode().put("system_prompt_len", -5).put("num_unique_system_prompts", 0)));
        return one.list().ofMinSize(1).ofMaxSize(3);
    }
}
