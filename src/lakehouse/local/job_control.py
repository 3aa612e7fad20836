"""Local mode's streaming job alone: start it supervised, stop it after the batch in
flight, restart it so that it reads the tables file again, without touching the stack.

`lakehouse job start` (and `run --background`, `demo`) records the job's own options and
its tables file in the run folder, so that `job restart` starts the same job again; the
checkpoint and the streams are worked out anew at every start (job_launcher), so a tables
file that now names other streams is followed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from lakehouse.core.config import Settings
from lakehouse.local import job_launcher
from lakehouse.local.stack import JOB, supervisor_for
from lakehouse_tables.declarations import default_tables_path, load_tables

Progress = Callable[[str], None]
# SIGTERM lets the job finish its batch in flight (and compact its MoR tables): `down`
# gives it as long.
STOP_TIMEOUT_S = 60.0


def args_file(settings: Settings) -> Path:
    """What the running job was started with: {"tables": path, "args": [...]}."""
    return settings.run_dir / "job-args.json"


def option_value(args: Sequence[str], option: str) -> str | None:
    """The value of the last `option X` or `option=X` in `args` (argparse's rule)."""
    found = None
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith(f"{option}="):
            found = arg.split("=", 1)[1]
    return found


def without_option(args: Sequence[str], option: str) -> list[str]:
    """`args` without any `option X` or `option=X`."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(f"{option}="):
            out.append(arg)
    return out


def tables_path(given: Sequence[str]) -> Path:
    """The tables file of a job started with `given`: its --tables, else $LAKEHOUSE_TABLES,
    else the packaged one (the job's own rule), made absolute."""
    return Path(option_value(given, "--tables") or default_tables_path()).resolve()


def job_args(settings: Settings, given: Sequence[str]) -> list[str]:
    """The job's streams and checkpoint (job_launcher.default_job_args) before `given`;
    job_launcher.JobStreamsError when its tables file names streams that do not exist."""
    tables = load_tables(tables_path(given))
    return [*job_launcher.default_job_args(settings, tables), *given]


def start(settings: Settings, given: Sequence[str], progress: Progress) -> bool:
    """Start the job supervised with `given` (its own options) and its tables file named
    explicitly; False, with the reason said, when it is already running."""
    supervisor = supervisor_for(settings)
    if supervisor.is_running(JOB):
        progress(
            "The job is already running: `lakehouse job restart` starts it again "
            "(re-reading the tables file)."
        )
        return False
    tables = tables_path(given)
    given = ["--tables", str(tables), *without_option(given, "--tables")]
    args = job_args(settings, given)
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    args_file(settings).write_text(json.dumps({"tables": str(tables), "args": given}, indent=2))
    supervisor.start(job_launcher.job_spec(settings, args), progress)
    progress(f"The job is running with {tables}; log {supervisor.log_file(JOB)}")
    return True


def stop(settings: Settings, progress: Progress, timeout_s: float = STOP_TIMEOUT_S) -> bool:
    """SIGTERM to the job (it ends after the batch in flight), SIGKILL after `timeout_s`;
    False when it was not running."""
    supervisor = supervisor_for(settings)
    if not supervisor.is_running(JOB):
        progress("The job is not running.")
        supervisor.stop(JOB)  # a PID file left by one that died
        return False
    progress("Stopping the job after its batch in flight")
    supervisor.stop(JOB, timeout_s=timeout_s)
    progress("The job stopped.")
    return True


def recorded_args(settings: Settings) -> list[str]:
    """The options the last `start` gave the job ([] when none was recorded)."""
    path = args_file(settings)
    if not path.exists():
        return []
    return list(json.loads(path.read_text())["args"])


def restart_args(recorded: Sequence[str], tables: str | None, given: Sequence[str]) -> list[str]:
    """The options of a restart: `given` when some are, else the recorded ones; `tables`
    (a new tables file) replaces the recorded one."""
    args = list(given) if given else list(recorded)
    if tables:
        args = ["--tables", tables, *without_option(args, "--tables")]
    return args


def restart(
    settings: Settings,
    progress: Progress,
    tables: str | None = None,
    given: Sequence[str] = (),
    timeout_s: float = STOP_TIMEOUT_S,
) -> bool:
    """Stop the job (after its batch in flight), then start it with the options it ran
    with, reading its tables file again; False when it was not running."""
    args = restart_args(recorded_args(settings), tables, given)
    job_args(settings, args)  # a tables file or stream that cannot be: said before stopping
    was_running = stop(settings, progress, timeout_s)
    start(settings, args, progress)
    return was_running
