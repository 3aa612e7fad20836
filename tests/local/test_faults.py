"""Faults around the job: signals, neighbours on the network (marker `faults`).

Each case ends with the sinks holding exactly the scripted scenario's state.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from lakehouse.local import stack as stack_module
from lakehouse.local.job_launcher import job_spec
from lakehouse.local.services import metastore_spec, minio_spec, trino_spec
from lakehouse.local.supervisor import Supervisor
from lakehouse_job.startup import EXIT_REFUSED_CONFIG
from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, tail, wait_for

pytestmark = pytest.mark.faults

LOOPBACK = ("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")


def test_sigterm_to_the_job_group_stops_it_between_batches(run: Run) -> None:
    s = scripted.build(orders=300, ticks=60, seed=23)
    half = len(s.records) // 2
    run.put(s.records[:half])
    job = run.start_job("--trigger-seconds", "1", "--max-records-per-shard", "60")
    wait_for(lambda: run.batches_done() >= 1, 300, "a committed micro-batch")
    run.put(s.records[half:], start=half)
    # What the supervisor and `docker stop` do: SIGTERM to the driver's whole group.
    os.killpg(job.pid, signal.SIGTERM)
    code = job.wait(180)
    log = run.log.read_text(errors="replace")
    assert code == 0, f"the job exited {code} on SIGTERM:\n{tail(run.log)}"
    assert "stopping after the current micro-batch" in log
    # It stopped after the batch in flight, not after draining the backlog (ReadGate).
    assert run.records_done() < len(s.records), "the job drained the backlog before stopping"
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    assert_sinks_hold(run, s)


def _descendants(roots: set[int]) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found = set(roots)
    grew = True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in found} - found
        found |= more
        grew = bool(more)
    return found


def _pids(ss_line: str) -> set[int]:
    return {int(pid) for pid in re.findall(r"pid=(\d+)", ss_line)}


def test_no_listener_beyond_loopback_and_a_second_job_on_the_checkpoint_refused(
    stack, run: Run
) -> None:
    """Two checks on one running job (a job start is the costly part of either)."""
    first = run.start_job("--trigger-seconds", "2")
    try:
        wait_for(lambda: run.batches_done() >= 1 or first.poll() is not None, 300, "the job")
        assert first.poll() is None, tail(run.log)
        # No listener of ours beyond loopback: every service and the driver.
        services = {row.pid for row in stack_module.statuses(stack.settings) if row.pid}
        ours = _descendants({*services, first.pid})
        listeners = subprocess.run(
            ["ss", "-ltnpH"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        exposed = []
        for line in listeners:
            local = line.split()[3]
            if _pids(line) & ours and not local.startswith(LOOPBACK):
                exposed.append(line)
        checked = [line for line in listeners if _pids(line) & ours]
        assert len(checked) >= 5, listeners  # every service and the driver were seen
        assert exposed == []
        # A second job on the same checkpoint is refused, and the first keeps running.
        second = run.start_job("--trigger-seconds", "2")
        assert second.wait(120) == 3, tail(run.log)
        assert "is in use by pid" in run.log.read_text(errors="replace")
        assert first.poll() is None, "the first job must keep running"
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)


def test_a_job_killed_mid_stream_is_restarted_and_loses_and_duplicates_nothing(
    run: Run, tmp_path: Path
) -> None:
    """kill -9 of the driver and its JVM at once, mid-stream (two batches committed, the
    rest of the records waiting); its supervisor restarts it, and it catches up on what was
    put before and after the kill. Stopped by its supervisor, it compacts the MoR tables
    (the read-optimized view the checks read) before it exits."""
    s = scripted.build(orders=300, ticks=60, seed=11)
    half, three_quarters = len(s.records) // 2, 3 * len(s.records) // 4
    run.put(s.records[:half])
    supervisor = Supervisor(tmp_path / "run", tmp_path / "logs")
    # 200 records a batch: two batches leave 64 of the first half waiting at the kill.
    job_args = run.job_args(
        "--trigger-seconds", "1", "--max-records-per-shard", "100", "--final-compaction"
    )
    supervisor.start(job_spec(run.settings, job_args), progress=lambda _line: None)
    log = supervisor.log_file("job")
    try:
        wait_for(lambda: run.batches_done() >= 2, 300, "two committed micro-batches")
        run.put(s.records[half:three_quarters], start=half)
        keepalive = supervisor.status("job").pid
        assert keepalive is not None
        crashed = _descendants({keepalive}) - {keepalive}  # the driver and its JVM
        for pid in crashed:
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: "restart 1 in" in log.read_text(errors="replace"), 60, "a restart")
        run.put(s.records[three_quarters:], start=three_quarters)
        wait_for(run.caught_up, 300, lambda: f"the job to commit every record put:\n{tail(log)}")
    finally:
        supervisor.stop("job", timeout_s=300)
    assert_sinks_hold(run, s)
    batches = [json.loads(line) for line in run.metrics.read_text().splitlines()]
    assert sum(b["records"] for b in batches) >= len(s.records)  # replayed, not lost


def test_a_table_whose_creation_a_crash_cut_short_is_recreated(run: Run) -> None:
    # What a kill between Hudi's mkdir of .hoodie and its write of hoodie.properties leaves
    # (the crash-point test hit it: every later write failed and the job crash-looped).
    for table in ("hudi_orders_mor", "quarantine"):
        key = f"{run.prefix}/warehouse/{table}/.hoodie/.aux/.bootstrap/.partitions/x"
        run.s3().put_object(Bucket=run.bucket, Key=key, Body=b"")
    s = scripted.build(orders=60, ticks=20, seed=59)
    run.put(s.records)
    run.run_job("--available-now", "--final-compaction")
    assert "was being created when a run ended" in run.log.read_text(errors="replace")
    assert_sinks_hold(run, s)


def _supervised_job(run: Run, tmp_path: Path) -> Supervisor:
    supervisor = Supervisor(tmp_path / "run", tmp_path / "logs")
    job_args = run.job_args("--trigger-seconds", "1", "--max-records-per-shard", "60")
    supervisor.start(job_spec(run.settings, job_args), progress=lambda _line: None)
    return supervisor


@pytest.mark.long
@pytest.mark.parametrize("service", ["minio", "metastore", "kinesis"])
def test_a_dependency_paused_for_30_s_mid_stream_is_survived(
    stack, run: Run, tmp_path: Path, service: str
) -> None:
    s = scripted.build(orders=200, ticks=40, seed=41)
    half = len(s.records) // 2
    run.put(s.records[:half])
    supervisor = _supervised_job(run, tmp_path)
    try:
        wait_for(lambda: run.batches_done() >= 1, 300, "a committed micro-batch")
        pid = stack_module.supervisor_for(stack.settings).status(service).pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            paused = time.monotonic()
            if service != "kinesis":  # records the job must write while the service hangs
                run.put(s.records[half:], start=half)
            time.sleep(max(0.0, 30 - (time.monotonic() - paused)))
        finally:
            os.kill(pid, signal.SIGCONT)
        if service == "kinesis":
            run.put(s.records[half:], start=half)
        wait_for(lambda: run.records_done() >= len(s.records), 600, "every record after the pause")
    finally:
        supervisor.stop("job", timeout_s=120)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    assert_sinks_hold(run, s)


RESTARTABLE = {"metastore": metastore_spec, "minio": minio_spec}


@pytest.mark.long
@pytest.mark.parametrize("service", sorted(RESTARTABLE))
def test_a_dependency_killed_and_restarted_mid_stream_is_survived(
    stack, run: Run, tmp_path: Path, service: str
) -> None:
    """(Kinesis is left out: the local engines keep streams in memory only, so a restart
    loses the stream itself; it is paused instead, above.)"""
    s = scripted.build(orders=200, ticks=40, seed=43)
    half = len(s.records) // 2
    run.put(s.records[:half])
    supervisor = _supervised_job(run, tmp_path)
    services = stack_module.supervisor_for(stack.settings)
    try:
        wait_for(lambda: run.batches_done() >= 1, 300, "a committed micro-batch")
        services.stop(service)
        run.put(s.records[half:], start=half)
        time.sleep(20)  # the job fails its writes and is restarted with backoff meanwhile
        services.start(RESTARTABLE[service](stack.settings), progress=lambda _line: None)
        wait_for(lambda: run.records_done() >= len(s.records), 600, "every record after it")
    finally:
        supervisor.stop("job", timeout_s=120)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    assert_sinks_hold(run, s)


@pytest.mark.long
def test_trino_down_for_minutes_leaves_ingest_unaffected(stack, run: Run) -> None:
    services = stack_module.supervisor_for(stack.settings)
    s = scripted.build(orders=120, ticks=30, seed=47)
    services.stop("trino")
    try:
        stopped = time.monotonic()
        run.put(s.records[: len(s.records) // 2])
        run.run_job("--available-now")  # the job never needs Trino: it writes and syncs
        run.put(s.records[len(s.records) // 2 :], start=len(s.records) // 2)
        time.sleep(max(0.0, 120 - (time.monotonic() - stopped)))
        run.run_job("--available-now", "--final-compaction")
    finally:
        services.start(trino_spec(stack.settings), progress=lambda _line: None)
    assert_sinks_hold(run, s)


def test_a_new_checkpoint_keeps_the_raw_copy_and_a_recreated_stream_fails_loudly(
    run: Run,
) -> None:
    """What a stream's or a checkpoint's loss does, on one first run of the job."""
    s = scripted.build(orders=60, ticks=20, seed=5)
    run.put(s.records)
    run.run_job("--available-now")
    first = len(run.raw_json_lines("hudi_orders"))
    assert first > 0
    # A lost checkpoint: batch ids start at 0 again, and never overwrite the raw copy.
    again = f"s3a://{run.bucket}/{run.prefix}/checkpoint-2"
    run.run_job("--available-now", "--checkpoint", again)
    assert len(run.raw_json_lines("hudi_orders")) == 2 * first  # both reads kept whole
    # The first checkpoint with another warehouse, whose tables would lack every record it
    # committed: refused before anything is written.
    moved = f"s3a://{run.bucket}/{run.prefix}/warehouse-2"
    job = run.start_job("--available-now", "--warehouse", moved)
    assert job.wait(300) == EXIT_REFUSED_CONFIG, tail(run.log)
    log = run.log.read_text(errors="replace")
    assert "has committed batches to other sinks (--warehouse" in log, tail(run.log)
    assert run.keys(f"{run.prefix}/warehouse-2") == []
    # A stream recreated under its name, read with the first checkpoint: refused.
    client = run.kinesis()
    client.delete_stream(StreamName=run.stream)

    def gone() -> bool:
        try:
            client.describe_stream_summary(StreamName=run.stream)
        except client.exceptions.ResourceNotFoundException:
            return True
        return False

    wait_for(gone, 60, "the stream to be deleted")
    run.create_stream(shards=2)
    run.put(s.records)
    job = run.start_job("--available-now")  # the old checkpoint, the new stream
    assert job.wait(300) != 0
    assert "was deleted and recreated" in run.log.read_text(errors="replace")
