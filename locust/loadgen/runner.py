"""Start one Locust master and N worker processes, and wait for them.

    from loadgen.runner import run_load
    rc = run_load(stream="lakehouse-events", endpoint="http://localhost:4567",
                  workers=2, users=4, run_time="60s", event_model="mix",
                  options={"duplicate_rate": 0.01, "out_of_order_rate": 0.05})

    python -m loadgen.runner --stream lakehouse-events --endpoint http://localhost:4567 \
        --workers 2 --users 4 --run-time 60s -- --event-model mix --late-rate 0.01

Headless by default; headless=False serves the web UI on web_port (8089) and runs
until stopped from the UI (or run_time, with --autostart). Returns the master's
exit code (non-zero if any request failed or a worker failed).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LOCUSTFILE = Path(__file__).resolve().parents[1] / "locustfile.py"


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def option_args(options: Mapping[str, Any]) -> list[str]:
    """{'duplicate_rate': 0.01, 'seed': 7} -> ['--duplicate-rate', '0.01', '--seed', '7']."""
    out: list[str] = []
    for k, v in options.items():
        if v is None or v is False:
            continue
        out.append(_flag(k))
        if v is not True:
            out.append(str(v))
    return out


def locust_command() -> list[str]:
    return [sys.executable, "-m", "locust"]


def build_commands(
    *,
    stream: str,
    endpoint: str | None,
    region: str,
    workers: int,
    users: int,
    spawn_rate: float | None,
    run_time: str | None,
    headless: bool,
    web_port: int,
    master_port: int,
    stop_timeout: float,
    ledger_dir: str,
    event_model: str,
    seed: int | None,
    run_id: str | None,
    options: Mapping[str, Any],
    locustfile: str | Path,
    extra_args: Sequence[str] = (),
) -> tuple[list[str], list[list[str]]]:
    common = ["-f", str(locustfile)]
    master = [*locust_command(), *common, "--master", "--master-bind-host", "127.0.0.1",
              "--master-bind-port", str(master_port), "--expect-workers", str(workers),
              "-u", str(users), "-r", str(spawn_rate or users),
              "--stop-timeout", f"{max(0, round(stop_timeout))}s"]  # fmt: skip
    if headless:
        master += ["--headless"]
    else:
        master += ["--web-port", str(web_port)]
        if run_time:
            master += ["--autostart", "--autoquit", "5"]
    if run_time:
        master += ["--run-time", run_time]
    loadgen_opts: dict[str, Any] = {
        "stream_name": stream,
        "kinesis_endpoint": endpoint or "",
        "region": region,
        "event_model": event_model,
        "ledger_dir": ledger_dir,
        "seed": seed,
        "run_id": run_id,
        **options,
    }
    master += option_args(loadgen_opts) + list(extra_args)
    worker = [*locust_command(), *common, "--worker", "--master-host", "127.0.0.1",
              "--master-port", str(master_port)]  # fmt: skip
    # workers parse the same custom options (the master forwards its values at spawn)
    worker += option_args(loadgen_opts) + list(extra_args)
    return master, [list(worker) for _ in range(workers)]


def run_load(
    *,
    stream: str = "lakehouse-events",
    endpoint: str | None = None,
    region: str = "us-east-1",
    workers: int = 2,
    users: int = 4,
    spawn_rate: float | None = None,
    run_time: str | None = "60s",
    headless: bool = True,
    web_port: int = 8089,
    master_port: int = 5557,
    stop_timeout: float = 30,
    ledger_dir: str | Path = "ledger",
    event_model: str = "orders",
    seed: int | None = None,
    run_id: str | None = None,
    options: Mapping[str, Any] | None = None,
    create_stream_shards: int | None = None,
    locustfile: str | Path = LOCUSTFILE,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    log_dir: str | Path | None = None,
    timeout: float | None = None,
) -> int:
    """Run master + `workers` workers; return the master's exit code (or 1 if a
    worker failed). `options` are loadgen options by name (see loadgen.user)."""
    opts = dict(options or {})
    if create_stream_shards:
        from loadgen.kinesis import ensure_stream, make_client

        ensure_stream(make_client(endpoint, region), stream, create_stream_shards)
    master_cmd, worker_cmds = build_commands(
        stream=stream, endpoint=endpoint, region=region, workers=workers, users=users,
        spawn_rate=spawn_rate, run_time=run_time, headless=headless, web_port=web_port,
        master_port=master_port, stop_timeout=stop_timeout, ledger_dir=str(ledger_dir),
        event_model=event_model, seed=seed, run_id=run_id, options=opts,
        locustfile=locustfile, extra_args=extra_args,
    )  # fmt: skip
    penv = {**os.environ, **(env or {})}
    # the package is importable from the locustfile's parent directory too
    penv["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(locustfile).resolve().parent), penv.get("PYTHONPATH")) if p
    )
    logs: list[Any] = []

    def out(name: str) -> Any:
        if log_dir is None:
            return None
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        f = open(Path(log_dir) / f"{name}.log", "w")  # noqa: SIM115
        logs.append(f)
        return f

    procs: list[subprocess.Popen[bytes]] = []
    try:
        mo = out("master")
        err = subprocess.STDOUT if mo else None
        master = subprocess.Popen(master_cmd, env=penv, stdout=mo, stderr=err)
        procs.append(master)
        time.sleep(0.5)
        for i, cmd in enumerate(worker_cmds):
            wo = out(f"worker{i}")
            procs.append(
                subprocess.Popen(cmd, env=penv, stdout=wo, stderr=subprocess.STDOUT if wo else None)
            )
        rc = master.wait(timeout=timeout)
        worker_rcs = []
        for p in procs[1:]:
            try:
                # the master's quit message stops the workers promptly
                worker_rcs.append(p.wait(timeout=15))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGINT)
                worker_rcs.append(p.wait(timeout=30))
        if rc == 0 and any(r not in (0, None) for r in worker_rcs):
            rc = 1
        return rc
    except BaseException:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=stop_timeout + 30)
            except subprocess.TimeoutExpired:
                p.kill()
        raise
    finally:
        for f in logs:
            f.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="loadgen.runner",
        description="Run a Locust master + N workers; arguments after -- go to locust.",
    )
    p.add_argument("--stream", default="lakehouse-events")
    p.add_argument("--endpoint", default=os.environ.get("KINESIS_ENDPOINT"))
    p.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--spawn-rate", type=float, default=None)
    p.add_argument("--run-time", default="60s")
    p.add_argument("--web", action="store_true", help="web UI instead of headless")
    p.add_argument("--web-port", type=int, default=8089)
    p.add_argument("--master-port", type=int, default=5557)
    p.add_argument("--stop-timeout", type=float, default=30)
    p.add_argument("--ledger-dir", default="ledger")
    p.add_argument("--event-model", default="orders")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--create-stream-shards", type=int, default=None)
    p.add_argument("--log-dir", default=None)
    args, extra = p.parse_known_args(argv)
    if extra and extra[0] == "--":
        extra = extra[1:]
    return run_load(
        stream=args.stream, endpoint=args.endpoint, region=args.region, workers=args.workers,
        users=args.users, spawn_rate=args.spawn_rate, run_time=args.run_time or None,
        headless=not args.web, web_port=args.web_port, master_port=args.master_port,
        stop_timeout=args.stop_timeout, ledger_dir=args.ledger_dir, event_model=args.event_model,
        seed=args.seed, create_stream_shards=args.create_stream_shards, extra_args=extra,
        log_dir=args.log_dir,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
