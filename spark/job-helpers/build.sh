#!/usr/bin/env bash
# Builds the job's Java helpers: its crash points (lakehouse.faults) and Hudi's commit metrics
# reporter (lakehouse.hudi) into one jar, without Maven (spark/java-module.sh: what it compiles
# against).
#
# Usage: spark/job-helpers/build.sh OUTPUT_JAR   (e.g. ~/.cache/lakehouse/build/lakehouse-job-helpers.jar)
# Env:   PYSPARK_JARS, AWS_BUNDLE, HUDI_BUNDLE, JAVA_HOME  as spark/java-module.sh says
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -z "${1:-}" ]]; then
  echo "usage: $0 OUTPUT_JAR   (e.g. ~/.cache/lakehouse/build/lakehouse-job-helpers.jar)" >&2
  exit 2
fi
exec bash "$here/../java-module.sh" build "$here" "$1"
