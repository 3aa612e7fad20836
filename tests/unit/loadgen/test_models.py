"""Generators: shapes, mixes, determinism, per-key time order, faults."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from lakehouse_tables.declarations import Tables, load_tables
from loadgen.ledger import VALID, classify
from loadgen.models import (
    MALFORMED_KINDS,
    EventGenerator,
    GenConfig,
    Record,
    parse_cardinality,
    parse_mix,
)
from loadgen.timefmt import DAY_MS, date_of_ms, parse_iso_ms

pytestmark = pytest.mark.unit

T0 = 1_795_374_000_000  # 2026-11-22T19:00:00Z (within the day: late events may cross midnight)


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def ticking_clock(start: int = T0, step: int = 1) -> Callable[[], int]:
    state = {"t": start}

    def clock() -> int:
        state["t"] += step
        return state["t"]

    return clock


def gen(tables: Tables, clock: Callable[[], int] | None = None, **kw: Any) -> EventGenerator:
    cfg = GenConfig(**{"seed": 42, "key_prefix": "t-", **kw})
    return EventGenerator(tables, cfg, clock=clock or ticking_clock())


ALL = {"orders": 1.0, "ticker": 1.0, "clicks": 1.0, "iot": 1.0}


def test_parse_mix_and_cardinality() -> None:
    assert parse_mix("orders=3,ticker=1") == {"orders": 0.75, "ticker": 0.25}
    assert parse_mix("iot") == {"iot": 1.0}
    with pytest.raises(ValueError):
        parse_mix("c=1,x=1", ("c", "u", "d"))
    with pytest.raises(ValueError):
        parse_mix("a=0")
    assert parse_cardinality("100") == {"*": 100}
    assert parse_cardinality("orders=5,ticker=0") == {"orders": 5, "ticker": 0}


def test_valid_events_have_exactly_the_declared_shape(tables: Tables) -> None:
    g = gen(tables, event_mix=parse_mix(ALL))
    seen: Counter[str] = Counter()
    for rec in g.take(4000):
        ev = json.loads(rec.data)
        spec = tables[ev["event_type"]]
        extra = {"event_type"} | ({spec.op_field} if spec.op_field else set())
        assert set(ev) == set(spec.schema) | extra
        assert classify(rec.data, tables) == (VALID, ev)
        assert rec.partition_key == ev[spec.record_key]
        ts = ev[spec.precombine]
        assert parse_iso_ms(ts) is not None and ts.endswith("Z") and len(ts) == 24
        for f, t in spec.schema.items():
            v = ev[f]
            if v is None:
                continue
            if t == "double":
                assert isinstance(v, float)
            elif t == "string":
                assert isinstance(v, str)
        seen[ev["event_type"]] += 1
    assert set(seen) == set(ALL)


def test_event_type_and_op_mix_follow_the_weights(tables: Tables) -> None:
    g = gen(
        tables,
        event_mix=parse_mix("orders=2,ticker=1,clicks=1"),
        op_mix=parse_mix("c=0.5,u=0.3,d=0.2"),
        key_cardinality={"*": 0},
    )
    recs = g.take(20_000)
    types = Counter(r.event_type for r in recs)
    assert types["orders"] / len(recs) == pytest.approx(0.5, abs=0.02)
    assert types["ticker"] / len(recs) == pytest.approx(0.25, abs=0.02)
    ops = Counter(json.loads(r.data)["op"] for r in recs if r.event_type == "orders")
    n = sum(ops.values())
    # unbounded keys: every requested op is possible once a key exists
    assert ops["c"] / n == pytest.approx(0.5, abs=0.03)
    assert ops["u"] / n == pytest.approx(0.3, abs=0.03)
    assert ops["d"] / n == pytest.approx(0.2, abs=0.03)


def test_same_seed_same_records_different_seed_differs(tables: Tables) -> None:
    kw: dict[str, Any] = dict(
        event_mix=parse_mix(ALL),
        duplicate_rate=0.05,
        out_of_order_rate=0.1,
        late_rate=0.05,
        malformed_rate=0.05,
    )
    a = [r.data for r in gen(tables, **kw).take(3000)]
    b = [r.data for r in gen(tables, **kw).take(3000)]
    c = [r.data for r in gen(tables, **{**kw, "seed": 43}).take(3000)]
    assert a == b
    assert a != c


def test_key_cardinality_bounds_the_keys(tables: Tables) -> None:
    g = gen(tables, event_mix=parse_mix("orders=1,iot=1"), key_cardinality={"orders": 20, "iot": 7})
    keys: dict[str, set[str]] = {"orders": set(), "iot": set()}
    for r in g.take(5000):
        assert r.event_type is not None
        keys[r.event_type].add(r.partition_key)
    assert len(keys["orders"]) == 20
    assert len(keys["iot"]) == 7
    unique = gen(tables, event_mix={"ticker": 1.0}, key_cardinality={"*": 0}).take(1000)
    assert len({r.partition_key for r in unique}) == 1000


def _times_by_key(recs: list[Record], tables: Tables) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for r in recs:
        if r.kind != VALID or r.dup:
            continue
        ev = json.loads(r.data)
        spec = tables[ev["event_type"]]
        t = parse_iso_ms(ev[spec.precombine])
        assert t is not None
        out.setdefault(ev[spec.record_key], []).append((r.seq, t))
    return out


def test_per_key_event_times_strictly_increase_in_generation_order(tables: Tables) -> None:
    # a frozen clock: every event would get the same time without the per-key bump
    g = gen(
        tables,
        clock=lambda: T0,
        event_mix=parse_mix(ALL),
        key_cardinality={"*": 30},
        out_of_order_rate=0.2,
        late_rate=0.1,
        duplicate_rate=0.05,
    )
    recs = g.take(10_000)
    by_key = _times_by_key(recs, tables)
    for key, items in by_key.items():
        times = [t for _, t in sorted(items)]
        assert all(a < b for a, b in itertools.pairwise(times)), key


def test_out_of_order_changes_send_order_and_delete_can_precede_older_update(
    tables: Tables,
) -> None:
    g = gen(
        tables,
        event_mix={"orders": 1.0},
        key_cardinality={"*": 10},
        out_of_order_rate=0.3,
        max_delay=20,
    )
    recs = g.take(5000)
    assert any(r.delayed for r in recs)
    assert [r.seq for r in recs] != sorted(r.seq for r in recs)
    # a delete sent before an update of the same key with an older event time
    latest_delete: dict[str, int] = {}
    found = 0
    for r in recs:
        ev = json.loads(r.data)
        t = parse_iso_ms(ev["order_ts"])
        assert t is not None
        if ev["op"] == "d":
            latest_delete[ev["order_id"]] = t
        elif ev["op"] == "u" and latest_delete.get(ev["order_id"], -1) > t:
            found += 1
    assert found > 0


def test_delete_carries_key_and_time_only(tables: Tables) -> None:
    g = gen(tables, event_mix={"orders": 1.0}, op_mix=parse_mix("c=1,d=1"))
    deletes = [json.loads(r.data) for r in g.take(500)]
    deletes = [e for e in deletes if e["op"] == "d"]
    assert deletes
    for e in deletes:
        assert e["order_id"] and parse_iso_ms(e["order_ts"]) is not None
        assert e["customer_id"] is None and e["amount"] is None and e["status"] is None


def test_late_events_are_old_and_some_cross_midnight(tables: Tables) -> None:
    g = gen(tables, event_mix={"ticker": 1.0}, key_cardinality={"*": 0}, late_rate=0.2)
    recs = g.take(5000)
    late = [r for r in recs if r.late]
    assert len(late) / len(recs) == pytest.approx(0.2, abs=0.03)
    today = date_of_ms(T0)
    dates: Counter[str] = Counter()
    for r in late:
        t = parse_iso_ms(json.loads(r.data)["event_time"])
        assert t is not None
        assert T0 - t >= 1000  # in the past
        if date_of_ms(t) == today:
            assert T0 - t <= 6 * 3600_000 + 10_000  # late_max_seconds
        else:  # the previous UTC day, at most 3 h before midnight
            assert T0 - T0 % DAY_MS - t <= 3 * 3600_000
        dates[date_of_ms(t)] += 1
    assert dates[date_of_ms(T0 - DAY_MS)] > 0  # previous UTC day: partition changes
    assert dates[today] > 0


def test_duplicates_are_byte_identical_resends(tables: Tables) -> None:
    g = gen(tables, event_mix=parse_mix(ALL), duplicate_rate=0.1)
    recs = g.take(5000)
    dups = [r for r in recs if r.dup]
    assert len(dups) / len(recs) == pytest.approx(0.1 / 1.1, abs=0.02)
    originals = {(r.seq): r.data for r in recs if not r.dup}
    for d in dups:
        if d.seq in originals:
            assert originals[d.seq] == d.data


def test_malformed_records_are_classified_as_their_kind(tables: Tables) -> None:
    g = gen(tables, event_mix=parse_mix(ALL), malformed_rate=0.5)
    recs = g.take(4000)
    kinds = Counter(r.kind for r in recs)
    assert kinds[VALID] / len(recs) == pytest.approx(0.5, abs=0.03)
    assert set(kinds) == {VALID, *MALFORMED_KINDS}
    for r in recs:
        kind, _ = classify(r.data, tables)
        assert kind == r.kind, r.data[:200]
        if r.kind == "oversize":
            assert len(r.data) > tables.max_record_bytes
        if r.kind != VALID:
            assert r.partition_key.startswith("bad-")


def test_unknown_event_type_in_mix_is_rejected(tables: Tables) -> None:
    with pytest.raises(ValueError):
        gen(tables, event_mix={"nope": 1.0})


GENERIC_TYPES = """
event_types:
  readings:
    table: readings
    schema:
      reading_id: string
      amount: decimal(12,2)
      ratio: decimal(38,30)
      units: decimal(5,0)
      due: date
      seen: boolean
      count: long
      lines: array<struct<sku:string,qty:long,price:decimal(10,2),at:timestamp,on:date>>
      totals: map<string,decimal(38,30)>
      device: struct<id:string,reading:double,nested:struct<ok:boolean,scores:array<long>>>
      read_ts: timestamp
    record_key: reading_id
    precombine: read_ts
    partition_by: {name: read_date, from: read_ts}
"""


def test_the_generic_model_makes_valid_values_of_every_declared_type() -> None:
    """Event types without a model of their own get random values of their declared
    types, nested ones included, which the record rules (the ledger's, as the job's)
    accept: a user's own tables file can be load-tested as it is."""
    from lakehouse_tables.declarations import parse_tables
    from loadgen.models import GenericModel

    tables = parse_tables(GENERIC_TYPES, source="generic model test")
    model = GenericModel(tables["readings"], random.Random(7))
    seen_nested = 0
    for i in range(300):
        event = model.body(f"r-{i}", 1_795_600_000_000 + i, None)
        kind, detail = classify(json.dumps(event).encode(), tables)
        assert kind == VALID, (kind, detail, event)
        seen_nested += bool(event["lines"]) and bool(event["totals"])
    assert seen_nested > 50, "arrays and maps are not always empty"
