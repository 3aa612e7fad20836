"""`lakehouse logs SERVICE`: a local service's log file (the supervisor writes one per
service, and one for the job), its last lines and, with follow, what is appended."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


def last_lines(path: Path, count: int) -> tuple[list[str], int]:
    """The last `count` lines of the file, and its size when read (where following
    starts)."""
    with open(path, "rb") as f:
        kept = deque(f, maxlen=count) if count > 0 else deque()
        end = f.tell()
    return [line.decode(errors="replace") for line in kept], end


def show(
    path: Path,
    out: TextIO,
    count: int = 200,
    follow: bool = False,
    poll_s: float = 0.5,
    keep_going: Callable[[], bool] = lambda: True,
) -> None:
    """Print the last `count` lines; with `follow`, then every line appended until
    `keep_going` says no (Ctrl-C in the CLI). A file that shrank (a clean state, a new
    start) is read again from its beginning."""
    lines, offset = last_lines(path, count)
    out.writelines(lines)
    out.flush()
    while follow and keep_going():
        time.sleep(poll_s)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            continue
        if size < offset:
            offset = 0
        if size == offset:
            continue
        with open(path, "rb") as f:
            f.seek(offset)
            chunk = f.read(size - offset)
        offset = size
        out.write(chunk.decode(errors="replace"))
        out.flush()
