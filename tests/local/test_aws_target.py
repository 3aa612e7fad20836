"""The AWS target (LAKEHOUSE_TARGET=aws) against a simulated account (tests/support/
aws_simulation.py): TLS with the run's own CA, a role's credentials only through the
default provider chain, Glue as the catalog. The load generator writes to the stream, the
job writes the Hudi tables to S3 and registers them in Glue, and the tables equal the
ledger; a column widened in the tables file then reaches Glue's tables and Trino. Nothing
here needs the local stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError

from lakehouse.aws.policy import render
from lakehouse.aws.trino_glue import glue_catalogs
from lakehouse.core.bootstrap import ensure_stream
from lakehouse.core.clients import Endpoints, hudi_rs_table, kinesis_client, trino_connection
from lakehouse.core.config import Settings, load_settings
from lakehouse.local import installers
from lakehouse.local.job_launcher import job_env
from lakehouse.local.truststore import java_options, java_truststore
from lakehouse_tables.declarations import TABLES_YAML, load_tables
from loadgen.ledger import expected_state, read_ledger
from loadgen.options import LoadOptions
from loadgen.runner import run_load
from tests.support.aws_simulation import ACCOUNT, SimulatedAws, simulated_aws
from tests.support.pipeline import tail, wait_for
from tests.support.spark_cluster import SparkCluster, spark_cluster
from tests.support.trino_server import trino_server

pytestmark = pytest.mark.local

BUCKET = "lakehouse-sim"
STREAM = "events"
DATABASE = "lakehouse_sim"
# Keys a shell may hold that would let a client sign without the provider chain's role.
STATIC_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")
# The orders first carry a `qty` as a long, then the tables file widens it to a double: a
# change Hudi's own Glue sync refuses by itself.
ORDER_FIELDS = "      amount: double\n"
NARROW_TABLES = TABLES_YAML.read_text().replace(ORDER_FIELDS, ORDER_FIELDS + "      qty: long\n", 1)
WIDE_TABLES = NARROW_TABLES.replace("qty: long", "qty: double", 1)


JOB_ROLE = "lakehouse-job"
LOAD_ROLE = "lakehouse-load-generator"


def role_policies(region: str) -> dict[str, dict]:
    """The shipped policies, filled in for the simulated account, with the two changes
    moto's IAM model needs (tests/support/aws_simulation.py): it judges Kinesis and Glue
    calls by action only, so their statements get Resource "*"; and it authorises a
    multi-object delete against the bucket's ARN (AWS: against each key's), so the object
    statement also names the bucket. The actions are the shipped ones."""
    values = dict(
        partition="aws",
        region=region,
        account=ACCOUNT,
        bucket=BUCKET,
        stream=STREAM,
        database=DATABASE,
    )
    policies = {JOB_ROLE: render("job", values), LOAD_ROLE: render("load-generator", values)}
    for policy in policies.values():
        for statement in policy["Statement"]:
            if not statement["Action"][0].startswith("s3:"):
                statement["Resource"] = "*"
            elif statement["Resource"] == f"arn:aws:s3:::{BUCKET}/*":
                statement["Resource"] = [statement["Resource"], f"arn:aws:s3:::{BUCKET}"]
    return policies


@pytest.fixture
def aws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimulatedAws]:
    region = "eu-west-2"
    with simulated_aws(tmp_path / "aws", role_policies(region), region) as simulation:
        for key in STATIC_KEYS:
            monkeypatch.delenv(key, raising=False)
        # This test's process runs as the job's role (the launcher, the checks' reads).
        for key, value in simulation.environment(JOB_ROLE).items():
            monkeypatch.setenv(key, value)
        # hudi-rs's TLS (rustls) reads its extra CA from here, not from AWS_CA_BUNDLE.
        monkeypatch.setenv("SSL_CERT_FILE", str(simulation.tls.ca_bundle))
        monkeypatch.setenv("LAKEHOUSE_TARGET", "aws")
        monkeypatch.setenv("LAKEHOUSE_BUCKET", BUCKET)
        monkeypatch.setenv("LAKEHOUSE_DATABASE", DATABASE)
        monkeypatch.setenv("KINESIS_STREAM_NAME", STREAM)
        yield simulation


def test_load_job_and_glue_on_a_simulated_account(
    aws: SimulatedAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables_file = tmp_path / "tables.yaml"
    tables_file.write_text(NARROW_TABLES)
    monkeypatch.setenv("LAKEHOUSE_TABLES", str(tables_file))
    settings = load_settings()
    assert settings.target == "aws" and settings["LAKEHOUSE_CATALOG"] == "glue"
    assert settings.s3_endpoint == settings.kinesis_endpoint == aws.endpoint
    # What a user creates in the account before the first run (docs/aws.md), as its admin.
    aws.admin("s3").create_bucket(
        Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": aws.region}
    )
    ensure_stream(aws.admin("kinesis"), STREAM, shards=2)
    # The job's role may not write to the stream, nor the load generator's read the lake.
    with pytest.raises(ClientError, match="AccessDenied"):
        kinesis_client(settings.endpoints).put_record(
            StreamName=STREAM, Data=b"{}", PartitionKey="k"
        )

    ledger_dir = tmp_path / "ledger"
    rc = run_load(
        LoadOptions(
            stream_name=STREAM,
            kinesis_endpoint=settings.kinesis_endpoint,
            region=aws.region,
            workers=1,
            users=1,
            run_time="6s",
            stop_timeout=20,
            ledger_dir=str(ledger_dir),
            event_model="orders",
            seed="24",
            events_per_sec=60,
            batch_size=20,
            key_cardinality="50",
        ),
        env={"AWS_CONTAINER_CREDENTIALS_FULL_URI": aws.credentials_uris[LOAD_ROLE]},
        log_dir=tmp_path / "logs",
        timeout=120,
    )
    assert rc == 0, tail(tmp_path / "logs" / "locust.log")
    entries = list(read_ledger(ledger_dir))
    assert entries and all(e["acked"] for e in entries)

    # Trino on the Glue catalog, as a reader of the account runs it: the job makes its live
    # views and raw JSON tables there (TRINO_URL), as it does on the sandbox's metastore.
    store = java_truststore(aws.tls.ca_bundle, installers.spark_java_home(), tmp_path / "trust")
    host = {"PATH": os.environ["PATH"], **aws.environment(JOB_ROLE)}
    jvm = java_options(store).split()
    with (
        trino_server(settings, tmp_path / "trino", glue_catalogs(settings), host, jvm) as trino,
        # A standalone master and worker of their own: the executors read Kinesis and write
        # S3 as the worker's host, which holds the job's role (as an instance role would).
        spark_cluster(tmp_path / "cluster", host) as cluster,
    ):
        monkeypatch.setenv("TRINO_URL", trino.trino)
        submit_job(cluster, tmp_path / "first.log")

        glue = aws.admin("glue")
        tables = {t["Name"]: t for t in glue.get_tables(DatabaseName=DATABASE)["TableList"]}
        assert {"hudi_orders_cow", "hudi_orders_mor_ro", "hudi_orders_mor_rt"} <= set(tables)
        assert {"orders", "orders_json"} <= set(tables)  # the live view, the raw copy's table
        cow = tables["hudi_orders_cow"]["StorageDescriptor"]
        assert cow["Location"] == f"s3://{BUCKET}/warehouse/{DATABASE}.db/hudi_orders_cow"
        assert "order_id" in {c["Name"] for c in cow["Columns"]}

        expected = expected_state(entries, load_tables()).rows["orders"]
        amounts = {key: event["amount"] for key, event in expected.items()}
        for table in ("hudi_orders_cow", "hudi_orders_mor"):
            rows = snapshot(settings, f"s3://{BUCKET}/warehouse/{DATABASE}.db/{table}")
            assert rows == amounts, table
        queries = {
            # Deletes are tombstone rows in the tables; the live view hides them.
            f"hudi.{DATABASE}.{table}": "WHERE NOT _is_deleted"
            for table in ("hudi_orders_cow", "hudi_orders_mor_ro")
        } | {f"hive.{DATABASE}.orders": ""}
        for table, where in queries.items():
            found = trino_rows(trino, f"SELECT order_id, amount FROM {table} {where}")
            assert dict(found) == amounts, table
        valid = sum(e["kind"] == "valid" for e in entries)
        assert trino_rows(trino, f"SELECT count(*) FROM hive.{DATABASE}.orders_json") == [[valid]]

        # qty widened from long to double: the job rewrites the tables and Glue follows.
        tables_file.write_text(WIDE_TABLES)
        new_orders = {"o-wide-1": 1.5, "o-wide-2": 2.25}
        aws.admin("kinesis").put_records(
            StreamName=STREAM,
            Records=[
                {"Data": widened_order(key, qty), "PartitionKey": key}
                for key, qty in new_orders.items()
            ],
        )
        # The load generator gave every order a qty (it fills each declared field): exact
        # in the new type.
        old_qty = {key: float(event["qty"]) for key, event in expected.items()}
        log = submit_job(cluster, tmp_path / "second.log")
        assert "widening hudi_orders_cow (qty to double)" in log
        for table in ("hudi_orders_cow", "hudi_orders_mor_ro", "hudi_orders_mor_rt"):
            columns = glue.get_table(DatabaseName=DATABASE, Name=table)["Table"]
            types = {c["Name"]: c["Type"] for c in columns["StorageDescriptor"]["Columns"]}
            assert types["qty"] == "double", table
        for table, where in queries.items():
            qty = dict(trino_rows(trino, f"SELECT order_id, qty FROM {table} {where}"))
            assert qty == {**old_qty, **new_orders}, table


def widened_order(key: str, qty: float) -> bytes:
    event = {
        "event_type": "orders",
        "op": "c",
        "order_id": key,
        "customer_id": "c-1",
        "amount": 10.0,
        "status": "created",
        "qty": qty,
        "order_ts": "2026-11-20T10:00:00.000Z",
    }
    return json.dumps(event).encode()


def submit_job(cluster: SparkCluster, log: Path) -> str:
    """`lakehouse submit -- --available-now --final-compaction` to `cluster`; the job's log.
    Checks that the job ran there, its executors on the worker."""
    before = len(cluster.state()["completedapps"])
    command = [sys.executable, "-m", "lakehouse.cli", "submit", "--master", cluster.master]
    with log.open("wb") as out:
        done = subprocess.run(
            [*command, "--", "--available-now", "--final-compaction"],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=600,
        )
    assert done.returncode == 0, tail(log, 60)
    # Jobs on several hosts are kept apart by a lease beside the checkpoint on S3.
    text = log.read_text(errors="replace")
    assert "writer lease s3://" in text and " released" in text, tail(log, 60)
    # The master moves an application to its completed ones when the driver's
    # disconnect reaches it, which can be after the driver has exited.
    apps: list[dict] = []

    def completed() -> bool:
        apps[:] = cluster.state()["completedapps"]
        return len(apps) > before

    wait_for(completed, 60, "the master to list the job as completed")
    newest = max(apps, key=lambda app: app["starttime"])
    assert newest["name"] == "lakehouse-streaming-job"
    executor_logs = list((cluster.work_dir / newest["id"]).glob("*/stderr"))
    assert executor_logs, "no executor ran on the worker"
    assert any("Finished task" in p.read_text(errors="replace") for p in executor_logs)
    return text


def trino_rows(trino: Endpoints, sql: str) -> list[list]:
    """`sql`'s rows; retried while the new Trino announces its catalogs."""
    deadline = time.monotonic() + 60
    while True:
        try:
            cursor = trino_connection(trino, catalog="hudi").cursor()
            cursor.execute(sql)
            return cursor.fetchall()
        except Exception as error:
            if "NO_NODES_AVAILABLE" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def snapshot(settings: Settings, base_uri: str) -> dict[str, float]:
    batches = hudi_rs_table(settings.endpoints, base_uri).read()
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return {r["order_id"]: r["amount"] for r in rows if not r.get("_is_deleted")}


def test_no_static_key_reaches_the_job(aws: SimulatedAws) -> None:
    env = job_env(load_settings())
    assert env.get("S3_ACCESS_KEY", "") == env.get("S3_SECRET_KEY", "") == ""
    assert "javax.net.ssl.trustStore=" in env["JAVA_TOOL_OPTIONS"]
    assert (
        os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"]
        == env["AWS_CONTAINER_CREDENTIALS_FULL_URI"]
    )
