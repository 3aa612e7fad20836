"""The alerts about storage, provoked live on the local stack's Prometheus (markers `faults`
and `long`: minutes of waiting each, so `make fault-test-long` runs them, not `make test`;
promtool's rule tests prove the same rules in a second,
tests/local/test_prometheus.py::test_the_alert_rules_fire_on_their_cases).

- LakehouseCompactionFailing: a base file of the Merge-on-Read table is overwritten by
  bytes that are not Parquet (a bad copy, a partial upload), so every compaction of the
  plan that holds its file group fails while the job goes on ingesting; the alert fires
  after three failed rounds in a row, and resolves with the first compaction after the
  file is restored.
- LakehouseObjectStoreFull: a MinIO of the test's own, on a 64 MiB tmpfs, filled through
  S3 past 90 %; the alert fires after its 5 minutes, and resolves once objects are deleted.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lakehouse.core.clients import s3_client
from lakehouse.local.services import minio_server
from tests.support.pipeline import Run, tail, wait_for
from tests.support.ports import free_port
from tests.support.prometheus import (
    alert_state,
    order,
    prometheus_url,
    scrape_targets,
    scraped_job,
    value,
)

pytestmark = [pytest.mark.faults, pytest.mark.long]


def test_compaction_failing_fires_while_a_file_is_spoiled_and_resolves_once_it_is_restored(
    run: Run,
) -> None:
    url = prometheus_url(run)
    port = free_port()
    s3, table = run.s3(), f"{run.prefix}/warehouse/hudi_orders_mor/"
    run.put([order(i) for i in range(20)])
    with scraped_job(run, port, "--trigger-seconds", "1", "--compaction-interval", "5") as (
        job,
        instance,
    ):
        wait_for(lambda: run.batches_done() >= 1, 300, lambda: f"the first batch:\n{tail(run.log)}")
        # The first batch's inserts made base files only (nothing to compact yet); one of
        # them is spoiled before any plan holds it. (Deleted, it would not fail: the
        # writer, listing no file for its bucket, starts the file group anew.)
        listed = run.keys(table)
        base_files = [k for k in listed if k.endswith(".parquet") and "/." not in k]
        assert base_files, f"no base file under {table}: {listed}"
        spoiled = base_files[0]
        body = s3.get_object(Bucket=run.bucket, Key=spoiled)["Body"].read()
        s3.put_object(Bucket=run.bucket, Key=spoiled, Body=b"not parquet")
        try:
            # Ingest goes on: updates of every key and 20 new ones, appended to log files
            # (the bucket index reads no stored row), while the compaction of each plan
            # that holds the spoiled file's group fails round after round.
            run.put([order(i) for i in range(40)])
            this_table = {"instance": instance, "table": "hudi_orders_mor"}
            wait_for(
                lambda: alert_state(url, "LakehouseCompactionFailing", **this_table) == "firing",
                240,
                lambda: f"LakehouseCompactionFailing to fire:\n{tail(run.log)}",
            )
            assert job.poll() is None, f"the job exited:\n{tail(run.log)}"
            assert run.query("SELECT count(*) FROM hudi_orders_cow")[0][0] == 40
            pending = f'lakehouse_job_compactions_pending{{instance="{instance}"}}'
            assert (value(run, pending) or 0) >= 1, "the failing plan is the table's backlog"
        finally:
            s3.put_object(Bucket=run.bucket, Key=spoiled, Body=body)
        wait_for(
            lambda: alert_state(url, "LakehouseCompactionFailing", **this_table) is None,
            120,
            lambda: f"LakehouseCompactionFailing to resolve:\n{tail(run.log)}",
        )
        in_a_row = f'lakehouse_job_compaction_failures_in_a_row{{instance="{instance}"}}'
        assert value(run, in_a_row) == 0
        wait_for(lambda: value(run, pending) == 0, 60, "the compaction backlog to clear")
        # The plan that failed ran at last, and the quiet table's last delta commits with
        # it: the read-optimized view holds every record.
        wait_for(
            lambda: run.query("SELECT count(*) FROM hudi_orders_mor_ro")[0][0] == 40,
            120,
            lambda: f"the read-optimized view to hold the 40 orders:\n{tail(run.log)}",
        )
        assert job.poll() is None, f"the job exited:\n{tail(run.log)}"


@contextmanager
def minio_on_tmpfs(run: Run, size_mib: int) -> Iterator[tuple[int, Path]]:
    """A MinIO of the test's own on a tmpfs of `size_mib`; yields its port and data dir."""
    mount = Path(tempfile.mkdtemp(prefix="full-minio-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        mount.rmdir()
        pytest.skip(f"a small volume for MinIO needs mount (root): {mounted.stderr.strip()}")
    port, console = free_port(), free_port()
    command, env = minio_server(run.settings, mount / "data", port, console)
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        yield port, mount
    finally:
        server.terminate()
        server.wait(30)
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()


def test_object_store_full_fires_past_90_percent_and_resolves_once_space_is_freed(
    run: Run,
) -> None:
    url = prometheus_url(run)
    with minio_on_tmpfs(run, size_mib=64) as (port, mount):
        s3 = s3_client(replace(run.settings.endpoints, s3=f"http://127.0.0.1:{port}"))
        wait_for(lambda: _answers(s3), 60, f"the MinIO on {mount} to answer")
        s3.create_bucket(Bucket="full")
        this_store = {"instance": f"127.0.0.1:{port}"}
        with scrape_targets(run, {"minio": port}):
            free = f'minio_cluster_capacity_usable_free_bytes{{instance="127.0.0.1:{port}"}}'
            wait_for(lambda: value(run, free) is not None, 60, "Prometheus to scrape the MinIO")
            chunk, n = os.urandom(2 * 2**20), 0
            while _free_share(mount) > 0.05:
                s3.put_object(Bucket="full", Key=f"filler-{n}", Body=chunk)
                n += 1
            began = time.monotonic()
            wait_for(
                lambda: alert_state(url, "LakehouseObjectStoreFull", **this_store) == "firing",
                480,
                f"LakehouseObjectStoreFull to fire ({_free_share(mount):.0%} free)",
            )
            # The rule's `for`: 5 minutes of a full store before it fires.
            assert time.monotonic() - began > 270
            for i in range(n):
                s3.delete_object(Bucket="full", Key=f"filler-{i}")
            wait_for(
                lambda: alert_state(url, "LakehouseObjectStoreFull", **this_store) is None,
                120,
                f"LakehouseObjectStoreFull to resolve ({_free_share(mount):.0%} free)",
            )


def _free_share(mount: Path) -> float:
    stat = os.statvfs(mount)
    return stat.f_bavail / stat.f_blocks


def _answers(s3: Any) -> bool:
    try:
        s3.list_buckets()
        return True
    except Exception:  # not listening yet
        return False
