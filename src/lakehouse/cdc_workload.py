"""A transactional workload on the CDC part's sample schema (services/cdc/schema.sql).

Each step is one transaction that a shop's backend would make: sign up a customer, place
an order (sometimes two in one transaction), pay or ship one, change its amount, cancel
(delete) one, move a customer to another city, or close the account of a customer without
orders. Each driver works on the rows it made, so several drivers (Locust users) never
wait on each other's rows. It counts the row changes it committed per table: what
Debezium must deliver.

`lakehouse cdc-load` runs it from Locust (locust/cdc_locustfile.py: headless, or its web
UI with --web); `python -m lakehouse.cdc_workload` runs one driver without Locust.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

CITIES = ("Paris", "Lyon", "Berlin", "Lisbon", "Oslo", "Turin", "Ghent")
STATUSES = ("paid", "shipped", "delivered")
# step name -> weight
STEPS: dict[str, int] = {
    "sign_up": 2,
    "place_order": 6,
    "place_two_orders": 1,
    "advance_order": 6,
    "change_amount": 2,
    "cancel_order": 2,
    "move_customer": 2,
    "close_account": 1,
}


class Workload:
    """One driver: a connection (autocommit off: each step commits once) and its rows."""

    def __init__(self, conn: Any, rng: random.Random | None = None) -> None:
        self.conn = conn
        self.rng = rng or random.Random()
        self.customers: list[int] = []
        self.orders: dict[int, int] = {}  # order_id -> customer_id
        self.changes: Counter[str] = Counter()  # table -> rows changed (committed)
        self._names = list(STEPS)
        self._weights = list(STEPS.values())

    def step(self) -> str:
        """One transaction, chosen at random (a sign-up while there is no customer)."""
        name = self.rng.choices(self._names, self._weights)[0] if self.customers else "sign_up"
        pending: Counter[str] = Counter()
        with self.conn.transaction():
            getattr(self, name)(pending)
        self.changes.update(pending)
        return name

    def _one(self, sql: str, args: Sequence[Any], table: str, pending: Counter[str]) -> Any:
        row = self.conn.execute(sql, args).fetchone()
        pending[table] += 1
        return row[0] if row else None

    def sign_up(self, pending: Counter[str]) -> None:
        n = self.rng.randrange(1_000_000)
        customer = self._one(
            "INSERT INTO customers (name, email, city) VALUES (%s, %s, %s) RETURNING customer_id",
            (f"customer {n}", f"c{n}@example.org", self.rng.choice([*CITIES, None])),
            "customers",
            pending,
        )
        self.customers.append(customer)

    def place_order(self, pending: Counter[str]) -> None:
        customer = self.rng.choice(self.customers)
        order = self._one(
            "INSERT INTO orders (customer_id, amount, status) VALUES (%s, %s, 'placed') "
            "RETURNING order_id",
            (customer, round(self.rng.uniform(1, 500), 2)),
            "orders",
            pending,
        )
        self.orders[order] = customer

    def place_two_orders(self, pending: Counter[str]) -> None:
        self.place_order(pending)
        self.place_order(pending)

    def _some_order(self) -> int | None:
        return self.rng.choice(list(self.orders)) if self.orders else None

    def advance_order(self, pending: Counter[str]) -> None:
        if (order := self._some_order()) is None:
            return self.place_order(pending)
        self._one(
            "UPDATE orders SET status = %s, updated_at = now() WHERE order_id = %s "
            "RETURNING order_id",
            (self.rng.choice(STATUSES), order),
            "orders",
            pending,
        )

    def change_amount(self, pending: Counter[str]) -> None:
        if (order := self._some_order()) is None:
            return self.place_order(pending)
        self._one(
            "UPDATE orders SET amount = %s, updated_at = now() WHERE order_id = %s "
            "RETURNING order_id",
            (round(self.rng.uniform(1, 500), 2), order),
            "orders",
            pending,
        )

    def cancel_order(self, pending: Counter[str]) -> None:
        if (order := self._some_order()) is None:
            return self.place_order(pending)
        self._one(
            "DELETE FROM orders WHERE order_id = %s RETURNING order_id", (order,), "orders", pending
        )
        del self.orders[order]

    def move_customer(self, pending: Counter[str]) -> None:
        self._one(
            "UPDATE customers SET city = %s, updated_at = now() WHERE customer_id = %s "
            "RETURNING customer_id",
            (self.rng.choice(CITIES), self.rng.choice(self.customers)),
            "customers",
            pending,
        )

    def close_account(self, pending: Counter[str]) -> None:
        with_orders = set(self.orders.values())
        idle = [c for c in self.customers if c not in with_orders]
        if not idle:
            return self.sign_up(pending)
        customer = self.rng.choice(idle)
        self._one(
            "DELETE FROM customers WHERE customer_id = %s RETURNING customer_id",
            (customer,),
            "customers",
            pending,
        )
        self.customers.remove(customer)


def run(conn: Any, transactions: int, rate: float, seed: int | None = None) -> Workload:
    """`transactions` steps at up to `rate` per second (0: as fast as the database goes)."""
    workload = Workload(conn, random.Random(seed))
    started = time.monotonic()
    for i in range(transactions):
        workload.step()
        if rate > 0:
            time.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    return workload


def locust_command(users: int, transactions_per_sec: float, run_time: str | None) -> list[str]:
    """Locust with locust/cdc_locustfile.py: headless for `run_time` (e.g. "60s"), or its
    web UI on 127.0.0.1:8089 when None. Its environment must carry the CDC_PG_* settings."""
    from lakehouse.config import REPO_ROOT

    command = [
        *(sys.executable, "-m", "locust", "-f", str(REPO_ROOT / "locust" / "cdc_locustfile.py")),
        *("-u", str(users), "-r", str(users)),
        *("--transactions-per-sec", str(transactions_per_sec)),
    ]
    if run_time is None:
        return [*command, "--web-host", "127.0.0.1"]
    return [*command, "--headless", "--run-time", run_time, "--only-summary"]


def main(argv: Sequence[str] | None = None) -> int:
    from lakehouse import cdc
    from lakehouse.config import load_settings

    parser = argparse.ArgumentParser(prog="lakehouse cdc-load", description=__doc__)
    parser.add_argument("--transactions", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50, help="transactions/s (0: no limit)")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    settings = load_settings()
    import psycopg

    with psycopg.connect(cdc.conninfo(settings), autocommit=True) as conn:
        workload = run(conn, args.transactions, args.rate, args.seed)
    changes = ", ".join(f"{table} {n:,}" for table, n in sorted(workload.changes.items()))
    print(f"{args.transactions:,} transactions committed; row changes: {changes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
