"""lakehouse.bench.warmup: a warm-up job only when the class path has no archive yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakehouse.bench import warmup
from lakehouse.core.config import load_settings
from lakehouse.local.class_archive import ARCHIVE_ENV

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("archive", ["exists", "no archive on this JDK"])
def test_nothing_runs_when_there_is_an_archive_or_none_can_be(
    archive: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = tmp_path / "driver-abc.jsa"
    recorded.write_bytes(b"")
    env = {ARCHIVE_ENV: str(recorded)} if archive == "exists" else {}
    monkeypatch.setattr(warmup, "job_env", lambda *_, **__: env)
    monkeypatch.setattr(warmup, "kinesis_client", lambda _: pytest.fail("no warm-up job"))
    said: list[str] = []
    warmup.ensure_class_archive(load_settings(), tmp_path, said.append)
    assert said == []
