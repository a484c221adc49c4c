#!/usr/bin/env python3
"""Regenerates the vLLM conformance fixtures (servesim-core/src/test/resources/conformance/) with the vLLM oracle
harness (../shared/tools/vllm-oracle): seeded random scenarios from its gen.py, run through vLLM's own scheduler
code (run_vllm.py, sync and async engine loop), written with vLLM's per-request results so that ConformanceTest can
replay them in CI without vLLM. Needs the harness's setup.sh run first (the pinned vLLM sources).

Usage: python3 scripts/conformance-fixtures.py [--oracle DIR] [--seeds 0:150] [--chaos 0:50] [--timeouts 1000:1060]

The --timeouts seeds are scenarios whose clients give up (config.client_timeout_ms: 120, 250 or 400 ms after
arrival): vLLM aborts each unfinished request before its next schedule (scripts/vllm_harness.py), servesim gets
workload.client_timeout_s.
"""
import argparse
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "servesim-core", "src", "test", "resources", "conformance")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", default=os.path.join(HERE, "..", "..", "shared", "tools", "vllm-oracle"))
    ap.add_argument("--seeds", default="0:150")
    ap.add_argument("--chaos", default="0:50")
    ap.add_argument("--timeouts", default="1000:1060")
    a = ap.parse_args()
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.abspath(a.oracle))
    import gen  # noqa: E402  (the harness's scenario generator)

    run_vllm = _patched_run_vllm(os.path.abspath(a.oracle))

    commit = getattr(run_vllm, "PINNED_COMMIT", None) or "9aaf83ef502fc37bc647f6e474314d48ba36cd1c"
    lo, hi = (int(x) for x in a.seeds.split(":"))
    clo, chi = (int(x) for x in a.chaos.split(":"))
    tlo, thi = (int(x) for x in a.timeouts.split(":"))
    scenarios = [gen.generate(s) for s in range(lo, hi)] + [gen.generate(s, "chaos") for s in range(clo, chi)]
    timed = [gen.generate(s, "chaos" if s % 4 == 0 else None) for s in range(tlo, thi)]
    for sc in timed:
        sc["config"]["client_timeout_ms"] = (120, 250, 400)[sc["seed"] % 3]
    scenarios += timed
    for sc in scenarios:
        # vLLM's full-sequence admission gate (on by default since v0.19.0) on in three scenarios of four, off in the
        # fourth, so both of servesim's paths are held to vLLM's
        sc["config"]["reserve_full_isl"] = sc["seed"] % 4 != 3
        # vLLM's hybrid KV cache (gpt-oss: a sliding-window group beside the full-attention one) in one scenario of
        # three, with windows of 5 to 33 tokens; the pool doubled, as the scenarios size it for one group
        if sc["seed"] % 3 == 1:
            sc["config"]["hybrid_window"] = (5, 9, 17, 33)[sc["seed"] % 4]
            sc["config"]["num_gpu_blocks"] *= 2
    for mode in ("sync", "async"):
        path = os.path.join(OUT, f"vllm-{mode}.jsonl.gz")
        n = 0
        with gzip.open(path + ".tmp", "wt", encoding="utf-8") as f:
            f.write(json.dumps({"vllm_commit": commit, "mode": mode, "generator": "vllm-oracle gen.py",
                                "seeds": a.seeds, "chaos_seeds": a.chaos, "timeout_seeds": a.timeouts}) + "\n")
            for sc in scenarios:
                v = run_vllm.run(sc, async_mode=(mode == "async"))
                if "error" in v:
                    continue
                keep = ("status", "finish_reason", "output_tokens", "first_scheduled_ns", "first_token_ns",
                        "last_token_ns", "preemptions", "cached_tokens", "vllm_reported_cached")
                exp = {"steps": v.get("steps"), "requests": [{k: r.get(k) for k in keep} for r in v["requests"]]}
                f.write(json.dumps({"scenario": sc, "vllm": exp}, separators=(",", ":")) + "\n")
                n += 1
        os.replace(path + ".tmp", path)
        print(f"{path}: {n} scenarios ({mode}), vLLM {commit}")


def _patched_run_vllm(oracle_dir: str):
    """The harness's run_vllm module, its scheduler built with the scenario's config.reserve_full_isl (the harness
    hard-codes vLLM's scheduler_reserve_full_isl to False) and, with config.hybrid_window, vLLM's hybrid KV cache
    (a sliding-window group first, as gpt-oss's, beside the full-attention group): scripts/vllm_harness.py."""
    import importlib.util
    import tempfile

    sys.path.insert(0, HERE)
    import vllm_harness  # noqa: E402  (this folder)

    with open(os.path.join(oracle_dir, "run_vllm.py"), encoding="utf-8") as f:
        text = vllm_harness.patch(f.read(), vllm_harness.FROM_SCENARIO)
    with tempfile.NamedTemporaryFile("w", suffix="_run_vllm.py", delete=False, encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("run_vllm", f.name)
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_vllm"] = module
    spec.loader.exec_module(module)
    os.unlink(f.name)
    return module


if __name__ == "__main__":
    main()
