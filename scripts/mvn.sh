#!/usr/bin/env bash
# Runs the Maven Wrapper on a JDK >= 21 found automatically: bash scripts/mvn.sh ARGS...
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME="$(bash scripts/jdk.sh 21)"
export JAVA_HOME
exec ./mvnw "$@"
