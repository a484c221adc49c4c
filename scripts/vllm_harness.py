#!/usr/bin/env python3
"""Patches the vLLM oracle harness's run_vllm.py (../shared/tools/vllm-oracle) for what it hard-codes: vLLM's
full-sequence admission gate (the harness builds the scheduler with scheduler_reserve_full_isl=False; vLLM's default
since v0.19.0 is True) and the KV cache layout (one full-attention group; with a window, vLLM's hybrid KV cache as for
gpt-oss: a sliding-window group first, then the full-attention group, on one pool); and clients that give up: with a
client timeout, every request not finished that long after its arrival is aborted as vLLM's API server aborts a
disconnected request (Scheduler.finish_requests with FINISHED_ABORTED, processed with the engine core's input queue
before the next schedule()), and its record keeps what the client had received by its deadline (status timed_out,
finish reason client_timeout), as servesim's workload.client_timeout_s records it.

Used by scripts/oracle.sh (settings from the environment: ORACLE_FULL_ISL, ORACLE_HYBRID_WINDOW) and by
scripts/conformance-fixtures.py (settings from each scenario's config).

Usage: python3 scripts/vllm_harness.py RUN_VLLM_PY   (patches the file in place with the environment's settings)
"""
import sys

# Python expressions evaluated inside run_vllm.make_scheduler (it has cfg and imports os)
FROM_ENV = {
    "full_isl": "os.environ.get('ORACLE_FULL_ISL') != '0'",
    "window": "int(os.environ.get('ORACLE_HYBRID_WINDOW', '0'))",
    # the scenarios size their pools for one group: twice the blocks for two (the servesim side does the same)
    "blocks": 'cfg["num_gpu_blocks"] * (2 if int(os.environ.get("ORACLE_HYBRID_WINDOW", "0")) > 0 else 1)',
    "timeout": "int(round(float(os.environ.get('ORACLE_CLIENT_TIMEOUT_MS', '0')) * 1_000_000))",
}
FROM_SCENARIO = {
    "full_isl": "cfg.get('reserve_full_isl', True)",
    "window": "cfg.get('hybrid_window', 0)",
    "blocks": 'cfg["num_gpu_blocks"]',
    "timeout": "int(round(cfg.get('client_timeout_ms', 0) * 1_000_000))",
}

_ONE_GROUP = """        kv_cache_groups=[
            KVCacheGroupSpec(
                ["layer"],
                FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=1, dtype=torch.float32),
            )
        ],
"""

_GROUPS = """        kv_cache_groups=(
            [
                KVCacheGroupSpec(
                    ["swa"],
                    SlidingWindowSpec(
                        block_size=block_size,
                        num_kv_heads=1,
                        head_size=1,
                        dtype=torch.float32,
                        sliding_window=WINDOW,
                    ),
                ),
                KVCacheGroupSpec(
                    ["full"],
                    FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=1, dtype=torch.float32),
                ),
            ]
            if WINDOW > 0
            else [
                KVCacheGroupSpec(
                    ["layer"],
                    FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=1, dtype=torch.float32),
                )
            ]
        ),
"""


# the engine core's input queue aborts requests whose clients gave up, before it adds new ones and schedules
_ABORTS = """    def add_arrivals(now):
        if TIMEOUT > 0:
            for rid in [rid for rid, req in objs.items() if not req.is_finished()]:
                if rec[int(rid)]["arrival_ns"] + TIMEOUT <= now:
                    sched.finish_requests(rid, RequestStatus.FINISHED_ABORTED)
"""

# what the client received by its deadline: a request whose last token came later (or never) timed out
_CLIENT_VIEW = """    for rid, req in objs.items():
        rec[int(rid)]["preemptions"] = req.num_preemptions
    for i, r in rec.items():
        times = r.pop("token_times", [])
        if TIMEOUT > 0 and r["status"] != "rejected":
            deadline = r["arrival_ns"] + TIMEOUT
            if r["status"] != "completed" or r["last_token_ns"] > deadline:
                kept = [t for t in times if t <= deadline]
                r.update(status="timed_out", finish_reason="client_timeout", output_tokens=len(kept),
                         first_token_ns=kept[0] if kept else None, last_token_ns=kept[-1] if kept else None)
"""


def patch(text: str, settings: dict) -> str:
    """run_vllm.py's text with the gate, the KV cache groups, the pool size and the client timeout from `settings`."""
    edits = [
        ("scheduler_reserve_full_isl=False,", f"scheduler_reserve_full_isl={settings['full_isl']},"),
        (_ONE_GROUP, _GROUPS.replace("WINDOW", settings["window"])),
        ("    KVCacheGroupSpec,\n", "    KVCacheGroupSpec,\n    SlidingWindowSpec,\n"),
        ('    num_blocks = cfg["num_gpu_blocks"]\n', f"    num_blocks = {settings['blocks']}\n"),
        ("    def add_arrivals(now):\n", _ABORTS.replace("TIMEOUT", "timeout_ns")),
        (
            "    objs: dict[str, Request] = {}\n",
            f"    objs: dict[str, Request] = {{}}\n    timeout_ns = {settings['timeout']}\n",
        ),
        (
            '                    rec[i]["output_tokens"] += len(o.new_token_ids)\n',
            '                    rec[i]["output_tokens"] += len(o.new_token_ids)\n'
            '                    rec[i].setdefault("token_times", []).extend([now] * len(o.new_token_ids))\n',
        ),
        (
            '    for rid, req in objs.items():\n        rec[int(rid)]["preemptions"] = req.num_preemptions\n',
            _CLIENT_VIEW.replace("TIMEOUT", "timeout_ns"),
        ),
    ]
    if "import os" not in text:
        sys.exit("vllm_harness: run_vllm.py no longer imports os; update scripts/vllm_harness.py")
    for old, new in edits:
        if text.count(old) != 1:
            sys.exit("vllm_harness: the harness's run_vllm.py changed; update scripts/vllm_harness.py")
        text = text.replace(old, new)
    return text


if __name__ == "__main__":
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        patched = patch(f.read(), FROM_ENV)
    with open(path, "w", encoding="utf-8") as f:
        f.write(patched)
