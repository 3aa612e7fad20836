"""The notebooks' one helper module: the stack's clients, sending events with their
expected outcome, waiting for rows, S3 listings, Spark with Hudi.

    from lakehouse_lab import Lakehouse
    lh = Lakehouse()                      # endpoints from the environment, else local mode's
    sent = lh.send("orders", 300, prefix="nb1-")
    lh.wait_for_rows("SELECT count(*) FROM orders WHERE order_id LIKE 'nb1-%'", sent.live)
    lh.sql("SELECT status, count(*) FROM orders GROUP BY 1")   # a pandas DataFrame

`make notebook` and the compose `jupyter` service set the environment (the endpoints and
the job's Spark settings), so the same notebook runs against either stack.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse.core.clients import Endpoints, kinesis_client, s3_client, trino_connection
from lakehouse.core.config import load_settings
from lakehouse_tables.declarations import Tables, load_tables


@dataclass(frozen=True)
class Sent:
    """What `Lakehouse.send` put on the stream and what the tables should then hold."""

    event_type: str
    prefix: str
    records: int
    acked: int
    # record key -> the row the live view should show (absent: deleted); values as the
    # job writes them (loadgen.ledger.expected_state: timestamps in epoch milliseconds)
    expected: dict[str, dict[str, Any]]
    deleted: int
    malformed: int
    payloads: list[str]

    @property
    def live(self) -> int:
        return len(self.expected)

    @property
    def keys(self) -> set[str]:
        return set(self.expected)


class Lakehouse:
    """The running stack, as a notebook sees it."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        if env.get("TRINO_URL") and env.get("S3_ENDPOINT"):
            self.endpoints = Endpoints.from_env(env)
            values: Mapping[str, str] = env
        else:  # a plain kernel: local mode's settings
            settings = load_settings()
            self.endpoints = settings.endpoints
            values = settings.service_env()
        self.database = values.get("LAKEHOUSE_DATABASE", "lakehouse")
        self.bucket = values.get("LAKEHOUSE_BUCKET", "lakehouse")
        self.stream = values.get("KINESIS_STREAM_NAME", "events")
        self.tables: Tables = load_tables()

    def __repr__(self) -> str:
        e = self.endpoints
        return (
            f"Lakehouse(trino={e.trino}, s3={e.s3}, kinesis={e.kinesis}, "
            f"stream={self.stream}, database={self.database}, bucket={self.bucket})"
        )

    # ------------------------------------------------------------------ Trino

    def cursor(self, catalog: str = "hive") -> Any:
        return trino_connection(self.endpoints, catalog, self.database, user="notebook").cursor()

    def sql(self, query: str, catalog: str = "hive") -> Any:
        """A query's result as a pandas DataFrame (catalog `hive`: the live views and the
        raw JSON tables; name `hudi.<database>.<table>` for the Hudi tables)."""
        import pandas as pd

        cursor = self.cursor(catalog)
        cursor.execute(query)
        rows = cursor.fetchall()
        return pd.DataFrame(rows, columns=[c[0] for c in cursor.description])

    def scalar(self, query: str, catalog: str = "hive") -> Any:
        cursor = self.cursor(catalog)
        cursor.execute(query)
        rows = cursor.fetchall()
        return rows[0][0] if rows else None

    def timed(self, query: str, repeat: int = 3) -> float:
        """The best of `repeat` runs of a query, in seconds (the first warms caches)."""
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            self._run(query)
            times.append(time.perf_counter() - started)
        return min(times)

    def _run(self, query: str) -> None:
        cursor = self.cursor()
        cursor.execute(query)
        cursor.fetchall()

    def wait_for(
        self, what: str, check: Callable[[], Any], timeout_s: float = 300, every_s: float = 2
    ) -> Any:
        """Call `check` until it returns something true; that value, or TimeoutError."""
        deadline = time.monotonic() + timeout_s
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if result := check():
                    return result
            except Exception as error:  # a table not synced yet, a view not created yet
                last_error = error
            time.sleep(every_s)
        raise TimeoutError(f"waited {timeout_s:.0f}s for {what}; last error: {last_error}")

    def wait_for_rows(self, query: str, expected: int, timeout_s: float = 300) -> float:
        """Wait until `query` (a count) returns `expected`; the seconds it took."""
        started = time.monotonic()
        self.wait_for(
            f"{query!r} to return {expected}",
            lambda: self.scalar(query) == expected,
            timeout_s,
        )
        return time.monotonic() - started

    def live_rows(self, event_type: str, prefix: str) -> dict[str, dict[str, Any]]:
        """The live view's rows whose key starts with `prefix`: key -> row."""
        spec = self.tables[event_type]
        frame = self.sql(f"SELECT * FROM {event_type} WHERE {spec.record_key} LIKE '{prefix}%'")
        return {str(row[spec.record_key]): row for row in frame.to_dict("records")}

    def differences(self, sent: Sent, rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """How `rows` (key -> row, e.g. live_rows) differ from what `sent` should leave:
        missing and extra keys, and changed values of the declared non-time columns."""
        from loadgen.verify import normalize_actual

        spec = self.tables[sent.event_type]
        compared = [(c, kind) for c, kind in spec.schema.items() if kind != "timestamp"]
        problems = [f"missing {k}" for k in sorted(sent.keys - set(rows))]
        problems += [f"extra {k}" for k in sorted(set(rows) - sent.keys)]
        for key in sorted(sent.keys & set(rows)):
            for column, kind in compared:
                # Trino's values in the ledger's form (decimals, nested rows and lists).
                want = sent.expected[key].get(column)
                got = normalize_actual(kind, rows[key].get(column))
                if not _same(want, got):
                    problems.append(f"{key}.{column}: expected {want!r}, got {got!r}")
        return problems

    def wait_until_live(self, sent: Sent, timeout_s: float = 300) -> float:
        """Wait until the live view shows exactly what `sent` should leave; seconds taken."""
        started = time.monotonic()
        self.wait_for(
            f"the live {sent.event_type} rows of {sent.prefix}*",
            lambda: not self.differences(sent, self.live_rows(sent.event_type, sent.prefix)),
            timeout_s,
        )
        return time.monotonic() - started

    def commits(self, table: str) -> list[str]:
        """Completed commit instants of a Hudi table, oldest first (Trino's $timeline)."""
        frame = self.sql(
            f'SELECT timestamp, action, state FROM "{table}$timeline" ORDER BY timestamp',
            catalog="hudi",
        )
        done = frame[frame["state"] == "COMPLETED"]
        return list(done["timestamp"])

    def timeline(self, table: str) -> Any:
        return self.sql(f'SELECT * FROM "{table}$timeline" ORDER BY timestamp', catalog="hudi")

    # ------------------------------------------------------------------ Kinesis

    def send(
        self,
        event_type: str = "orders",
        count: int = 300,
        *,
        prefix: str,
        keys: int = 100,
        seed: int = 1,
        duplicate_rate: float = 0.0,
        malformed_rate: float = 0.0,
        op_mix: str = "c=0.5,u=0.4,d=0.1",
        tables: Tables | None = None,
        stream: str | None = None,
    ) -> Sent:
        """`count` generated events of one type (loadgen's models), keys `<prefix><typ>-<n>`,
        on the stream; returns what was sent and the live rows it should leave."""
        from loadgen.models import EventGenerator, GenConfig, parse_mix

        tables = tables or self.tables
        config = GenConfig(
            event_mix={event_type: 1.0},
            op_mix=parse_mix(op_mix, ("c", "u", "d")),
            key_cardinality={"*": keys},
            duplicate_rate=duplicate_rate,
            malformed_rate=malformed_rate,
            seed=seed,
            key_prefix=prefix,
        )
        generator = EventGenerator(tables, config)
        records = generator.take(count) + generator.drain()
        return self._put(event_type, prefix, records, tables, stream or self.stream)

    def send_payloads(
        self, payloads: Iterable[str | bytes], *, prefix: str, event_type: str = "orders"
    ) -> Sent:
        """Records exactly as given (fixed or broken JSON), partition key by position;
        `prefix`: what their record keys start with (the scope of wait_until_live)."""
        from loadgen.models import Record

        records = [
            Record(p if isinstance(p, bytes) else p.encode(), f"pk-{i}", event_type, "valid", i)
            for i, p in enumerate(payloads)
        ]
        return self._put(event_type, prefix, records, self.tables, self.stream)

    def _put(
        self, event_type: str, prefix: str, records: list, tables: Tables, stream: str
    ) -> Sent:
        from loadgen.kinesis import ShardRouter, list_open_shards, put_records_with_retry
        from loadgen.ledger import LedgerWriter, expected_state, read_ledger

        client = kinesis_client(self.endpoints)
        router = ShardRouter(list_open_shards(client, stream))
        with tempfile.TemporaryDirectory(prefix="notebook-ledger-") as folder:
            ledger = LedgerWriter(Path(folder) / "ledger-notebook.jsonl")
            for start in range(0, len(records), 500):
                batch = records[start : start + 500]
                results = put_records_with_retry(client, stream, batch, router=router)
                for record, result in zip(batch, results, strict=True):
                    ledger.write("notebook", record, result)
            ledger.close()
            entries = list(read_ledger(folder))
        state = expected_state(entries, tables)
        return Sent(
            event_type=event_type,
            prefix=prefix,
            records=len(records),
            acked=state.counts["acked"],
            expected=state.rows.get(event_type, {}),
            deleted=state.deleted.get(event_type, 0),
            malformed=sum(state.malformed.values()),
            payloads=[r.data.decode(errors="replace") for r in records],
        )

    # ------------------------------------------------------------------ S3

    def s3_objects(self, prefix: str) -> Any:
        """Objects under s3://<bucket>/<prefix> as a DataFrame: key, size (bytes), kind
        (Hudi base file, log file, metadata, JSON, ...)."""
        import pandas as pd

        s3 = s3_client(self.endpoints)
        rows = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                rows.append((obj["Key"], obj["Size"], file_kind(obj["Key"])))
        return pd.DataFrame(rows, columns=["key", "size", "kind"])

    def table_prefix(self, table: str) -> str:
        return f"warehouse/{self.database}.db/{table}/"

    def raw_prefix(self, event_type: str) -> str:
        return f"raw/{self.tables[event_type].table}/"

    def table_uri(self, table: str) -> str:
        return f"s3a://{self.bucket}/{self.table_prefix(table)}".rstrip("/")

    # ------------------------------------------------------------------ Spark

    def spark_env(self) -> dict[str, str]:
        """The environment of a Spark driver with Hudi, S3 and the metastore: the kernel's
        own when `make notebook` or the compose image set it, else local mode's."""
        if "PYSPARK_SUBMIT_ARGS" in os.environ:
            return dict(os.environ)
        from lakehouse.local.shells import spark_env

        return spark_env(load_settings())

    def spark(self, app_name: str = "notebook") -> Any:
        """A SparkSession with the job's jars and spark-defaults.conf."""
        from pyspark.sql import SparkSession

        os.environ.update(self.spark_env())
        return SparkSession.builder.appName(app_name).getOrCreate()

    def job_metrics(self) -> list[dict[str, Any]]:
        """The job's per-batch measurements (`--metrics-file`), where this kernel can read
        them: local mode's .local/logs/job-metrics.jsonl. Empty elsewhere."""
        from lakehouse.core.config import ConfigError
        from lakehouse.local.demo import metrics_file

        try:
            path = metrics_file(load_settings())
        except ConfigError:  # no repository here (the compose image)
            return []
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        return abs(want - got) < 1e-9
    return bool(want == got)


def file_kind(key: str) -> str:
    name = key.rsplit("/", 1)[-1]
    if "/.hoodie/" in key:
        return "hudi metadata"
    if name.endswith(".parquet"):
        return "base file (parquet)"
    if ".log." in name:
        return "log file (avro)"
    if name.endswith(".json"):
        return "JSON"
    return "other"
