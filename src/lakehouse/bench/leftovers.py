"""A benchmark run's tables removed once it is measured: its objects in the bucket and its
database in the metastore.

Kept, they pile up (tens of GB of old runs), fill the laptop's disk, and MinIO's
background scanner walks them for good: CPU taken from the next benchmark's job.
`lakehouse bench --keep-tables` keeps them for inspection.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lakehouse.core.clients import s3_client
from lakehouse.core.config import Settings
from lakehouse.local.job_launcher import job_command, job_env

DELETE_BATCH = 1000  # S3's DeleteObjects takes at most 1,000 keys a request


def keys_under(s3: Any, bucket: str, prefix: str) -> Iterator[str]:
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            yield item["Key"]


def in_batches(keys: Iterable[str], size: int = DELETE_BATCH) -> Iterator[list[str]]:
    batch: list[str] = []
    for key in keys:
        batch.append(key)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def delete_prefix(s3: Any, bucket: str, prefix: str) -> int:
    """Every object under `prefix` (which must end with "/"); how many were deleted."""
    if not prefix.endswith("/") or prefix == "/":
        raise ValueError(f"refusing to delete under {prefix!r}: a run's folder ends with '/'")
    deleted = 0
    # Listed in full first: deleting while paginating can skip keys.
    for batch in in_batches(list(keys_under(s3, bucket, prefix))):
        answer = s3.delete_objects(
            Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True}
        )
        if answer.get("Errors"):
            first = answer["Errors"][0]
            raise RuntimeError(
                f"deleting s3://{bucket}/{prefix}: {first.get('Key')}: {first.get('Message')}"
            )
        deleted += len(batch)
    return deleted


def drop_databases(settings: Settings, databases: tuple[str, ...]) -> None:
    """The run's databases and the tables the job registered in them
    (lakehouse_job.bench.drop_databases: a Spark driver of a few seconds)."""
    done = subprocess.run(
        job_command(databases, master="local[1]", module="lakehouse_job.bench.drop_databases"),
        env=job_env(settings),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"dropping {', '.join(databases)} failed: {done.stderr[-500:]}")


def remove_run(
    settings: Settings, prefix: str, databases: tuple[str, ...], say: Callable[[str], None]
) -> None:
    """Delete a measured run's objects under s3://<bucket>/<prefix> and drop its databases.
    A failure is said, not raised: the run's figures are already measured."""
    bucket = settings["LAKEHOUSE_BUCKET"]
    try:
        # The catalog first: a table whose files are gone cannot be dropped through Spark.
        drop_databases(settings, databases)
        deleted = delete_prefix(s3_client(settings.endpoints), bucket, prefix)
    except Exception as error:  # the figures stand; the user is told what is left
        say(
            f"    note: could not remove the run's tables (s3://{bucket}/{prefix}, "
            f"{', '.join(databases)}): {error}; remove them by hand or ignore them"
        )
        return
    say(f"    removed the run's tables ({deleted:,} objects; --keep-tables keeps them)")
