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
import shutil
import socket
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lakehouse import cdc, stack
from lakehouse.clients import kinesis_client, trino_connection
from lakehouse.config import Settings
from lakehouse.services import CDC_SERVICE_BUILDERS
from lakehouse.supervisor import Supervisor
from lakehouse_tables.declarations import Tables, load_tables
from tests.support.pipeline import Run, wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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

    def stream_records(self, stream: str) -> int:
        """Records the stream holds (a replayed change counts twice)."""
        client = kinesis_client(self.settings.endpoints)
        total = 0
        for shard in client.list_shards(StreamName=stream)["Shards"]:
            iterator = client.get_shard_iterator(
                StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                page = client.get_records(ShardIterator=iterator, Limit=10_000)
                total += len(page["Records"])
                if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                    break
                iterator = page.get("NextShardIterator")
        return total

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


def run_job_on_every_stream(job: Run, part: CdcPart) -> None:
    """One --available-now run per table stream, each with its own checkpoint (the job
    reads one stream until the Kinesis source reads several)."""
    trino = job.settings.trino_url
    for stream in part.streams():
        job.run_job(
            "--available-now",
            "--final-compaction",
            *("--stream", stream, "--tables", str(cdc.CDC_TABLES_YAML), "--trino-url", trino),
            *("--checkpoint", f"s3a://{job.bucket}/{job.prefix}/checkpoint-{stream}"),
        )


def assert_lake_equals_database(job: Run, part: CdcPart) -> None:
    cursor = trino_connection(job.settings.endpoints, "hive", job.database).cursor()
    report = io.StringIO()
    ok = cdc.verify(
        part.settings, cursor, job.database, part.tables(), lambda line: report.write(line + "\n")
    )
    assert ok, report.getvalue()
