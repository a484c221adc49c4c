#!/usr/bin/env bash
# Runs the servesim command with the Spark module on the class path, for `sweep --engine spark`:
#   bash scripts/servesim-spark.sh sweep examples/sweep.yaml --engine spark [--master local[*]|spark://host:7077]
# Builds what is needed on first use (Spark's jars come from Maven Central, about 280 MB, once).
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME="$(bash scripts/jdk.sh 21)"
export JAVA_HOME
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
cp_file=servesim-spark/target/classpath.txt
if [ ! -f servesim-cli/target/servesim.jar ] || [ ! -f "$cp_file" ] \
   || [ -n "$(find servesim-*/src pom.xml */pom.xml -newer "$cp_file" -print -quit 2>/dev/null)" ]; then
  echo "servesim-spark: building (first use or sources changed)..." >&2
  ./mvnw -B -q -ntp -DskipTests -Dspotless.check.skip=true install >&2
  ./mvnw -B -q -ntp -pl servesim-spark dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >&2
fi
thp=() # transparent huge pages where the kernel gives them on request, as ./servesim asks for them
if grep -qs '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled; then
  thp=(-XX:+UseTransparentHugePages)
fi
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -XX:MaxTenuringThreshold=1 ${thp[@]+"${thp[@]}"} \
  -cp "servesim-cli/target/servesim.jar:servesim-spark/target/classes:$(cat "$cp_file")" io.servesim.cli.Main "$@"
