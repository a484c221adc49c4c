#!/usr/bin/env bash
# Kills replays with SIGKILL at random instants while they write into a directory that holds an earlier run, and
# checks after each kill that the directory is either exactly one complete run (every output byte-identical to run
# A's or to run B's, manifest included) or refused by `servesim report` as incomplete or mixed; never silently mixed.
# Then fills the disk while a replay writes over run A: a small tmpfs when run as root (mount needs it), else a
# file-size limit (the JVM ignores SIGXFSZ, so writes fail with "File too large" as they would with "No space left").
# Usage: scripts/kill-during-write.sh [KILLS] [CONFIG]   (default 40 kills of examples/quickstart.yaml)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kills="${1:-40}"
config="${2:-$root/examples/quickstart.yaml}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
servesim="$root/servesim"

digest() { # one line per servesim output present: name and sha256
  (cd "$1" && for f in canonical.json manifest.json report.html requests.csv requests.csv.zst summary.json \
      timeseries.csv workers.csv; do [ -f "$f" ] && echo "$f $(sha256sum < "$f" | cut -d' ' -f1)"; done) || true
}

"$servesim" replay "$config" --out "$work/a" --progress never --set workload.seed=1 >/dev/null
"$servesim" replay "$config" --out "$work/b" --progress never --set workload.seed=2 >/dev/null
digest "$work/a" > "$work/a.sum"
digest "$work/b" > "$work/b.sum"
start=$(date +%s%N)
"$servesim" replay "$config" --out "$work/t" --progress never --set workload.seed=1 >/dev/null
total_ms=$(( ($(date +%s%N) - start) / 1000000 ))

complete_a=0; complete_b=0; refused=0; mixed=0
for i in $(seq 1 "$kills"); do
  rm -rf "$work/d"; cp -r "$work/a" "$work/d"                # the earlier run: A
  delay_ms=$(( total_ms / 3 + RANDOM % (total_ms + 1) )) # JVM start and simulation first, writing last, some after
  "$servesim" replay "$config" --out "$work/d" --progress never --set workload.seed=2 >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  pkill -KILL -P "$pid" 2>/dev/null || true; kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if "$servesim" report "$work/d" >/dev/null 2>"$work/err"; then
    # report.html names its directory and the manifest lists report.html: compare the other outputs byte for byte
    now="$(digest "$work/d" | grep -vE '^(report.html|manifest.json) ')"
    if [ "$now" = "$(grep -vE '^(report.html|manifest.json) ' "$work/a.sum")" ]; then complete_a=$((complete_a + 1))
    elif [ "$now" = "$(grep -vE '^(report.html|manifest.json) ' "$work/b.sum")" ]; then complete_b=$((complete_b + 1))
    else mixed=$((mixed + 1)); echo "MIXED after a kill at ${delay_ms} ms:"; digest "$work/d"; fi
  else
    grep -qE 'is not a complete run|mixes two runs' "$work/err" && refused=$((refused + 1)) \
      || { mixed=$((mixed + 1)); echo "unexpected report error: $(cat "$work/err")"; }
  fi
done
echo "kills: $kills (replay ${total_ms} ms) — complete run A: $complete_a, complete run B: $complete_b," \
  "refused as incomplete or mixed: $refused, silently mixed: $mixed"

# a full disk: a tmpfs holding run A with 64 KiB to spare (root only), else a file-size limit of 64 KiB
rm -rf "$work/d"; mkdir -p "$work/d"
disk="file-size limit (ulimit -f)"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=$(( $(du -sk "$work/a" | cut -f1) + 64 ))k tmpfs "$work/d" 2>/dev/null; then
  disk="tmpfs with 64 KiB free"
  trap 'umount "$work/d" 2>/dev/null; rm -rf "$work"' EXIT
fi
cp -r "$work/a/." "$work/d/"
set +e
if [ "$disk" = "tmpfs with 64 KiB free" ]; then
  "$servesim" replay "$config" --out "$work/d" --progress never --set workload.seed=2 >/dev/null 2>"$work/err"
else
  (ulimit -f 64; "$servesim" replay "$config" --out "$work/d" --progress never --set workload.seed=2 >/dev/null 2>"$work/err")
fi
code=$?
set -e
echo "full disk ($disk): replay exit $code: $(head -1 "$work/err")"
"$servesim" report "$work/d" >/dev/null 2>"$work/err" && { echo "full disk: report accepted the directory"; exit 1; }
echo "full disk: report refuses: $(head -1 "$work/err")"
ls -A "$work/d" | grep -q '\.tmp$' && { echo "full disk: temporary files left:"; ls -A "$work/d"; exit 1; }
[ "$mixed" -eq 0 ] && [ "$code" -ne 0 ]
