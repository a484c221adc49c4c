package io.servesim.cli.bench;

import io.servesim.api.Servesim;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.timing.Deployment;
import io.servesim.workload.trace.TraceFormatException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;

/**
 * Mutation fuzzing of servesim's inputs: each try takes a valid seed input (a config, or a few rows of one trace
 * format), applies a handful of seeded mutations — wrong types, out-of-range and huge numbers, unknown and missing
 * keys, truncation, invalid UTF-8, CRLF, a BOM, a corrupt or truncated gzip stream — and feeds it to servesim as a
 * user would (config: load and resolve the deployment; trace: replay it). The outcome is {@link Kind#OK}, a
 * {@link Kind#CLEAR_ERROR} (a config error naming its key path or the file, a trace error naming {@code file:line})
 * or a {@link Kind#CRASH} (any other exception: what a user would see as a stack trace). Used by the jqwik properties
 * (about 1,000 tries per target in {@code ./check}) and by {@code servesim bench fuzz} (10^5 and more).
 */
public final class Fuzz {
    /** What a try ended in. */
    public enum Kind {
        /** Accepted (a mutation can leave the input valid). */
        OK,
        /** Refused with an error that names the key path or {@code file:line}. */
        CLEAR_ERROR,
        /** Refused with an error that names neither. */
        UNCLEAR_ERROR,
        /** An exception a user would see as a stack trace. */
        CRASH
    }

    /**
     * One try's outcome.
     *
     * @param kind what it ended in
     * @param detail the error message or exception (empty when OK)
     */
    public record Outcome(Kind kind, String detail) {}

    /** The fuzz targets: the config loader and each trace format. */
    public static final List<String> TARGETS =
            List.of("config", "servesim", "mooncake", "azure", "vllm_bench", "measured");

    private static final String CONFIG = """
            workload:
              seed: 7
              type: sessions
              sessions:
                sessions: 20
                turns: 3
                shared_prefix_tokens: 128
                first_input_tokens: {type: uniform, min: 100, max: 400}
                new_input_tokens: {type: uniform, min: 16, max: 64}
                output_tokens: {type: uniform, min: 4, max: 32}
                think_time_ms: {type: exponential, mean: 500}
              arrival: {type: poisson, rate: 10.0}
            cluster:
              workers: 2
              router: {policy: kv_aware}
              events: [{at_ms: 500, worker: 1, action: drain}]
            engine:
              max_model_len: 4096
              scheduler: {max_num_seqs: 64, max_num_batched_tokens: 2048, async_scheduling: true}
              kv_cache: {block_size: 16, num_gpu_blocks: 2048}
            timing:
              model: llama-3.1-8b
              gpu: h100-sxm
              tensor_parallel: 1
              roofline: {mfu: 0.5, knee_exponent: 3}
            output: {timeseries_tick_s: 0.5}
            """;

    private static final String SERVESIM_ROWS = """
            {"session_id": "a", "arrival_ms": 0, "input_length": 40, "output_length": 2, "hash_ids": [1, 2, 3], "hash_block_size": 16}
            {"session_id": "b", "arrival_ms": 100, "input_length": 20, "output_length": 1, "hash_ids": [4, 5], "hash_block_size": 16}
            {"session_id": "a", "delay_ms": 50, "input_length": 60, "output_length": 3, "hash_ids": [1, 2, 3, 6], "hash_block_size": 16}
            {"arrival_ms": 300, "input_token_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9], "output_length": 2, "dp_rank": 0}
            """;

    private static final String MOONCAKE_ROWS = """
            {"timestamp": 0, "input_length": 40, "output_length": 5, "hash_ids": [0, 1, 2]}
            {"timestamp": 12, "input_length": 30, "output_length": 2, "hash_ids": [0, 1]}
            {"timestamp": 30, "input_length": 70, "output_length": 9, "hash_ids": [0, 3, 4, 5, 6]}
            """;

    private static final String AZURE_ROWS = """
            TIMESTAMP,ContextTokens,GeneratedTokens
            2023-11-16 18:15:46.6805900,374,44
            2023-11-16 18:15:50.9951690,396,109
            2023-11-16 18:15:51.0012730,879,11
            """;

    private static final String VLLM_BENCH_ROWS = """
            {"input_toks": 6, "output_toks": 3, "arrival_time_ns": 0, "input_tok_ids": [5971, 2927, 220, 1032, 975, 239]}
            {"input_toks": 4, "output_toks": 2, "arrival_time_ns": 46926808, "input_tok_ids": [5971, 2927, 11, 12]}
            """;

    private static final String MEASURED_ROWS = """
            {"request_id": "r-0", "arrival_s": 0.0, "input_tokens": 59, "output_tokens": 24}
            {"request_id": "r-1", "arrival_s": 0.05349, "input_tokens": 58, "output_tokens": 24}
            {"request_id": "r-2", "arrival_s": 0.1, "input_tokens": 12, "output_tokens": 3, "prompt_token_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}
            """;

    /** Replacements for a number or a string value: wrong types, out of range, huge, not finite. */
    private static final String[] HOSTILE_VALUES = {
        "-1",
        "0",
        "1e18",
        "1e300",
        "-1e300",
        "2147483648",
        "9223372036854775808",
        "NaN",
        ".inf",
        "-.inf",
        "null",
        "true",
        "\"x\"",
        "\"\"",
        "[]",
        "{}",
        "[1, [2]]",
        "{\"a\": 1}",
        "0.5",
        "-0.0",
        "1e-9",
        "\"\\u0000\"",
        "~",
        "&a",
        "*a",
        "!!binary AAAA",
        "\"A\\udc80\"",
        "99999999999999999999999"
    };

    private static final String[] UNKNOWN_KEYS = {"unknown_key", "Seed", "workers ", "type2", "", "\"\""};

    private Fuzz() {}

    /** Runs one try of a target with a seed (the same seed gives the same input and outcome). */
    public static Outcome run(String target, long seed, Path scratch) {
        SplittableRandom rnd = new SplittableRandom(seed);
        return switch (target) {
            case "config" -> config(new String(mutateText(CONFIG, rnd, true), StandardCharsets.UTF_8));
            case "servesim" -> trace("servesim", SERVESIM_ROWS, ".jsonl", rnd, scratch);
            case "mooncake" -> trace("mooncake", MOONCAKE_ROWS, ".jsonl", rnd, scratch);
            case "azure" -> trace("azure", AZURE_ROWS, ".csv", rnd, scratch);
            case "vllm_bench" -> trace("vllm_bench", VLLM_BENCH_ROWS, ".jsonl", rnd, scratch);
            case "measured" -> trace("measured", MEASURED_ROWS, ".jsonl", rnd, scratch);
            default ->
                throw new IllegalArgumentException("unknown fuzz target '" + target + "' (known: " + TARGETS + ")");
        };
    }

    private static Outcome config(String yaml) {
        try {
            SimConfig c = ConfigLoader.fromYaml(yaml, "fuzz.yaml", List.of());
            Deployment.resolve(c);
            return new Outcome(Kind.OK, "");
        } catch (ConfigException e) {
            boolean clear = !e.path().isEmpty() || e.getMessage().contains("fuzz.yaml");
            return new Outcome(clear ? Kind.CLEAR_ERROR : Kind.UNCLEAR_ERROR, e.getMessage());
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            return new Outcome(Kind.CRASH, e.toString());
        }
    }

    private static Outcome trace(String format, String rows, String ext, SplittableRandom rnd, Path scratch) {
        byte[] body = mutateText(rows, rnd, false);
        boolean gz = rnd.nextInt(4) == 0;
        Path file = scratch.resolve("fuzz-" + format + ext + (gz ? ".gz" : ""));
        try {
            if (gz) {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
                    out.write(body);
                }
                byte[] z = bytes.toByteArray();
                int cut = rnd.nextInt(3) == 0 ? rnd.nextInt(z.length) : z.length; // a truncated stream
                if (rnd.nextInt(4) == 0 && cut > 12) {
                    z[10 + rnd.nextInt(cut - 10)] ^= (byte) (1 + rnd.nextInt(255)); // a corrupt one
                }
                Files.write(file, java.util.Arrays.copyOf(z, cut));
            } else {
                Files.write(file, body);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> sets = List.of(
                "workload.type=trace",
                "workload.trace.format=" + format,
                "workload.trace.path=" + file,
                "workload.trace.trace_block_size=16",
                "cluster.workers=2",
                "engine.max_model_len=2048",
                "engine.kv_cache.num_gpu_blocks=512",
                "timing.type=fixed");
        try {
            SimConfig c = ConfigLoader.fromYaml("{}", "fuzz", sets);
            Servesim.run(c);
            return new Outcome(Kind.OK, "");
        } catch (TraceFormatException e) {
            boolean clear = e.getMessage() != null
                    && e.getMessage().contains(file.getFileName().toString());
            return new Outcome(clear ? Kind.CLEAR_ERROR : Kind.UNCLEAR_ERROR, String.valueOf(e.getMessage()));
        } catch (ConfigException e) {
            boolean clear = !e.path().isEmpty()
                    || e.getMessage().contains(file.getFileName().toString());
            return new Outcome(clear ? Kind.CLEAR_ERROR : Kind.UNCLEAR_ERROR, e.getMessage());
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            return new Outcome(Kind.CRASH, e.toString());
        }
    }

    /** One to four seeded mutations of a text (lines of rows, or a YAML document). */
    static byte[] mutateText(String text, SplittableRandom rnd, boolean yaml) {
        String s = text;
        int n = 1 + rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
            s = switch (rnd.nextInt(yaml ? 9 : 8)) {
                case 0 -> replaceValue(s, rnd);
                case 1 -> replaceValue(s, rnd);
                case 2 -> deleteSpan(s, rnd);
                case 3 -> duplicateOrSwapLines(s, rnd);
                case 4 -> s.substring(0, rnd.nextInt(s.length() + 1)); // truncated
                case 5 -> s.replace("\n", rnd.nextBoolean() ? "\r\n" : "\r");
                case 6 -> renameKey(s, rnd);
                case 7 -> dropField(s, rnd);
                default -> s + "\n" + UNKNOWN_KEYS[rnd.nextInt(UNKNOWN_KEYS.length)] + ": 1\n";
            };
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        int raw = rnd.nextInt(8);
        if (raw == 0 && bytes.length > 0) {
            bytes[rnd.nextInt(bytes.length)] = (byte) (0x80 + rnd.nextInt(0x80)); // invalid UTF-8
        } else if (raw == 1) {
            byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
            byte[] out = new byte[bytes.length + 3];
            System.arraycopy(bom, 0, out, 0, 3);
            System.arraycopy(bytes, 0, out, 3, bytes.length);
            bytes = out;
        } else if (raw == 2 && bytes.length > 0) {
            bytes[rnd.nextInt(bytes.length)] = 0;
        }
        return bytes;
    }

    /** Replaces one value (after a ':' or ',' or '[') with a hostile one. */
    private static String replaceValue(String s, SplittableRandom rnd) {
        int at = nthMatch(s, rnd, ch -> ch == ':' || ch == ',' || ch == '[');
        if (at < 0) {
            return s;
        }
        int start = at + 1;
        while (start < s.length() && s.charAt(start) == ' ') {
            start++;
        }
        int end = start;
        while (end < s.length() && ",}]\n\r".indexOf(s.charAt(end)) < 0) {
            end++;
        }
        String v = HOSTILE_VALUES[rnd.nextInt(HOSTILE_VALUES.length)];
        return s.substring(0, start) + v + s.substring(end);
    }

    private static String deleteSpan(String s, SplittableRandom rnd) {
        if (s.isEmpty()) {
            return s;
        }
        int a = rnd.nextInt(s.length());
        int b = Math.min(s.length(), a + 1 + rnd.nextInt(20));
        return s.substring(0, a) + s.substring(b);
    }

    private static String duplicateOrSwapLines(String s, SplittableRandom rnd) {
        List<String> lines = new java.util.ArrayList<>(List.of(s.split("\n", -1)));
        if (lines.size() < 2) {
            return s;
        }
        int a = rnd.nextInt(lines.size());
        int b = rnd.nextInt(lines.size());
        if (rnd.nextBoolean()) {
            lines.add(b, lines.get(a));
        } else {
            String t = lines.get(a);
            lines.set(a, lines.get(b));
            lines.set(b, t);
        }
        return String.join("\n", lines);
    }

    /** Renames one key (the word before a ':') to an unknown one. */
    private static String renameKey(String s, SplittableRandom rnd) {
        int at = nthMatch(s, rnd, ch -> ch == ':');
        if (at < 0) {
            return s;
        }
        int start = at;
        while (start > 0 && (Character.isLetterOrDigit(s.charAt(start - 1)) || s.charAt(start - 1) == '_')) {
            start--;
        }
        return s.substring(0, start) + "x" + s.substring(start);
    }

    /** Removes one "key: value" pair (a missing field). */
    private static String dropField(String s, SplittableRandom rnd) {
        int at = nthMatch(s, rnd, ch -> ch == ':');
        if (at < 0) {
            return s;
        }
        int start = at;
        while (start > 0 && "{,\n".indexOf(s.charAt(start - 1)) < 0) {
            start--;
        }
        int end = at;
        while (end < s.length() && ",}\n".indexOf(s.charAt(end)) < 0) {
            end++;
        }
        if (end < s.length() && s.charAt(end) == ',') {
            end++;
        }
        return s.substring(0, start) + s.substring(end);
    }

    private static int nthMatch(String s, SplittableRandom rnd, java.util.function.IntPredicate p) {
        int count = 0;
        for (int i = 0; i < s.length(); i++) {
            if (p.test(s.charAt(i))) {
                count++;
            }
        }
        if (count == 0) {
            return -1;
        }
        int k = rnd.nextInt(count);
        for (int i = 0; i < s.length(); i++) {
            if (p.test(s.charAt(i)) && k-- == 0) {
                return i;
            }
        }
        return -1;
    }
}
