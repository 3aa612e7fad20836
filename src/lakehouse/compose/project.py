"""`docker compose` on the repository's docker-compose.yml, as a user would type it.

No --env-file and no staging: the compose file `include:`s the stack with the env
files (versions.env, services/*.env) and builds our images from the repository. This
module only adds what a user wants around it: the preparation this machine needs first
(engine, Compose v2, base image, stand-ins), a table of services with health, URLs and
memory, and the ledger of a load run started from the Locust web UI.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lakehouse.compose import ComposeError, engine, images
from lakehouse.compose.engine import Progress
from lakehouse.core.config import REPO_ROOT, Settings

COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
# What a published port of a service is, for the status table.
PORT_ROLES = {
    ("localstack", 4566): ("Kinesis API (LocalStack)", "http://{}"),
    ("minio", 9000): ("S3 API (MinIO)", "http://{}"),
    ("minio", 9001): ("MinIO console", "http://{}"),
    ("metastore", 9083): ("Hive Metastore", "thrift://{}"),
    ("trino", 8080): ("Trino UI and API", "http://{}/ui/"),
    ("spark-master", 8080): ("Spark master UI", "http://{}"),
    ("job", 4040): ("Spark UI of the job", "http://{}"),
    ("locust-master", 8089): ("Locust web UI", "http://{}"),
    ("prometheus", 9090): ("Prometheus (alerts)", "http://{}/alerts"),
    ("grafana", 3000): ("Grafana dashboards", "http://{}"),
    ("jupyter", 8888): (
        "JupyterLab",
        "http://{}/lab?token=" + os.environ.get("JUPYTER_TOKEN", "lakehouse"),
    ),
}
UI_LEDGER = "/ledger/ui"  # where runs started from the Locust web UI write their ledger
JOB_METRICS = "/var/lib/lakehouse/job-metrics.jsonl"


def compose(*args: str) -> list[str]:
    """`docker compose ARGS` on the repository's compose file (what a user types there)."""
    return ["docker", "compose", "-f", str(COMPOSE_FILE), *args]


def prepare(settings: Settings, progress: Progress) -> dict[str, str]:
    """What this machine needs before plain `docker compose up` works; each step only
    where the normal path fails (see lakehouse.compose.engine and .images)."""
    report = {}
    engine.ensure_engine(settings, progress)
    engine.ensure_compose(settings, progress)
    report[images.BASE_IMAGE] = images.ensure_base_image(settings, progress)
    for standin in images.standins(settings):
        report[standin.image] = images.ensure_upstream_image(standin, settings, progress)
    for name, how in report.items():
        progress(f"  {name}: {how}")
    return report


def up(progress: Progress, *extra: str) -> float:
    """`docker compose up -d --wait --build` (our images rebuilt from the repository when
    their sources changed; cached layers otherwise); returns the seconds it took."""
    started = time.monotonic()
    progress("docker compose up -d --wait --build " + " ".join(extra))
    result = subprocess.run(compose("up", "-d", "--wait", "--build", *extra), cwd=REPO_ROOT)
    if result.returncode != 0:
        unhealthy = [row.service for row in services() if row.health not in ("healthy", "")]
        raise ComposeError(
            f"docker compose up failed (exit {result.returncode}); not healthy: {unhealthy}. "
            "See `docker compose logs <service>`"
        )
    return time.monotonic() - started


def down(volumes: bool) -> None:
    args = ["down", "--remove-orphans", *(["--volumes"] if volumes else [])]
    engine.run(compose(*args), "docker compose down", capture=False, cwd=REPO_ROOT)


@dataclass(frozen=True)
class ServiceRow:
    service: str
    container: str
    state: str
    health: str
    urls: tuple[str, ...]
    memory_mib: float | None


def services() -> list[ServiceRow]:
    """The project's containers: state, health, published URLs, memory in use."""
    out = engine.run(compose("ps", "--all", "--format", "json"), "docker compose ps", cwd=REPO_ROOT)
    rows = []
    memory = _memory_mib()
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        items = json.loads(line)
        for item in items if isinstance(items, list) else [items]:
            rows.append(
                ServiceRow(
                    service=item["Service"],
                    container=item["Name"],
                    state=item["State"],
                    health=item.get("Health", ""),
                    urls=_urls(item["Service"], item.get("Publishers") or []),
                    memory_mib=memory.get(item["Name"]),
                )
            )
    return sorted(rows, key=lambda row: row.container)


def _urls(service: str, publishers: list[dict]) -> tuple[str, ...]:
    urls = []
    for publisher in publishers:
        if not publisher.get("PublishedPort"):
            continue
        address = f"{publisher.get('URL') or '127.0.0.1'}:{publisher['PublishedPort']}"
        role, template = PORT_ROLES.get(
            (service, publisher["TargetPort"]), (f"port {publisher['TargetPort']}", "{}")
        )
        urls.append(f"{template.format(address)}  ({role})")
    return tuple(dict.fromkeys(urls))  # IPv4 and IPv6 bindings print once


def _memory_mib() -> dict[str, float]:
    result = subprocess.run(
        ["docker", "stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}"],
        capture_output=True,
        text=True,
    )
    units = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}
    usage = {}
    for line in result.stdout.splitlines():
        name, _, text = line.partition("\t")
        used = text.split("/")[0].strip()
        for unit, factor in sorted(units.items(), key=lambda u: -len(u[0])):
            if used.endswith(unit):
                usage[name] = float(used[: -len(unit)]) * factor
                break
    return usage


def format_table(rows: list[ServiceRow]) -> str:
    lines = [("CONTAINER", "STATE", "MEM MiB", "URL")]
    for row in rows:
        state = f"{row.state} ({row.health})" if row.health else row.state
        memory = f"{row.memory_mib:.0f}" if row.memory_mib is not None else "-"
        urls = row.urls or ("-",)
        lines.append((row.container, state, memory, urls[0]))
        lines.extend(("", "", "", url) for url in urls[1:])
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True))
        + "  "
        + line[3]
        for line in lines
    )


def published(service: str, port: int) -> str:
    """host:port where a service's port is published (`docker compose port`)."""
    out = engine.run(compose("port", service, str(port)), f"docker compose port {service}")
    address = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    if not address:
        raise ComposeError(f"{service}'s port {port} is not published: is the stack up?")
    return address.replace("0.0.0.0", "127.0.0.1")


def copy_ui_ledger(target: Path) -> Path:
    """The ledger the Locust web UI's runs wrote (ledger volume, /ledger/ui) into `target`."""
    result = subprocess.run(
        compose("cp", f"locust-master:{UI_LEDGER}", str(target)),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    if result.returncode != 0 or not any(target.glob("ledger-*.jsonl")):
        raise ComposeError(
            "no ledger of a Locust web UI run in the compose stack "
            f"({result.stderr.strip() or 'no ledger files'}): open the Locust UI "
            "(http://127.0.0.1:8089), start a run, stop it, then verify again"
        )
    return target


def job_records_processed() -> int:
    """Records the compose job has committed (its metrics file, which restarts append to;
    `docker compose cp` reads it from a stopped job as well)."""
    with tempfile.TemporaryDirectory(prefix="job-metrics-") as tmp:
        target = Path(tmp) / "job-metrics.jsonl"
        result = subprocess.run(
            compose("cp", f"job:{JOB_METRICS}", str(target)),
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
        )
        if result.returncode != 0 or not target.exists():
            return 0
        lines = target.read_text().splitlines()
    return sum(json.loads(line)["records"] for line in lines if line.strip())
