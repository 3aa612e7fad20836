#!/usr/bin/env bash
# Builds or tests one of the job's Java modules (spark/kinesis-source, spark/job-helpers) without
# Maven: javac against the jars pyspark ships, the AWS SDK v1 bundle and Hudi's bundle (all on
# Spark's classpath at run time); the tests with the JUnit console launcher. Each module's
# build.sh and test.sh call this with their own folder.
#
# Usage: spark/java-module.sh build MODULE_DIR OUTPUT_JAR
#        spark/java-module.sh test MODULE_DIR
# Env:   PYSPARK_JARS  folder of pyspark's jars (default: the repo's .venv pyspark/jars)
#        AWS_BUNDLE    path to aws-java-sdk-bundle-<AWS_SDK_BUNDLE_VERSION>.jar
#                      (default: $LAKEHOUSE_CACHE/jars/, else ~/.cache/lakehouse/jars/aws-java-sdk-bundle-<version>.jar)
#        HUDI_BUNDLE   path to hudi-spark3.5-bundle_<scala>-<HUDI_VERSION>.jar (default: beside AWS_BUNDLE)
#        JAVA_HOME     a JDK 17+ (default: javac on PATH)
#        JUNIT_CONSOLE (test) path to junit-platform-console-standalone-<JUNIT_CONSOLE_VERSION>.jar
#                      (default: $LAKEHOUSE_CACHE/jars/, else ~/.cache/lakehouse/jars/)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=/dev/null
source "$repo/versions.env"

usage() {
  echo "usage: $0 build MODULE_DIR OUTPUT_JAR | test MODULE_DIR" >&2
  exit 2
}
action="${1:-}"
module="${2:-}"
out="${3:-}"
[[ -n "$module" && -d "$module/src/main/java" ]] || usage
case "$action" in
  build) [[ -n "$out" ]] || usage ;;
  test) ;;
  *) usage ;;
esac
module="$(cd "$module" && pwd)"

cache="${LAKEHOUSE_CACHE:-$HOME/.cache/lakehouse}"
PYSPARK_JARS="${PYSPARK_JARS:-$("$repo/.venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)/jars}"
AWS_BUNDLE="${AWS_BUNDLE:-$cache/jars/aws-java-sdk-bundle-${AWS_SDK_BUNDLE_VERSION}.jar}"
HUDI_BUNDLE="${HUDI_BUNDLE:-$(dirname "$AWS_BUNDLE")/hudi-spark3.5-bundle_${SCALA_BINARY_VERSION}-${HUDI_VERSION}.jar}"
JUNIT_CONSOLE="${JUNIT_CONSOLE:-$cache/jars/junit-platform-console-standalone-${JUNIT_CONSOLE_VERSION}.jar}"
javac_bin="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
jar_bin="${JAVA_HOME:+$JAVA_HOME/bin/}jar"
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

if [[ ! -f "$PYSPARK_JARS/spark-sql_${SCALA_BINARY_VERSION}-${PYSPARK_VERSION}.jar" ]]; then
  echo "error: PYSPARK_JARS=$PYSPARK_JARS does not hold spark-sql_${SCALA_BINARY_VERSION}-${PYSPARK_VERSION}.jar;" \
       "install pyspark ${PYSPARK_VERSION} or point PYSPARK_JARS at its jars folder" >&2
  exit 1
fi
if [[ ! -f "$AWS_BUNDLE" ]]; then
  echo "error: AWS_BUNDLE=$AWS_BUNDLE not found; download" \
       "com.amazonaws:aws-java-sdk-bundle:${AWS_SDK_BUNDLE_VERSION} and set AWS_BUNDLE to it" >&2
  exit 1
fi
if [[ ! -f "$HUDI_BUNDLE" ]]; then
  echo "error: HUDI_BUNDLE=$HUDI_BUNDLE not found; download" \
       "org.apache.hudi:hudi-spark3.5-bundle_${SCALA_BINARY_VERSION}:${HUDI_VERSION} and set HUDI_BUNDLE to it" >&2
  exit 1
fi
if [[ "$action" == test && ! -f "$JUNIT_CONSOLE" ]]; then
  echo "error: JUNIT_CONSOLE=$JUNIT_CONSOLE not found; download" \
       "org.junit.platform:junit-platform-console-standalone:${JUNIT_CONSOLE_VERSION} and set JUNIT_CONSOLE to it" >&2
  exit 1
fi
if ! command -v "$javac_bin" >/dev/null; then
  echo "error: no javac ($javac_bin); install a JDK 17 or set JAVA_HOME" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/main" "$work/test"
deps="$PYSPARK_JARS/*:$AWS_BUNDLE:$HUDI_BUNDLE"
mapfile -t main_sources < <(find "$module/src/main/java" -name '*.java' | sort)

if [[ "$action" == build ]]; then
  "$javac_bin" --release 17 -Xlint:all,-serial,-processing,-path,-classfile -encoding UTF-8 \
    -cp "$deps" -d "$work/main" "${main_sources[@]}"
  if [[ -d "$module/src/main/resources" ]]; then
    cp -r "$module/src/main/resources/." "$work/main/"
  fi
  mkdir -p "$(dirname "$out")"
  "$jar_bin" --create --file "$work/out.jar" -C "$work/main" .
  mv "$work/out.jar" "$out"
  echo "built $out"
  exit 0
fi

mapfile -t test_sources < <(find "$module/src/test/java" -name '*.java' | sort)
"$javac_bin" --release 17 -encoding UTF-8 -Xlint:-options,-path -cp "$deps" -d "$work/main" "${main_sources[@]}"
"$javac_bin" --release 17 -encoding UTF-8 -Xlint:-options,-path -cp "$deps:$work/main:$JUNIT_CONSOLE" \
  -d "$work/test" "${test_sources[@]}"
if [[ -d "$module/src/test/resources" ]]; then
  cp -r "$module/src/test/resources/." "$work/test/"
fi

# The launcher's --class-path takes no wildcards: spell the pyspark jars out.
spark_cp="$(find "$PYSPARK_JARS" -name '*.jar' | sort | tr '\n' ':')"
"$java_bin" -jar "$JUNIT_CONSOLE" execute --disable-banner --disable-ansi-colors --details=tree \
  --class-path "$work/test:$work/main:${spark_cp}$AWS_BUNDLE:$HUDI_BUNDLE" \
  --scan-class-path "$work/test" --fail-if-no-tests
