#!/usr/bin/env bash
# Streaming check: replays a generated N-row trace (default 2,000,000) with a 512 MB heap and prints the peak heap.
# Usage: bash scripts/stream-check.sh [ROWS] [HEAP]   e.g. bash scripts/stream-check.sh 2000000 512m
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME="$(bash scripts/jdk.sh 21)"
export JAVA_HOME
./mvnw -B -q -ntp -DskipTests -Dspotless.check.skip=true -pl servesim-bench -am package
exec "$JAVA_HOME/bin/java" "-Xmx${2:-512m}" -XX:+UseParallelGC -cp servesim-bench/target/benchmarks.jar \
  io.servesim.bench.TraceStreamCheck "${1:-2000000}"
