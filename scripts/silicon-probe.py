#!/usr/bin/env python3
"""Out-of-sample probe: replays AIConfigurator's measured benchmark points (vLLM, SGLang, TensorRT-LLM) with servesim's defaults.

AIConfigurator (ai-dynamo/aiconfigurator, Apache-2.0) publishes aggregate vLLM, SGLang and TensorRT-LLM measurements in
aic-core/src/aiconfigurator_core/systems/silicon_sample.csv: one row per (model, GPU, precision, TP, ISL, OSL,
concurrency) with the mean TTFT and TPOT its load generator measured. Nothing in servesim was fitted on them.

Each row whose model and GPU servesim has presets for is replayed as AIConfigurator's benchmark template runs
aiperf (src/aiconfigurator/generator/config/backend_templates/benchmark/bench_run.sh.j2): a closed loop of
`silicon_concurrency` clients (batch_size x attention DP when unrecorded: batch_size is per attention-DP rank),
fixed ISL and OSL (ignore_eos), 2 x concurrency warm-up requests (not scored) and
20 x concurrency scored ones; vLLM's server defaults on GPUs of 70 GiB or more (max_num_seqs 1024,
max_num_batched_tokens 8192). Two client phasings bracket what the harness did, which the sample does not record:
`lockstep` (every client starts at t = 0, as the closed loop does by default) and `staggered` (the clients start
evenly over one simulated request lifetime, workload.arrival.ramp_s). Scored like aiperf: TTFT mean plus servesim's
client frontend term, TPOT = mean over requests of (E2E - TTFT) / (output tokens - 1). A vLLM row replays as the
version it records (timing.vllm_version: that version's kernel tables, rules and engine loop); one that records none
but a measurement date, as the newest version that date allows under servesim's version rules (dated_version; the
output's replayed_as column).

SGLang and TensorRT-LLM rows (`--backend sglang` / `trtllm`) replay on servesim's engine of that kind, in its
overlapped loop (both engines' default), priced by servesim's one roofline (vLLM's measured kernel tables; no
engine-specific kernels). The sample does not record their launch limits, so `--launch` picks one of two readings:
`defaults` (the default, as for the vLLM rows): each engine's server defaults (SGLang: page size 1, max-prefill-tokens
16384, chunked prefill 8192, no mixed chunks, max-running-requests derived from the KV pool; TensorRT-LLM:
max_batch_size 2048, max_num_tokens 8192, no chunked prefill, 32-token blocks); `generator`: the limits
AIConfigurator's generator writes for an aggregated benchmark worker today (src/aiconfigurator/generator/rule_plugin/
benchmark/{sglang,trtllm}.rule at 095f58a5; SGLang's mixed chunks and max-prefill-tokens since
ai-dynamo/aiconfigurator#257, 2026-01-19): SGLang max-running-requests = concurrency, max-prefill-tokens = ISL + 1500,
mixed chunks on; TensorRT-LLM max_batch_size = batch_size, max_num_tokens = batch_size + ISL + 1500 rounded up to
the 32-token block. Block reuse stays on (unique synthetic prompts never hit).

usage: python3 scripts/silicon-probe.py SILICON_SAMPLE_CSV OUT_CSV [--match SUBSTRING] [--rounds N] [--limit N]
       [--set PATH=VALUE]... [--cpu-fit] [--backend vllm|sglang|trtllm] [--launch defaults|generator]
(docs/accuracy.md, "An out-of-sample probe", has the results.)
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

MODELS = {
    'Qwen/Qwen3-32B': 'qwen3-32b',
    'meta-llama/Llama-3.1-70B': 'llama-3.1-70b',
    'nvidia/Llama-3.1-8B-Instruct-FP8': 'llama-3.1-8b',
    'meta-llama/Llama-3.1-8B-Instruct': 'llama-3.1-8b',
    'Qwen/Qwen3-235B-A22B-FP8': 'qwen3-235b-a22b',
    'openai/gpt-oss-120b': 'gpt-oss-120b',
    'MiniMaxAI/MiniMax-M2.5': 'minimax-m2.5',
    'deepseek-ai/DeepSeek-V3': 'deepseek-v3',
    'deepseek-ai/DeepSeek-R1': 'deepseek-v3',  # the same architecture and FP8 checkpoint format
    'moonshotai/Kimi-K2.5': 'kimi-k2.5',  # 'int4' rows: Moonshot's release (the preset's); 'fp4': NVIDIA's NVFP4 one
}
# Models whose released checkpoint is FP4 (the sample labels their rows 'fp4'): gpt-oss ships MXFP4 experts, which
# servesim's preset applies by default (timing.expert_dtype). The other FP4 rows ran NVFP4 checkpoints (gemm_quant_mode
# and moe_quant_mode nvfp4): a dense model's linear layers, a MoE model's routed experts (attention kept in BF16, as
# NVIDIA's and the community's MoE NVFP4 exports keep it; --set timing.weight_dtype=nvfp4 prices it NVFP4 too).
NATIVE_FP4 = {'gpt-oss-120b'}
NVFP4 = {'llama-3.1-70b', 'llama-3.1-8b', 'qwen3-32b', 'minimax-m2.5', 'qwen3-235b-a22b', 'deepseek-v3', 'kimi-k2.5'}
MOE = {'minimax-m2.5', 'qwen3-235b-a22b', 'deepseek-v3', 'gpt-oss-120b', 'kimi-k2.5'}
# Models whose FP8 rows ran a checkpoint with 128 x 128 block scales (quantization_config.weight_block_size): Qwen's
# own FP8 releases (Qwen/Qwen3-235B-A22B-FP8, Qwen/Qwen3-32B-FP8) and MiniMax-M2.5 (whose preset states it); the other
# FP8 rows (Llama-3.1 FP8 checkpoints from NVIDIA's ModelOpt) have one scale per tensor. DeepSeek-V3 and R1 ship
# block-scaled FP8 weights too.
# Models whose 'int4' rows ran their own W4A16 checkpoint (4-bit integer experts, which the preset states).
INT4 = {'kimi-k2.5'}
BLOCK_FP8 = {'qwen3-235b-a22b', 'qwen3-32b', 'minimax-m2.5', 'deepseek-v3'}
GPUS = {'h100_sxm': 'h100-sxm', 'h200_sxm': 'h200-sxm', 'b200_sxm': 'b200', 'b300_sxm': 'b300', 'gb200': 'gb200',
        'gb300': 'gb300'}
ASYNC_DEFAULT_SINCE = (0, 14)  # vLLM v0.14.0 turned async scheduling on by default (vllm-project/vllm#27614)


ASYNC_DEFAULT_MERGED = '2025-12-29'  # the day vllm-project/vllm#27614 reached main
# servesim's vLLM version rules, each with the day its change reached vLLM's main branch: async scheduling by default
# (vllm-project/vllm#27614, v0.14), the FP8 MoE oracle's FlashInfer TRT-LLM kernel on Blackwell (#32414, v0.15), the
# all-reduce fused with the RMSNorm (#34299, v0.16). A row that records no version but a measurement date cannot have
# run a change merged after that date (dated_version). The later rules are not listed: v0.19's full-sequence admission
# (#37307) has no merge date recorded here, so a date after the last one listed cannot bound the version.
VERSION_RULES_MERGED = [((0, 14), ASYNC_DEFAULT_MERGED), ((0, 15), '2026-01-21'), ((0, 16), '2026-02-11')]


def shipped_default(relative_path, pattern):
    """A shipped default read from the source tree, so the probe never drifts from what servesim ships."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', relative_path)
    with open(path, encoding='utf-8') as f:
        match = re.search(pattern, f.read(), re.MULTILINE)
    if match is None:
        sys.exit(f'silicon-probe: no match for {pattern!r} in {relative_path}')
    return float(match.group(1))


# frontend.client_overhead_ms when no calibration profile gives one (validate.CorpusFit), and the CPU part of a step
# (timing.roofline.step_overhead_us, per_sequence_overhead_us) as shipped
CLIENT_OVERHEAD_MS = shipped_default('servesim-core/src/main/java/io/servesim/validate/CorpusFit.java',
                                     r'DEFAULT_CLIENT_OVERHEAD_MS = ([0-9.]+);')
_REFERENCE = 'servesim-core/src/main/resources/io/servesim/config/reference.yaml'
CPU_DEFAULTS_US = (shipped_default(_REFERENCE, r'^\s+step_overhead_us: ([0-9.]+)'),
                   shipped_default(_REFERENCE, r'^\s+per_sequence_overhead_us: ([0-9.]+)'))


def dated_version(version, source):
    """The vLLM version to replay a row as: its recorded one, else the version just below the first of servesim's
    version rules whose change reached vLLM's main branch after the row's measurement date (as far as those rules can
    tell, the newest vLLM it can have run: a row measured on 2025-10-29 replays as 0.13, so synchronously, with the
    oldest kernel tables and no fused all-reduce); '' (servesim's newest) when it records neither, or when its date
    follows every dated rule."""
    if re.fullmatch(r'v?\d+\.\d+(\..*)?', version):
        return version.lstrip('v')
    m = re.search(r'measured=(\d{4}-\d{2}-\d{2})', source)
    if not m:
        return ''
    for (major, minor), merged in VERSION_RULES_MERGED:
        if m.group(1) < merged:
            return f'{major}.{minor - 1}'
    return ''


def synchronous(version, source):
    """True when the row's vLLM predates async scheduling by default: by its version, else by its measurement date
    (a run measured before the change reached vLLM's main branch cannot have had it); otherwise the default."""
    try:
        major, minor = (int(x) for x in version.split('.')[:2])
        return (major, minor) < ASYNC_DEFAULT_SINCE
    except ValueError:
        pass
    m = re.search(r'measured=(\d{4}-\d{2}-\d{2})', source)
    return bool(m) and m.group(1) < ASYNC_DEFAULT_MERGED


def line_fit(points):
    """Least-squares intercept and slope of y on x."""
    mx = statistics.mean(x for x, _ in points)
    my = statistics.mean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - slope * mx, slope


def cpu_fit(out, sets):
    """Prints the CPU parameters that absorb the synchronous decode-dominated rows' TPOT residuals."""
    step_us, seq_us = CPU_DEFAULTS_US
    for s in sets:
        key, _, value = s.partition('=')
        if key == 'timing.roofline.step_overhead_us':
            step_us = float(value)
        elif key == 'timing.roofline.per_sequence_overhead_us':
            seq_us = float(value)
    rows = [x for x in out if x['sync'] and x['isl'] <= 2 * x['osl']]
    if len({x['concurrency'] for x in rows}) < 2:
        print('cpu-fit: fewer than two concurrencies among the synchronous decode-dominated rows; nothing fitted')
        return

    def residual(x):
        simulated = x['tpot_ms'] * (1 + x['staggered_tpot_err_pct'] / 100)
        return x['concurrency'], x['tpot_ms'] - simulated

    a, b = line_fit([residual(x) for x in rows])
    print(f'cpu-fit on {len(rows)} rows: step_overhead_us {step_us + 1000 * a:.0f}, '
          f'per_sequence_overhead_us {seq_us + 1000 * b:.1f}')
    for tp in sorted({x['tp'] for x in rows}):
        train = [residual(x) for x in rows if x['tp'] != tp]
        test = [x for x in rows if x['tp'] == tp]
        if len({c for c, _ in train}) < 2:
            continue
        a, b = line_fit(train)
        err = [100 * (x['tpot_ms'] * (1 + x['staggered_tpot_err_pct'] / 100) + a + b * x['concurrency']
                      - x['tpot_ms']) / x['tpot_ms'] for x in test]
        print(f'  TP {tp} held out ({len(test)} rows): fitted on the others step_overhead_us {step_us + 1000 * a:.0f},'
              f' per_sequence_overhead_us {seq_us + 1000 * b:.1f}; its TPOT mean |error| '
              f'{statistics.mean(map(abs, err)):.1f} % (signed {statistics.mean(err):+.1f} %)')
HERE = os.path.dirname(os.path.abspath(__file__))
SERVESIM = os.environ.get('SERVESIM', os.path.join(HERE, '..', 'servesim'))  # or a launcher of a copied jar


def replay(sets, out_dir):
    cmd = [SERVESIM, 'replay', BASE, '--out', out_dir]
    for s in sets:
        cmd += ['--set', s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else 'servesim failed')
    with open(os.path.join(out_dir, 'requests.csv')) as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda q: int(q['request_id']))
    return rows


def score(rows, warmup):
    done = [q for q in rows[warmup:] if q['status'] == 'completed' and int(q['output_tokens']) > 1]
    ttft = statistics.mean(float(q['ttft_ms']) for q in done) + CLIENT_OVERHEAD_MS
    tpot = statistics.mean((float(q['e2e_ms']) - float(q['ttft_ms'])) / (int(q['output_tokens']) - 1) for q in done)
    return ttft, tpot, statistics.mean(float(q['e2e_ms']) for q in done) + CLIENT_OVERHEAD_MS


def summarize(out):
    """Prints mean |error| (median, signed mean) per model, GPU, precision, TP and attention DP for both client
    phasings, over all rows, and over the distinct measurements when the sample repeats some."""
    groups = {}
    for line in out:
        groups.setdefault((line['model'], line['gpu'], line['precision'], f'tp{line["tp"]}', f'dp{line["dp"]}'),
                          []).append(line)
    if out:
        groups[('all',)] = out
        # AIConfigurator's sample lists some measurements under several ids (the same deployment, lengths, clients
        # and measured latencies; e.g. each SGLang H200 DeepSeek point three times): each counted once
        distinct = list({(x['model'], x['gpu'], x['precision'], x['tp'], x['dp'], x['isl'], x['osl'],
                          x['concurrency'], x['ttft_ms'], x['tpot_ms']): x for x in out}.values())
        if len(distinct) < len(out):
            groups[('all', 'distinct')] = distinct
    print('group                                   rows  TPOT stag |e| (med; signed)  TTFT stag |e|  TTFT lock |e|'
          '  E2E stag |e| (signed)  E2E lock |e| (signed)')
    for key in sorted(groups, key=lambda k: (k[0] == 'all', k)):
        g = groups[key]
        tp = [x['staggered_tpot_err_pct'] for x in g]
        se = [x['staggered_e2e_err_pct'] for x in g]
        le = [x['lockstep_e2e_err_pct'] for x in g]
        print(f'{" ".join(map(str, key)):40s}{len(g):4d}  {statistics.mean(map(abs, tp)):8.1f} '
              f'({statistics.median(map(abs, tp)):.1f}; {statistics.mean(tp):+.1f})'
              f'{statistics.mean(abs(x["staggered_ttft_err_pct"]) for x in g):14.1f}'
              f'{statistics.mean(abs(x["lockstep_ttft_err_pct"]) for x in g):14.1f}'
              f'{statistics.mean(map(abs, se)):10.1f} ({statistics.mean(se):+.1f})'
              f'{statistics.mean(map(abs, le)):14.1f} ({statistics.mean(le):+.1f})')


def concurrency(r, batch_size):
    """The number of clients the load generator ran: the row's recorded `silicon_concurrency`, else its batch size times
    its attention-DP size.

    `batch_size` is per attention-DP rank: every row with attention DP above 1 that records its concurrency ran
    batch_size x attention_dp clients (97 vLLM and 71 TensorRT-LLM rows at 095f58a5; MiniMax-M2.5 at TP 4, DP 4 with
    8 per rank has the TPOT of TP 4, DP 1 with 32 clients), and a few TensorRT-LLM rows ran more than that."""
    m = re.search(r'silicon_concurrency=(\d+)', r.get('silicon_data_source', ''))
    if m:
        return int(m.group(1))
    return batch_size * (int(r['attention_dp_size'] or 0) or 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('silicon_csv')
    ap.add_argument('out_csv')
    ap.add_argument('--match', default='', help='keep rows whose model path + system contains this')
    ap.add_argument('--rounds', type=int, default=20, help='scored requests per client (aiperf: 20)')
    ap.add_argument('--precision', default=None, help="keep rows of this precision only (bf16, fp8, fp4, int4)")
    ap.add_argument('--limit', type=int, default=None, help='replay at most this many rows')
    ap.add_argument('--set', action='append', default=[], metavar='PATH=VALUE',
                    help='a config override for every replay (a sensitivity study), repeatable')
    ap.add_argument('--backend', default='vllm', choices=['vllm', 'sglang', 'trtllm'],
                    help="the engine whose rows to replay (default: vllm), on servesim's engine of that kind")
    ap.add_argument('--launch', default='defaults', choices=['defaults', 'generator'],
                    help="SGLang and TensorRT-LLM limits: the engine's server defaults, or AIConfigurator's generator's")
    ap.add_argument('--cpu-fit', action='store_true',
                    help='fit the CPU part to the synchronous decode-dominated rows (see the module docstring)')
    a = ap.parse_args()
    need = ['id', 'backend', 'mode', 'model_path', 'system', 'precision', 'isl', 'osl', 'batch_size', 'tp_size',
            'attention_dp_size', 'moe_tp_size', 'moe_ep_size', 'silicon_ttft_ms', 'silicon_tpot_ms']
    try:
        with open(a.silicon_csv) as f:
            header = next(csv.reader(f), [])
    except OSError as e:
        sys.exit(f'silicon-probe: cannot read {a.silicon_csv}: {e.strerror}')
    missing = [c for c in need if c not in header]
    if missing:
        sys.exit(f'silicon-probe: {a.silicon_csv}:1: missing columns {", ".join(missing)} (expected'
                 " AIConfigurator's silicon_sample.csv layout)")
    with open(a.silicon_csv) as f:
        rows = [r for r in csv.DictReader(f)
                if r['backend'] == a.backend and r['mode'] == 'agg' and r['model_path'] in MODELS
                and r['system'] in GPUS
                and (r['precision'] in ('', 'fp8')
                     or r['precision'] == 'fp4' and MODELS[r['model_path']] in NATIVE_FP4 | NVFP4
                     or r['precision'] == 'int4' and MODELS[r['model_path']] in INT4)
                and a.match in r['model_path'] + r['system']
                and (a.precision is None or (r['precision'] or 'bf16') == a.precision)]
    rows = rows[:a.limit]
    work = tempfile.mkdtemp(prefix='silicon-probe-')
    global BASE
    BASE = os.path.join(work, 'base.yaml')
    with open(BASE, 'w') as f:
        f.write('workload:\n  seed: 1\n')
    out = []
    for i, r in enumerate(rows):
        try:
            bs, isl, osl, tp = int(r['batch_size']), int(r['isl']), int(r['osl']), int(r['tp_size'])
            float(r['silicon_ttft_ms']), float(r['silicon_tpot_ms'])
        except ValueError:
            print(f'{r["id"]}: skipped: batch_size, isl, osl, tp_size or the measured latencies are not numbers',
                  file=sys.stderr)
            continue
        model = MODELS[r['model_path']]
        dp = int(r['attention_dp_size'] or 0) or 1  # attention DP as recorded, for any model
        if dp == 1 and model in ('qwen3-235b-a22b', 'minimax-m2.5', 'kimi-k2.5'):  # experts over moe_tp x moe_ep GPUs: the attention-DP ranks are the rest
            dp = max(1, int(r['moe_tp_size'] or 1) * int(r['moe_ep_size'] or 1) // tp)
        c = concurrency(r, bs)
        sets = ['workload.type=synthetic', f'workload.synthetic.requests={(a.rounds + 2) * c}',
                f'workload.synthetic.input_tokens={{type: fixed, value: {isl}}}',
                f'workload.synthetic.output_tokens={{type: fixed, value: {osl}}}',
                'workload.arrival.type=concurrency', f'workload.arrival.concurrency={c}',
                'timing.type=roofline', f'timing.model={model}', f'timing.gpu={GPUS[r["system"]]}',
                f'timing.tensor_parallel={tp}', f'cluster.attention_dp={dp}']
        if a.backend == 'vllm':
            sets += ['engine.scheduler.max_num_seqs=1024', 'engine.scheduler.max_num_batched_tokens=8192']
        elif a.backend == 'sglang':
            sets += ['engine.kind=sglang', 'engine.kv_cache.block_size=1']
            if a.launch == 'generator':  # rule_plugin/benchmark/sglang.rule (agg)
                sets += [f'engine.sglang.max_running_requests={c}', f'engine.sglang.max_prefill_tokens={isl + 1500}',
                         'engine.sglang.enable_mixed_chunk=true']
        else:
            sets += ['engine.kind=trtllm', 'engine.kv_cache.block_size=32']
            if a.launch == 'generator':  # rule_plugin/benchmark/trtllm.rule (agg)
                sets += [f'engine.trtllm.max_batch_size={bs}',
                         f'engine.trtllm.max_num_tokens={(bs + isl + 1500 + 31) // 32 * 32}']
        if dp > 1:
            sets.append('cluster.dp_mode=lockstep')
        if r['precision'] == 'fp8':
            sets.append('timing.weight_dtype=' + ('fp8_block' if model in BLOCK_FP8 else 'fp8'))
        elif r['precision'] == 'fp4' and model not in NATIVE_FP4:
            sets.append('timing.expert_dtype=nvfp4' if model in MOE else 'timing.weight_dtype=nvfp4')
        sync = a.backend == 'vllm' and synchronous(r.get('backend_version', ''), r.get('silicon_data_source', ''))
        if sync:
            sets.append('engine.scheduler.async_scheduling=false')
        version = dated_version(r.get('backend_version', ''), r.get('silicon_data_source', '')) if a.backend == 'vllm' else ''
        if version:
            sets.append(f'timing.vllm_version="{version}"')  # kernel tables and version rules of that vLLM version
        sets += a.set
        try:
            lock = replay(sets, os.path.join(work, str(i)))
            life_s = statistics.mean(float(q['e2e_ms']) for q in lock) / 1000
            stag = replay(sets + [f'workload.arrival.ramp_s={life_s:.6f}'], os.path.join(work, str(i)))
        except RuntimeError as e:
            print(f'{r["id"]}: {e}', file=sys.stderr)
            continue
        mt, mp = float(r['silicon_ttft_ms']), float(r['silicon_tpot_ms'])
        (lt, lp, le), (st, sp, se) = score(lock, 2 * c), score(stag, 2 * c)
        # E2E as aiperf's means give it (TTFT + (OSL - 1) x TPOT): in a closed loop it is the concurrency over the
        # request throughput, so it does not depend on how the engine splits a request's time between TTFT and TPOT
        # nor on how the clients were phased
        me = mt + (osl - 1) * mp
        line = {'id': r['id'], 'backend': a.backend, 'version': r.get('backend_version', ''), 'replayed_as': version,
                'model': model, 'gpu': GPUS[r['system']], 'precision': r['precision'] or 'bf16',
                'tp': tp, 'dp': dp, 'sync': sync, 'isl': isl, 'osl': osl, 'concurrency': c,
                'ttft_ms': round(mt, 1), 'tpot_ms': round(mp, 2),
                'lockstep_ttft_err_pct': round(100 * (lt - mt) / mt, 1),
                'lockstep_tpot_err_pct': round(100 * (lp - mp) / mp, 1),
                'staggered_ttft_err_pct': round(100 * (st - mt) / mt, 1),
                'staggered_tpot_err_pct': round(100 * (sp - mp) / mp, 1),
                'lockstep_e2e_err_pct': round(100 * (le - me) / me, 1),
                'staggered_e2e_err_pct': round(100 * (se - me) / me, 1)}
        print(*line.values(), flush=True)
        out.append(line)
    summarize(out)
    if a.cpu_fit:
        cpu_fit(out, a.set)
    if out:
        with open(a.out_csv + '.tmp', 'w', newline='') as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
        os.replace(a.out_csv + '.tmp', a.out_csv)


if __name__ == '__main__':
    main()
