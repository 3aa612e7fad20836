"""The ledger: what each worker sent, and the table state it implies.

Each worker appends one JSON line per record to `<ledger_dir>/ledger-<run>-w<i>-<pid>.jsonl`
once the record's fate is final:

    {"gen": "r1-w0-u3", "seq": 17, "kind": "valid", "dup": false, "event_type": "orders",
     "pk": "...", "acked": true, "shard_id": "shardId-000000000001",
     "sequence_number": "4968...", "error": null, "attempts": 1, "ambiguous": false,
     "data": "<the exact payload as text>"}        # or "data_b64" if not UTF-8

`expected_state` turns acknowledged records into the expected final table content:
per record key, the event with the latest event time (precombine) wins, whatever the
send order; if that event is a delete the key is absent. Malformed records (see
`classify`) are counted apart and never reach a table.

Validation rules (`classify`), which the streaming job must mirror:
  * payload longer than `max_record_bytes` (tables.yaml)          -> oversize
  * not a JSON object                                             -> not_json
  * `event_type` missing or not declared in tables.yaml           -> unknown_event_type
  * record key missing/null                                       -> missing_key
  * precombine field missing/null                                 -> missing_time
  * precombine not 'yyyy-MM-ddTHH:mm:ss.SSSZ' or not a real time  -> invalid_time
  * record key not a non-empty string, op not in c/u/d, or a
    present non-null field of the wrong JSON type                 -> wrong_types
    (string: JSON string; long: integer; double: number;
     boolean: true/false; timestamp: as the precombine field)
  Missing or null non-key fields are allowed (a delete carries only key, op and time).
"""

from __future__ import annotations

import base64
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from loadgen.kinesis import PutResult
from loadgen.tables import Tables, TableSpec
from loadgen.timefmt import date_of_ms, parse_iso_ms

VALID = "valid"
OPS = frozenset({"c", "u", "d"})


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

    def write(self, gen: str, rec: Any, result: PutResult) -> None:
        """rec: a models.Record (data, partition_key, event_type, kind, seq, dup)."""
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


# --------------------------------------------------------------------------- validation

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "long": (int,),
    "double": (int, float),
    "boolean": (bool,),
}


def _type_ok(ftype: str, v: Any) -> bool:
    if ftype == "timestamp":
        return parse_iso_ms(v) is not None
    if isinstance(v, bool) and ftype != "boolean":
        return False
    return isinstance(v, _JSON_TYPES[ftype])


def classify(data: bytes, tables: Tables) -> tuple[str, dict[str, Any] | None]:
    """(VALID, event) or (malformed kind, None); see the module docstring."""
    if len(data) > tables.max_record_bytes:
        return "oversize", None
    try:
        ev = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return "not_json", None
    if not isinstance(ev, dict):
        return "not_json", None
    etype = ev.get("event_type")
    if not isinstance(etype, str) or etype not in tables:
        return "unknown_event_type", None
    spec = tables[etype]
    key = ev.get(spec.record_key)
    if key is None:
        return "missing_key", None
    if ev.get(spec.precombine) is None:
        return "missing_time", None
    if parse_iso_ms(ev[spec.precombine]) is None:
        return "invalid_time", None
    if not isinstance(key, str) or not key:
        return "wrong_types", None
    if spec.op_field is not None and ev.get(spec.op_field) not in OPS:
        return "wrong_types", None
    for f, t in spec.schema.items():
        v = ev.get(f)
        if v is not None and not _type_ok(t, v):
            return "wrong_types", None
    return VALID, ev


# --------------------------------------------------------------------------- expected state


def normalize(ftype: str, v: Any) -> Any:
    """Canonical comparison form: timestamps -> epoch ms, doubles -> float, etc."""
    if v is None:
        return None
    if ftype == "timestamp":
        return parse_iso_ms(v) if isinstance(v, str) else v
    if ftype == "double":
        return float(v)
    if ftype == "long":
        return int(v)
    return v


def expected_row(spec: TableSpec, ev: dict[str, Any]) -> dict[str, Any]:
    row = {f: normalize(t, ev.get(f)) for f, t in spec.schema.items()}
    if spec.partition_name and spec.partition_from:
        ms = row.get(spec.partition_from)
        row[spec.partition_name] = date_of_ms(ms) if isinstance(ms, int) else None
    return row


@dataclass
class ExpectedState:
    rows: dict[str, dict[str, dict[str, Any]]]  # event_type -> key -> row
    counts: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)  # event_type -> keys absent


def expected_state(entries: Iterable[dict[str, Any]], tables: Tables) -> ExpectedState:
    """Latest acknowledged valid event per key by event time; deletes remove the key."""
    counts: Counter[str] = Counter()
    malformed: Counter[str] = Counter()
    best: dict[str, dict[str, tuple[int, bytes, dict[str, Any]]]] = {}
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
        key = ev[spec.record_key]
        t = parse_iso_ms(ev[spec.precombine])
        assert t is not None
        per_type = best.setdefault(spec.event_type, {})
        cur = per_type.get(key)
        if cur is None or t > cur[0]:
            per_type[key] = (t, data, ev)
        elif t == cur[0]:
            if data != cur[1]:  # same key and event time, different content: no defined winner
                counts["ambiguous_ties"] += 1
                if data > cur[1]:  # deterministic choice
                    per_type[key] = (t, data, ev)
        else:
            counts["superseded"] += 1
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    deleted: Counter[str] = Counter()
    for etype, per_key in best.items():
        spec = tables[etype]
        out = rows.setdefault(etype, {})
        for key, (_, _, ev) in per_key.items():
            if spec.op_field is not None and ev.get(spec.op_field) == "d":
                deleted[etype] += 1
                continue
            out[key] = expected_row(spec, ev)
    counts["malformed"] = sum(malformed.values())
    return ExpectedState(rows=rows, counts=counts, malformed=malformed, deleted=deleted)
