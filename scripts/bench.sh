#!/usr/bin/env bash
# Builds and runs the JMH benchmarks on a JDK >= 21: bash scripts/bench.sh [JMH regex and options]
# e.g. bash scripts/bench.sh ReplayBenchmark -p workers=8,2048
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME="$(bash scripts/jdk.sh 21)"
export JAVA_HOME
./mvnw -B -q -ntp -DskipTests -Dspotless.check.skip=true -pl servesim-bench -am package
exec "$JAVA_HOME/bin/java" -jar servesim-bench/target/benchmarks.jar "$@"
