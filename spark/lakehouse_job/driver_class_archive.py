"""The job's part in its JVM's class-data archive (lakehouse.class_archive).

The launcher says where the archive is (LAKEHOUSE_CLASS_ARCHIVE). Before the JVM starts, the
job asks it to map the archive, or, when there is none yet, to record one as it exits. The
JVM exits only after this driver has gone (when its stdin, this process's pipe, closes), so
the driver closes that pipe itself, waits for the JVM and names the file: no driver ever maps
a half-written archive. A JVM whose driver was killed still writes its partial file; the
launcher removes those (lakehouse.class_archive.STALE_PARTIAL_S).
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
from pathlib import Path

from pyspark import SparkContext

# Named as when this module was class_archive: log lines keep their logger name.
log = logging.getLogger("lakehouse_job.class_archive")

ARCHIVE_ENV = "LAKEHOUSE_CLASS_ARCHIVE"  # set by lakehouse.class_archive
SUBMIT_ENV = "PYSPARK_SUBMIT_ARGS"
# CDS reports every class it skips (signed jars, old class file versions): thousands of lines.
QUIET = "-Xlog:cds*=error"
# Writing ~200 MB of classes: seconds; a supervisor's stop allows far longer.
WAIT_S = 90.0

_recording: list[Path] = []  # the partial file this driver's JVM writes at exit


def prepare() -> None:
    """Before the session starts its JVM: map the archive, or record it when there is none."""
    archive = os.environ.get(ARCHIVE_ENV)
    if not archive:
        return
    if Path(archive).exists():
        option = f"-XX:SharedArchiveFile={archive}"
    else:
        partial = Path(f"{archive}.{os.getpid()}.partial")
        _recording[:] = [partial]
        option = f"-XX:ArchiveClassesAtExit={partial}"
    # Before spark.driver.extraJavaOptions (spark-defaults.conf), not instead of it.
    conf = shlex.quote(f"spark.driver.defaultJavaOptions={option} {QUIET}")
    os.environ[SUBMIT_ENV] = f"--conf {conf} {os.environ.get(SUBMIT_ENV, 'pyspark-shell')}"


def finish_recording() -> None:
    """Let the JVM exit, wait for its archive and name it; a no-op unless this driver's JVM
    records one."""
    archive = os.environ.get(ARCHIVE_ENV)
    gateway = SparkContext._gateway
    jvm: subprocess.Popen | None = getattr(gateway, "proc", None)
    if not _recording or not archive or jvm is None or jvm.stdin is None:
        return
    (partial,) = _recording
    jvm.stdin.close()
    try:
        code = jvm.wait(WAIT_S)
    except subprocess.TimeoutExpired:
        log.warning("the JVM did not exit in %.0f s: its class-data archive is not kept", WAIT_S)
        return
    if code == 0 and partial.exists() and partial.stat().st_size > 0:
        os.replace(partial, archive)
        log.info("class-data archive for the next drivers' start: %s", archive)
    else:
        partial.unlink(missing_ok=True)
