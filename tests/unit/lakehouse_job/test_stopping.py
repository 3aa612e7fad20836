"""lakehouse_job.stopping: the trigger watchdog, and the listeners detached once the query's
end reached them."""

import threading
from types import SimpleNamespace

import pytest

from lakehouse_job.status import LagListener, StatusFile
from lakehouse_job.stopping import TriggerWatchdog, detach_listeners

pytestmark = pytest.mark.unit


def test_the_watchdog_fires_only_when_one_trigger_runs_too_long() -> None:
    now = [0.0]
    watchdog = TriggerWatchdog(10.0, clock=lambda: now[0])
    assert watchdog.overdue(True) is None  # a trigger starts at 0
    now[0] = 9.0
    assert watchdog.overdue(True) is None
    now[0] = 9.5
    assert watchdog.overdue(False) is None  # it ended; the next one starts afresh
    now[0] = 10.0
    assert watchdog.overdue(True) is None
    now[0] = 20.5
    assert watchdog.overdue(True) == 10.5


def test_listeners_are_removed_once_the_querys_end_reached_them() -> None:
    removed: list[str] = []
    spark = SimpleNamespace(streams=SimpleNamespace(removeListener=removed.append))
    ended = threading.Event()
    lag = LagListener(StatusFile(None))
    lag.onQueryTerminated(None)  # the event the job waits for
    assert lag.terminated.is_set()
    detach_listeners(spark, ["progress", "lag"], lag.terminated)  # type: ignore[arg-type,list-item]
    assert removed == ["progress", "lag"]
    detach_listeners(spark, ["late"], ended, timeout_s=0.01)  # type: ignore[arg-type,list-item]
    assert removed[-1] == "late"  # removed all the same, after the wait
