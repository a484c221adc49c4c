package io.servesim.timing;

import io.servesim.config.RooflineConfig;
import io.servesim.config.TimingConfig;

/**
 * Step time from first principles: the batch's work on one GPU of a TP group, each operation bounded by compute
 * or memory, whichever is slower (the roofline model; Williams et al., CACM 2009, applied to LLM serving as in
 * vllm-semantics.md §7.6):
 *
 * <ul>
 *   <li><b>Linear layers</b>: {@code 2 × linear params per token × new tokens / TP} FLOPs (MoE: the experts a
 *       token is routed to) against reading the weights once per step: every non-expert weight, plus for MoE the
 *       experts the batch actually hits, {@code E × (1 − (1 − k/E)^tokens)} per layer.
 *   <li><b>Attention</b>: {@code 4 × layers × q width} FLOPs per (new token, context token) pair — a prefill chunk
 *       of n tokens after c cached ones attends {@code n × (c + (n + 1) / 2)} pairs (causal), a decode
 *       {@code c + 1} — against reading each request's KV once ({@code KV bytes/token × (c + n)}). Sliding-window
 *       layers (gpt-oss: every other layer) see at most the window.
 *   <li><b>Collectives</b>: with TP, two all-reduces per layer of {@code tokens × hidden × 2} bytes, ring cost
 *       {@code 2 (TP − 1) / TP} over the GPU link plus a latency each; with expert parallelism, two all-to-alls per
 *       MoE layer.
 *   <li><b>Overheads</b>: a fixed cost per step plus one per request in the batch (CPU scheduling, sampling,
 *       output processing).
 * </ul>
 *
 * Every operation takes {@code max(FLOPs / (peak × mfu), bytes / (bandwidth × mbu))}.
 */
public final class RooflineTiming implements TimingModel {
    private final ModelSpec model;
    private final double linearFlopsPerToken;
    private final double attentionFlopsPerPair;
    private final double denseWeightBytes;
    private final double expertBytesPerLayer;
    private final double kvBytesPerToken;
    private final double flops;
    private final double bytesPerSecond;
    private final double linkBytesPerSecond;
    private final int tensorParallel;
    private final int expertParallel;
    private final RooflineConfig params;
    private final double slidingShare;

    /**
     * Creates the model.
     *
     * @param expertParallel GPUs the experts are split over (1: experts sharded by TP like every other weight)
     */
    public RooflineTiming(
            ModelSpec model,
            GpuSpec gpu,
            int tensorParallel,
            int expertParallel,
            TimingConfig.Dtype weightDtype,
            int weightBytes,
            int kvBytes,
            RooflineConfig params) {
        this.model = model;
        this.tensorParallel = tensorParallel;
        this.expertParallel = expertParallel;
        this.params = params;
        this.linearFlopsPerToken = 2.0 * model.linearParamsPerToken() / tensorParallel;
        this.attentionFlopsPerPair = 4.0 * model.numLayers() * model.numHeads() * model.headDim() / tensorParallel;
        long inputEmbedding = model.tiedEmbeddings() ? 0 : (long) model.vocabSize() * model.hiddenSize();
        this.denseWeightBytes = (double) (model.nonExpertParams() - inputEmbedding) * weightBytes / tensorParallel;
        this.expertBytesPerLayer = model.moe()
                ? (double) model.paramsPerExpert()
                        * weightBytes
                        / (expertParallel > 1 ? expertParallel : tensorParallel)
                : 0;
        this.kvBytesPerToken = model.kvBytesPerToken(kvBytes, tensorParallel);
        this.flops = gpu.flopsPerSecond(weightDtype) * params.mfu();
        this.bytesPerSecond = gpu.bandwidthGbytesPerS() * 1e9 * params.mbu();
        this.linkBytesPerSecond = gpu.linkGbytesPerS() * 1e9;
        this.slidingShare = model.slidingWindow() > 0 ? 0.5 : 0; // gpt-oss alternates sliding and full layers
    }

    @Override
    public long stepNanos(StepBatch batch) {
        long total = totalNanos(batch);
        return Math.max(1, total - cpuNanos(batch, total));
    }

    /**
     * The CPU part: {@code step_overhead_us + sequences × per_sequence_overhead_us} (the engine core's scheduling,
     * input preparation, sampling and output processing), so the async loop can overlap it with the GPU part. The
     * synchronous step (CPU + GPU) is the same total as before the split.
     */
    @Override
    public long cpuNanos(StepBatch batch) {
        return cpuNanos(batch, totalNanos(batch));
    }

    private long cpuNanos(StepBatch batch, long total) {
        if (batch.size() == 0) {
            return 0;
        }
        long cpu = Math.round((params.stepOverheadUs() + batch.size() * params.perSequenceOverheadUs()) * 1e3);
        return Math.max(0, Math.min(cpu, total - 1)); // the GPU part stays at least 1 ns
    }

    private long totalNanos(StepBatch batch) {
        int n = batch.size();
        if (n == 0) {
            return 1;
        }
        double tokens = 0;
        double pairs = 0;
        double kvTokens = 0;
        int window = model.slidingWindow();
        for (int i = 0; i < n; i++) {
            int t = batch.newTokens(i);
            int c = batch.contextTokens(i);
            tokens += t;
            double full = t * (c + (t + 1) / 2.0);
            if (slidingShare > 0) {
                double windowed = t * Math.min(c + (t + 1) / 2.0, window);
                pairs += (1 - slidingShare) * full + slidingShare * windowed;
            } else {
                pairs += full;
            }
            kvTokens += c + t;
        }
        double weightBytes = denseWeightBytes;
        if (model.moe()) {
            double e = model.numExperts();
            double k = model.expertsPerToken();
            double hit = e * (1 - Math.pow(1 - k / e, tokens)); // distinct experts the batch touches per layer
            double local = expertParallel > 1 ? hit / expertParallel : hit; // each GPU reads its share of them
            weightBytes += model.numLayers() * local * expertBytesPerLayer;
        }
        double linear = Math.max(linearFlopsPerToken * tokens / flops, weightBytes / bytesPerSecond);
        double attention = Math.max(attentionFlopsPerPair * pairs / flops, kvBytesPerToken * kvTokens / bytesPerSecond);
        double collectives = 0;
        double latency = params.collectiveLatencyUs() * 1e-6;
        if (tensorParallel > 1) {
            double bytes = tokens * model.hiddenSize() * 2.0;
            double ring = 2.0 * (tensorParallel - 1) / tensorParallel * bytes / linkBytesPerSecond;
            collectives += 2.0 * model.numLayers() * (latency + ring);
        }
        if (model.moe() && expertParallel > 1) {
            double bytes = tokens * model.hiddenSize() * 2.0 * (expertParallel - 1) / expertParallel;
            collectives += 2.0 * model.numLayers() * (latency + bytes / linkBytesPerSecond);
        }
        double overhead = (params.stepOverheadUs() + n * params.perSequenceOverheadUs()) * 1e-6;
        long nanos = Math.round((linear + attention + collectives + overhead) * 1e9);
        return Math.max(1, nanos);
    }
}
