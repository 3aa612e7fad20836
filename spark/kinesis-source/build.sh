#!/usr/bin/env bash
# Builds the Kinesis DataSource V2 streaming source (and the job's other Java: its crash points,
# its Hudi metrics reporter) into one jar, without Maven: javac against the jars pyspark ships,
# the AWS SDK v1 bundle and Hudi's bundle (all on Spark's classpath at run time).
#
# Usage: spark/kinesis-source/build.sh OUTPUT_JAR
# Env:   PYSPARK_JARS  folder of pyspark's jars (default: the repo's .venv pyspark/jars)
#        AWS_BUNDLE    path to aws-java-sdk-bundle-<AWS_SDK_BUNDLE_VERSION>.jar
#                      (default: $LAKEHOUSE_CACHE/jars/, else ~/.cache/lakehouse/jars/aws-java-sdk-bundle-<version>.jar)
#        HUDI_BUNDLE   path to hudi-spark3.5-bundle_<scala>-<HUDI_VERSION>.jar (default: beside AWS_BUNDLE)
#        JAVA_HOME     a JDK 17+ (default: javac on PATH)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=/dev/null
source "$repo/versions.env"

out="${1:-}"
if [[ -z "$out" ]]; then
  echo "usage: $0 OUTPUT_JAR   (e.g. ~/.cache/lakehouse/build/lakehouse-kinesis-source.jar)" >&2
  exit 2
fi

cache="${LAKEHOUSE_CACHE:-$HOME/.cache/lakehouse}"
PYSPARK_JARS="${PYSPARK_JARS:-$("$repo/.venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)/jars}"
AWS_BUNDLE="${AWS_BUNDLE:-$cache/jars/aws-java-sdk-bundle-${AWS_SDK_BUNDLE_VERSION}.jar}"
# Hudi's bundle, for the metrics reporter (lakehouse.hudi): beside the AWS bundle unless named.
HUDI_BUNDLE="${HUDI_BUNDLE:-$(dirname "$AWS_BUNDLE")/hudi-spark3.5-bundle_${SCALA_BINARY_VERSION}-${HUDI_VERSION}.jar}"
javac_bin="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
jar_bin="${JAVA_HOME:+$JAVA_HOME/bin/}jar"

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
if ! command -v "$javac_bin" >/dev/null; then
  echo "error: no javac ($javac_bin); install a JDK 17 or set JAVA_HOME" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/classes"

mapfile -t sources < <(find "$here/src/main/java" -name '*.java' | sort)
"$javac_bin" --release 17 -Xlint:all,-serial,-processing,-path,-classfile -encoding UTF-8 \
  -cp "$PYSPARK_JARS/*:$AWS_BUNDLE:$HUDI_BUNDLE" -d "$work/classes" "${sources[@]}"
cp -r "$here/src/main/resources/." "$work/classes/"

mkdir -p "$(dirname "$out")"
"$jar_bin" --create --file "$work/out.jar" -C "$work/classes" .
mv "$work/out.jar" "$out"
echo "built $out"
