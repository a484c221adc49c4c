#!/usr/bin/env bash
# Regenerates servesim-core/src/main/resources/io/servesim/timing/measured-kernels.yaml from a checkout (or git
# mirror) of ai-dynamo/aiconfigurator: scripts/aic-kernels.sh AIC_REPO [COMMIT]
# Needs a JDK >= 21 (found by scripts/jdk.sh) and DuckDB's JDBC driver (fetched into ~/.m2 by Maven).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="${1:?usage: scripts/aic-kernels.sh AIC_REPO [COMMIT]}"
commit="${2:-HEAD}"
duckdb_version=1.4.4.0
export JAVA_HOME="$(bash "$here/jdk.sh" 21)"
"$here/../mvnw" -q -B dependency:get -Dartifact="org.duckdb:duckdb_jdbc:$duckdb_version" >/dev/null
jar="$HOME/.m2/repository/org/duckdb/duckdb_jdbc/$duckdb_version/duckdb_jdbc-$duckdb_version.jar"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
data=aic-core/src/aiconfigurator_core/systems/data
sha="$(git -C "$repo" rev-parse "$commit")"
git -C "$repo" archive "$sha" "$data" | tar -x -C "$work"
out="$here/../servesim-core/src/main/resources/io/servesim/timing/measured-kernels.yaml"
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar" "$here/AicKernels.java" \
    "$work/$data" "$sha" "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out (aiconfigurator $sha)"
