"""lakehouse.compose.engine: never start an engine that something else manages."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakehouse.compose import ComposeError, engine
from lakehouse.core.config import load_settings

pytestmark = pytest.mark.unit


def test_a_desktop_engine_that_is_not_running_is_not_started(monkeypatch) -> None:
    monkeypatch.setattr(engine, "engine_answers", lambda: False)
    monkeypatch.setattr(engine.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(engine.shutil, "which", lambda name: f"/usr/local/bin/{name}")
    started: list[tuple] = []

    def start_dockerd(*args: object) -> bool:
        started.append(args)
        return True

    monkeypatch.setattr(engine, "_start_dockerd", start_dockerd)
    with pytest.raises(ComposeError, match=r"start Docker \(Docker Desktop\)"):
        engine.ensure_engine(load_settings(), print)
    assert not started


def test_an_unmanaged_root_machine_gets_dockerd_started(monkeypatch) -> None:
    monkeypatch.setattr(engine, "engine_answers", lambda: False)
    monkeypatch.setattr(engine, "_managed_engine", lambda: None)
    monkeypatch.setattr(engine.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(engine.os, "geteuid", lambda: 0)
    monkeypatch.setattr(engine, "_start_dockerd", lambda *a: True)
    assert engine.ensure_engine(load_settings(), print) is True


def test_a_running_engine_is_used_as_it_is(monkeypatch) -> None:
    monkeypatch.setattr(engine, "engine_answers", lambda: True)
    monkeypatch.setattr(engine, "_start_dockerd", lambda *a: pytest.fail("started"))
    assert engine.ensure_engine(load_settings(), print) is False


def test_stop_engine_leaves_an_engine_it_did_not_start(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAKEHOUSE_CACHE", str(tmp_path))
    killed = []
    monkeypatch.setattr(engine.os, "kill", lambda *a: killed.append(a))
    engine.stop_engine(load_settings(), print)  # no PID file
    (tmp_path / "docker-engine").mkdir()
    (tmp_path / "docker-engine" / "dockerd.pid").write_text("1")  # not a dockerd
    engine.stop_engine(load_settings(), print)
    assert not killed
