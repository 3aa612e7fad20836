"""Run a command and restart it when it fails, with exponential backoff (local mode's job).

    python -m lakehouse.local.keepalive [--max-backoff 60] -- COMMAND...

An exit 0 ends it (the job stopped as asked), and so does SIGTERM or SIGINT: the signal is
passed on to the command, which stops in its own time, and no restart follows. Any other
exit is logged and the command restarted after 1, 2, 4 ... max-backoff seconds; a run that
lasted `--healthy-after` seconds resets the backoff. Exit code 3 (another job holds the
checkpoint) and 5 (the tables file declares a change the existing tables refuse) are not
faults a restart can fix: they end the loop with that code.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType

# 2: the job's arguments are wrong (argparse); 3: another job holds the checkpoint; 5: the
# tables file declares a change the existing tables cannot take
# (lakehouse_job.startup.EXIT_REFUSED_CONFIG). None is a fault a restart fixes: the job
# said why, and restarting would only repeat it.
NO_RESTART_CODES = frozenset({0, 2, 3, 5})


class Keepalive:
    def __init__(
        self,
        command: Sequence[str],
        max_backoff_s: float = 60.0,
        healthy_after_s: float = 300.0,
        sleep: Callable[[float], object] | None = None,
        say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    ) -> None:
        self.command = list(command)
        self.max_backoff_s = max_backoff_s
        self.healthy_after_s = healthy_after_s
        self._woken = threading.Event()
        self.sleep = sleep or self._woken.wait  # a stop request ends the wait at once
        self.say = say
        self.stopping = False
        self.restarts = 0
        self._child: subprocess.Popen[bytes] | None = None

    def request_stop(self, signum: int, _frame: FrameType | None = None) -> None:
        self.stopping = True
        self._woken.set()
        if self._child is not None and self._child.poll() is None:
            self._child.send_signal(signum)

    def run(self) -> int:
        backoff = 1.0
        while True:
            started = time.monotonic()
            self._child = subprocess.Popen(self.command)
            code = self._child.wait()
            if self.stopping or code in NO_RESTART_CODES:
                return code
            if time.monotonic() - started >= self.healthy_after_s:
                backoff = 1.0
            self.restarts += 1
            self.say(
                f"keepalive: {self.command[0]} exited {code}; restart {self.restarts} "
                f"in {backoff:.0f}s"
            )
            self.sleep(backoff)
            if self.stopping:
                return code
            backoff = min(backoff * 2, self.max_backoff_s)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lakehouse.local.keepalive", description=__doc__
    )
    parser.add_argument("--max-backoff", type=float, default=60.0)
    parser.add_argument("--healthy-after", type=float, default=300.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    keepalive = Keepalive(command, args.max_backoff, args.healthy_after)
    signal.signal(signal.SIGTERM, keepalive.request_stop)
    signal.signal(signal.SIGINT, keepalive.request_stop)
    return keepalive.run()


if __name__ == "__main__":
    sys.exit(main())
