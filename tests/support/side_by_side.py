"""`make test`'s runner: the quick checks in front, the end-to-end tests beside them.

The quick checks (lint, unit and JUnit tests) leave half of the 2 cores idle: 86 of 162
CPU-s busy in their 81 s (/proc/stat, 2026-11-28), time the end-to-end tests spent waiting
for them when they ran after. Here the end-to-end tests start at once, in their own process
group, writing to a log; the quick checks run in the foreground as before. Once those
pass, the end-to-end log is shown from its start and followed until the tests end. A failed
quick check, or Ctrl-C, stops the end-to-end tests as a Ctrl-C in their terminal would
(SIGINT to their group); their session then removes what its tests left running
(tests/support/leftovers.py), and the runner does the same once more, by the session id it
gave them, in case the session had to be killed.

    python -m tests.support.side_by_side --log LOG --quick 'make lint unit-test' -- pytest ...
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Final

from tests.support.leftovers import SESSION_ENV, remove_leftovers

STOP_WAIT_S: Final = 120.0
FOLLOW_EVERY_S: Final = 0.5


def start_in_background(command: Sequence[str], log: Path, session: str) -> subprocess.Popen[bytes]:
    """`command` as test session `session` (leftovers.SESSION_ENV), in a new process group
    (so it can be stopped as a whole) with SIGINT at its default: a command started in the
    background of a shell ignores SIGINT, and Python then never raises KeyboardInterrupt,
    so pytest could not be stopped cleanly."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        return subprocess.Popen(
            command,
            env={**os.environ, SESSION_ENV: session},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


def stop(process: subprocess.Popen[bytes], wait_s: float = STOP_WAIT_S) -> int:
    """SIGINT to the group, as Ctrl-C; SIGKILL to whatever is left after `wait_s`."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        return process.wait(wait_s)
    except ProcessLookupError:
        return process.wait()
    except subprocess.TimeoutExpired:
        print(f"== still running {wait_s:.0f} s after SIGINT: killed", flush=True)
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def stop_and_clean_up(process: subprocess.Popen[bytes], session: str, log: Path) -> None:
    """Stop the session; it removes what its tests left running (saying so in its log),
    and this removes whatever is still left, had the session to be killed."""
    code = stop(process)
    remove_leftovers(session)
    print(f"== the end-to-end tests stopped (exit {code}); their output: {log}", flush=True)


def follow(process: subprocess.Popen[bytes], log: Path, out: IO[bytes]) -> int:
    """Copy `log` to `out` from its start until `process` has ended and all is copied."""
    with open(log, "rb") as source:
        while True:
            ended = process.poll() is not None
            chunk = source.read()
            if chunk:
                out.write(chunk)
                out.flush()
            elif ended:
                return process.wait()
            else:
                time.sleep(FOLLOW_EVERY_S)


def run(quick: Sequence[str], background: Sequence[str], log: Path) -> int:
    """The exit code: the quick checks' if they failed, else the background command's."""
    session = uuid.uuid4().hex
    process = start_in_background(background, log, session)
    print(
        f"== the end-to-end tests started beside the quick checks (their output: {log})",
        flush=True,
    )
    try:
        quick_code = subprocess.run(quick).returncode
        if quick_code != 0:
            print("== a quick check failed (above): stopping the end-to-end tests", flush=True)
            stop_and_clean_up(process, session, log)
            return quick_code
        print("== the quick checks passed; the end-to-end tests so far and as they run:")
        sys.stdout.flush()
        return follow(process, log, sys.stdout.buffer)
    except KeyboardInterrupt:
        print("\n== interrupted: stopping the end-to-end tests", flush=True)
        stop_and_clean_up(process, session, log)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="the background command's output")
    parser.add_argument("--quick", required=True, help="the foreground command, one string")
    parser.add_argument("background", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    background = args.background[1:] if args.background[:1] == ["--"] else args.background
    if not background:
        parser.error("no background command: give it after --")
    return run(shlex.split(args.quick), background, args.log)


if __name__ == "__main__":
    sys.exit(main())
