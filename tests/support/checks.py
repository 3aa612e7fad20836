"""The sinks hold exactly what a scripted scenario expects (tests/support/scenario.py)."""

from __future__ import annotations

import json
from collections import Counter

from tests.support import scenario as scripted
from tests.support.pipeline import Run, iso_ms

ORDER_COLUMNS = "order_id, customer_id, amount, status, order_ts, partition_date"


def trino_orders(run: Run, table: str) -> dict[str, dict]:
    rows = run.query(f"SELECT {ORDER_COLUMNS} FROM {table} WHERE NOT _is_deleted")
    result = {}
    for order_id, customer, amount, status, ts, date in rows:
        assert order_id not in result, f"{table}: duplicate row for {order_id}"
        result[order_id] = {
            "order_id": order_id,
            "customer_id": customer,
            "amount": amount,
            "status": status,
            "order_ts": iso_ms(ts),
            "partition_date": date,
        }
    return result


def expected_orders(s: scripted.Scenario) -> dict[str, dict]:
    return {
        k: {c: v.get(c) for c in ORDER_COLUMNS.split(", ")} for k, v in s.expected_orders.items()
    }


def assert_same_state(actual: dict[str, dict], expected: dict[str, dict], table: str) -> None:
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    stale = sorted(k for k in set(expected) & set(actual) if expected[k] != actual[k])
    assert (missing, extra, stale) == ([], [], []), (
        f"{table}: missing {missing[:5]}, extra {extra[:5]}, stale "
        + "; ".join(f"{k}: {actual[k]} != {expected[k]}" for k in stale[:3])
    )


def assert_sinks_hold(run: Run, s: scripted.Scenario) -> None:
    assert_same_state(trino_orders(run, "hudi_orders_cow"), expected_orders(s), "CoW")
    assert_same_state(trino_orders(run, "hudi_orders_mor_ro"), expected_orders(s), "MoR ro")
    ticks = run.query("SELECT event_id FROM stock_ticks_cow WHERE NOT _is_deleted")
    assert sorted(r[0] for r in ticks) == sorted(s.expected_ticks)

    quarantined = run.query("SELECT raw_payload, reason FROM quarantine")
    assert len(quarantined) == len(s.malformed), quarantined
    assert all(reason for _, reason in quarantined)
    big = [r for r in quarantined if "larger than" in r[1]]
    assert len(big) == 1
    small_payloads = {p.decode() for p in s.malformed if len(p) < 65536}
    assert {p for p, r in quarantined if "larger than" not in r} == small_payloads

    lines = run.raw_json_lines("hudi_orders") + run.raw_json_lines("stock_ticks")
    assert len(lines) == s.valid_events, "the raw JSON copy must hold every valid event once"
    raw = [json.loads(line) for line in lines]
    assert len({(r["_ingest_shard"], r["_ingest_seq"]) for r in raw}) == len(raw)
    malformed = set(s.malformed)
    sent = Counter(r.decode() for r in s.records if r not in malformed)
    assert Counter(r["_raw_payload"] for r in raw) == sent, "the raw copy keeps each record's text"
