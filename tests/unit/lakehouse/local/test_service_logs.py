"""lakehouse.local.service_logs: a log's last lines, then what is appended (`lakehouse logs`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lakehouse.local import service_logs

pytestmark = pytest.mark.unit


def test_the_last_lines_then_what_follows(tmp_path: Path) -> None:
    log = tmp_path / "trino.log"
    log.write_text("".join(f"line {i}\n" for i in range(10)))
    out = io.StringIO()
    rounds = iter([True, True, False])

    def keep_going() -> bool:
        more = next(rounds)
        if more:
            with open(log, "a") as f:
                f.write("appended\n")
        return more

    service_logs.show(log, out, count=3, follow=True, poll_s=0, keep_going=keep_going)
    assert out.getvalue() == "line 7\nline 8\nline 9\nappended\nappended\n"


def test_a_log_started_over_is_read_from_its_beginning(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("old old old\n")
    out = io.StringIO()
    rounds = iter([True, False])

    def keep_going() -> bool:
        log.write_text("new\n")  # shorter than what was read: a new file
        return next(rounds)

    service_logs.show(log, out, count=5, follow=True, poll_s=0, keep_going=keep_going)
    assert out.getvalue() == "old old old\nnew\n"


def test_without_follow_only_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "minio.log"
    log.write_bytes(b"a\nb\xff\n")
    out = io.StringIO()
    service_logs.show(log, out, count=1)
    assert out.getvalue() == "b\ufffd\n"
