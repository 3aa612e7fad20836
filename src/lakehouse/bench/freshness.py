"""Freshness of every record, from the job's own per-batch record (its metrics file).

Each batch line holds, per sink, when its write ended (`written_at`: the Hudi commit
complete) and its records per Kinesis arrival second (`arrivals`). A record's freshness in
a sink is that write's end minus its arrival, known to within a second (the middle of its
arrival second is used). Nothing polls a table while the job runs, so the figure costs
the job no CPU; a reader sees a commit once it is complete, so it is what a reader gets.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def record_freshness(
    lines: Iterable[Mapping[str, Any]], sink: str, since: float, until: float
) -> list[tuple[float, int]]:
    """(seconds, records) for the records that arrived in [since, until) and were
    written to `sink`, one pair per batch and arrival second."""
    found = []
    for line in lines:
        written = line.get("written_at", {}).get(sink)
        if written is None:
            continue
        for second, records in line.get("arrivals", {}).items():
            arrived = float(second) + 0.5
            if since <= arrived < until:
                found.append((max(0.0, written - arrived), int(records)))
    return found


def weighted_quantile(samples: list[tuple[float, int]], q: float) -> float | None:
    """The smallest value v with at least a share `q` of the weight at or below it."""
    total = sum(weight for _, weight in samples)
    if not total:
        return None
    seen = 0
    for value, weight in sorted(samples):
        seen += weight
        if seen >= q * total:
            return round(value, 2)
    return round(max(value for value, _ in samples), 2)


def summarise(samples: list[tuple[float, int]]) -> dict[str, Any]:
    return {
        "p50": weighted_quantile(samples, 0.5),
        "p95": weighted_quantile(samples, 0.95),
        "max": round(max((v for v, _ in samples), default=0.0), 2) if samples else None,
        "records": sum(weight for _, weight in samples),
    }


def sinks_written(lines: Iterable[Mapping[str, Any]]) -> list[str]:
    names: set[str] = set()
    for line in lines:
        names.update(line.get("written_at", {}))
    return sorted(names)


def p95_by_minute(
    lines: Sequence[Mapping[str, Any]], sink: str, since: float, until: float
) -> list[float | None]:
    """The p95 of the records that arrived in each minute from `since` (the last one ends
    at `until`, so it is up to half a minute longer or shorter): a job still warming up (its
    JIT compiler busy for minutes) shows as a falling series, a growing backlog as a rising
    one."""
    count = math.floor((until - since) / 60 + 0.5)
    if count < 1:
        return []
    starts = [since + 60 * i for i in range(count)]
    ends = [*starts[1:], until]
    return [
        weighted_quantile(record_freshness(lines, sink, start, end), 0.95)
        for start, end in zip(starts, ends, strict=True)
    ]


def by_sink(lines: Sequence[Mapping[str, Any]], since: float, until: float) -> dict[str, Any]:
    """Per sink: p50/p95/max of its records' freshness, their count, the p95 of each
    minute of arrivals, and each batch's worst record against the batch's end (seconds
    since `since`) for plotting."""
    result = {}
    for sink in sinks_written(lines):
        samples: list[tuple[float, int]] = []
        worst = []
        for line in lines:
            batch = record_freshness([line], sink, since, until)
            if batch:
                samples += batch
                worst.append([round(line["finished_at"] - since, 1), max(v for v, _ in batch)])
        result[sink] = {
            **summarise(samples),
            "p95_by_minute": p95_by_minute(lines, sink, since, until),
            "series": worst,
        }
    return result
