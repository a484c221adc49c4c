#!/usr/bin/env bash
# Regenerates servesim-core/src/main/resources/io/servesim/timing/profiled-kernels.yaml from a checkout (or git mirror)
# of casys-kaist/LLMServingSim: scripts/llmservingsim-kernels.sh LLMSERVINGSIM_REPO [COMMIT]
# Needs a JDK >= 21 (found by scripts/jdk.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="${1:?usage: scripts/llmservingsim-kernels.sh LLMSERVINGSIM_REPO [COMMIT]}"
commit="${2:-HEAD}"
export JAVA_HOME="$(bash "$here/jdk.sh" 21)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sha="$(git -C "$repo" rev-parse "$commit")"
git -C "$repo" archive "$sha" profiler/perf configs/model | tar -x -C "$work"
out="$here/../servesim-core/src/main/resources/io/servesim/timing/profiled-kernels.yaml"
"$JAVA_HOME/bin/java" "$here/LlmServingSimKernels.java" "$work" "$sha" "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out (LLMServingSim $sha)"
