"""lakehouse.local.class_archive: when a driver records the JVM's class-data archive, when it maps
it, and which old files go."""

import os
import time
from pathlib import Path

import pytest

from lakehouse.core.config import load_settings
from lakehouse.local import class_archive

pytestmark = pytest.mark.unit


@pytest.fixture
def jdk(tmp_path: Path) -> Path:
    home = tmp_path / "jdk"
    home.mkdir()
    (home / "release").write_text('JAVA_VERSION="17.0.15"\n')
    return home


@pytest.fixture
def class_path(tmp_path: Path) -> list[Path]:
    jars = [tmp_path / "a.jar", tmp_path / "b.jar"]
    for jar in jars:
        jar.write_bytes(b"PK")
    return jars


def test_the_job_is_told_where_the_archive_is_and_other_drivers_map_it_when_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jdk: Path, class_path: list[Path]
) -> None:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path / "state"))
    settings = load_settings()
    archive = class_archive.archive_path(settings, jdk, class_path)
    assert archive.parent == class_archive.archive_dir(settings)
    job = class_archive.driver_options(settings, jdk, class_path, record=True)
    assert job == ([], {class_archive.ARCHIVE_ENV: str(archive)})
    assert class_archive.driver_options(settings, jdk, class_path, record=False) == ([], {})

    archive.write_bytes(b"classes")  # what a job's driver names it, once written
    assert class_archive.driver_options(settings, jdk, class_path, record=True) == job
    assert class_archive.driver_options(settings, jdk, class_path, record=False) == (
        [f"-XX:SharedArchiveFile={archive}", class_archive.QUIET],
        {},
    )
    # An agent's class-file load hook over archived classes crashes JDK 17: no archive.
    for agent in ("-javaagent:/opt/apm.jar", "-XX:StartFlightRecording=filename=x.jfr"):
        for record in (True, False):
            options = class_archive.driver_options(settings, jdk, class_path, record, agent)
            assert options == ([], {}), agent


def test_the_archive_is_named_after_the_jdk_and_every_jar(
    tmp_path: Path, jdk: Path, class_path: list[Path]
) -> None:
    settings = load_settings()
    before = class_archive.archive_path(settings, jdk, class_path)
    assert class_archive.archive_path(settings, jdk, class_path) == before
    class_path[1].write_bytes(b"PK, rebuilt")
    rebuilt = class_archive.archive_path(settings, jdk, class_path)
    assert rebuilt != before
    assert class_archive.archive_path(settings, jdk, class_path[:1]) not in (before, rebuilt)
    (jdk / "release").write_text('JAVA_VERSION="17.0.16"\n')
    assert class_archive.archive_path(settings, jdk, class_path) != rebuilt


def test_abandoned_partials_and_archives_unused_for_a_week_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jdk: Path, class_path: list[Path]
) -> None:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path / "state"))
    settings = load_settings()
    folder = class_archive.archive_dir(settings)
    folder.mkdir(parents=True)
    in_use = class_archive.archive_path(settings, jdk, class_path)
    other_jars = folder / "driver-0123456789abcdef.jsa"  # the Glue catalog's, say
    unused = folder / "driver-fedcba9876543210.jsa"
    abandoned = folder / "driver-0123456789abcdef.jsa.1234.partial"
    being_written = folder / "driver-0123456789abcdef.jsa.5678.partial"
    for path in (in_use, other_jars, unused, abandoned, being_written):
        path.write_bytes(b"x")
    hour_ago, eight_days_ago = time.time() - 3600, time.time() - 8 * 24 * 3600
    os.utime(abandoned, (hour_ago, hour_ago))
    for path in (in_use, unused):
        os.utime(path, (eight_days_ago, eight_days_ago))
    # the archive mapped now is in use again, however old
    class_archive.driver_options(settings, jdk, class_path, record=False)
    kept = {in_use.name, other_jars.name, being_written.name}
    assert {p.name for p in folder.glob("driver-*")} == kept
    assert time.time() - in_use.stat().st_mtime < 60
    assert class_archive.empty_conf_dir(settings).is_dir()
    assert not any(class_archive.empty_conf_dir(settings).iterdir())


@pytest.mark.parametrize(
    ("release", "version"),
    [
        ('JAVA_VERSION="17.0.15"', 17),
        ('JAVA_VERSION="11.0.2"', 11),
        ('JAVA_VERSION="1.8.0_402"', 8),
    ],
)
def test_the_jdk_release_is_read_from_its_release_file(
    tmp_path: Path, release: str, version: int
) -> None:
    (tmp_path / "release").write_text(f'IMPLEMENTOR="x"\n{release}\n')
    assert class_archive.java_feature_version(tmp_path) == version
    assert class_archive.java_feature_version(tmp_path / "missing") is None


def test_a_jdk_without_dynamic_archives_gets_no_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jdk: Path, class_path: list[Path]
) -> None:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path / "state"))
    (jdk / "release").write_text('JAVA_VERSION="11.0.22"\n')
    settings = load_settings()
    for record in (True, False):
        assert class_archive.driver_options(settings, jdk, class_path, record) == ([], {})
