"""A free TCP port on loopback, for a server a test starts."""

from __future__ import annotations

import socket


def free_port() -> int:
    """One the OS picks, so two tests side by side do not both get it (a first free port
    of a fixed range went to both Locust masters of two tests: a red run, 2026-11-28)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
