"""`lakehouse compose prepare|up|status|down|engine-down`: the stack in containers."""

from __future__ import annotations

import argparse

from lakehouse.cli.common import (
    Command,
    say,
)
from lakehouse.compose import engine, project
from lakehouse.core.config import Settings


def compose(settings: Settings, args: argparse.Namespace) -> int:
    """The stack in containers: prepare this machine, then plain `docker compose`."""
    if args.action in ("prepare", "up"):
        say("Preparing Docker (each step only where the normal path fails)")
        project.prepare(settings, say)
    if args.action == "up":
        seconds = project.up(say, *[a for a in args.compose_args if a != "--"])
        say(f"\nAll services healthy in {seconds:.0f}s\n")
    if args.action in ("up", "status"):
        rows = project.services()
        say(project.format_table(rows))
        total = sum(row.memory_mib or 0 for row in rows)
        say(f"\nMemory in use by the stack's containers: {total:,.0f} MiB")
        if args.action == "up":
            say("\nLoad from the Locust UI, then `lakehouse verify --compose` checks it in Trino.")
            say("Stop with `make down` (keeps the data) or `docker compose down -v` (deletes it).")
        return 0 if rows and all(row.state == "running" for row in rows) else 3
    if args.action == "down":
        project.down(volumes=args.volumes)
    if args.action == "engine-down":
        engine.stop_engine(settings, say)
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["prepare", "up", "status", "down", "engine-down"],
        help="prepare: engine, Compose v2, base image, stand-ins (each only if missing); "
        "up: prepare, then docker compose up -d --wait --build, then the status table; "
        "engine-down: stop a dockerd that prepare started",
    )
    parser.add_argument("--volumes", action="store_true", help="down: delete the data too")
    parser.add_argument("compose_args", nargs=argparse.REMAINDER, help="up: more compose args")


COMMANDS = {
    "compose": Command(
        compose,
        "the stack in containers: prepare | up | status | down",
        "stack",
        "lakehouse compose up\nlakehouse compose down --volumes",
        _arguments,
    ),
}
