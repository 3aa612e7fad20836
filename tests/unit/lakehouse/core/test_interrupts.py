"""lakehouse.core.interrupts: SIGTERM as KeyboardInterrupt while a command waits."""

import os
import signal

import pytest

from lakehouse.core.interrupts import sigterm_interrupts

pytestmark = pytest.mark.unit


def test_sigterm_interrupts_inside_and_the_old_handler_returns_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="signal 15"), sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before
