#!/usr/bin/env bash
# Compiles the Kinesis source and its JUnit 5 tests (src/test/java) and runs them with the JUnit
# console launcher, without Maven.
#
# Usage: spark/kinesis-source/test.sh
# Env:   PYSPARK_JARS, AWS_BUNDLE, HUDI_BUNDLE, JAVA_HOME  as for build.sh
#        JUNIT_CONSOLE  path to junit-platform-console-standalone-<JUNIT_CONSOLE_VERSION>.jar
#                       (default: $LAKEHOUSE_CACHE/jars/, else ~/.cache/lakehouse/jars/junit-platform-console-standalone-<version>.jar)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=/dev/null
source "$repo/versions.env"

cache="${LAKEHOUSE_CACHE:-$HOME/.cache/lakehouse}"
PYSPARK_JARS="${PYSPARK_JARS:-$("$repo/.venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)/jars}"
AWS_BUNDLE="${AWS_BUNDLE:-$cache/jars/aws-java-sdk-bundle-${AWS_SDK_BUNDLE_VERSION}.jar}"
# Hudi's bundle, for the metrics reporter (lakehouse.hudi): beside the AWS bundle unless named.
HUDI_BUNDLE="${HUDI_BUNDLE:-$(dirname "$AWS_BUNDLE")/hudi-spark3.5-bundle_${SCALA_BINARY_VERSION}-${HUDI_VERSION}.jar}"
JUNIT_CONSOLE="${JUNIT_CONSOLE:-$cache/jars/junit-platform-console-standalone-${JUNIT_CONSOLE_VERSION}.jar}"
javac_bin="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

for f in "$PYSPARK_JARS/spark-sql_${SCALA_BINARY_VERSION}-${PYSPARK_VERSION}.jar" "$AWS_BUNDLE" "$HUDI_BUNDLE" "$JUNIT_CONSOLE"; do
  if [[ ! -f "$f" ]]; then
    echo "error: $f not found (set PYSPARK_JARS, AWS_BUNDLE, HUDI_BUNDLE or JUNIT_CONSOLE)" >&2
    exit 1
  fi
done
if ! command -v "$javac_bin" >/dev/null; then
  echo "error: no javac ($javac_bin); install a JDK 17 or set JAVA_HOME" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/main" "$work/test"

mapfile -t main_sources < <(find "$here/src/main/java" -name '*.java' | sort)
mapfile -t test_sources < <(find "$here/src/test/java" -name '*.java' | sort)
deps="$PYSPARK_JARS/*:$AWS_BUNDLE:$HUDI_BUNDLE"
"$javac_bin" --release 17 -encoding UTF-8 -Xlint:-options,-path -cp "$deps" -d "$work/main" "${main_sources[@]}"
"$javac_bin" --release 17 -encoding UTF-8 -Xlint:-options,-path -cp "$deps:$work/main:$JUNIT_CONSOLE" \
  -d "$work/test" "${test_sources[@]}"
cp -r "$here/src/test/resources/." "$work/test/"

# The launcher's --class-path takes no wildcards: spell the pyspark jars out.
spark_cp="$(find "$PYSPARK_JARS" -name '*.jar' | sort | tr '\n' ':')"
"$java_bin" -jar "$JUNIT_CONSOLE" execute --disable-banner --disable-ansi-colors --details=tree \
  --class-path "$work/test:$work/main:${spark_cp}$AWS_BUNDLE:$HUDI_BUNDLE" \
  --scan-class-path "$work/test" --fail-if-no-tests
