#!/usr/bin/env bash
# Re-measures every accuracy number docs/accuracy.md reports for the shipped defaults (or for --set overrides), in
# one go: the shared corpus in sample, the three out-of-sample LLMServingSim runs, and AIConfigurator's H100 silicon
# sample (Qwen3-32B, the CPU part's fit printed beside it). The leave-one-out tables come from `calibrate --corpus`
# (about 16 minutes), which this does not run.
#
# Usage: bash scripts/accuracy-refresh.sh AIC_GIT_DIR LLMSERVINGSIM_GIT_DIR OUT [--set path=value]...
#   AIC_GIT_DIR            a mirror of ai-dynamo/aiconfigurator (`fetch github:ai-dynamo/aiconfigurator`)
#   LLMSERVINGSIM_GIT_DIR  a mirror of casys-kaist/LLMServingSim (`fetch github:casys-kaist/LLMServingSim`)
#   OUT                    output directory: corpus/, ood-runs/, ood/, silicon_sample.csv, probe.csv, probe.log
#                          (and the copy of the jar it ran, servesim.jar, with its launcher)
# About 8 minutes on 2 cores (the probe is most of it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 3 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
aic="$1" lss="$2" out="$3"
shift 3
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "accuracy-refresh: unknown argument '$1' (expected --set path=value)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
# Build once, then run a copy of the jar: the launcher rebuilds when sources change, and a rebuild in the middle of a
# refresh (someone editing the tree) would fail or mix two builds' numbers.
"$root/servesim" --help >/dev/null
java_home="$(bash "$root/scripts/jdk.sh" 21)"
cp "$root/servesim-cli/target/servesim.jar" "$out/servesim.jar"
servesim="$out/servesim-launcher.sh"
printf '#!/usr/bin/env bash\nexec "%s/bin/java" -XX:+UseParallelGC -XX:MaxTenuringThreshold=1 -jar "%s" "$@"\n' \
  "$java_home" "$out/servesim.jar" > "$servesim"
chmod +x "$servesim"
export SERVESIM="$servesim" # scripts/silicon-probe.py runs this one too
corpus="$root/../shared/traces/measured"

echo "== the shared corpus, in sample" >&2
# the BLIS runs state no vLLM version; they ran inference-sim/vllm, a fork based on vLLM 0.15.1 (docs/accuracy.md)
"$servesim" validate --corpus "$corpus" --out "$out/corpus" --threads 2 --meta 'blis_*:vllm_version=0.15.1' \
    "${sets[@]}" | grep -v -E "^(validated|wrote) "

echo "== three LLMServingSim runs nothing was fitted on" >&2
rm -rf "$out/ood-runs"
python3 "$root/scripts/ood-llmservingsim.py" "$lss" "$out/ood-runs" >/dev/null
"$servesim" validate --corpus "$out/ood-runs" --out "$out/ood" --threads 2 "${sets[@]}" | grep -v -E "^(validated|wrote) "

echo "== AIConfigurator's H100 silicon sample, Qwen3-32B (TPOT; --cpu-fit below)" >&2
git --git-dir "$aic" show HEAD:aic-core/src/aiconfigurator_core/systems/silicon_sample.csv > "$out/silicon_sample.csv" 2>/dev/null \
  || git --git-dir "$aic/.git" show HEAD:aic-core/src/aiconfigurator_core/systems/silicon_sample.csv > "$out/silicon_sample.csv"
python3 "$root/scripts/silicon-probe.py" "$out/silicon_sample.csv" "$out/probe.csv" --match "Qwen/Qwen3-32Bh100" \
  "${sets[@]}" --cpu-fit > "$out/probe.log"
grep -A 20 '^group' "$out/probe.log" | grep -E "^(group|qwen3-32b h100-sxm bf16|cpu-fit|  TP)"
python3 - "$out/probe.csv" <<'EOF'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['precision'] == 'bf16']
e = [float(r['staggered_tpot_err_pct']) for r in rows]
print(f'all {len(rows)} BF16 rows: TPOT mean |error| {statistics.mean(map(abs, e)):.1f} % (signed {statistics.mean(e):+.1f} %)')
EOF
