"""Helpers for end-to-end tests: an isolated run of the job against the local stack."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from lakehouse.core.bootstrap import ensure_stream
from lakehouse.core.clients import kinesis_client, s3_client, trino_connection
from lakehouse.core.config import Settings
from lakehouse.local.job_launcher import job_command, job_env


@dataclass(frozen=True)
class Run:
    """Names that keep one test's stream, tables and checkpoint apart from the others'."""

    settings: Settings
    stream: str
    database: str
    bucket: str
    prefix: str
    log: Path
    metrics: Path
    # Shard -> the highest sequence number put() wrote there (caught_up compares).
    last_put: dict[str, int] = field(default_factory=dict, compare=False)

    @classmethod
    def new(cls, settings: Settings, tmp: Path) -> Run:
        tag = uuid.uuid4().hex[:8]
        return cls(
            settings,
            f"e2e-{tag}",
            f"e2e_{tag}",
            settings["LAKEHOUSE_BUCKET"],
            f"e2e/{tag}",
            tmp / "job.log",
            tmp / "metrics.jsonl",
        )

    @property
    def warehouse(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}/warehouse"

    def job_args(self, *extra: str) -> list[str]:
        return [
            "--stream",
            self.stream,
            "--database",
            self.database,
            "--warehouse",
            self.warehouse,
            "--raw",
            f"s3a://{self.bucket}/{self.prefix}/raw",
            "--checkpoint",
            f"s3a://{self.bucket}/{self.prefix}/checkpoint",
            "--metastore-uri",
            self.settings.hms_uri,
            "--kinesis-endpoint",
            self.settings.kinesis_endpoint,
            "--metrics-file",
            str(self.metrics),
            *extra,
        ]

    def start_job(self, *extra: str, env: Mapping[str, str] | None = None) -> subprocess.Popen:
        with open(self.log, "ab") as log:
            return subprocess.Popen(
                job_command(self.job_args(*extra)),
                env={**job_env(self.settings, record_classes=True), **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def run_job(self, *extra: str, timeout_s: float = 900) -> None:
        process = self.start_job(*extra)
        try:
            code = process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"job did not finish in {timeout_s}s; log {self.log}") from None
        assert code == 0, f"job exited {code}; last lines of {self.log}:\n{tail(self.log)}"

    def batches_done(self) -> int:
        """Micro-batches the job's BatchWriter finished (not Spark's progress lines)."""
        if not self.metrics.exists():
            return 0
        return sum('"valid"' in line for line in self.metrics.read_text().splitlines())

    def records_done(self) -> int:
        """Records those micro-batches handled, malformed ones included (a replayed batch
        counts again: it is an upper bound of what reached the sinks)."""
        if not self.metrics.exists():
            return 0
        lines = [json.loads(line) for line in self.metrics.read_text().splitlines() if line]
        return sum(line["records"] for line in lines if "valid" in line)

    # --- Kinesis ---
    def kinesis(self):
        return kinesis_client(self.settings.endpoints)

    def create_stream(self, shards: int = 2) -> None:
        ensure_stream(self.kinesis(), self.stream, shards=shards)

    def put(self, records: list[bytes], start: int = 0) -> None:
        client = self.kinesis()
        for offset in range(0, len(records), 250):
            chunk = records[offset : offset + 250]
            response = client.put_records(
                StreamName=self.stream,
                Records=[
                    {"Data": data, "PartitionKey": f"k{start + offset + i}"}
                    for i, data in enumerate(chunk)
                ],
            )
            assert response["FailedRecordCount"] == 0, response
            for written in response["Records"]:
                shard, seq = written["ShardId"], int(written["SequenceNumber"])
                self.last_put[shard] = max(seq, self.last_put.get(shard, seq))

    def caught_up(self) -> bool:
        """The job has committed a batch ending at or past every record put() wrote: its
        checkpoint's newest committed offsets (Spark's offsets/N beside commits/N, the
        Kinesis source's JSON on the file's last line) reach each shard's last sequence."""
        folder = f"{self.prefix}/checkpoint"
        names = [key.rsplit("/", 1)[1] for key in self.keys(f"{folder}/commits/")]
        committed = [int(name) for name in names if name.isdigit()]
        if not committed:
            return False
        key = f"{folder}/offsets/{max(committed)}"
        text = self.s3().get_object(Bucket=self.bucket, Key=key)["Body"].read().decode()
        offset = json.loads(text.strip().splitlines()[-1])
        streams = offset["streams"].values() if "streams" in offset else [offset]
        read = {
            shard: int(position["lastSequenceNumber"])
            for stream in streams
            for shard, position in stream["shards"].items()
            if position.get("lastSequenceNumber")
        }
        return all(read.get(shard, -1) >= seq for shard, seq in self.last_put.items())

    # --- Trino ---
    def query(self, sql: str, catalog: str = "hudi") -> list[list]:
        cursor = trino_connection(self.settings.endpoints, catalog, self.database).cursor()
        cursor.execute(sql)
        return cursor.fetchall()

    # --- S3 ---
    def s3(self):
        return s3_client(self.settings.endpoints)

    def keys(self, prefix: str) -> list[str]:
        """The keys of the run's bucket under `prefix` (a full key prefix)."""
        pages = (
            self.s3().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        )
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]

    def raw_json_lines(self, table: str) -> list[str]:
        s3, lines = self.s3(), []
        for key in self.keys(f"{self.prefix}/raw/{table}/"):
            if key.endswith(".json"):
                body = s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
                lines += body.decode().splitlines()
        return lines


def tail(path: Path, lines: int = 40) -> str:
    return (
        "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""
    )


def iso_ms(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def wait_for(predicate, timeout_s: float, what: str | Callable[[], str]) -> None:
    """`what` names what was awaited; a callable is called only on timeout, so that a log's
    tail in it is the tail at the timeout, not at the start of the wait."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    said = what() if callable(what) else what
    raise AssertionError(f"timed out after {timeout_s}s waiting for {said}")


def storage_state(run: Run) -> list[tuple[str, str]]:
    """Every object under the run's prefix but the raw copy: tables, timelines, checkpoint."""
    s3, found = run.s3(), []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=run.bucket, Prefix=run.prefix):
        for obj in page.get("Contents", []):
            if "/raw/" not in obj["Key"]:
                found.append((obj["Key"], obj["ETag"]))
    return sorted(found)
