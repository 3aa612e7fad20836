"""S3 requests per micro-batch of the job, counted by the local stack's MinIO (its
minio_s3_requests_total by API): the request line of `lakehouse cost`.

Three runs on one stream and one set of tables (the default tables file): a warm-up that
creates the tables, one that drains N batches and one that drains a single batch; (N-batch
run - 1-batch run) / (N - 1) is a batch's own requests, start-up excluded.
`lakehouse bench --s3-requests` (stack up) prints it and writes s3-requests.json.
"""

from __future__ import annotations

import re
import subprocess
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from lakehouse.bench import leftovers
from lakehouse.bench.drain import fill, order_payloads
from lakehouse.core.bootstrap import delete_stream, ensure_stream
from lakehouse.core.clients import kinesis_client
from lakehouse.core.config import Settings
from lakehouse.local.job_launcher import job_command, job_env

# S3's price classes: PUT, COPY, POST and LIST at one price, deletes free, the rest (GET,
# HEAD) at the other.
PUT_CLASS = {
    "putobject",
    "copyobject",
    "listobjectsv1",
    "listobjectsv2",
    "newmultipartupload",
    "putobjectpart",
    "completemultipartupload",
}
FREE = {"deletemultipleobjects", "deleteobject", "abortmultipartupload"}


def minio_requests(settings: Settings) -> Counter[str]:
    url = f"{settings.s3_endpoint}/minio/v2/metrics/cluster"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    counts: Counter[str] = Counter()
    pattern = r'^minio_s3_requests_total\{api="([^"]+)"[^}]*\} (\S+)$'
    for api, value in re.findall(pattern, text, re.M):
        counts[api] += int(float(value))
    return counts


def measure(
    settings: Settings,
    out: Path,
    say: Callable[[str], None],
    batches: int = 10,
    events_per_batch: int = 2_000,
    keep_tables: bool = False,
) -> dict:
    tag = uuid.uuid4().hex[:6]
    stream, bucket = f"s3req-{tag}", settings["LAKEHOUSE_BUCKET"]
    client = kinesis_client(settings.endpoints)
    ensure_stream(client, stream, shards=2)
    payloads = order_payloads(events_per_batch * (batches + 2), 5_000)
    args = [
        *("--available-now", "--stream", stream, "--database", f"s3req_{tag}"),
        *("--warehouse", f"s3a://{bucket}/bench/{tag}/warehouse"),
        *("--raw", f"s3a://{bucket}/bench/{tag}/raw"),
        *("--checkpoint", f"s3a://{bucket}/bench/{tag}/checkpoint"),
        *("--metastore-uri", settings.hms_uri, "--kinesis-endpoint", settings.kinesis_endpoint),
        *("--max-records-per-shard", str(events_per_batch // 2)),
    ]
    sent = 0

    def drain(n: int) -> Counter[str]:
        nonlocal sent
        fill(client, stream, payloads[sent : sent + n * events_per_batch], say)
        sent += n * events_per_batch
        before = minio_requests(settings)
        with (out / f"job-{sent}.log").open("wb") as log:
            code = subprocess.run(
                job_command(args), env=job_env(settings), stdout=log, stderr=log, check=False
            ).returncode
        if code:
            raise RuntimeError(f"the job exited {code}: {out / f'job-{sent}.log'}")
        return minio_requests(settings) - before

    try:
        say(f"  s3 requests: warm-up, then {batches} batches, then 1, of {events_per_batch:,}")
        drain(1)
        many, one = drain(batches), drain(1)
    finally:
        delete_stream(client, stream)
    if not keep_tables:
        leftovers.remove_run(settings, f"bench/{tag}/", (f"s3req_{tag}",), say)
    per_batch = {api: (many[api] - one[api]) / (batches - 1) for api in many | one}
    return {
        "batches": batches,
        "events_per_batch": events_per_batch,
        "per_batch_by_api": {k: round(v, 1) for k, v in sorted(per_batch.items()) if v},
        "put_class_per_batch": round(sum(v for k, v in per_batch.items() if k in PUT_CLASS), 1),
        "get_class_per_batch": round(
            sum(v for k, v in per_batch.items() if k not in PUT_CLASS | FREE), 1
        ),
        "free_per_batch": round(sum(v for k, v in per_batch.items() if k in FREE), 1),
        "startup_requests": round(sum(one.values()) - sum(per_batch.values())),
    }
