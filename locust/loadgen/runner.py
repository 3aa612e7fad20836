"""Run Locust with N worker processes (`locust --processes N`) and wait for it.

    from loadgen.options import LoadOptions
    from loadgen.runner import run_load
    rc = run_load(LoadOptions(stream_name="events", kinesis_endpoint="http://127.0.0.1:4566",
                              workers=2, users=4, run_time="60s", event_model="mix"))

    python -m loadgen.runner --stream-name events --kinesis-endpoint http://127.0.0.1:4566 \
        --workers 2 --users 4 --run-time 60s --event-model mix --late-rate 0.01

Headless by default; `web` serves the web UI on web_host:web_port and runs until stopped
from the UI (or run_time, if given). One Locust process forks its workers, so stopping
this command (Ctrl-C, SIGTERM) stops the master and every worker with it. Returns
Locust's exit code (non-zero if any request failed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from lakehouse.core.interrupts import sigterm_interrupts
from loadgen import options as load_options
from loadgen.options import LoadOptions

# locust/locustfile.py beside this package; an installed package (the Locust image) is
# told where the file is.
LOCUSTFILE = Path(
    os.environ.get("LOADGEN_LOCUSTFILE", Path(__file__).resolve().parents[1] / "locustfile.py")
)


def build_command(opts: LoadOptions, locustfile: str | Path = LOCUSTFILE) -> list[str]:
    """The one `locust` command: the master (loopback only) and `workers` forked workers."""
    command = [
        sys.executable, "-m", "locust", "-f", str(locustfile),
        "--processes", str(opts.workers),
        "--master-bind-host", "127.0.0.1", "--master-bind-port", str(opts.master_port),
        "--master-port", str(opts.master_port),  # what the forked workers connect to
        "-u", str(opts.users), "-r", str(opts.spawn_rate or opts.users),
        "--stop-timeout", f"{max(0, round(opts.stop_timeout))}s",
    ]  # fmt: skip
    if opts.web:
        command += ["--web-host", opts.web_host, "--web-port", str(opts.web_port)]
        if opts.run_time:
            command += ["--autostart", "--autoquit", "5", "--run-time", opts.run_time]
    else:
        command += ["--headless", "--run-time", opts.run_time]
    return command + opts.user_args()


def run_load(
    opts: LoadOptions,
    *,
    locustfile: str | Path = LOCUSTFILE,
    env: Mapping[str, str] | None = None,
    log_dir: str | Path | None = None,
    timeout: float | None = None,
) -> int:
    """Run the load; Locust's output goes to log_dir/locust.log (else to this terminal)."""
    penv = {**os.environ, **(env or {})}
    # The AWS keys go to Locust through the environment, not its command line.
    if opts.aws_access_key_id:
        penv["AWS_ACCESS_KEY_ID"] = opts.aws_access_key_id
    if opts.aws_secret_access_key:
        penv["AWS_SECRET_ACCESS_KEY"] = opts.aws_secret_access_key
    log: IO[bytes] | None = None
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        log = open(Path(log_dir) / "locust.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        build_command(opts, locustfile),
        env=penv,
        stdout=log,
        stderr=subprocess.STDOUT if log else None,
        start_new_session=True,  # its own group: a signal to it reaches the forked workers
    )
    try:
        with sigterm_interrupts():  # SIGTERM to this command stops Locust too
            return process.wait(timeout=timeout)
    except BaseException:
        stop(process, opts.stop_timeout + 30)
        raise
    finally:
        if log:
            log.close()


def stop(process: subprocess.Popen[Any], grace_s: float) -> None:
    """SIGTERM to Locust's master, which tells its workers to quit (they finish their
    in-flight batches and write their ledgers), then SIGKILL to the whole process group
    after `grace_s`. Not SIGINT: a process started in the background inherits SIGINT as
    ignored, and Python then never raises KeyboardInterrupt."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace_s)
    # Whatever of the group is left: a hung master, or workers a dead master left behind.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadgen.runner", description=__doc__)
    load_options.add_arguments(parser)
    parser.add_argument("--log-dir", default=None, help="write Locust's output here")
    args = parser.parse_args(argv)
    try:
        return run_load(load_options.from_namespace(args), log_dir=args.log_dir)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
