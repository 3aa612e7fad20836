"""Freshness read back from the tables after a run, the same way for every writer.

The job keeps a per-batch record of its writes (bench.freshness); Hudi's own streaming sink
keeps none, so comparing the two needs a measure both share: per row of a table, when the
commit that wrote it completed minus the row's Kinesis arrival (`_arrival_ts`).

A commit is complete, and its rows visible to readers, once its completed instant is on the
timeline (`.hoodie/<instant>.commit`, `.deltacommit` on Merge-on-Read): that object's time in
S3 is the completion time. A table holds each key's newest version only, so the rows
measured are each key's last write (at 1,000 events/s over 50,000 keys, the last 50 s of a
minute's sending), the same sample for every writer. A row whose commit has left the
active timeline (archived) has no completion time: it is counted apart, not guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from lakehouse.bench.freshness import summarise
from lakehouse_tables.columns import ARRIVAL_TS

COMMIT_TIME: Final = "_hoodie_commit_time"
# The completed instants that can have written a table's rows, by table type. A compaction
# completes as a `.commit` on Merge-on-Read but keeps its rows' commit times.
COMPLETED_ACTIONS: Final = {
    "COPY_ON_WRITE": ("commit", "replacecommit"),
    "MERGE_ON_READ": ("deltacommit", "commit"),
}
_UNITS_PER_SECOND: Final = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def completed_at(objects: Iterable[tuple[str, float]], actions: Iterable[str]) -> dict[str, float]:
    """Instant -> completion time (epoch seconds), from the timeline folder's objects as
    (file name, modification time); requested and inflight instants are not complete."""
    wanted = set(actions)
    found = {}
    for name, modified in objects:
        instant, _, action = name.partition(".")
        if instant.isdigit() and action in wanted:
            found[instant] = modified
    return found


def row_freshness(
    rows: Iterable[tuple[str, float]],
    completed: Mapping[str, float],
    since: float,
    until: float,
) -> tuple[list[tuple[float, int]], int]:
    """(seconds, 1) for each row, as (commit instant, arrival epoch seconds), that arrived in
    [since, until), and how many of those rows have no completed instant."""
    samples = []
    unresolved = 0
    for instant, arrival in rows:
        if not since <= arrival < until:
            continue
        done = completed.get(instant)
        if done is None:
            unresolved += 1
        else:
            samples.append((max(0.0, done - arrival), 1))
    return samples, unresolved


def commit_and_arrival(batches: Iterable[Any]) -> list[tuple[str, float]]:
    """(commit instant, arrival epoch seconds) of each row of pyarrow record batches."""
    rows: list[tuple[str, float]] = []
    for batch in batches:
        arrival = batch.column(ARRIVAL_TS)
        per_second = _UNITS_PER_SECOND[arrival.type.unit]
        commits = batch.column(COMMIT_TIME).to_pylist()
        for commit, raw in zip(commits, arrival.cast("int64").to_pylist(), strict=True):
            if commit is not None and raw is not None:
                rows.append((commit, raw / per_second))
    return rows


def timeline_objects(s3: Any, table_uri: str) -> list[tuple[str, float]]:
    """(file name, modification epoch seconds) of the objects directly in a table's
    `.hoodie/` folder (not its metadata table's or archive's)."""
    bucket, _, key = table_uri.split("://", 1)[1].partition("/")
    prefix = f"{key.rstrip('/')}/.hoodie/"
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=prefix, Delimiter="/"
    ):
        for item in page.get("Contents", []):
            found.append((item["Key"][len(prefix) :], item["LastModified"].timestamp()))
    return found


def measure(
    s3: Any,
    read_table: Callable[[str], Iterable[Any]],
    table_uri: str,
    table_type: str,
    since: float,
    until: float,
) -> dict[str, Any]:
    """p50/p95/max freshness of the table's rows that arrived in [since, until), their
    count (`records`) and the rows without a completed instant (`unresolved`).
    `read_table`: the table's snapshot as pyarrow record batches, from its URI."""
    completed = completed_at(timeline_objects(s3, table_uri), COMPLETED_ACTIONS[table_type])
    rows = commit_and_arrival(read_table(table_uri))
    samples, unresolved = row_freshness(rows, completed, since, until)
    return {**summarise(samples), "unresolved": unresolved}
