"""`lakehouse up|down|status|logs|top|install`: the local stack as host processes."""

from __future__ import annotations

import argparse
import contextlib
import sys

from lakehouse.cli.cdc import cdc_status_lines
from lakehouse.cli.common import (
    Command,
    duration,
    log_options,
    say,
)
from lakehouse.core.config import Settings
from lakehouse.local import installers, job_launcher, stack
from lakehouse.local.services import CDC_SERVICE_BUILDERS, service_names


def print_urls(settings: Settings) -> None:
    console = settings.port("MINIO_CONSOLE_PORT")
    say("URLs:")
    say(f"  Trino UI / API      {settings.trino_url}/ui/  (user: any name)")
    say(
        f"  MinIO console       http://127.0.0.1:{console}  "
        f"(user {settings['S3_ACCESS_KEY']} / {settings['S3_SECRET_KEY']})"
    )
    say(f"  S3 API              {settings.s3_endpoint}")
    say(f"  Kinesis API         {settings.kinesis_endpoint}  ({settings['KINESIS_ENGINE']})")
    say(f"  Hive Metastore      {settings.hms_uri}")
    say("  Spark UI            http://127.0.0.1:4040  (while the job runs)")
    prometheus = f"http://127.0.0.1:{settings.port('PROMETHEUS_PORT')}"
    say(f"  Prometheus          {prometheus}/alerts  (rules: services/prometheus/rules.yml)")
    job_metrics = settings.port("LAKEHOUSE_JOB_METRICS_PORT")
    say(f"  Job metrics         http://127.0.0.1:{job_metrics}/metrics  (while the job runs)")
    say("  Locust UI           http://127.0.0.1:8089  (while `lakehouse load --web` runs)")
    say("  SQL                 `make sql` (Trino: live views orders, ...; raw JSON orders_json)")
    say("  Notebooks           `make notebook` (JupyterLab on http://127.0.0.1:8888)")


def up(settings: Settings, args: argparse.Namespace) -> int:
    seconds = stack.up(settings, say, with_cdc=getattr(args, "cdc", False))
    say(f"\nAll services healthy in {seconds:.1f}s\n")
    say(stack.format_status_table(stack.statuses(settings)))
    say("")
    print_urls(settings)
    say("\nStop everything with `make local-down` (or `lakehouse down`).")
    return 0


def down(settings: Settings, _: argparse.Namespace) -> int:
    say("Stopping local stack")
    stack.down(settings, say)
    still = stack.bound_ports(settings)
    if still:
        say(f"warning: ports still accepting connections: {still} (not started by this stack?)")
        return 1
    return 0


def status(settings: Settings, _: argparse.Namespace) -> int:
    rows = stack.statuses(settings)
    say(stack.format_status_table(rows))
    total = sum(r.rss_mb or 0 for r in rows)
    say(f"\nTotal resident memory of running services: {total:.0f} MiB")
    cdc_lines = cdc_status_lines(settings, rows)
    if cdc_lines:
        say("")
        say("\n".join(cdc_lines))
    running_job = any(row.name == stack.JOB for row in rows)
    report = job_launcher.job_report(settings) if running_job else []
    if report:
        say("")
        say("\n".join(report))
    stopped_capture = any(line.startswith("CDC capture stopped") for line in cdc_lines)
    return 0 if all(r.state == "running" for r in rows) and not stopped_capture else 3


def logs(settings: Settings, args: argparse.Namespace) -> int:
    """A local service's log (or the job's): its last lines, then with -f what follows."""
    return show_log(settings, args.service, args)


def show_log(settings: Settings, name: str, args: argparse.Namespace) -> int:
    from lakehouse.local import service_logs

    path = stack.supervisor_for(settings).log_file(name)
    if not path.exists():
        print(f"error: {name} has no log yet ({path}): it has not been started", file=sys.stderr)
        return 1
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends following
        service_logs.show(path, sys.stdout, args.lines, args.follow)
    return 0


def top(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse.inspect import top

    url = f"http://127.0.0.1:{settings.port('PROMETHEUS_PORT')}"
    job = f"http://127.0.0.1:{settings.port('LAKEHOUSE_JOB_METRICS_PORT')}/metrics"
    try:
        return top.run_top(
            url, sys.stdout, every_s=args.every, once=args.once, keys=sys.stdin, job_url=job
        )
    except KeyboardInterrupt:
        return 0


def install(settings: Settings, _: argparse.Namespace) -> int:
    """Fetch every download into the cache, so `up` and the tests start warm."""
    say(f"Installing into {settings.cache_dir} (first run downloads ~2 GB)")
    installers.prefetch(settings, say)
    stack.build_specs(settings, say)
    installers.ensure_kinesis_source_jar(settings, say)
    installers.ensure_job_helpers_jar(settings, say)
    installers.ensure_cdc_service_jar(settings, say)
    say("Everything is installed.")
    return 0


def _up_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cdc",
        action="store_true",
        help="also the CDC part: PostgreSQL and the Debezium service (or CDC_ENABLED=1)",
    )


def _logs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "service",
        choices=[*service_names(), *CDC_SERVICE_BUILDERS, stack.JOB],
        help="the service (the names `lakehouse status` shows), or job",
    )
    log_options(parser)


def _top_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--every", type=duration, default=2.0, help="time between refreshes (default: 2s)"
    )
    parser.add_argument("--once", action="store_true", help="print one screen and exit")


COMMANDS = {
    "up": Command(
        up,
        "start every service as a host process, wait until healthy, bootstrap",
        "stack",
        "lakehouse up\nlakehouse up --cdc    # with PostgreSQL and the Debezium service",
        _up_arguments,
    ),
    "down": Command(down, "stop what `up` started (the job first)", "stack", "lakehouse down"),
    "status": Command(
        status, "table of services: state, URL, PID, memory, log", "stack", "lakehouse status"
    ),
    "logs": Command(
        logs,
        "a local service's log: its last lines, -f to follow",
        "stack",
        "lakehouse logs trino\nlakehouse logs job -f",
        _logs_arguments,
    ),
    "top": Command(
        top,
        "the pipeline live from Prometheus: in, behind, fresh, quarantined",
        "stack",
        "lakehouse top\nlakehouse top --once",
        _top_arguments,
    ),
    "install": Command(
        install,
        "download and build everything the stack needs, into the cache",
        "stack",
        "lakehouse install",
    ),
}
