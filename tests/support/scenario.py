"""A scripted CDC stream with its expected final state, computed independently of the job.

Covers inserts, updates, deletes, exact duplicates, out-of-order and late
events, an update that moves a row across midnight, a delete that arrives
before an older update, and malformed records of every kind.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

DAY = datetime(2026, 11, 20, tzinfo=UTC)


def iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


@dataclass
class Scenario:
    records: list[bytes] = field(default_factory=list)  # in send order
    expected_orders: dict[str, dict] = field(default_factory=dict)  # live rows by order_id
    expected_ticks: dict[str, dict] = field(default_factory=dict)
    malformed: list[bytes] = field(default_factory=list)
    valid_events: int = 0  # every valid record sent, duplicates included


def _order(op: str, order_id: str, ts: datetime, **fields: object) -> dict:
    event: dict[str, object] = {
        "event_type": "orders",
        "op": op,
        "order_id": order_id,
        "order_ts": iso(ts),
    }
    event.update(fields)
    return event


def build(orders: int = 120, ticks: int = 40, seed: int = 7) -> Scenario:
    rng = random.Random(seed)
    events: list[dict] = []
    for n in range(orders):
        order_id = f"o-{n:05d}"
        start = DAY + timedelta(hours=rng.randrange(0, 23), minutes=rng.randrange(60))
        customer = f"c-{rng.randrange(50):03d}"
        history = [
            _order(
                "c",
                order_id,
                start,
                customer_id=customer,
                amount=round(rng.uniform(5, 500), 2),
                status="created",
            )
        ]
        for step in range(rng.randrange(0, 4)):
            history.append(
                _order(
                    "u",
                    order_id,
                    start + timedelta(minutes=5 * (step + 1)),
                    customer_id=customer,
                    amount=round(rng.uniform(5, 500), 2),
                    status=rng.choice(["paid", "shipped", "delivered"]),
                )
            )
        if n % 7 == 0:
            history.append(_order("d", order_id, start + timedelta(hours=1)))
        events.extend(history)

    # An update whose event date crosses midnight: the row must move partitions.
    late_night = DAY.replace(hour=23, minute=59, second=58)
    events += [
        _order("c", "o-midnight", late_night, customer_id="c-999", amount=1.0, status="created"),
        _order(
            "u",
            "o-midnight",
            late_night + timedelta(seconds=4),
            customer_id="c-999",
            amount=2.0,
            status="paid",
        ),
    ]
    rng.shuffle(events)  # out-of-order arrival

    # A delete that arrives before an older update of the same key: the delete wins.
    t = DAY + timedelta(hours=3)
    events += [
        _order("c", "o-zombie", t, customer_id="c-1", amount=9.0, status="created"),
        _order("d", "o-zombie", t + timedelta(minutes=30)),
        _order(
            "u", "o-zombie", t + timedelta(minutes=10), customer_id="c-1", amount=8.0, status="paid"
        ),
    ]
    # A late event, hours older than what is stored, sent last: it must lose.
    events.append(
        _order(
            "u",
            "o-00001",
            DAY - timedelta(hours=5),
            customer_id="c-000",
            amount=0.01,
            status="late",
        )
    )
    for n in range(ticks):
        events.append(
            {
                "event_type": "ticker",
                "event_id": f"t-{n:04d}",
                "event_time": iso(DAY + timedelta(seconds=n)),
                "ticker": rng.choice(["AAPL", "AMZN", "MSFT"]),
                "price": round(rng.uniform(10, 900), 2),
            }
        )

    scenario = Scenario()
    payloads = [json.dumps(e, separators=(",", ":")).encode() for e in events]
    # Exact duplicates: byte-identical resends of a tenth of the events.
    payloads += rng.sample(payloads, k=len(payloads) // 10)
    scenario.valid_events = len(payloads)
    scenario.malformed = [
        b"this is not json",
        b'{"event_type": "orders", "op": "u"',  # truncated JSON
        b'{"op": "c", "order_id": "x", "order_ts": "2026-11-20T00:00:00.000Z"}',  # no type
        b'{"event_type": "refunds", "id": 1}',  # unknown event type
        b'{"event_type": "orders", "op": "c", "order_ts": "2026-11-20T00:00:00.000Z"}',  # no key
        b'{"event_type": "orders", "op": "c", "order_id": "o-bad1"}',  # no event time
        b'{"event_type": "orders", "op": "c", "order_id": "o-bad2", "order_ts": "yesterday"}',
        b'{"event_type": "orders", "op": "c", "order_id": "o-bad3", '
        b'"order_ts": "2026-11-20T00:00:00.000Z", "amount": "ten"}',  # wrong type
        b'{"event_type": "orders", "op": "x", "order_id": "o-bad4", '
        b'"order_ts": "2026-11-20T00:00:00.000Z"}',  # invalid op
        b'{"event_type": "ticker", "event_id": "t-big", "event_time": '
        b'"2026-11-20T00:00:00.000Z", "ticker": "' + b"X" * 70_000 + b'", "price": 1.0}',
    ]
    mixed = payloads + scenario.malformed
    rng.shuffle(mixed)
    scenario.records = mixed
    scenario.expected_orders = _latest_live(events, "order_id", "order_ts", "partition_date")
    scenario.expected_ticks = _latest_live(
        events_of(events, "ticker"), "event_id", "event_time", "event_date"
    )
    return scenario


def events_of(events: list[dict], event_type: str) -> list[dict]:
    return [e for e in events if e["event_type"] == event_type]


def _latest_live(events: list[dict], key: str, ts_field: str, partition: str) -> dict[str, dict]:
    """The final state by hand: per key the event with the greatest event time;
    a delete removes the key."""
    latest: dict[str, dict] = {}
    for event in events:
        if event["event_type"] != ("orders" if key == "order_id" else "ticker"):
            continue
        current = latest.get(event[key])
        if current is None or event[ts_field] > current[ts_field]:
            latest[event[key]] = event
    live = {}
    for k, event in latest.items():
        if event.get("op") == "d":
            continue
        row = {f: v for f, v in event.items() if f not in ("event_type", "op")}
        row[partition] = event[ts_field][:10]
        live[k] = row
    return live
