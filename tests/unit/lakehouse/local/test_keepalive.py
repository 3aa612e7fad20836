"""lakehouse.local.keepalive: restart with backoff; stop on success, on request, on exit 3 or 5."""

import sys
from pathlib import Path

import pytest

from lakehouse.local.keepalive import Keepalive

pytestmark = pytest.mark.unit


def exits(*codes: int) -> list[str]:
    """A command that exits with the next code of `codes` on each run (state in argv)."""
    script = (
        "import pathlib, sys; f = pathlib.Path(sys.argv[1]); n = int(f.read_text() or 0) "
        "if f.exists() else 0; f.write_text(str(n + 1)); "
        f"sys.exit({list(codes)}[n])"
    )
    return [sys.executable, "-c", script]


def test_failures_are_restarted_with_growing_backoff_until_a_clean_exit(tmp_path: Path) -> None:
    waits: list[float] = []
    keepalive = Keepalive(
        [*exits(1, 4, 1, 0), str(tmp_path / "n")], max_backoff_s=3, sleep=waits.append
    )
    assert keepalive.run() == 0
    assert waits == [1, 2, 3]  # doubled, capped at max_backoff
    assert keepalive.restarts == 3


@pytest.mark.parametrize("code", [0, 2, 3, 5])
def test_a_clean_exit_a_held_checkpoint_or_a_refused_tables_file_is_not_restarted(
    code: int, tmp_path: Path
) -> None:
    waits: list[float] = []
    keepalive = Keepalive([*exits(code, 1), str(tmp_path / "n")], sleep=waits.append)
    assert keepalive.run() == code
    assert waits == []


def test_a_stop_request_during_the_backoff_ends_the_loop(tmp_path: Path) -> None:
    keepalive = Keepalive([*exits(1, 0), str(tmp_path / "n")])
    keepalive.sleep = lambda _s: keepalive.request_stop(15)
    assert keepalive.run() == 1
    assert (tmp_path / "n").read_text() == "1"  # not started again
