"""What every command module of the CLI shares: how a command is declared (Command), how
it speaks, and the options and argument types several commands take."""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lakehouse.core.config import Settings
from lakehouse.core.interrupts import sigterm_interrupts
from lakehouse.local import job_control, job_launcher

Handler = Callable[[Settings, argparse.Namespace], int]
Arguments = Callable[[argparse.ArgumentParser], None]


def _no_arguments(_: argparse.ArgumentParser) -> None:
    return None


@dataclass(frozen=True)
class Command:
    handler: Handler
    help: str
    group: str
    examples: str  # the end of its --help: one or two command lines
    arguments: Arguments = _no_arguments  # adds its options to its parser
    details: str = ""  # its --help's description after `help`: what it checks, exit codes


def say(message: str) -> None:
    print(message, flush=True)


def duration(text: str) -> float:
    """Seconds from a duration as Locust's --run-time takes it: 90, 90s, 5m, 1h30m, 1m30s."""
    match = re.fullmatch(
        r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", text.strip()
    )
    if not text.strip() or match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 90, 90s, 5m, 1h30m)")
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def described(text: str, examples: str, details: str = "") -> dict[str, Any]:
    """A subcommand's description, and its examples at the end of its --help."""
    lines = "\n".join(f"  {line}" for line in examples.split("\n"))
    return {
        "help": text,
        "description": f"{text}\n\n{details}" if details else text,
        "epilog": f"examples:\n{lines}",
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def tables_option(
    parser: argparse.ArgumentParser,
    what: str = "",
    default: str = "$LAKEHOUSE_TABLES, else the packaged one",
) -> None:
    parser.add_argument(
        "--tables", metavar="FILE", help=f"the tables file{what} (default: {default})"
    )


def log_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--follow", action="store_true", help="then print what follows")
    parser.add_argument(
        "-n", "--lines", type=int, default=200, help="how many last lines (default: 200)"
    )


def full_job_args(settings: Settings, given: list[str]) -> list[str] | None:
    """The job's streams and checkpoint (job_launcher.default_job_args) before `given`;
    None, with the error said, when its tables file names streams that do not exist."""
    try:
        return job_control.job_args(settings, given)
    except job_launcher.JobStreamsError as error:
        say(f"error: {error}")
        return None


def in_foreground(command: list[str], env: dict[str, str]) -> int:
    """Run the job until it ends; Ctrl-C or SIGTERM to this command stops it after the
    batch in flight."""
    process = subprocess.Popen(command, env=env)
    try:
        with sigterm_interrupts():
            return process.wait()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGTERM)
        return process.wait()
