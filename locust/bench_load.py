"""How many events/s do one and two Locust workers sustain against a Kinesis endpoint,
and who burns the CPU: the generator (Locust workers) or the emulator?

    .venv/bin/python locust/bench_load.py --endpoint http://localhost:4567 [--duration 20]
        [--emulator-pid PID] [--users-per-worker 4] [--batch-size 500] [--shards 4]

Users send unthrottled (--events-per-sec 0). CPU is read from /proc/<pid>/stat
(utime+stime) for the master, the workers and the emulator (found by its listening
port if no pid is given); 100% = one core. Also measures the pure generation cost
per event in-process, to split worker CPU into generating vs sending.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

from lakehouse.core import procstats
from lakehouse.core.bootstrap import ensure_stream
from lakehouse_tables.declarations import load_tables
from loadgen.kinesis import make_client
from loadgen.models import EventGenerator, GenConfig, parse_mix
from loadgen.options import LoadOptions
from loadgen.runner import run_load


def pid_listening_on(port: int) -> int | None:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(parts[9])
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            for fd in (d / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(d.name)
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return None


def generation_rate(event_model: str, seconds: float = 2.0) -> float:
    """Events/s one core generates (JSON bytes, no sending)."""
    mix = (
        parse_mix("orders=1,ticker=1,clicks=1,iot=1")
        if event_model == "mix"
        else {event_model: 1.0}
    )
    g = EventGenerator(load_tables(), GenConfig(event_mix=mix, seed=1, key_prefix="bench-"))
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        g.take(1000)
        n += 1000
    return n / (time.process_time() - t0)


def bench(args: argparse.Namespace, workers: int, emulator_pid: int | None) -> dict[str, float]:
    client = make_client(args.endpoint, args.region)
    stream = f"bench-{uuid.uuid4().hex[:8]}"
    ensure_stream(client, stream, shards=args.shards)
    ledger = Path(tempfile.mkdtemp(prefix="bench-ledger-"))
    result: dict[str, int] = {}

    opts = LoadOptions(
        stream_name=stream, kinesis_endpoint=args.endpoint, region=args.region,
        workers=workers, users=args.users_per_worker * workers, run_time=f"{args.duration}s",
        stop_timeout=10, master_port=args.master_port, ledger_dir=str(ledger),
        event_model=args.event_model, events_per_sec=0, batch_size=args.batch_size,
        malformed_rate=0, duplicate_rate=0, late_rate=0,
    )  # fmt: skip

    def go() -> None:
        result["rc"] = run_load(opts, log_dir=ledger / "logs", timeout=args.duration + 120)

    th = threading.Thread(target=go)
    th.start()
    time.sleep(3)  # let the workers connect and the users spawn
    # Locust runs in a process group of its own: its master and the workers it forked.
    master = procstats.children(os.getpid())[0]

    def sample() -> dict[str, float]:
        everyone, alone = procstats.group(master).cpu_s, procstats.process(master).cpu_s
        emulator = procstats.process(emulator_pid).cpu_s if emulator_pid else 0.0
        return {"master": alone, "worker": everyone - alone, "emulator": emulator}

    start = sample()
    t0 = time.monotonic()
    last = dict(start)
    while th.is_alive():
        time.sleep(0.5)
        now = sample()
        if now["master"]:  # still running
            last = now
        if time.monotonic() - t0 > args.duration - 4:
            break
    window = time.monotonic() - t0
    th.join()
    cpu = {role: (last[role] - start[role]) / window * 100 for role in start}
    summaries = [json.loads(s.read_text()) for s in ledger.glob("*.summary.json")]
    acked = sum(s["acked"] for s in summaries)
    failed = sum(s["failed"] for s in summaries)
    secs = max((s["seconds"] for s in summaries), default=1.0)
    try:
        client.delete_stream(StreamName=stream, EnforceConsumerDeletion=True)
    except Exception as exc:  # an emulator may not support it; not fatal for a benchmark
        print(f"  (delete_stream failed: {exc})", file=sys.stderr)
    return {
        "workers": workers,
        "rc": result.get("rc", -1),
        "events_per_s": acked / secs,
        "acked": acked,
        "failed": failed,
        "cpu_master_pct": cpu.get("master", 0.0),
        "cpu_workers_pct": cpu.get("worker", 0.0),
        "cpu_emulator_pct": cpu.get("emulator", 0.0),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", required=True)
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--emulator-pid", type=int, default=None)
    p.add_argument("--duration", type=int, default=20)
    p.add_argument("--users-per-worker", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--event-model", default="mix")
    p.add_argument("--master-port", type=int, default=8195)
    p.add_argument("--workers", default="1,2")
    args = p.parse_args(argv)
    port = urlparse(args.endpoint).port or 443
    emu = args.emulator_pid or pid_listening_on(port)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"endpoint {args.endpoint} emulator pid {emu} cores {os.cpu_count()} load {load}")
    gen = generation_rate(args.event_model)
    print(f"generation only (one core, in-process): {gen:,.0f} events/s")
    for n in (int(x) for x in args.workers.split(",")):
        r = bench(args, n, emu)
        gen_share = r["events_per_s"] / gen * 100
        print(
            f"workers={n} users={args.users_per_worker * n} batch={args.batch_size}: "
            f"{r['events_per_s']:,.0f} events/s acked={r['acked']} failed={r['failed']} "
            f"rc={r['rc']} | CPU% (100 = 1 core): workers {r['cpu_workers_pct']:.0f} "
            f"(of which generating ~{gen_share:.0f}) master {r['cpu_master_pct']:.0f} "
            f"emulator {r['cpu_emulator_pct']:.0f}"
        )
    print("load average after: " + "/".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
