"""A command on a pseudo-terminal of its own, as in a terminal window: its stdin is a tty
(so it may read keys one at a time, unechoed), and what it drew is read back."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
import threading

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear screen: where a full-screen redraw begins


class Terminal:
    def __init__(self, command: list[str], rows: int = 50, columns: int = 120) -> None:
        controller, terminal = os.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            command, stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True
        )
        os.close(terminal)
        self._controller = controller
        self._output = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._controller, 4096)
            except OSError:  # EIO: the command closed the terminal
                return
            if not chunk:
                return
            with self._lock:
                self._output += chunk

    def screen(self) -> str:
        """What the command drew since its last full-screen redraw."""
        with self._lock:
            text = self._output.decode(errors="replace")
        return text.rsplit(CLEAR, 1)[-1].replace("\r\n", "\n")

    def press(self, key: str) -> None:
        os.write(self._controller, key.encode())

    def exit_code(self, timeout_s: float) -> int | None:
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        os.close(self._controller)
