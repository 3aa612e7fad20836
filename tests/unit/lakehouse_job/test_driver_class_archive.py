"""lakehouse_job.driver_class_archive: the job maps the archive or records it, and names a
recording only once the JVM has exited cleanly."""

import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyspark import SparkContext

from lakehouse.local import class_archive as launcher
from lakehouse_job import driver_class_archive

pytestmark = pytest.mark.unit

# A stand-in for the JVM: writes its "archive" when its stdin closes, then exits `code`.
JVM = """
import sys
sys.stdin.read()
open(sys.argv[1], "wb").write(b"classes")
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "driver-0123.jsa"
    monkeypatch.setenv(driver_class_archive.ARCHIVE_ENV, str(path))
    monkeypatch.setenv(driver_class_archive.SUBMIT_ENV, "--driver-memory 1g pyspark-shell")
    monkeypatch.setattr(driver_class_archive, "_recording", [])
    return path


def driver_options() -> str:
    args = shlex.split(os.environ[driver_class_archive.SUBMIT_ENV])
    assert args[0] == "--conf" and args[-3:] == ["--driver-memory", "1g", "pyspark-shell"]
    key, _, options = args[1].partition("=")
    assert key == "spark.driver.defaultJavaOptions"
    return options


def finish(monkeypatch: pytest.MonkeyPatch, partial: Path, code: int) -> None:
    jvm = subprocess.Popen(
        [sys.executable, "-c", JVM, str(partial), str(code)], stdin=subprocess.PIPE
    )
    monkeypatch.setattr(SparkContext, "_gateway", SimpleNamespace(proc=jvm))
    driver_class_archive.finish_recording()
    assert jvm.returncode == code  # waited for


def test_a_job_records_the_archive_when_there_is_none_and_names_it_after_its_jvm(
    monkeypatch: pytest.MonkeyPatch, archive: Path
) -> None:
    driver_class_archive.prepare()
    partial = Path(f"{archive}.{os.getpid()}.partial")
    assert driver_options() == f"-XX:ArchiveClassesAtExit={partial} {driver_class_archive.QUIET}"
    finish(monkeypatch, partial, code=0)
    assert archive.read_bytes() == b"classes" and not partial.exists()


def test_a_jvm_that_failed_leaves_no_archive(
    monkeypatch: pytest.MonkeyPatch, archive: Path
) -> None:
    driver_class_archive.prepare()
    partial = Path(f"{archive}.{os.getpid()}.partial")
    finish(monkeypatch, partial, code=1)
    assert not archive.exists() and not partial.exists()


def test_a_job_maps_an_archive_that_exists_and_records_nothing(
    monkeypatch: pytest.MonkeyPatch, archive: Path
) -> None:
    archive.write_bytes(b"classes")
    driver_class_archive.prepare()
    assert driver_options() == f"-XX:SharedArchiveFile={archive} {driver_class_archive.QUIET}"
    jvm = subprocess.Popen([sys.executable, "-c", JVM, "unused", "0"], stdin=subprocess.PIPE)
    monkeypatch.setattr(SparkContext, "_gateway", SimpleNamespace(proc=jvm))
    driver_class_archive.finish_recording()
    assert jvm.poll() is None  # left to exit with the driver, as without an archive
    jvm.kill()
    jvm.wait()


def test_nothing_is_done_unless_the_launcher_says_where_the_archive_is(
    monkeypatch: pytest.MonkeyPatch, archive: Path
) -> None:
    monkeypatch.delenv(driver_class_archive.ARCHIVE_ENV)
    driver_class_archive.prepare()
    assert os.environ[driver_class_archive.SUBMIT_ENV] == "--driver-memory 1g pyspark-shell"
    monkeypatch.setattr(SparkContext, "_gateway", None)
    driver_class_archive.finish_recording()


def test_the_job_reads_what_the_launcher_sets() -> None:
    assert driver_class_archive.ARCHIVE_ENV == launcher.ARCHIVE_ENV
    assert driver_class_archive.QUIET == launcher.QUIET
