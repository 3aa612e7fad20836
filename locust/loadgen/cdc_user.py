"""The Locust side of the CDC part: users that run the shop's transactions in PostgreSQL.

Each user is one driver of lakehouse.cdc_workload.Workload on its own connection (its own
rows, so users never wait on each other's locks), paced to `--transactions-per-sec`. Each
transaction is reported to Locust as a request of type SQL named after its step, with its
time; a failed one (the database down, a serialization error) as a failure, and the
user carries on with the next (on a new connection if the old one broke). Debezium
captures what they commit. The database is the CDC part's (CDC_PG_* in
services/cdc/cdc.env, or the environment).
"""

from __future__ import annotations

# isort: off
# locust first: its gevent monkey patching must precede the database driver's sockets
from locust import User, constant_throughput, events, task

# isort: on
import time
from argparse import ArgumentParser
from typing import Any

from lakehouse import cdc
from lakehouse.cdc_workload import Workload
from lakehouse.core.config import load_settings

DEFAULT_TRANSACTIONS_PER_SEC = 2.0


@events.init_command_line_parser.add_listener
def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--transactions-per-sec",
        type=float,
        default=DEFAULT_TRANSACTIONS_PER_SEC,
        include_in_web_ui=True,
        help="transactions per second per user",
    )


class CdcUser(User):
    """One shop backend: a connection and the customers and orders it made."""

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self.workload: Workload | None = None
        rate = float(getattr(environment.parsed_options, "transactions_per_sec", 0) or 0)
        rate = rate or DEFAULT_TRANSACTIONS_PER_SEC
        self._pacing = constant_throughput(rate)

    def wait_time(self) -> float:
        return self._pacing(self)

    def on_start(self) -> None:
        # Psycopg 3 (>= 3.1.14) waits through gevent once monkey patching is on.
        self.workload = Workload(cdc.connect(load_settings()))

    def on_stop(self) -> None:
        if self.workload is not None:
            self.workload.conn.close()

    @task
    def transaction(self) -> None:
        assert self.workload is not None
        started = time.perf_counter()
        name, error = "transaction", None
        try:
            name = self.workload.step()
        except Exception as exc:  # rolled back by step(); reported; the next task goes on
            error = exc
            if self.workload.conn.broken:  # the database restarted: a new connection
                self.workload.conn = cdc.connect(load_settings())
        self.environment.events.request.fire(
            request_type="SQL",
            name=name,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=0,
            exception=error,
            context={},
        )
