#!/usr/bin/env bash
# The vLLM oracle (../shared/tools/vllm-oracle) against this checkout, in both engine loops, in one command: vLLM's
# synchronous loop against servesim's synchronous loop, then vLLM's async loop against servesim's async loop.
#
# The shared harness writes servesim configs without engine.scheduler.async_scheduling, so servesim would run its
# default (async) loop in the harness's sync mode too; this script runs a temporary copy of the harness whose config
# template states the loop (docs/conformance.md, "The full oracle"). Both sides run vLLM's full-sequence admission gate
# (scheduler_reserve_full_isl, on by default since v0.19.0) unless ORACLE_FULL_ISL=0, which turns it off on both.
# ORACLE_HYBRID_WINDOW=W runs both with vLLM's hybrid KV cache, a sliding-window group of W tokens beside the
# full-attention one (engine.kv_cache.hybrid_window), as for gpt-oss. ORACLE_CLIENT_TIMEOUT_MS=T gives every request a
# client that gives up T ms after its arrival: vLLM aborts it (finish_requests with FINISHED_ABORTED before its next
# schedule), servesim gets workload.client_timeout_s; both record what the client had by then.
# Exits non-zero unless every scenario agrees.
#
# Usage: bash scripts/oracle.sh VLLM_MIRROR_GIT_DIR [SEEDS] [more oracle.py arguments]
#   e.g. bash scripts/oracle.sh /work/.mirror/local-inference-lab+vllm/repo 0:300
#        bash scripts/oracle.sh /work/.mirror/local-inference-lab+vllm/repo 0:300 --profile chaos
# The pinned vLLM sources are extracted once into $VLLM_ORACLE_SRC (default /tmp/vllm_oracle/src); the harness is
# taken from $VLLM_ORACLE_HARNESS (default ../shared/tools/vllm-oracle); results go to $ORACLE_OUT (default
# /tmp/vllm_oracle/servesim-{sync,async}).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mirror="${1:?usage: bash scripts/oracle.sh VLLM_MIRROR_GIT_DIR [SEEDS] [oracle.py arguments]}"
seeds="${2:-0:300}"
shift $(($# < 2 ? $# : 2))
harness="${VLLM_ORACLE_HARNESS:-$root/../shared/tools/vllm-oracle}"
src="${VLLM_ORACLE_SRC:-/tmp/vllm_oracle/src}"
out="${ORACLE_OUT:-/tmp/vllm_oracle}"
if [ ! -f "$harness/oracle.py" ] || [ ! -f "$harness/run_servesim.py" ]; then
  echo "oracle: no harness at $harness (set VLLM_ORACLE_HARNESS)" >&2
  exit 2
fi
if [ ! -f "$src/VLLM_COMMIT" ]; then
  VLLM_ORACLE_SRC="$src" bash "$harness/setup.sh" "$mirror"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$harness"/. "$work/"
# the config template's scheduler block states the loop: async when ORACLE_ASYNC=1, else sync
python3 - "$work/run_servesim.py" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "  scheduler:\n"
if text.count(anchor) != 1 or "async_scheduling" in text:
    sys.exit("oracle: the harness's run_servesim.py template changed; update scripts/oracle.sh")
line = "    async_scheduling: {'true' if os.environ.get('ORACLE_ASYNC') == '1' else 'false'}\n"
line += "    reserve_full_isl: {'false' if os.environ.get('ORACLE_FULL_ISL') == '0' else 'true'}\n"
text = text.replace(anchor, anchor + line)
kv_anchor = "  kv_cache:\n"
if text.count(kv_anchor) != 1:
    sys.exit("oracle: the harness's run_servesim.py template changed; update scripts/oracle.sh")
text = text.replace(kv_anchor, kv_anchor + "    hybrid_window: {int(os.environ.get('ORACLE_HYBRID_WINDOW', '0'))}\n")
blocks = "    num_gpu_blocks: {cfg['num_gpu_blocks']}\n"
if text.count(blocks) != 1:
    sys.exit("oracle: the harness's run_servesim.py template changed; update scripts/oracle.sh")
text = text.replace(
    blocks,
    "    num_gpu_blocks: {cfg['num_gpu_blocks'] * (2 if int(os.environ.get('ORACLE_HYBRID_WINDOW', '0')) > 0 else 1)}\n")
wl_anchor = "  type: trace\n"
if text.count(wl_anchor) != 1:
    sys.exit("oracle: the harness's run_servesim.py template changed; update scripts/oracle.sh")
text = text.replace(
    wl_anchor,
    wl_anchor + "  client_timeout_s: {float(os.environ['ORACLE_CLIENT_TIMEOUT_MS']) / 1000 "
    "if float(os.environ.get('ORACLE_CLIENT_TIMEOUT_MS', '0')) > 0 else 'null'}\n")
if "import os" not in text:
    sys.exit("oracle: run_servesim.py no longer imports os; update scripts/oracle.sh")
open(path, "w").write(text)
EOF
# the harness builds vLLM's scheduler with scheduler_reserve_full_isl=False and one full-attention group; both sides
# take ORACLE_FULL_ISL (default: vLLM's default, on) and ORACLE_HYBRID_WINDOW (scripts/vllm_harness.py)
python3 "$root/scripts/vllm_harness.py" "$work/run_vllm.py"
status=0
for mode in sync async; do
  flag=()
  async=0
  if [ "$mode" = async ]; then
    flag=(--async)
    async=1
  fi
  rm -rf "$out/servesim-$mode"
  ORACLE_ASYNC="$async" VLLM_ORACLE_SRC="$src" SERVESIM_DIR="$root" \
    python3 "$work/oracle.py" --seeds "$seeds" "${flag[@]}" --out "$out/servesim-$mode" "$@" >/dev/null
  summary="$out/servesim-$mode/summary.md"
  line="$(grep -m1 '^scenarios:' "$summary")"
  echo "oracle $mode: $line ($summary)"
  case "$line" in
    *"(100.0 %), errors on one side: 0"*) ;;
    *) status=1 ;;
  esac
done
exit "$status"
