"""A class-data archive for the Spark driver's JVM (the JDK's AppCDS, dynamic archive).

Every driver (the job, its restarts, notebook kernels, the SQL shell) loads the same ~20,000
classes of Spark, Hudi, Hadoop and the AWS SDK, and parses and verifies each from the jars at
every start. With the archive they are mapped from one file: on this machine a short
`--available-now` job run took 18 s instead of 25 s (benchmarks: `lakehouse bench --drain`
reports start-up CPU-seconds).

The archive is recorded by the first job that exits (not killed): the job, told where the
archive goes, asks its JVM to write the classes it loaded at exit (-XX:ArchiveClassesAtExit)
into a partial file when there is none yet, and renames it once the JVM is gone
(lakehouse_job.driver_class_archive); drivers started after map it. Its name is a digest of
everything it depends on (the JDK, each jar of the class path, pyspark's among them, with
its size and time): a new jar or JDK records a new one, and the JDK itself checks the class
path again when it maps the file (and runs without it when they differ).

The JDK refuses to archive with a directory on the class path that is not empty, and Spark
puts its conf directory there: that directory is an empty one (empty_conf_dir), and
spark-defaults.conf is given as --properties-file instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path

from lakehouse.core.config import Settings

# Read by the job's driver (lakehouse_job.driver_class_archive, which cannot import this package):
# where the archive is, or is to be recorded.
ARCHIVE_ENV = "LAKEHOUSE_CLASS_ARCHIVE"
# A partial file older than this is from a JVM that exited without its driver waiting for it
# (a driver killed, a batch timeout): nobody renames it.
STALE_PARTIAL_S = 15 * 60
# An archive no driver has mapped for this long is for a class path no longer in use (a jar
# or the JDK changed since). Several class paths can be in use at once (the Glue catalog's
# jars beside the metastore's), so an archive is not removed just for being another one's.
UNUSED_ARCHIVE_S = 7 * 24 * 3600
# CDS reports every class it skips (signed jars, old class file versions): thousands of lines.
QUIET = "-Xlog:cds*=error"
DYNAMIC_ARCHIVE_SINCE = 13  # -XX:ArchiveClassesAtExit (JEP 350)
# A JVM given these runs without the archive: a class-file load hook (JVMTI: Flight Recorder,
# profilers, APM agents) over archived classes crashes JDK 17's JVM at start (SIGSEGV in
# KlassFactory::check_shared_class_file_load_hook; seen with -XX:StartFlightRecording).
AGENT_OPTIONS = re.compile(r"-javaagent:|-agentlib:|-agentpath:|-XX:\+?StartFlightRecording")


def archive_dir(settings: Settings) -> Path:
    return settings.state_dir / "class-archive"


def empty_conf_dir(settings: Settings) -> Path:
    """SPARK_CONF_DIR for the drivers: empty, so that the JDK can archive their class path."""
    path = archive_dir(settings) / "spark-conf"
    path.mkdir(parents=True, exist_ok=True)
    return path


def archive_path(settings: Settings, java_home: Path, class_path: Sequence[Path]) -> Path:
    digest = hashlib.sha256()
    release = java_home / "release"
    digest.update(str(java_home.resolve()).encode())
    digest.update(release.read_bytes() if release.exists() else b"")
    for entry in class_path:
        stat = entry.stat() if entry.exists() else None
        digest.update(f"{entry} {stat and stat.st_size} {stat and stat.st_mtime_ns}".encode())
    return archive_dir(settings) / f"driver-{digest.hexdigest()[:16]}.jsa"


def java_feature_version(java_home: Path) -> int | None:
    """The JDK's feature release (11, 17, ...) from its release file; None when unknown."""
    release = java_home / "release"
    if not release.exists():
        return None
    match = re.search(r'^JAVA_VERSION="(?:1\.)?(\d+)', release.read_text(), re.MULTILINE)
    return int(match[1]) if match else None


def driver_options(
    settings: Settings,
    java_home: Path,
    class_path: Sequence[Path],
    record: bool,
    java_options: str = "",
) -> tuple[list[str], dict[str, str]]:
    """The driver JVM's options and its Python driver's environment. `record`: the driver is
    the job, which maps the archive or, when there is none when it starts, records it
    (lakehouse_job.driver_class_archive: a supervisor restarts a job with the environment of its
    first start); other drivers (notebook kernels) map it when it exists. Nothing on a JDK
    before 13, which has no dynamic archive (Spark 3.5 also runs on 11), nor when
    `java_options` (the JVM's JAVA_TOOL_OPTIONS and JDK_JAVA_OPTIONS) load an agent."""
    if (java_feature_version(java_home) or 0) < DYNAMIC_ARCHIVE_SINCE:
        return [], {}
    if AGENT_OPTIONS.search(java_options):
        return [], {}
    archive = archive_path(settings, java_home, class_path)
    archive.parent.mkdir(parents=True, exist_ok=True)
    if archive.exists():
        os.utime(archive)  # in use (_remove_stale)
    _remove_stale(archive.parent)
    if record:
        return [], {ARCHIVE_ENV: str(archive)}
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", QUIET], {}
    return [], {}


def _remove_stale(folder: Path) -> None:
    """Abandoned partial files, and archives unused for a week: each is ~200 MB."""
    now = time.time()
    for path in folder.glob("driver-*.jsa*"):
        age = now - path.stat().st_mtime
        if age > (STALE_PARTIAL_S if path.suffix == ".partial" else UNUSED_ARCHIVE_S):
            path.unlink(missing_ok=True)
