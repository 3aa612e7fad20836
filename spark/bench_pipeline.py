"""Benchmark: sustained events/s through the streaming job, and freshness
(event time -> visible in Trino) p50/p95 for the CoW table and the MoR
read-optimized view, at several input rates. Prints figures; asserts nothing.

Needs the local stack running, with the fast Kinesis engine for rates above
~1,000 events/s:  KINESIS_ENGINE=kinesalite make local-up
Then:             .venv/bin/python spark/bench_pipeline.py --rates 500,2000,4000 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from lakehouse.bootstrap import trino_connection
from lakehouse.config import load_settings
from lakehouse.job_launcher import job_command, job_env
from lakehouse.services import kinesis_client


def iso(ts: float) -> str:
    dt = datetime.fromtimestamp(ts, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class Producer(threading.Thread):
    """PutRecords at a fixed rate; event time = send time. Remembers one marker
    event time per second to measure when it becomes visible."""

    def __init__(self, client, stream: str, rate: int, seconds: float, keys: int) -> None:  # type: ignore[no-untyped-def]
        super().__init__(daemon=True)
        self.client, self.stream, self.rate, self.seconds, self.keys = (
            client,
            stream,
            rate,
            seconds,
            keys,
        )
        self.sent = 0
        self.markers: list[float] = []

    def run(self) -> None:
        start = time.time()
        batch = max(1, min(500, self.rate // 10))
        n = 0
        while (now := time.time()) - start < self.seconds:
            due = int((now - start) * self.rate)
            if self.sent >= due:
                time.sleep(0.01)
                continue
            records = []
            for _ in range(min(batch, due - self.sent + batch)):
                n += 1
                event = {
                    "event_type": "orders",
                    "op": "u",
                    "order_id": f"o{n % self.keys}",
                    "customer_id": f"c{n % 97}",
                    "amount": float(n % 1000),
                    "status": "paid",
                    "order_ts": iso(time.time()),
                }
                records.append({"Data": json.dumps(event).encode(), "PartitionKey": str(n)})
            response = self.client.put_records(StreamName=self.stream, Records=records)
            self.sent += len(records) - response["FailedRecordCount"]
            if not self.markers or time.time() - self.markers[-1] >= 1:
                self.markers.append(time.time())


class VisibilityProbe(threading.Thread):
    """Polls Trino for the newest visible event time of a table."""

    def __init__(self, settings, database: str, table: str) -> None:  # type: ignore[no-untyped-def]
        super().__init__(daemon=True)
        self.cursor = trino_connection(settings, "hudi", database).cursor()
        self.table = table
        self.samples: list[tuple[float, float]] = []  # (poll wall time, newest event time)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.cursor.execute(f"SELECT max(order_ts) FROM {self.table}")
                newest = self.cursor.fetchall()[0][0]
                if newest is not None:
                    self.samples.append((time.time(), newest.replace(tzinfo=UTC).timestamp()))
            except Exception:  # the table does not exist before the first commit
                pass
            self.stop.wait(1.0)

    def latencies(self, markers: list[float]) -> list[float]:
        result = []
        for marker in markers:
            seen = next((t for t, newest in self.samples if newest >= marker - 0.001), None)
            if seen is not None:
                result.append(seen - marker)
        return result


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_rate(
    settings, rate: int, seconds: float, shards: int, trigger: float, drain_s: float
) -> dict:  # type: ignore[no-untyped-def]
    tag = uuid.uuid4().hex[:6]
    stream, database = f"bench-{tag}", f"bench_{tag}"
    bucket = settings["LAKEHOUSE_BUCKET"]
    kinesis = kinesis_client(settings)
    kinesis.create_stream(StreamName=stream, ShardCount=shards)
    kinesis.get_waiter("stream_exists").wait(
        StreamName=stream, WaiterConfig={"Delay": 0.2, "MaxAttempts": 150}
    )
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{tag}-"))
    metrics = workdir / "metrics.jsonl"
    args = [
        "--stream",
        stream,
        "--database",
        database,
        "--warehouse",
        f"s3a://{bucket}/bench/{tag}/warehouse",
        "--raw",
        f"s3a://{bucket}/bench/{tag}/raw",
        "--checkpoint",
        f"s3a://{bucket}/bench/{tag}/checkpoint",
        "--metastore-uri",
        settings.hms_uri,
        "--kinesis-endpoint",
        settings.kinesis_endpoint,
        "--trigger-seconds",
        str(trigger),
        "--metrics-file",
        str(metrics),
        "--starting-position",
        "TRIM_HORIZON",
    ]
    with open(workdir / "job.log", "wb") as log:
        job = subprocess.Popen(
            job_command(args), env=job_env(settings), stdout=log, stderr=log, start_new_session=True
        )
    # Let Spark start before the clock runs, so start-up is not counted as lag.
    deadline = time.time() + 120
    while time.time() < deadline and not metrics.exists():
        time.sleep(0.5)
    producer = Producer(kinesis, stream, rate, seconds, keys=max(1000, rate * 10))
    probes = {
        t: VisibilityProbe(settings, database, t) for t in ("hudi_orders_cow", "hudi_orders_mor_ro")
    }
    started = time.time()
    producer.start()
    for probe in probes.values():
        probe.start()
    producer.join()
    sent_window = time.time() - started
    time.sleep(drain_s)
    for probe in probes.values():
        probe.stop.set()
    os.killpg(job.pid, signal.SIGTERM)
    try:
        job.wait(120)
    except Exception:
        os.killpg(job.pid, signal.SIGKILL)
    batches = [json.loads(line) for line in metrics.read_text().splitlines()]
    window = [b for b in batches if b["records"] and b["finished_at"] >= started]
    processed = sum(b["records"] for b in window)
    in_window = sum(b["records"] for b in window if b["finished_at"] <= started + sent_window)
    per_sink: dict[str, list[float]] = {}
    for b in window:
        for name, secs in b["seconds"].items():
            per_sink.setdefault(name, []).append(secs)
    result = {
        "rate_target": rate,
        "sent": producer.sent,
        "sent_per_s": producer.sent / sent_window,
        "processed": processed,
        "processed_per_s_during_send": in_window / sent_window,
        "backlog_at_end_of_send": producer.sent - in_window,
        "batches": len(window),
        "sink_seconds_mean": {k: round(statistics.mean(v), 2) for k, v in per_sink.items()},
        "sink_seconds_p95": {k: round(pct(v, 0.95), 2) for k, v in per_sink.items()},
        "workdir": str(workdir),
    }
    for table, probe in probes.items():
        lat = probe.latencies(producer.markers)
        result[f"freshness_{table}"] = {
            "p50": round(pct(lat, 0.5), 1),
            "p95": round(pct(lat, 0.95), 1),
            "seen": f"{len(lat)}/{len(producer.markers)}",
        }
    kinesis.delete_stream(StreamName=stream)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rates", default="500,1000,2000,4000")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--trigger", type=float, default=2.0)
    parser.add_argument("--drain", type=float, default=30, help="seconds to wait after sending")
    args = parser.parse_args()
    settings = load_settings()
    print(f"Kinesis engine: {settings['KINESIS_ENGINE']}; cores: {os.cpu_count()}", flush=True)
    for rate in [int(r) for r in args.rates.split(",")]:
        result = run_rate(settings, rate, args.seconds, args.shards, args.trigger, args.drain)
        print(json.dumps(result, indent=2), flush=True)


if __name__ == "__main__":
    main()
