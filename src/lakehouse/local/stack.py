"""Local mode: bring the whole service stack up, report it, take it down."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from lakehouse import cdc
from lakehouse.core import bootstrap
from lakehouse.core.config import Settings
from lakehouse.local import installers
from lakehouse.local.services import CDC_SERVICE_BUILDERS, SERVICE_BUILDERS, service_names
from lakehouse.local.supervisor import (
    ServiceError,
    ServiceSpec,
    ServiceStatus,
    Supervisor,
    port_is_open,
)

Progress = Callable[[str], None]
JOB = "job"  # the streaming job, when started in the background by `run --background` or `demo`


def supervisor_for(settings: Settings) -> Supervisor:
    return Supervisor(settings.run_dir, settings.logs_dir)


def build_specs(settings: Settings, progress: Progress) -> list[ServiceSpec]:
    """Install what each service needs (first run downloads) and describe how to run it."""
    progress("Preparing services (downloads happen on the first run only)")
    installers.ensure_spark_jars(settings, progress)
    return [SERVICE_BUILDERS[name](settings) for name in service_names()]


def up(settings: Settings, progress: Progress = print, with_cdc: bool = False) -> float:
    """Start every service, wait until all are healthy, bootstrap; returns seconds taken.
    The CDC part too with `with_cdc` or CDC_ENABLED (see up_cdc)."""
    started = time.monotonic()
    specs = build_specs(settings, progress)
    supervisor = supervisor_for(settings)
    progress("Starting services")
    # They do not depend on each other to start, so they start side by side.
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        futures = [pool.submit(supervisor.start, spec, progress) for spec in specs]
        errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:
        for spec in specs:
            supervisor.stop(spec.name)
        if len(errors) == 1:
            raise errors[0]  # type: ignore[misc]
        raise ServiceError("\n\n".join(str(error) for error in errors))
    progress("Bootstrapping")
    bootstrap.bootstrap(settings.service_env(), progress)
    if with_cdc or cdc.enabled(settings):
        up_cdc(settings, progress)
    return time.monotonic() - started


def cdc_service_names(settings: Settings) -> list[str]:
    """The CDC part's processes: PostgreSQL only when it is the stack's own."""
    return [n for n in CDC_SERVICE_BUILDERS if n != "postgres" or cdc.local_postgres(settings)]


def up_cdc(settings: Settings, progress: Progress = print) -> None:
    """PostgreSQL (local mode) and its schema, then the CDC service, which needs Kinesis
    and the captured tables to exist."""
    supervisor = supervisor_for(settings)
    progress("Starting the CDC part")
    if cdc.local_postgres(settings):
        supervisor.start(CDC_SERVICE_BUILDERS["postgres"](settings), progress)
        cdc.bootstrap(settings, progress)
    start_cdc_service(settings, progress)


def start_cdc_service(settings: Settings, progress: Progress = print) -> None:
    """The CDC service started; a capture that cannot resume (its replication slot or stored
    position gone) is said in words: what the service wrote, not its log's tail."""
    started = time.time()
    try:
        supervisor_for(settings).start(CDC_SERVICE_BUILDERS["cdc"](settings), progress)
    except ServiceError:
        error = cdc.capture_error(settings)
        if error is None or error.get("at_ms", 0) < (started - 5) * 1000:
            raise
        raise ServiceError(f"cdc: {error['message']}") from None


def down(settings: Settings, progress: Progress = print) -> list[str]:
    """Stop only what `up` started (PID files); report ports still bound."""
    supervisor = supervisor_for(settings)
    # The job first: it writes to the services and must finish its batch.
    names = [JOB, *reversed(cdc_service_names(settings)), *reversed(service_names())]
    stopped = [name for name in names if supervisor.stop(name, timeout_s=60 if name == JOB else 20)]
    for name in stopped:
        progress(f"  stopped {name}")
    if not stopped:
        progress("  nothing was running")
    return stopped


def statuses(settings: Settings) -> list[ServiceStatus]:
    """The services' states, the CDC part's when enabled or started, and the job's while
    it runs."""
    supervisor = supervisor_for(settings)
    rows = [supervisor.status(name) for name in service_names()]
    for name in cdc_service_names(settings):
        row = supervisor.status(name)
        if row.state != "stopped" or cdc.enabled(settings):
            rows.append(row)
    job = supervisor.status(JOB)
    if job.state != "stopped":
        rows.append(job)
    return rows


def format_status_table(rows: list[ServiceStatus]) -> str:
    header = ("SERVICE", "STATE", "URL", "PID", "RSS MiB", "LOG")
    lines = [header]
    for row in rows:
        lines.append(
            (
                row.name,
                row.state,
                row.url or "-",
                str(row.pid) if row.pid else "-",
                f"{row.rss_mb:.0f}" if row.rss_mb is not None else "-",
                row.log,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines
    )


def bound_ports(settings: Settings) -> list[int]:
    """Ports of the stack that still accept connections (should be none after down)."""
    ports = [
        settings.port(key)
        for key in (
            "KINESIS_PORT",
            "KINESIS_MOCK_TLS_PORT",
            "MINIO_PORT",
            "MINIO_CONSOLE_PORT",
            "HMS_PORT",
            "TRINO_PORT",
            "ZOOKEEPER_PORT",
        )
    ]
    if cdc.local_postgres(settings):
        ports.append(settings.port("CDC_PG_PORT"))
    ports.append(settings.port("CDC_HEALTH_PORT"))
    return [p for p in ports if port_is_open(p)]
