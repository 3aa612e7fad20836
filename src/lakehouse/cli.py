"""`lakehouse up|down|status|...`: the sandbox's command line (the Makefile calls it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from lakehouse import installers, stack
from lakehouse.bootstrap import BootstrapError
from lakehouse.config import ConfigError, Settings, load_settings
from lakehouse.installers import InstallError
from lakehouse.supervisor import ServiceError


def _say(message: str) -> None:
    print(message, flush=True)


def print_urls(settings: Settings) -> None:
    console = settings.port("MINIO_CONSOLE_PORT")
    _say("URLs:")
    _say(f"  Trino UI / API      {settings.trino_url}/ui/  (user: any name)")
    _say(
        f"  MinIO console       http://127.0.0.1:{console}  "
        f"(user {settings['S3_ACCESS_KEY']} / {settings['S3_SECRET_KEY']})"
    )
    _say(f"  S3 API              {settings.s3_endpoint}")
    _say(f"  Kinesis API         {settings.kinesis_endpoint}  ({settings['KINESIS_ENGINE']})")
    _say(f"  Hive Metastore      {settings.hms_uri}")
    _say("  Spark UI            http://127.0.0.1:4040  (while the job runs)")
    _say("  Locust UI           http://127.0.0.1:8089  (while `make load-ui` runs)")


def cmd_up(settings: Settings, _: argparse.Namespace) -> int:
    seconds = stack.up(settings, _say)
    _say(f"\nAll services healthy in {seconds:.1f}s\n")
    _say(stack.format_status_table(stack.statuses(settings)))
    _say("")
    print_urls(settings)
    _say("\nStop everything with `make local-down` (or `lakehouse down`).")
    return 0


def cmd_down(settings: Settings, _: argparse.Namespace) -> int:
    _say("Stopping local stack")
    stack.down(settings, _say)
    still = stack.bound_ports(settings)
    if still:
        _say(f"warning: ports still accepting connections: {still} (not started by this stack?)")
        return 1
    return 0


def cmd_status(settings: Settings, _: argparse.Namespace) -> int:
    rows = stack.statuses(settings)
    _say(stack.format_status_table(rows))
    total = sum(r.rss_mb or 0 for r in rows)
    _say(f"\nTotal resident memory of running services: {total:.0f} MiB")
    return 0 if all(r.state == "running" for r in rows) else 3


def cmd_install(settings: Settings, _: argparse.Namespace) -> int:
    """Fetch every download into the cache, so `up` and the tests start warm."""
    _say(f"Installing into {settings.cache_dir} (first run downloads ~2 GB)")
    stack.build_specs(settings, _say)
    installers.ensure_kinesis_source_jar(settings, _say)
    _say("Everything is installed.")
    return 0


def cmd_java_test(settings: Settings, _: argparse.Namespace) -> int:
    """The Kinesis source's JUnit tests (pure offset and shard logic)."""
    return installers.run_kinesis_source_tests(settings)


def cmd_demo(settings: Settings, args: argparse.Namespace) -> int:
    return cmd_up(settings, args)


COMMANDS: dict[str, tuple[Callable[[Settings, argparse.Namespace], int], str]] = {
    "up": (cmd_up, "start every service as a host process, wait until healthy, bootstrap"),
    "down": (cmd_down, "stop what `up` started"),
    "status": (cmd_status, "table of services: state, URL, PID, memory, log"),
    "install": (cmd_install, "download and build everything the stack needs, into the cache"),
    "java-test": (cmd_java_test, "run the Kinesis source's JUnit tests"),
    "demo": (cmd_demo, "the whole flow: stack up, job, load, results"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakehouse", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
        handler, _ = COMMANDS[args.command]
        return handler(settings, args)
    except (ConfigError, InstallError, ServiceError, BootstrapError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
