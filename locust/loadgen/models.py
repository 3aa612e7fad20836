"""Event generators: orders (CDC), ticker, clicks, iot, and a generic one for any
other event type declared in tables.yaml.

Every valid event is a JSON object with `event_type` and exactly the schema fields
of its tables.yaml entry (plus `op` for CDC types). Timestamps are ISO-8601 UTC
with milliseconds and a Z.

Guarantees, per generator (one per Locust user):

* per record key, event times strictly increase in *generation* order, so the
  latest event by event time is unambiguous;
* out-of-order: a share of records is held back for 1..max_delay later records,
  so the *send* order differs from event-time order (an update held back while
  the key gets deleted arrives after the delete);
* late: a share of events gets an event time minutes/hours (up to late_max_seconds)
  in the past; half of them instead fall in the last 3 h of the previous UTC day,
  so that the partition date changes;
* duplicates: a share of records is resent byte-identical, later;
* malformed: a share of records is one of MALFORMED_KINDS; these never touch the
  key state and use keys prefixed `bad-`, so they cannot collide with real keys.

Keys are namespaced by `key_prefix` (run id, worker and user index), so two
generators never share a key.
"""

from __future__ import annotations

import bisect
import heapq
import json
import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lakehouse_tables import rules, types
from lakehouse_tables.declarations import Tables, TableSpec
from lakehouse_tables.rules import OPS, VALID
from loadgen.timefmt import DAY_MS, format_ms, now_ms

# The ledger kinds the generator can produce on purpose.
MALFORMED_KINDS = (
    rules.NOT_JSON,
    rules.MISSING_KEY,
    rules.MISSING_TIME,
    rules.INVALID_TIME,
    rules.WRONG_TYPES,
    rules.UNKNOWN_EVENT_TYPE,
    rules.OVERSIZE,
)


def parse_mix(
    text: str | Mapping[str, float], allowed: tuple[str, ...] | None = None
) -> dict[str, float]:
    """'orders=3,ticker=1' (or 'orders', or a mapping) -> normalised weights."""
    if isinstance(text, Mapping):
        raw = {str(k): float(v) for k, v in text.items()}
    else:
        raw = {}
        for part in str(text).split(","):
            part = part.strip()
            if not part:
                continue
            name, _, weight = part.partition("=")
            raw[name.strip()] = float(weight) if weight else 1.0
    if allowed is not None:
        unknown = set(raw) - set(allowed)
        if unknown:
            raise ValueError(f"unknown mix entries {sorted(unknown)}; allowed: {list(allowed)}")
    if any(w < 0 for w in raw.values()):
        raise ValueError(f"negative weight in mix {text!r}")
    total = sum(raw.values())
    if total <= 0:
        raise ValueError(f"empty mix {text!r}")
    return {k: v / total for k, v in raw.items() if v > 0}


def parse_cardinality(text: str | int | Mapping[str, int]) -> dict[str, int]:
    """'10000' (all types) or 'orders=1000,ticker=0' -> {type or '*': n}; 0 = unbounded."""
    if isinstance(text, int):
        return {"*": text}
    if isinstance(text, Mapping):
        return {str(k): int(v) for k, v in text.items()}
    out: dict[str, int] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            name, _, n = part.partition("=")
            out[name.strip()] = int(n)
        else:
            out["*"] = int(part)
    return out


@dataclass
class GenConfig:
    event_mix: dict[str, float] = field(default_factory=lambda: {"orders": 1.0})
    op_mix: dict[str, float] = field(default_factory=lambda: {"c": 0.5, "u": 0.4, "d": 0.1})
    # record keys per event type (0 = a new key for every event / every create)
    key_cardinality: dict[str, int] = field(default_factory=lambda: {"*": 10_000})
    duplicate_rate: float = 0.0
    out_of_order_rate: float = 0.0
    late_rate: float = 0.0
    malformed_rate: float = 0.0
    malformed_mix: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(MALFORMED_KINDS, 1 / len(MALFORMED_KINDS))
    )
    max_delay: int = 200  # held-back / duplicated records reappear 1..max_delay records later
    late_max_seconds: float = 6 * 3600
    seed: int | None = None
    key_prefix: str = ""

    def cardinality(self, event_type: str) -> int:
        return self.key_cardinality.get(event_type, self.key_cardinality.get("*", 0))


@dataclass(slots=True)
class Record:
    """One Kinesis record to send."""

    data: bytes
    partition_key: str
    event_type: str | None  # intended type (None for malformed not-JSON)
    kind: str  # VALID or a MALFORMED_KINDS entry
    seq: int  # generation index within its generator
    dup: bool = False  # a byte-identical resend of an earlier record
    delayed: bool = False  # held back (out of order)
    late: bool = False


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- models


class Model:
    """Builds event bodies for one event type. Subclasses fill the non-key fields."""

    fields: tuple[str, ...] = ()  # non-key, non-time schema fields it emits

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        if len(spec.record_keys) > 1:
            # Keys of several fields come from databases (CDC); generated events carry one.
            raise ValueError(
                f"{spec.event_type}: the load generator makes events keyed by one field, and "
                f"record_key is {', '.join(spec.record_keys)}"
            )
        self.spec = spec
        self.rng = rng

    @property
    def cdc(self) -> bool:
        return self.spec.op_field is not None

    def expected_fields(self) -> set[str]:
        return {*self.fields, self.spec.record_key, self.spec.precombine}

    def body(self, key: str, t_ms: int, op: str | None) -> dict[str, Any]:
        ev: dict[str, Any] = {"event_type": self.spec.event_type}
        if self.spec.op_field is not None:
            ev[self.spec.op_field] = op or "c"
        ev[self.spec.record_key] = key
        if op == "d":
            ev.update(dict.fromkeys(self.fields))
        else:
            ev.update(self.values(key, op))
        ev[self.spec.precombine] = format_ms(t_ms)
        return ev

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def forget(self, key: str) -> None:
        """Called when a key is deleted."""


class OrdersModel(Model):
    fields = ("customer_id", "amount", "status", "items")
    SKUS = 200
    STATUSES = ("paid", "shipped", "delivered", "cancelled", "returned")

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        super().__init__(spec, rng)
        self.customer: dict[str, str] = {}

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        r = self.rng
        if op == "c" or key not in self.customer:
            self.customer[key] = f"cust-{r.randrange(5000):05d}"
            status = "created"
        else:
            status = r.choice(self.STATUSES)
        lines = [
            (
                f"sku-{r.randrange(self.SKUS):04d}",
                r.randint(1, 5),
                Decimal(r.randrange(100, 20000)) / 100,
            )
            for _ in range(r.randint(1, 3))
        ]
        # A price is sent as a JSON string: exact, as a decimal column keeps it.
        items = [{"sku": sku, "qty": qty, "price": f"{price:.2f}"} for sku, qty, price in lines]
        total = sum((qty * price for _, qty, price in lines), Decimal(0))
        return {
            "customer_id": self.customer[key],
            "amount": float(total),
            "status": status,
            "items": items,
        }

    def forget(self, key: str) -> None:
        self.customer.pop(key, None)


class TickerModel(Model):
    fields = ("ticker", "price")
    SYMBOLS = (
        "AAPL",
        "MSFT",
        "GOOG",
        "AMZN",
        "META",
        "NVDA",
        "TSLA",
        "ORCL",
        "IBM",
        "INTC",
        "AMD",
        "CSCO",
        "NFLX",
        "ADBE",
        "CRM",
        "SAP",
        "ASML",
        "TSM",
        "AVGO",
        "QCOM",
    )

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        super().__init__(spec, rng)
        self.prices = {s: rng.uniform(20, 800) for s in self.SYMBOLS}

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        sym = self.rng.choice(self.SYMBOLS)
        p = max(0.01, self.prices[sym] * (1 + self.rng.gauss(0, 0.002)))
        self.prices[sym] = p
        return {"ticker": sym, "price": round(p, 4)}


class ClicksModel(Model):
    fields = ("user_id", "session_id", "page", "action", "properties")
    REFERRERS = ("direct", "search", "email", "social")
    DEVICES = ("desktop", "mobile", "tablet")
    PAGES = ("/", "/search", "/product", "/cart", "/checkout", "/account", "/help")
    ACTIONS = ("view", "click", "scroll", "add_to_cart", "purchase")

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        super().__init__(spec, rng)
        self.sessions: dict[str, str] = {}

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        r = self.rng
        user = f"user-{r.randrange(5000):05d}"
        if user not in self.sessions or r.random() < 0.05:
            self.sessions[user] = f"sess-{r.getrandbits(48):012x}"
        return {
            "user_id": user,
            "session_id": self.sessions[user],
            "page": r.choice(self.PAGES),
            "action": r.choice(self.ACTIONS),
            "properties": {"referrer": r.choice(self.REFERRERS), "device": r.choice(self.DEVICES)},
        }


class IotModel(Model):
    fields = ("device_id", "temperature", "humidity")

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        super().__init__(spec, rng)
        self.base = {f"dev-{i:04d}": rng.uniform(15, 30) for i in range(200)}
        self.devices = list(self.base)

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        r = self.rng
        dev = r.choice(self.devices)
        return {
            "device_id": dev,
            "temperature": round(self.base[dev] + r.gauss(0, 1.5), 2),
            "humidity": round(r.uniform(20, 90), 1),
        }


class GenericModel(Model):
    """Random values by declared type, for event types without a hand-written model."""

    def __init__(self, spec: TableSpec, rng: random.Random) -> None:
        super().__init__(spec, rng)
        self.fields = tuple(f for f in spec.schema if f not in (spec.record_key, spec.precombine))

    def values(self, key: str, op: str | None) -> dict[str, Any]:
        return {f: random_value(self.spec.schema[f], f, self.rng) for f in self.fields}


def random_value(t: types.FieldType, name: str, r: random.Random, nested: bool = False) -> Any:
    """A valid JSON value of a declared type (record rule 9), nested types included."""
    if isinstance(t, types.Decimal):
        digits = min(t.integer_digits, 6)
        whole = r.randrange(10**digits) if digits else 0
        if not t.scale:
            return whole
        places = min(t.scale, 15 - digits)  # a nested one travels as a double: 15 digits
        fraction = f"{r.randrange(10**places):0{places}d}"
        if nested:  # a JSON number (Spark's reader rounds nested decimals; this needs none)
            return float(f"{whole}.{fraction}")
        return f"{whole}.{fraction}"  # a numeric string: exact at any precision
    if isinstance(t, types.Struct):
        return {field: random_value(ft, field, r, True) for field, ft in t.fields}
    if isinstance(t, types.Array):
        return [random_value(t.element, name, r, True) for _ in range(r.randrange(4))]
    if isinstance(t, types.Map):
        return {f"k{i}": random_value(t.value, name, r, True) for i in range(r.randrange(4))}
    if t is types.Primitive.STRING:
        return f"{name}-{r.randrange(1000)}"
    if t is types.Primitive.LONG:
        return r.randrange(1_000_000)
    if t is types.Primitive.DOUBLE:
        return round(r.uniform(0, 1000), 3)
    if t is types.Primitive.BOOLEAN:
        return r.random() < 0.5
    if t is types.Primitive.DATE:
        return format_ms(now_ms() - r.randrange(365) * DAY_MS)[:10]
    return format_ms(now_ms() - r.randrange(DAY_MS))  # timestamp


BUILTIN_MODELS: dict[str, type[Model]] = {
    "orders": OrdersModel,
    "ticker": TickerModel,
    "clicks": ClicksModel,
    "iot": IotModel,
}


def model_for(spec: TableSpec, rng: random.Random) -> Model:
    """The hand-written model if it emits exactly the declared schema, else a generic one."""
    cls = BUILTIN_MODELS.get(spec.event_type)
    if cls is not None:
        m = cls(spec, rng)
        if m.expected_fields() == set(spec.schema):
            return m
    return GenericModel(spec, rng)


# --------------------------------------------------------------------------- keys


class KeySpace:
    """Record keys of one event type and their per-key state (last event time, alive)."""

    def __init__(self, prefix: str, cardinality: int) -> None:
        self.prefix = prefix
        self.cardinality = cardinality
        self.next_new = 0
        self.last_ms: dict[str, int] = {}
        self._alive: list[str] = []
        self._alive_idx: dict[str, int] = {}
        self._dead: list[str] = []
        self._dead_idx: dict[str, int] = {}

    def key(self, i: int) -> str:
        return f"{self.prefix}{i:07d}"

    def new_key(self) -> str | None:
        if self.cardinality and self.next_new >= self.cardinality:
            return None
        k = self.key(self.next_new)
        self.next_new += 1
        return k

    def pool_key(self, rng: random.Random) -> str:
        """A key from the pool (non-CDC types); a new one when unbounded."""
        if not self.cardinality:
            k = self.new_key()
            assert k is not None
            return k
        return self.key(rng.randrange(self.cardinality))

    @staticmethod
    def _add(lst: list[str], idx: dict[str, int], k: str) -> None:
        if k not in idx:
            idx[k] = len(lst)
            lst.append(k)

    @staticmethod
    def _remove(lst: list[str], idx: dict[str, int], k: str) -> None:
        i = idx.pop(k, None)
        if i is None:
            return
        last = lst.pop()
        if last != k:
            lst[i] = last
            idx[last] = i

    def set_alive(self, k: str) -> None:
        self._remove(self._dead, self._dead_idx, k)
        self._add(self._alive, self._alive_idx, k)

    def set_dead(self, k: str) -> None:
        self._remove(self._alive, self._alive_idx, k)
        self._add(self._dead, self._dead_idx, k)

    def random_alive(self, rng: random.Random) -> str | None:
        return rng.choice(self._alive) if self._alive else None

    def random_dead(self, rng: random.Random) -> str | None:
        return rng.choice(self._dead) if self._dead else None

    @property
    def alive_count(self) -> int:
        return len(self._alive)


# --------------------------------------------------------------------------- generator


class EventGenerator:
    """Produces Records (valid, late, out-of-order, duplicated, malformed) from a config."""

    def __init__(
        self,
        tables: Tables,
        config: GenConfig,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.tables = tables
        self.config = config
        self.clock = clock
        self.rng = random.Random(config.seed)
        for name in config.event_mix:
            if name not in tables:
                raise ValueError(f"event type {name!r} is not declared in tables.yaml")
        self.types = list(config.event_mix)
        self._cum = _cumulative([config.event_mix[t] for t in self.types])
        self.ops = [o for o in OPS if config.op_mix.get(o, 0) > 0]
        self._op_cum = _cumulative([config.op_mix[o] for o in self.ops])
        self.bad_kinds = list(config.malformed_mix)
        self._bad_cum = _cumulative([config.malformed_mix[k] for k in self.bad_kinds])
        self.models = {t: model_for(tables[t], self.rng) for t in self.types}
        self.keys = {
            t: KeySpace(f"{config.key_prefix}{t[:3]}-", config.cardinality(t)) for t in self.types
        }
        self._seq = 0
        self._bad = 0
        self._ready: deque[Record] = deque()
        self._held: list[tuple[int, int, Record]] = []  # (due seq, tiebreak, record)
        self._tiebreak = 0
        self.stats: dict[str, int] = {
            "generated": 0,
            "late": 0,
            "delayed": 0,
            "dup": 0,
            "malformed": 0,
        }

    # public ----------------------------------------------------------------
    def take(self, n: int) -> list[Record]:
        """The next n records in send order."""
        out: list[Record] = []
        while len(out) < n:
            if not self._ready:
                self._step()
                continue
            out.append(self._ready.popleft())
        return out

    @property
    def pending(self) -> int:
        """Records generated but not yet handed out (held back or ready)."""
        return len(self._held) + len(self._ready)

    def drain(self) -> list[Record]:
        """Everything still held back, in due order."""
        out = list(self._ready)
        self._ready.clear()
        while self._held:
            out.append(heapq.heappop(self._held)[2])
        return out

    # internals --------------------------------------------------------------
    def _hold(self, rec: Record, min_delay: int) -> None:
        self._tiebreak += 1
        due = self._seq + self.rng.randint(min_delay, max(min_delay, self.config.max_delay))
        heapq.heappush(self._held, (due, self._tiebreak, rec))

    def _step(self) -> None:
        self._seq += 1
        while self._held and self._held[0][0] <= self._seq:
            self._ready.append(heapq.heappop(self._held)[2])
        c, r = self.config, self.rng
        if c.malformed_rate and r.random() < c.malformed_rate:
            rec = self._malformed()
        else:
            rec = self._valid()
        self.stats["generated"] += 1
        if c.out_of_order_rate and r.random() < c.out_of_order_rate:
            rec.delayed = True
            self.stats["delayed"] += 1
            self._hold(rec, 1)
        else:
            self._ready.append(rec)
        if c.duplicate_rate and r.random() < c.duplicate_rate:
            self.stats["dup"] += 1
            dup = Record(rec.data, rec.partition_key, rec.event_type, rec.kind, rec.seq, dup=True)
            self._hold(dup, 1)

    def _pick(self, cum: list[float], items: list[str]) -> str:
        return items[min(bisect.bisect_right(cum, self.rng.random()), len(items) - 1)]

    def _late_ms(self, now: int) -> int:
        r = self.rng
        late_max = max(60_000, int(self.config.late_max_seconds * 1000))
        if r.random() < 0.5:  # previous UTC day: the partition date changes
            midnight = now - now % DAY_MS
            return midnight - r.randint(1, min(late_max, 3 * 3600_000))
        return now - r.randint(60_000, late_max)

    def _valid(self) -> Record:
        c, r = self.config, self.rng
        etype = self._pick(self._cum, self.types)
        model, ks = self.models[etype], self.keys[etype]
        now = self.clock()
        late_ms = self._late_ms(now) if c.late_rate and r.random() < c.late_rate else None

        def ok(k: str | None) -> bool:
            return k is not None and (late_ms is None or ks.last_ms.get(k, -1) < late_ms)

        op: str | None = None
        key: str | None = None
        if model.cdc:
            op = self._pick(self._op_cum, self.ops)
            if op in ("u", "d"):
                for _ in range(8):
                    key = ks.random_alive(r)
                    if key is None or ok(key):
                        break
                if not ok(key):
                    op, key = "c", None
            if op == "c":
                key = ks.new_key()
                if key is None:
                    for _ in range(8):
                        key = ks.random_dead(r)
                        if key is None or ok(key):
                            break
                if not ok(key):  # no creatable key (or all too recent): update instead
                    alive = ks.random_alive(r)
                    if alive is not None:
                        op, key = "u", alive
                    if not ok(key):  # give up on lateness for this event
                        late_ms = None
                        if key is None:
                            key = ks.random_dead(r)
        else:
            for _ in range(8):
                key = ks.pool_key(r)
                if ok(key):
                    break
            if not ok(key):
                late_ms = None
        assert key is not None
        if late_ms is not None:
            t = late_ms
            self.stats["late"] += 1
        else:
            t = max(now, ks.last_ms.get(key, -1) + 1)
        if model.cdc or ks.cardinality:
            ks.last_ms[key] = t
        if model.cdc:
            if op == "d":
                ks.set_dead(key)
                model.forget(key)
            else:
                ks.set_alive(key)
        body = model.body(key, t, op)
        return Record(_dumps(body), key, etype, VALID, self._seq, late=late_ms is not None)

    def _malformed(self) -> Record:
        r = self.rng
        kind = self._pick(self._bad_cum, self.bad_kinds)
        etype = self._pick(self._cum, self.types)
        spec = self.tables[etype]
        model = self.models[etype]
        self._bad += 1
        self.stats["malformed"] += 1
        key = f"bad-{self.config.key_prefix}{self._bad:07d}"
        op = "c" if model.cdc else None
        ev = model.body(key, self.clock(), op)
        model.forget(key)
        data: bytes
        if kind == rules.NOT_JSON:
            data = r.choice(
                [
                    b"this is not json",
                    _dumps(ev)[:-7],  # truncated object
                    b"{'single': 'quotes'}",
                ]
            )
        elif kind == rules.MISSING_KEY:
            del ev[spec.record_key]
        elif kind == rules.MISSING_TIME:
            del ev[spec.precombine]
        elif kind == rules.INVALID_TIME:
            ev[spec.precombine] = r.choice(["2026-13-45T25:61:61.000Z", "not-a-timestamp", ""])
        elif kind == rules.WRONG_TYPES:
            numeric = [f for f, t in spec.schema.items() if t in ("double", "long")]
            if numeric:
                ev[r.choice(numeric)] = "not-a-number"
            else:
                ev[spec.record_key] = {"id": key}
        elif kind == rules.UNKNOWN_EVENT_TYPE:
            ev["event_type"] = "no_such_type"
        elif kind == rules.OVERSIZE:
            ev["padding"] = "x" * (self.tables.max_record_bytes + r.randint(1, 16_384))
        if kind != rules.NOT_JSON:
            data = _dumps(ev)
        return Record(data, key, etype if kind != rules.NOT_JSON else None, kind, self._seq)


def _cumulative(weights: list[float]) -> list[float]:
    total = sum(weights)
    out, acc = [], 0.0
    for w in weights:
        acc += w / total
        out.append(acc)
    return out
