#!/usr/bin/env bash
# Prints the home of the newest JDK >= MIN (default 21) on this machine, or fails with one clear line.
# Usage: bash scripts/jdk.sh [MIN_FEATURE]
# Looks at $JAVA_HOME, the `java` on PATH, and every JDK beside it (e.g. /usr/lib/jvm/*), reading each
# JDK's `release` file, so no absolute path is baked into the repository.
set -euo pipefail
min="${1:-21}"
feature_of() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true; }
candidates=()
[ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
if command -v java >/dev/null 2>&1; then
  home="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  candidates+=("$home")
  for d in "$(dirname "$home")"/*/; do candidates+=("${d%/}"); done
fi
for d in /usr/lib/jvm/*/ /usr/local/lib/jvm/*/ /opt/java/*/ /opt/jdk*/; do
  [ -d "$d" ] && candidates+=("${d%/}")
done
best=""; bestv=0
for d in "${candidates[@]}"; do
  [ -x "$d/bin/javac" ] || continue
  v="$(feature_of "$d")"
  [ -n "$v" ] && [ "$v" -ge "$min" ] || continue
  if [ "$v" -gt "$bestv" ]; then best="$d"; bestv="$v"; fi
done
if [ -z "$best" ]; then
  echo "servesim needs a JDK >= $min (none found via JAVA_HOME, PATH or /usr/lib/jvm): install one, e.g. 'apt-get install openjdk-21-jdk-headless' or Temurin 21/25, or set JAVA_HOME" >&2
  exit 1
fi
echo "$best"
