#!/usr/bin/env bash
# A/B replay timing you can trust on a noisy machine: builds the CLI jar at BASE_REF (in a temporary git worktree)
# and from the working tree (the candidate), then replays each config alternately B, C, B', C, ... with an A/A pair
# (two copies of the base jar, B and B'), one JVM per replay, and prints per config the median replay time of each arm
# with its min-max spread and the ratios C/B and B'/B (the A/A ratio shows how much of a difference is noise).
#
# Usage: bash scripts/bench-ab.sh BASE_REF [-n ROUNDS] [-c] [-s 'path=value ...'] [-f 'W:DP:ARM ...'] [CONFIG.yaml ...]
#   BASE_REF  a commit, branch or tag (e.g. HEAD~3, main)
#   -n        alternations per arm, at least 6 (default 6)
#   -c        as ./servesim runs: each arm through its own launcher, with the ahead-of-time cache and JVM options
#             that launcher uses (JDK >= 25; B' then shares B's jar and cache, so the A/A pair shows run-to-run
#             noise, not cache-to-cache)
#   -s        --set overrides applied to every replay (space separated)
#   -f        KVCR fixture cells to compare too (space separated, e.g. '2048:1:kvcr-hinted 8:1:g2-only')
#   CONFIG    configs to replay (default: examples/synthetic.yaml, unless only fixture cells are given)
# Replay time is what `servesim replay` prints ("wall time: replay N ms"): the simulation alone, not JVM start-up or
# report writing. A fixture cell's value is its warm µs per request (`servesim bench fixture --workers W --dp DP
# --arm ARM --repeat 2 --warmup 1 --no-fork`, one JVM per measurement). Output directories are thrown away.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
base_ref="$1"
shift
rounds=6
sets=""
cells=""
launcher_cache=""
while getopts "n:cs:f:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    c) launcher_cache=1 ;;
    s) sets="$OPTARG" ;;
    f) cells="$OPTARG" ;;
    *) echo "bench-ab: unknown option (use -n ROUNDS, -c, -s 'path=value ...', -f 'W:DP:ARM ...')" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || [ "$rounds" -lt 6 ]; then
  echo "bench-ab: -n must be an integer >= 6 (got '$rounds')" >&2
  exit 2
fi
configs=("$@")
[ ${#configs[@]} -eq 0 ] && [ -z "$cells" ] && configs=(examples/synthetic.yaml)
for c in "${configs[@]}"; do
  [ -f "$c" ] || { echo "bench-ab: no such config: $c" >&2; exit 2; }
done
for cell in $cells; do
  [[ "$cell" =~ ^[0-9]+:[0-9]+:(g2-only|kvcr-off|kvcr-idle|kvcr-hinted|pd)$ ]] \
    || { echo "bench-ab: a fixture cell is W:DP:ARM with ARM one of g2-only, kvcr-off, kvcr-idle, kvcr-hinted, pd (got '$cell')" >&2; exit 2; }
  configs+=("fixture:$cell")
done
git rev-parse --verify --quiet "$base_ref^{commit}" >/dev/null || { echo "bench-ab: unknown ref '$base_ref'" >&2; exit 2; }

JAVA_HOME="$(bash scripts/jdk.sh 21)"
export JAVA_HOME
if [ -n "$launcher_cache" ]; then
  feature="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$JAVA_HOME/release" 2>/dev/null || true)"
  if [ -z "$feature" ] || [ "$feature" -lt 25 ]; then
    echo "bench-ab: -c needs a JDK >= 25 (the ahead-of-time cache); found $JAVA_HOME" >&2
    exit 2
  fi
fi
work="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "bench-ab: building the base ($base_ref) and the candidate (working tree)..." >&2
git worktree add --detach --quiet "$work/base" "$base_ref"
(cd "$work/base" && ./mvnw -B -q -ntp -DskipTests -Dspotless.check.skip=true -pl servesim-cli -am package >&2)
cp "$work/base/servesim-cli/target/servesim.jar" "$work/base.jar"
cp "$work/base.jar" "$work/base2.jar" # the A/A arm: the same bytes under another name
./mvnw -B -q -ntp -DskipTests -Dspotless.check.skip=true -pl servesim-cli -am package >&2
cp servesim-cli/target/servesim.jar "$work/cand.jar"
declare -A arm_jar=([B]="$work/base.jar" [C]="$work/cand.jar" [A]="$work/base2.jar")
declare -A arm_launcher=([B]="" [C]="" [A]="")
if [ -n "$launcher_cache" ]; then
  # A cache is tied to its jar's path, so each arm runs through the launcher that made the cache for its jar, with
  # that launcher's JVM options (which may differ between the arms).
  for dir in "$work/base" "$root"; do
    (cd "$dir" && SERVESIM_AOT=1 ./servesim --version >/dev/null 2>&1) || true
  done
  arm_launcher=([B]="$work/base/servesim" [C]="$root/servesim" [A]="$work/base/servesim")
  for arm in B C A; do
    if [ ! -f "$(dirname "${arm_launcher[$arm]}")/servesim-cli/target/servesim.aot" ]; then
      echo "bench-ab: arm $arm has no ahead-of-time cache (its launcher made none): it runs without" >&2
    fi
  done
fi

set_args=()
for s in $sets; do set_args+=(--set "$s"); done

# one measurement: a config's replay milliseconds, or a fixture cell's warm microseconds per request
replay_ms() {
  local arm="$1" config="$2"
  local jar="${arm_jar[$arm]}"
  local run=("$JAVA_HOME/bin/java" -XX:+UseParallelGC -XX:MaxTenuringThreshold=1 -Xss8m
    --enable-native-access=ALL-UNNAMED -jar "$jar")
  if [ -n "${arm_launcher[$arm]}" ]; then
    run=(env SERVESIM_AOT=1 "${arm_launcher[$arm]}")
  fi
  if [[ "$config" == fixture:* ]]; then
    local w dp arm
    IFS=: read -r _ w dp arm <<<"$config"
    "${run[@]}" bench fixture --workers "$w" --dp "$dp" --arm "$arm" \
      --repeat 2 --warmup 1 --no-fork --out "$work/fixture" 2>/dev/null \
      | awk -v w="$w" -v dp="$dp" -v arm="$arm" '$1 == w && $2 == dp && $3 == arm { print $8; exit }'
    return
  fi
  "${run[@]}" replay "$config" "${set_args[@]}" \
    --out "$work/out" --no-html --progress never 2>/dev/null \
    | sed -n 's/^wall time: replay \([0-9]*\) ms.*/\1/p'
}

printf '%-50s %-5s %10s %10s %10s %8s %8s\n' config arm median min max ratio spread
echo "bench-ab: configs in ms per replay, fixture cells in warm us per request" >&2
for config in "${configs[@]}"; do
  declare -A times=([B]="" [C]="" [A]="")
  for ((r = 1; r <= rounds; r++)); do
    # rotate the order each round so no arm always runs first (warm page cache, CPU boost)
    case $((r % 3)) in
      1) order=(B C A) ;;
      2) order=(C A B) ;;
      0) order=(A B C) ;;
    esac
    for arm in "${order[@]}"; do
      ms="$(replay_ms "$arm" "$config")"
      [ -n "$ms" ] || { echo "bench-ab: replay of $config with arm $arm printed no wall time" >&2; exit 1; }
      times[$arm]+="$ms "
    done
    echo "bench-ab: $config round $r/$rounds: B ${times[B]}| C ${times[C]}| B' ${times[A]}" >&2
  done
  # median, min, max per arm; ratio of medians to B; spread = the per-round ratio's min..max
  awk -v config="$config" -v b="${times[B]}" -v c="${times[C]}" -v a="${times[A]}" '
    function sort(arr, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j-1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j-1]; arr[j-1] = t } }
    function median(arr, n) { return n % 2 ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2 }
    function row(name, s, ref,   n, x, y, i, lo, hi, q) {
      n = split(s, x, " "); split(ref, y, " ")
      lo = 1e300; hi = 0
      for (i = 1; i <= n; i++) { q = x[i] / y[i]; if (q < lo) lo = q; if (q > hi) hi = q }
      sort(x, n)
      printf "%-50s %-5s %10.1f %10.1f %10.1f %8.3f %4.2f-%4.2f\n", config, name, median(x, n), x[1], x[n], median(x, n) / mb, lo, hi
    }
    BEGIN {
      n = split(b, xb, " "); sort(xb, n); mb = median(xb, n)
      row("B", b, b); row("C", c, b); row("B'"'"'", a, b)
    }'
  unset times
done
echo "bench-ab: C = candidate (working tree), B = $base_ref, B' = $base_ref again (A/A: its ratio is noise)" >&2
