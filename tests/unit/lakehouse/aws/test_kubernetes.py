"""lakehouse.aws.kubernetes: `lakehouse submit --master k8s://...` runs Spark's own spark-submit
in cluster mode, which creates the driver's pod and its config maps through the Kubernetes
API. No cluster can run here: the API is a loopback server that records each request and
answers it with the object sent, so what is checked is what Spark would ask a real API
server to create (the pods themselves never start)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import boto3
import pytest

from lakehouse import cli
from lakehouse.aws import kubernetes
from lakehouse.aws.submit import SubmitError
from lakehouse.core.config import Settings
from tests.unit.lakehouse.conftest import AWS

pytestmark = pytest.mark.unit

IMAGE = "registry.example/lakehouse/spark:0.1"


class RecordingApi(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.requests.append({"method": self.command, "path": self.path, "body": body})
        out = json.dumps(body or {"kind": "Status", "status": "Success"}).encode()
        self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[str, list[dict]]]:
    """A recording API server's k8s:// URL and its requests; the CLI's settings are the aws
    target's (conftest.AWS), as its `aws` fixture's."""
    for key, value in {**AWS, "KUBECONFIG": str(tmp_path / "none")}.items():
        monkeypatch.setenv(key, value)
    requests: list[dict] = []
    handler = type("Recorder", (RecordingApi,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"k8s://http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()


def test_spark_submit_asks_for_the_driver_pod_the_job_needs(
    aws: Settings, api: tuple[str, list[dict]]
) -> None:
    master, requests = api
    boto3.client("kinesis", region_name="eu-west-1").create_stream(
        StreamName="events", ShardCount=1
    )
    args = ["submit", "--master", master, "--image", IMAGE, "--namespace", "lake"]
    assert cli.main([*args, "--executors", "2", "--", "--available-now"]) == 0

    pods = [r["body"] for r in requests if r["method"] == "POST" and r["path"].endswith("/pods")]
    assert len(pods) == 1 and "/namespaces/lake/" in requests[0]["path"]
    pod = pods[0]
    labels = pod["metadata"]["labels"]
    assert labels["spark-role"] == "driver"  # Spark's own
    assert labels["app.kubernetes.io/part-of"] == "lakehouse"  # the pod template's
    assert pod["spec"]["serviceAccountName"] == "lakehouse-job"
    assert pod["spec"]["terminationGracePeriodSeconds"] == 120
    (container,) = pod["spec"]["containers"]
    assert container["image"] == IMAGE
    # The entrypoint's driver role, the job's script in the image, the job's arguments for
    # a driver off this machine, then the user's.
    container_args = container["args"]
    assert container_args[0] == "driver"
    script = container_args.index(kubernetes.ENTRY_POINT)
    job_args = container_args[script + 1 :]
    assert job_args[-1] == "--available-now"
    assert job_args[job_args.index("--catalog") + 1] == "glue"
    assert "--writer-lease" in job_args and "--status-file" not in job_args

    maps = {r["path"].split("?")[0].rsplit("/", 1)[1]: r["body"] for r in requests}
    conf_maps = [b for name, b in maps.items() if name.startswith("spark-drv-")]
    properties = java_properties(conf_maps[0]["data"]["spark.properties"])
    assert properties["spark.kubernetes.container.image"] == IMAGE
    assert properties["spark.executor.instances"] == "2"
    # The image's jars, the Glue sync's with them (the catalog is Glue).
    assert properties["spark.executor.extraClassPath"] == (
        "/opt/lakehouse/jars/*:/opt/lakehouse/glue-jars/*"
    )
    # S3A from the pods' default credential chain: no key in the application's settings.
    assert (
        "DefaultAWSCredentialsProviderChain"
        in properties["spark.hadoop.fs.s3a.aws.credentials.provider"]
    )
    assert properties.get("spark.hadoop.fs.s3a.access.key", "") == ""
    templates = [b for name, b in maps.items() if name.endswith("-podspec-conf-map")]
    executor_template = next(iter(templates[0]["data"].values()))
    assert "app.kubernetes.io/component: executor" in executor_template


def java_properties(text: str) -> dict[str, str]:
    """A Java properties file's entries (Spark writes one per line, ':' and '=' escaped)."""
    entries = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = re.split(r"(?<!\\)(=)", line, maxsplit=1)
            entries[key] = re.sub(r"\\(.)", r"\1", value)
    return entries


def test_a_dry_run_prints_the_command_and_creates_nothing(
    aws: Settings,
    api: tuple[str, list[dict]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    master, requests = api
    boto3.client("kinesis", region_name="eu-west-1").create_stream(
        StreamName="events", ShardCount=1
    )
    assert cli.main(["submit", "--master", master, "--image", IMAGE, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert f"--master {master} --deploy-mode cluster" in printed
    assert kubernetes.ENTRY_POINT in printed
    assert requests == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"image": ""}, "needs --image"),
        ({"namespace": "Lake_1"}, "--namespace 'Lake_1': not a Kubernetes name"),
        ({"executors": 0}, "--executors 0"),
    ],
)
def test_a_run_that_cannot_start_is_refused_with_the_reason(change: dict, message: str) -> None:
    given = {"master": "k8s://https://10.0.0.1:6443", "image": IMAGE, **change}
    with pytest.raises(SubmitError, match=message):
        kubernetes.KubernetesRun(**given)


def test_a_tables_file_on_this_machine_is_refused(aws: Settings) -> None:
    run = kubernetes.KubernetesRun(master="k8s://https://10.0.0.1:6443", image=IMAGE)
    with pytest.raises(SubmitError, match="build the image with your tables file"):
        kubernetes.prepare(aws, run, ["--tables", "/home/me/tables.yaml"])
