"""The CDC part for one end-to-end test: its own PostgreSQL and Debezium service.

They run beside the shared stack (whose Kinesis, S3, metastore and Trino they use) with a
state dir, ports, topic prefix and replication slot of their own, and are stopped
afterwards. PostgreSQL runs as the postgres user when the tests run as root, so the state
dir is under the stack's (pytest's tmp_path is private to its user).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import shutil
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse import cdc
from lakehouse.core.clients import kinesis_client, trino_connection
from lakehouse.core.config import Settings
from lakehouse.local import stack
from lakehouse.local.services import CDC_SERVICE_BUILDERS
from lakehouse.local.supervisor import ServiceError, Supervisor
from lakehouse_tables.declarations import Tables, load_tables
from tests.support.leftovers import owner_marks
from tests.support.pipeline import Run, wait_for
from tests.support.ports import free_port


@dataclass(frozen=True)
class CdcPart:
    settings: Settings
    prefix: str

    @property
    def supervisor(self) -> Supervisor:
        return stack.supervisor_for(self.settings)

    def streams(self) -> list[str]:
        return [f"{self.prefix}.{t}" for t in self.settings["CDC_TABLES"].split(",")]

    def tables(self) -> Tables:
        return load_tables(cdc.CDC_TABLES_YAML)

    def stream_data(self, stream: str) -> list[bytes]:
        """Every record the stream holds, shard by shard (a replayed change is there twice)."""
        client = kinesis_client(self.settings.endpoints)
        found: list[bytes] = []
        for shard in client.list_shards(StreamName=stream)["Shards"]:
            iterator = client.get_shard_iterator(
                StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                page = client.get_records(ShardIterator=iterator, Limit=10_000)
                found.extend(record["Data"] for record in page["Records"])
                if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                    break
                iterator = page.get("NextShardIterator")
        return found

    def stream_records(self, stream: str) -> int:
        return len(self.stream_data(stream))

    def newest_lsn(self) -> int:
        """The largest source.lsn of any change event delivered to the table streams."""
        newest = 0
        for stream in self.streams():
            if not self.stream_exists(stream):
                continue
            for data in self.stream_data(stream):
                event = json.loads(data)
                event = event.get("payload", event)
                newest = max(newest, int(event["source"]["lsn"]))
        return newest

    def stream_exists(self, stream: str) -> bool:
        """The stream exists and can be read (the CDC service makes it on its first event)."""
        client = kinesis_client(self.settings.endpoints)
        try:
            summary = client.describe_stream_summary(StreamName=stream)
        except client.exceptions.ResourceNotFoundException:
            return False
        return summary["StreamDescriptionSummary"]["StreamStatus"] in ("ACTIVE", "UPDATING")

    def start_debezium(self) -> None:
        """Started, and streaming: a change made during the snapshot would be read as part
        of the row, not as a change of its own (the tests count changes)."""
        self.supervisor.start(CDC_SERVICE_BUILDERS["cdc"](self.settings), lambda _: None)
        wait_for(lambda: cdc.debezium_health(self.settings).get("streaming"), 120, "streaming")

    def start_debezium_halting_in_snapshot(self, batch: int, batch_size: int) -> None:
        """Started with a fault (lakehouse.cdc.HaltInSnapshot): it dies, as kill -9 would,
        once its `batch`-th batch of `batch_size` snapshot events is in Kinesis, before the
        engine is told so."""
        faulty = dataclasses.replace(
            self.settings,
            env={
                **self.settings.env,
                "CDC_FAULT_HALT_IN_SNAPSHOT_BATCH": str(batch),
                "CDC_MAX_BATCH_SIZE": str(batch_size),
            },
        )
        with contextlib.suppress(ServiceError):  # it may die before its health check passes
            self.supervisor.start(CDC_SERVICE_BUILDERS["cdc"](faulty), lambda _: None)
        wait_for(
            lambda: self.supervisor.status("cdc").state in ("dead", "stopped"),
            120,
            "the CDC service to halt in its snapshot",
        )

    def stop_debezium(self) -> None:
        self.supervisor.stop("cdc")


@contextmanager
def cdc_part(settings: Settings, logs: Path, debezium: bool = True) -> Iterator[CdcPart]:
    """PostgreSQL with the sample schema, and the Debezium service unless `debezium` is
    false (start it later to capture the rows written meanwhile in its snapshot). Their
    logs are copied into `logs` at the end."""
    tag = uuid.uuid4().hex[:8]
    state = settings.state_dir / "tests" / f"cdc-{tag}"
    state.mkdir(parents=True)
    prefix = f"e2e-cdc-{tag}"
    part = CdcPart(
        dataclasses.replace(
            settings,
            state_dir=state,
            env={
                **settings.env,
                # PostgreSQL and the CDC service get an environment of their own.
                **owner_marks(),
                "CDC_POSTGRES": "local",
                "CDC_PG_PORT": str(free_port()),
                "CDC_HEALTH_PORT": str(free_port()),
                "CDC_TOPIC_PREFIX": prefix,
                "CDC_SLOT": f"e2e_{tag}",
            },
        ),
        prefix,
    )
    try:
        part.supervisor.start(CDC_SERVICE_BUILDERS["postgres"](part.settings), lambda _: None)
        cdc.bootstrap(part.settings, lambda _: None)
        if debezium:
            part.start_debezium()
        yield part
    finally:
        part.supervisor.stop("cdc")
        part.supervisor.stop("postgres")
        for name in ("cdc", "postgres"):
            with contextlib.suppress(OSError):
                shutil.copy(part.supervisor.log_file(name), logs / f"{name}.log")
        client = kinesis_client(settings.endpoints)
        for stream in part.streams():
            with contextlib.suppress(client.exceptions.ResourceNotFoundException):
                client.delete_stream(StreamName=stream, EnforceConsumerDeletion=True)
        shutil.rmtree(state, ignore_errors=True)
        with contextlib.suppress(OSError):
            state.parent.rmdir()  # when no other test's is left


def delivered(part: CdcPart, changes: Counter[str]) -> bool:
    """Each table's stream holds at least the row changes the workload committed."""
    return all(
        part.stream_exists(f"{part.prefix}.public.{table}")
        and part.stream_records(f"{part.prefix}.public.{table}") >= n
        for table, n in changes.items()
    )


def current_lsn(conn: Any) -> int:
    """The database's WAL position now: every change committed later is past it."""
    return int(conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()[0])


def delivered_after(part: CdcPart, lsn: int) -> bool:
    """Debezium has delivered a change made after `lsn` (current_lsn: a later change's WAL
    record starts there or further, so its source.lsn is at least that). It reads the WAL in
    order and acknowledges a batch only after Kinesis took it, so every earlier change is
    in the streams too (at least once). Counting records would not do: a restart without
    stored offsets snapshots the rows again instead of replaying their changes."""
    return part.newest_lsn() >= lsn


def cdc_job_args(job: Run, part: CdcPart) -> list[str]:
    """The job on every table stream at once, with its own checkpoint."""
    return [
        *("--stream", ",".join(part.streams()), "--tables", str(cdc.CDC_TABLES_YAML)),
        *("--trino-url", job.settings.trino_url),
        *("--checkpoint", f"s3a://{job.bucket}/{job.prefix}/checkpoint-cdc"),
    ]


def run_job_on_every_stream(job: Run, part: CdcPart) -> None:
    """One --available-now run of the job over all the table streams."""
    job.run_job("--available-now", "--final-compaction", *cdc_job_args(job, part))


def assert_lake_equals_database(job: Run, part: CdcPart) -> None:
    cursor = trino_connection(job.settings.endpoints, "hive", job.database).cursor()
    report = io.StringIO()
    ok = cdc.verify(
        part.settings, cursor, job.database, part.tables(), lambda line: report.write(line + "\n")
    )
    assert ok, report.getvalue()
