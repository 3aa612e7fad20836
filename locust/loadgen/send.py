"""`lakehouse send`: a file of JSON lines onto a Kinesis stream, one record a line.

Each line is first held to the record rules the job applies (loadgen.validation): a line
the job would quarantine is reported with its number and the rule's reason and is not
sent, unless asked (`send_invalid`, to try the quarantine on purpose). The rest go out
with the load generator's own pieces: partition key = the entry's record key, one shard
per key (ShardRouter), PutRecords calls within the limits (split_batches), failed entries
retried with backoff (put_records_with_retry), optionally as KPL aggregates (loadgen.kpl).
The functions but `send` are pure.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from lakehouse_tables import rules
from lakehouse_tables.declarations import Tables
from loadgen import kpl
from loadgen.batching import BatchLimits, split_batches
from loadgen.kinesis import PutResult, RetryPolicy, ShardRouter, put_records_with_retry
from loadgen.models import Record
from loadgen.validation import classify, parse_object

# Kinesis takes partition keys of 1..256 characters.
MAX_PARTITION_KEY: Final = 256

# The rule each ledger kind stands for, as tables.yaml's "Record rules" number and say it.
RULES: Final[dict[str, str]] = {
    rules.EMPTY: "rule 1: zero bytes",
    rules.OVERSIZE: "rule 2/6: more bytes than max_record_bytes",
    rules.NOT_UTF8: "rule 3: not UTF-8",
    rules.NOT_JSON: "rule 4: not exactly one JSON object",
    rules.UNKNOWN_EVENT_TYPE: "rule 5: event_type missing or not a declared entry",
    rules.MISSING_KEY: 'rule 7: record key missing, null or ""',
    rules.MISSING_TIME: "rule 8: precombine or partition_by.from field missing or null",
    rules.INVALID_TIME: "rule 9: a timestamp field that is not a valid timestamp",
    rules.OUT_OF_WINDOW: "rule 9: an event time outside the entry's event_time_window",
    rules.WRONG_TYPES: "rule 9: a field of the wrong type, or a number out of range",
    rules.INVALID_OP: "rule 10: op_field not c, u or d",
}


@dataclass(frozen=True)
class BadLine:
    """A line the job would quarantine: its number, ledger kind and the rule broken."""

    number: int
    kind: str
    sent: bool = False  # sent anyway (send_invalid)

    @property
    def reason(self) -> str:
        return f"{self.kind} ({RULES.get(self.kind, 'a record rule')})"


@dataclass(frozen=True)
class Plan:
    """What a file becomes: the records to send (Record.seq = line number) and the lines
    the job would quarantine."""

    records: list[Record]
    bad: list[BadLine]


@dataclass
class Summary:
    """What was acknowledged: per entry, per shard, in all; the lines not acknowledged."""

    acked: Counter[str] = field(default_factory=Counter)  # event type -> records
    shards: Counter[str] = field(default_factory=Counter)  # shard id -> records
    failed: list[tuple[int, PutResult]] = field(default_factory=list)  # line, last result
    skipped: list[BadLine] = field(default_factory=list)

    @property
    def total_acked(self) -> int:
        return sum(self.acked.values())

    @property
    def exit_code(self) -> int:
        """0 when every line was acknowledged, 1 when one was skipped or finally failed."""
        return 1 if self.failed or self.skipped else 0


def read_lines(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line ending) of each line that is not blank."""
    for number, line in enumerate(chunks, start=1):
        data = line.rstrip(b"\r\n") if line.endswith(b"\n") else line
        if data.strip():
            yield number, data


def for_stream(tables: Tables, stream: str) -> Tables:
    """The entries a record on `stream` may name: those chosen by event_type, and those
    whose `stream:` pattern matches it."""
    kept = {
        name: spec
        for name, spec in tables.items()
        if spec.stream is None or fnmatch.fnmatchcase(stream, spec.stream)
    }
    return Tables(kept)


def partition_key(event: dict[str, Any] | None, tables: Tables, number: int) -> str:
    """The record key's value (so that a key's records share a shard and keep their order);
    `line-N` when the line has none. A key longer than Kinesis takes is hashed."""
    key: Any = None
    if event is not None:
        event_type = event.get("event_type")
        spec = tables.get(event_type) if isinstance(event_type, str) else None
        key = event.get(spec.record_key) if spec is not None else None
    text = f"line-{number}" if key is None or key == "" else str(key)
    if len(text) > MAX_PARTITION_KEY:
        return hashlib.sha256(text.encode()).hexdigest()
    return text


def plan(lines: Iterable[tuple[int, bytes]], tables: Tables, send_invalid: bool = False) -> Plan:
    """Classify each line as the job would; the valid ones (and with `send_invalid` the
    others too) become records to send."""
    records: list[Record] = []
    bad: list[BadLine] = []
    for number, data in lines:
        kind, event = classify(data, tables)
        if kind != rules.VALID:
            bad.append(BadLine(number, kind, sent=send_invalid))
            if not send_invalid:
                continue
            event = _best_effort_object(data)
        event_type = event.get("event_type") if event is not None else None
        records.append(
            Record(
                data,
                partition_key(event, tables, number),
                event_type if isinstance(event_type, str) else None,
                kind,
                number,
            )
        )
    return Plan(records, bad)


def _best_effort_object(data: bytes) -> dict[str, Any] | None:
    try:
        return parse_object(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def send(
    client: Any,
    stream: str,
    records: list[Record],
    router: ShardRouter,
    kpl_aggregate: int = 0,
    policy: RetryPolicy | None = None,
    limits: BatchLimits | None = None,
) -> list[tuple[Record, PutResult]]:
    """Put every record (N to a KPL aggregate when `kpl_aggregate` > 0); each record with
    its final result, in the order they were sent."""
    policy, limits = policy or RetryPolicy(), limits or BatchLimits()
    too_big = PutResult(error_code="RecordTooLarge")
    out: list[tuple[Record, PutResult]] = []
    if kpl_aggregate > 0:
        aggregates = kpl.aggregate(records, kpl_aggregate, router.hash_key)
        batches, unsendable = split_batches(aggregates, limits)  # none: 50 KiB each
        out += [(r, too_big) for a in unsendable for r in a.members]
        for batch in batches:
            results = put_records_with_retry(client, stream, batch, policy, router)
            out += [(r, res) for agg, res in zip(batch, results, strict=True) for r in agg.members]
        return out
    plain, alone = split_batches(records, limits)
    out += [(r, too_big) for r in alone]
    for calls in plain:
        results = put_records_with_retry(client, stream, calls, policy, router)
        out += list(zip(calls, results, strict=True))
    return out


def summarise(plan: Plan, results: Iterable[tuple[Record, PutResult]]) -> Summary:
    summary = Summary(skipped=[bad for bad in plan.bad if not bad.sent])
    for record, result in results:
        if result.acked:
            summary.acked[record.event_type or "(no event_type)"] += 1
            summary.shards[str(result.shard_id)] += 1
        else:
            summary.failed.append((record.seq, result))
    summary.failed.sort(key=lambda failed: failed[0])
    return summary


def problem_lines(plan: Plan, summary: Summary) -> list[str]:
    """One line per input line not sent as it should be: skipped, sent although invalid,
    or not acknowledged (standard error)."""
    lines = []
    for bad in plan.bad:
        what = "sent although the job will quarantine it" if bad.sent else "skipped"
        lines.append(f"line {bad.number}: {what}: {bad.reason}")
    for number, result in summary.failed:
        lines.append(
            f"line {number}: not acknowledged after {result.attempts} attempts: "
            f"{result.error_code}: {result.error_message or ''}".rstrip(": ")
        )
    return lines


def report(stream: str, plan: Plan, summary: Summary) -> list[str]:
    """What was acknowledged (standard output)."""
    sent = len(plan.records)
    lines = [
        f"{summary.total_acked:,} of {sent:,} records acknowledged by stream {stream}"
        + (f"; {len(summary.skipped):,} lines skipped" if summary.skipped else "")
        + (f"; {len(summary.failed):,} failed" if summary.failed else "")
    ]
    width = max((len(name) for name in summary.acked), default=0)
    for name, count in sorted(summary.acked.items()):
        lines.append(f"  {name:<{width}}  {count:>8,}")
    if summary.shards:
        lines.append(
            "  shards: " + ", ".join(f"{s} {n:,}" for s, n in sorted(summary.shards.items()))
        )
    return lines
