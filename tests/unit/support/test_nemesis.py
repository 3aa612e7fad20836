"""tests.support.nemesis: faults at random intervals, recoveries noted from batch counts."""

import pytest

from tests.support import nemesis as nemesis_module
from tests.support.nemesis import Nemesis, summary

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_faults_come_every_gap_and_recover_with_the_next_batch(monkeypatch) -> None:
    clock = Clock()
    monkeypatch.setattr(nemesis_module.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(nemesis_module.time, "sleep", clock.sleep)
    batches = {"n": 0}
    fired: list[str] = []

    def kill() -> None:
        fired.append("kill")
        clock.now += 3  # the action itself takes time

    def count() -> int:
        batches["n"] += 1 if clock.now % 10 < 1 else 0  # a batch every 10 s
        return batches["n"]

    nemesis = Nemesis({"kill": (1, kill)}, count, min_gap_s=20, max_gap_s=20, seed=1)
    injected = nemesis.run(100)
    nemesis.settle(injected, timeout_s=30)

    assert len(fired) == len(injected) >= 4
    # Gaps count from each fault's start, not its end.
    assert [round(f.started_s) for f in injected][:2] == [20, 40]
    assert all(f.recovered_s is not None and f.recovered_s > 0 for f in injected)
    figures = summary(injected)
    assert figures["faults"] == figures["recovered"] == len(injected)
    assert figures["by_kind"] == {"kill": len(injected)}
