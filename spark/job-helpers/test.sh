#!/usr/bin/env bash
# Compiles the job's Java helpers (lakehouse.faults, lakehouse.hudi) and their JUnit 5 tests
# (src/test/java) and runs them with the JUnit console launcher, without Maven
# (spark/java-module.sh).
#
# Usage: spark/job-helpers/test.sh
# Env:   PYSPARK_JARS, AWS_BUNDLE, HUDI_BUNDLE, JAVA_HOME, JUNIT_CONSOLE  as spark/java-module.sh says
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../java-module.sh" test "$here"
