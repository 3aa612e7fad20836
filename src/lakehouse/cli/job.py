"""`lakehouse run` and `lakehouse job start|stop|restart|logs`: the streaming job, in the
foreground or supervised beside the local stack."""

from __future__ import annotations

import argparse

from lakehouse.cli.common import (
    Command,
    described,
    duration,
    full_job_args,
    in_foreground,
    log_options,
    say,
    tables_option,
)
from lakehouse.cli.stack import show_log
from lakehouse.core.config import Settings
from lakehouse.local import job_control, job_launcher, stack


def run(settings: Settings, args: argparse.Namespace) -> int:
    """The streaming job: in the foreground (Ctrl-C stops after the batch in flight)
    or, with --background, supervised like the services (`down` stops it)."""
    given = given_job_args(args)
    if args.background:
        return job_started(settings, given)
    job_args = full_job_args(settings, given)
    if job_args is None:
        return 2
    return in_foreground(
        job_launcher.job_command(job_args), job_launcher.job_env(settings, record_classes=True)
    )


def given_job_args(args: argparse.Namespace) -> list[str]:
    """The job's own options of `run` and `job start|restart`: --tables (--cdc: the CDC
    part's tables file), then what follows `--`."""
    from lakehouse import cdc

    given = [a for a in getattr(args, "job_args", []) if a != "--"]
    tables = getattr(args, "tables", None)
    if getattr(args, "cdc", False):
        tables = tables or str(cdc.CDC_TABLES_YAML)
    return ["--tables", tables, *given] if tables else given


def job_started(settings: Settings, given: list[str]) -> int:
    try:
        job_control.start(settings, given, say)
    except job_launcher.JobStreamsError as error:
        say(f"error: {error}")
        return 2
    return 0


# What `lakehouse job ACTION --compose` prints: the Compose stack's job is its service `job`.
COMPOSE_JOB = {
    "start": ["docker compose start job"],
    "stop": ["docker compose stop job    # after the batch in flight, MoR tables compacted"],
    "restart": [
        "docker compose restart job    # the same tables file",
        "docker compose up -d --wait --build job    # after changing the tables file "
        "(it is in the job's image)",
    ],
    "logs": ["docker compose logs --tail=200 job    # -f to follow"],
}


def job(settings: Settings, args: argparse.Namespace) -> int:
    """The job alone, in local mode: start, stop (after the batch in flight), restart
    (re-reading the tables file), logs; the stack keeps running."""
    if args.compose:
        say("In Compose the job is the service `job`:")
        for line in COMPOSE_JOB[args.action]:
            say(f"  {line}")
        return 0
    if args.action == "start":
        return job_started(settings, given_job_args(args))
    if args.action == "stop":
        job_control.stop(settings, say, args.timeout)
        return 0
    if args.action == "restart":
        given = [a for a in args.job_args if a != "--"]
        try:
            job_control.restart(settings, say, args.tables, given, args.timeout)
        except job_launcher.JobStreamsError as error:
            say(f"error: {error}")
            return 2
        return 0
    return show_log(settings, stack.JOB, args)


def _job_options(parser: argparse.ArgumentParser) -> None:
    """How `run` and `job start` name the job's tables file and its own options."""
    tables_option(parser, " the job reads")
    parser.add_argument(
        "--cdc",
        action="store_true",
        help="the CDC part's tables (services/cdc/tables.yaml) from every table's stream",
    )
    parser.add_argument(
        "job_args",
        nargs=argparse.REMAINDER,
        help="the job's own options, after -- (`python -m lakehouse_job.job --help`)",
    )


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--background",
        action="store_true",
        help="supervised, like the services: restarted if it fails, stopped by `lakehouse "
        "down` or `lakehouse job stop` (same as `lakehouse job start`); without it, in the "
        "foreground until Ctrl-C, which stops it after the batch in flight",
    )
    _job_options(parser)


def _stop_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=duration,
        default=job_control.STOP_TIMEOUT_S,
        help="how long the batch in flight may take before the job is killed "
        f"(default: {job_control.STOP_TIMEOUT_S:.0f}s)",
    )


def _restart_arguments(parser: argparse.ArgumentParser) -> None:
    tables_option(parser, " to read from now on", "the one it ran with")
    parser.add_argument(
        "job_args",
        nargs=argparse.REMAINDER,
        help="the job's own options, after -- (default: those it ran with)",
    )
    _stop_timeout(parser)


# `lakehouse job ACTION`: (help, examples, its options).
JOB_ACTIONS = {
    "start": (
        "start it supervised, as `run --background`",
        "lakehouse job start\nlakehouse job start --tables my-tables.yaml -- --trigger-seconds 10",
        _job_options,
    ),
    "stop": (
        "stop it after the batch in flight (SIGTERM, as `lakehouse down` does)",
        "lakehouse job stop",
        _stop_timeout,
    ),
    "restart": (
        "stop it, then start it with the options it ran with, re-reading the tables file "
        "(`lakehouse schema diff` shows first what the start will change)",
        "lakehouse job restart\nlakehouse job restart --tables my-tables.yaml",
        _restart_arguments,
    ),
    "logs": (
        "its log: the last lines, -f to follow",
        "lakehouse job logs\nlakehouse job logs -f",
        log_options,
    ),
}


def _job_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(
        dest="action", required=True, metavar="ACTION", prog="lakehouse job"
    )
    for name, (text, examples, arguments) in JOB_ACTIONS.items():
        action = actions.add_parser(name, **described(text, examples))
        arguments(action)
        action.add_argument(
            "--compose", action="store_true", help="print the Compose stack's command instead"
        )
    parser.set_defaults(tables=None, job_args=[], cdc=False)


COMMANDS = {
    "run": Command(
        run,
        "run the streaming job (extra job options after --)",
        "pipeline",
        "lakehouse run -- --trigger-seconds 10\nlakehouse run --background --tables my-tables.yaml",
        _run_arguments,
    ),
    "job": Command(
        job,
        "the job alone: start | stop | restart | logs (the stack keeps running)",
        "pipeline",
        "lakehouse job restart    # after editing the tables file\nlakehouse job logs -f",
        _job_arguments,
    ),
}
