#!/usr/bin/env bash
# Compiles the Kinesis source and its JUnit 5 tests (src/test/java) and runs them with the JUnit
# console launcher, without Maven (spark/java-module.sh).
#
# Usage: spark/kinesis-source/test.sh
# Env:   PYSPARK_JARS, AWS_BUNDLE, HUDI_BUNDLE, JAVA_HOME, JUNIT_CONSOLE  as spark/java-module.sh says
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../java-module.sh" test "$here"
