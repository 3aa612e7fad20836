"""SIGTERM as Ctrl-C for a command that waits on a child process.

A command killed by SIGTERM while it waits (`lakehouse run`, `lakehouse load`) would
orphan its child; inside `sigterm_interrupts()` SIGTERM raises KeyboardInterrupt
instead, so the command's Ctrl-C path stops the child first.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while inside; signal handlers can only be set from
    the main thread, so elsewhere (a benchmark's load thread) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
