"""The ledger: what each worker sent, and the table state it implies.

Each worker appends one JSON line per record to `<ledger_dir>/ledger-<run>-w<i>-<pid>.jsonl`
once the record's fate is final:

    {"gen": "r1-w0-u3", "seq": 17, "kind": "valid", "dup": false, "event_type": "orders",
     "pk": "...", "acked": true, "shard_id": "shardId-000000000001",
     "sequence_number": "4968...", "error": null, "attempts": 1, "ambiguous": false,
     "data": "<the exact payload as text>"}        # or "data_b64" if not UTF-8

`expected_state` turns acknowledged records into the expected final table content:
per record key, the event with the latest event time (precombine, compared at the
microsecond precision the job keeps) wins, whatever the send order; if that event is a
delete the key is absent. Malformed records (see loadgen.validation.classify, which
follows the "Record rules" in tables.yaml exactly as the streaming job does) are
counted apart and never reach a table. Expected rows hold the values as the job writes
them: timestamps as UTC epoch milliseconds, the partition column as the UTC date of the
event time, the op trimmed and lower-cased.
"""

from __future__ import annotations

import base64
import decimal
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from lakehouse_tables import types as T
from lakehouse_tables.declarations import FieldType, Tables, TableSpec
from lakehouse_tables.rules import key_text, stream_position
from loadgen.kinesis import PutResult
from loadgen.timefmt import date_of_micros, parse_iso_micros
from loadgen.validation import VALID, classify, normalise_op

__all__ = [
    "VALID",
    "ExpectedState",
    "LedgerWriter",
    "classify",
    "entry_data",
    "expected_row",
    "expected_state",
    "key_prefix",
    "key_prefixes",
    "ledger_files",
    "normalize",
    "read_ledger",
]


# --------------------------------------------------------------------------- writing


class LedgerWriter:
    """Appends JSONL lines; one writer per worker process (greenlets share it)."""

    def __init__(self, path: str | Path, flush_every: int = 1000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.flush_every = flush_every
        self._unflushed = 0
        self.counts: Counter[str] = Counter()

    def write(self, gen: str, rec: Any, result: PutResult, sub_sequence: int | None = None) -> None:
        """rec: a models.Record (data, partition_key, event_type, kind, seq, dup);
        sub_sequence: its index in the KPL aggregate it was sent in, if it was."""
        line: dict[str, Any] = {
            "gen": gen,
            "seq": rec.seq,
            "kind": rec.kind,
            "dup": rec.dup,
            "event_type": rec.event_type,
            "pk": rec.partition_key,
            "acked": result.acked,
            "shard_id": result.shard_id,
            "sequence_number": result.sequence_number,
            "sub_sequence": sub_sequence,
            "error": result.error_code,
            "attempts": result.attempts,
            "ambiguous": result.ambiguous,
        }
        try:
            line["data"] = rec.data.decode("utf-8")
        except UnicodeDecodeError:
            line["data_b64"] = base64.b64encode(rec.data).decode()
        if self._f is None:
            raise RuntimeError(f"ledger {self.path} is closed")
        self._f.write(json.dumps(line, separators=(",", ":")) + "\n")
        self.counts["acked" if result.acked else "failed"] += 1
        self._unflushed += 1
        if self._unflushed >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        if self._f is not None:
            self._f.flush()
            os.fsync(self._f.fileno())
        self._unflushed = 0

    def close(self) -> None:
        if self._f is not None:
            self.flush()
            self._f.close()
            self._f = None


# --------------------------------------------------------------------------- reading


def ledger_files(ledger_dir: str | Path) -> list[Path]:
    return sorted(Path(ledger_dir).glob("ledger-*.jsonl"))


def read_ledger(ledger_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Every line of every worker file (a torn last line of a killed worker is skipped)."""
    for p in ledger_files(ledger_dir):
        with p.open(encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break
                yield json.loads(line)


def entry_data(entry: dict[str, Any]) -> bytes:
    if "data" in entry:
        return str(entry["data"]).encode("utf-8")
    return base64.b64decode(entry["data_b64"])


# --------------------------------------------------------------------------- expected state


def normalize(ftype: FieldType, v: Any) -> Any:
    """A valid field value -> the canonical form compared with the table (verify's
    normalize_actual gives the same form for what Trino returns)."""
    if v is None:
        return None
    if isinstance(ftype, T.Decimal):
        return canonical_decimal(ftype, getattr(v, "text", None) or str(v))
    if isinstance(ftype, T.Struct):
        return {name: normalize(ft, v.get(name)) for name, ft in ftype.fields}
    if isinstance(ftype, T.Array):
        return [normalize(ftype.element, item) for item in v]
    if isinstance(ftype, T.Map):
        return {key: normalize(ftype.value, item) for key, item in v.items()}
    if ftype == "timestamp":
        micros = parse_iso_micros(v)
        return None if micros is None else micros // 1000  # floored, as verify truncates
    if ftype == "double":
        return float(v)
    if ftype == "long":
        return int(v)
    if ftype == "string":
        # A lone surrogate (JSON "\ud800") becomes '?' when the job encodes it as UTF-8.
        return str(v).encode("utf-8", "replace").decode("utf-8")
    return v


def canonical_decimal(t: T.Decimal, text: str) -> str:
    """A decimal's value at its declared scale, as text ('1234.50'); rounded half up, as
    the job reads a nested decimal (a top-level one must fit exactly)."""
    step = decimal.Decimal(1).scaleb(-t.scale)
    return str(decimal.Decimal(text).quantize(step, rounding=decimal.ROUND_HALF_UP))


def expected_row(spec: TableSpec, ev: dict[str, Any]) -> dict[str, Any]:
    row = {f: normalize(t, ev.get(f)) for f, t in spec.schema.items()}
    micros = parse_iso_micros(ev.get(spec.partition_source))
    row[spec.partition_name] = None if micros is None else date_of_micros(micros)
    return row


@dataclass
class ExpectedState:
    # event_type -> record key as Hudi stores it (text, also for long keys) -> row
    rows: dict[str, dict[str, dict[str, Any]]]
    counts: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)  # event_type -> keys absent


def key_prefix(gen: str) -> str:
    """What every record key of generator `gen` starts with (user.py names keys so)."""
    return f"{gen}-"


def key_prefixes(entries: Iterable[dict[str, Any]]) -> tuple[str, ...] | None:
    """The key prefixes of the generators that wrote these entries: the part of a table
    this ledger speaks for (rows of other producers, e.g. a notebook, are not its business).
    None when an entry names no generator: then the ledger speaks for the whole table."""
    gens: set[str] = set()
    for entry in entries:
        if not entry.get("gen"):
            return None
        gens.add(str(entry["gen"]))
    return tuple(sorted(key_prefix(g) for g in gens))


def expected_state(entries: Iterable[dict[str, Any]], tables: Tables) -> ExpectedState:
    """Latest acknowledged valid event per key by event time; deletes remove the key."""
    counts: Counter[str] = Counter()
    malformed: Counter[str] = Counter()
    # key -> (event time, stream position, event)
    best: dict[str, dict[str, tuple[int, tuple[str, int, str, int], dict[str, Any]]]] = {}
    for e in entries:
        if not e.get("acked"):
            counts["unacked"] += 1
            continue
        counts["acked"] += 1
        if e.get("dup"):
            counts["duplicates"] += 1
        data = entry_data(e)
        kind, ev = classify(data, tables)
        if ev is None:
            malformed[kind] += 1
            continue
        counts["valid"] += 1
        spec = tables[ev["event_type"]]
        key = key_text(
            spec.record_keys, {k: normalize(spec.schema[k], ev[k]) for k in spec.record_keys}
        )
        t = parse_iso_micros(ev[spec.precombine])
        assert t is not None  # classify checked it
        per_type = best.setdefault(spec.event_type, {})
        position = stream_position(
            str(e["shard_id"]), str(e["sequence_number"]), e.get("sub_sequence")
        )
        cur = per_type.get(key)
        if cur is None or t > cur[0]:
            per_type[key] = (t, position, ev)
        elif t == cur[0]:
            counts["ties"] += 1  # rules.stream_position decides, as the job does
            if position > cur[1]:
                per_type[key] = (t, position, ev)
        else:
            counts["superseded"] += 1
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    deleted: Counter[str] = Counter()
    for etype, per_key in best.items():
        spec = tables[etype]
        out = rows.setdefault(etype, {})
        for key, (_, _, ev) in per_key.items():
            if normalise_op(ev, spec) == "d":
                deleted[etype] += 1
                continue
            out[key] = expected_row(spec, ev)
    counts["malformed"] = sum(malformed.values())
    return ExpectedState(rows=rows, counts=counts, malformed=malformed, deleted=deleted)
