"""A nemesis for soak tests: at random intervals, one fault from a weighted menu, and how
long the pipeline took to recover from each (the first micro-batch committed after it)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass


@dataclass
class Fault:
    kind: str
    started_s: float  # since the soak began
    ended_s: float  # the fault's action returned (a restart: the service is healthy again)
    batches_at_end: int
    recovered_s: float | None = None  # from the fault's start to the next committed batch


@dataclass
class Nemesis:
    """`faults`: kind -> (weight, action); `batches`: micro-batches committed so far."""

    faults: Mapping[str, tuple[float, Callable[[], None]]]
    batches: Callable[[], int]
    min_gap_s: float = 20.0
    max_gap_s: float = 60.0
    seed: int = 0
    began: float = 0.0

    def run(self, seconds: float, stop: threading.Event | None = None) -> list[Fault]:
        rng = random.Random(self.seed)
        kinds = list(self.faults)
        weights = [self.faults[k][0] for k in kinds]
        began = self.began = time.monotonic()
        injected: list[Fault] = []
        next_at = rng.uniform(self.min_gap_s, self.max_gap_s)
        while time.monotonic() - began < seconds and not (stop and stop.is_set()):
            now = time.monotonic() - began
            self._note_recoveries(injected, now)
            if now >= next_at:
                kind = rng.choices(kinds, weights)[0]
                self.faults[kind][1]()
                ended = time.monotonic() - began
                injected.append(Fault(kind, now, ended, self.batches()))
                next_at = now + rng.uniform(self.min_gap_s, self.max_gap_s)
            time.sleep(1)
        return injected

    def settle(self, injected: list[Fault], timeout_s: float) -> None:
        """Keep noting recoveries after the soak, until all are in or `timeout_s` passed."""
        deadline = time.monotonic() + timeout_s
        while any(f.recovered_s is None for f in injected) and time.monotonic() < deadline:
            self._note_recoveries(injected, time.monotonic() - self.began)
            time.sleep(1)

    def _note_recoveries(self, injected: list[Fault], now: float) -> None:
        done = self.batches()
        for fault in injected:
            if fault.recovered_s is None and done > fault.batches_at_end:
                fault.recovered_s = round(now - fault.started_s, 1)


def summary(injected: list[Fault]) -> dict:
    recovered = sorted(f.recovered_s for f in injected if f.recovered_s is not None)
    by_kind: dict[str, int] = {}
    for fault in injected:
        by_kind[fault.kind] = by_kind.get(fault.kind, 0) + 1
    return {
        "faults": len(injected),
        "by_kind": by_kind,
        "recovered": len(recovered),
        "recovery_s_p50": recovered[len(recovered) // 2] if recovered else None,
        "recovery_s_max": recovered[-1] if recovered else None,
        "log": [asdict(f) for f in injected],
    }
