"""tests/support/side_by_side.py with real, tiny processes."""

from __future__ import annotations

import io
import signal
import sys
from pathlib import Path

import pytest

from tests.support import side_by_side
from tests.support.leftovers import SESSION_ENV

pytestmark = pytest.mark.unit

PY = sys.executable
ENV = SESSION_ENV


def test_the_background_output_is_followed_to_its_end_and_its_code_returned(
    tmp_path: Path,
) -> None:
    log = tmp_path / "e2e.log"
    script = (
        "import time\n"
        "for i in range(3):\n    print(i, flush=True); time.sleep(0.3)\n"
        "raise SystemExit(4)"
    )
    process = side_by_side.start_in_background([PY, "-c", script], log, "s1")
    out = io.BytesIO()
    assert side_by_side.follow(process, log, out) == 4
    assert out.getvalue() == b"0\n1\n2\n"


def test_a_failed_quick_check_stops_the_background_command_as_ctrl_c_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background command sees KeyboardInterrupt (SIGINT at its default, even when the
    caller ignores it) and its cleanup runs, then the leftovers are removed; the quick
    check's code is returned."""
    removals: list[str] = []
    monkeypatch.setattr(side_by_side, "remove_leftovers", lambda session: removals.append(session))
    log = tmp_path / "e2e.log"
    cleaned = tmp_path / "cleaned"
    script = (
        "import time, pathlib\n"
        "try:\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n"
        f"    pathlib.Path({str(cleaned)!r}).touch(); raise SystemExit(2)"
    )
    # As when make test itself runs in a shell's background (CI): SIGINT ignored, inherited.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = side_by_side.run(
            [PY, "-c", "import time; time.sleep(0.5); raise SystemExit(3)"],
            [PY, "-c", script],
            log,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 3
    assert cleaned.exists()  # interrupted, not killed after STOP_WAIT_S
    assert len(removals) == 1  # by the id the session was given


def test_the_background_command_runs_in_its_own_process_group_as_the_given_session(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pgid.log"
    process = side_by_side.start_in_background(
        [PY, "-c", f"import os; print(os.getpgid(0) == os.getpid(), os.environ[{ENV!r}])"],
        log,
        "s1",
    )
    assert process.wait(30) == 0
    assert log.read_text().strip() == "True s1"


def test_the_command_line_needs_a_background_command(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        side_by_side.main(["--log", str(tmp_path / "x.log"), "--quick", "true", "--"])
