"""`lakehouse up|down|status|...`: the sandbox's command line (the Makefile calls it).

A thin layer: each command's module (stack, compose, job, pipeline, cdc, query, tables,
aws, dev) parses its options and calls the package that does the work (lakehouse.local,
lakehouse.compose, lakehouse.aws, lakehouse.bench, lakehouse.inspect, loadgen); this one
gathers them into one parser and turns the errors they raise into exit codes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from lakehouse.aws.policy import PolicyError
from lakehouse.aws.submit import SubmitError
from lakehouse.cli import aws, cdc, compose, dev, job, pipeline, query, stack, tables
from lakehouse.cli.common import Command, described
from lakehouse.compose import ComposeError
from lakehouse.core.bootstrap import BootstrapError
from lakehouse.core.config import ConfigError, load_settings
from lakehouse.local.installers import InstallError
from lakehouse.local.supervisor import ServiceError
from lakehouse.local.truststore import TruststoreError
from lakehouse_tables.declarations import TablesConfigError

__all__ = ["COMMANDS", "GROUPS", "Command", "build_parser", "load_settings", "main"]

# `lakehouse --help` lists the commands in these groups, in this order.
GROUPS = ("stack", "pipeline", "query", "tables", "AWS", "development")

COMMANDS: dict[str, Command] = {
    **stack.COMMANDS,
    **compose.COMMANDS,
    **job.COMMANDS,
    **pipeline.COMMANDS,
    **cdc.COMMANDS,
    **query.COMMANDS,
    **tables.COMMANDS,
    **aws.COMMANDS,
    **dev.COMMANDS,
}

# What a command may raise that says what went wrong: its message, exit code 2.
USER_ERRORS = (
    ConfigError,
    InstallError,
    ServiceError,
    BootstrapError,
    ComposeError,
    PolicyError,
    TruststoreError,
    SubmitError,
)


def version_text() -> str:
    """The package's version and the pinned versions of the engines (versions.env)."""
    from importlib.metadata import PackageNotFoundError, version

    from lakehouse.core.config import REPO_ROOT, parse_env_file

    try:
        own = version("streaming-lakehouse-sandbox")
    except PackageNotFoundError:
        own = "(not installed)"
    pinned = parse_env_file(REPO_ROOT / "versions.env")
    return (
        f"lakehouse {own}: Spark {pinned['PYSPARK_VERSION']}, Hudi {pinned['HUDI_VERSION']}, "
        f"Trino {pinned['TRINO_VERSION']} (versions.env)"
    )


class _Version(argparse.Action):
    """--version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the versions and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_text())
        parser.exit()


def _overview() -> str:
    """`lakehouse --help`'s list of commands, by group."""
    width = max(len(name) for name in COMMANDS)
    lines = ["commands:"]
    for group in GROUPS:
        lines.append(f"  {group}:")
        lines += [
            f"    {name:<{width}}  {command.help}"
            for name, command in COMMANDS.items()
            if command.group == group
        ]
    lines += ["", "`lakehouse COMMAND --help` lists a command's options, with examples."]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lakehouse",
        usage="lakehouse [-h] [--version] COMMAND ...",
        description=__doc__.split("\n\n", 1)[0],
        epilog=_overview(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="lakehouse")
    for name, command in sorted(COMMANDS.items(), key=lambda item: GROUPS.index(item[1].group)):
        described_as = described(command.help, command.examples, command.details)
        command.arguments(sub.add_parser(name, **described_as))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
        return COMMANDS[args.command].handler(settings, args)
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TablesConfigError as exc:  # as the job refuses it: nothing done, exit 5
        print(f"error: the tables file is not valid: {exc}", file=sys.stderr)
        return 5
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM where a command turns it into one
        return 130


if __name__ == "__main__":
    sys.exit(main())
