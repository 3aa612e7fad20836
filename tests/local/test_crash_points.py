"""The job killed (driver and JVM, SIGKILL) at named points of a micro-batch, restarted by
its supervisor each time: nothing is lost or duplicated (marker `faults`).

The points (lakehouse_job.crash_points) fire once each, in the order the job reaches
them; the short set runs in `make test`, the full one with the long tests.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from lakehouse.local.job_launcher import job_spec
from lakehouse.local.supervisor import Supervisor
from lakehouse_job.crash_points import POINTS_ENV, STATE_ENV, fired_points
from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, tail, wait_for

pytestmark = pytest.mark.faults

HIVE_SYNC = "during:HiveSyncTool.syncHoodieTable"
COMPACTION = "during:RunCompactionProcedure.call"
WRITES = ("hudi_orders_cow", "hudi_orders_mor", "hudi_orders_json", "quarantine")
SHORT = ("before:hudi_orders_mor", "before-commit", HIVE_SYNC)
ALL = (
    *(f"{when}:{write}" for write in WRITES for when in ("before", "after")),
    "before-commit",
    HIVE_SYNC,
    COMPACTION,
)


@pytest.mark.parametrize(
    "points",
    [pytest.param(SHORT, id="short"), pytest.param(ALL, id="all", marks=pytest.mark.long)],
)
def test_a_crash_at_each_point_loses_and_duplicates_nothing(
    run: Run, tmp_path: Path, points: tuple[str, ...]
) -> None:
    s = scripted.build(orders=300, ticks=60, seed=53)
    chunks = [s.records[i : i + 120] for i in range(0, len(s.records), 120)]
    state = tmp_path / "crash-state"
    # Batches large enough to keep up with the puts: the job that survived the crashes
    # commits every record and, stopped, compacts the MoR tables (--final-compaction) for
    # the checks, so no second job has to start to drain what it left (at 40 records a
    # shard it had not caught up 5 minutes after the last crash, 2026-11-27).
    job_args = run.job_args(
        *("--trigger-seconds", "1", "--max-records-per-shard", "500", "--final-compaction"),
        *("--compaction-delta-commits", "1", "--compaction-interval", "2"),
    )
    spec = job_spec(run.settings, job_args, keepalive_args=("--max-backoff", "2"))
    spec = replace(spec, env={**spec.env, POINTS_ENV: ",".join(points), STATE_ENV: str(state)})
    supervisor = Supervisor(tmp_path / "run", tmp_path / "logs")
    log = supervisor.log_file("job")
    put = 0
    started = time.monotonic()
    supervisor.start(spec, progress=lambda _line: None)
    try:
        # A crash replays its batch, so one batch can run through many points; the last
        # chunk is kept back to show the job alive and writing after the last crash.
        while fired_points(state) != set(points):
            if put < len(chunks) - 1:
                run.put(chunks[put], start=put * 120)
                put += 1
            assert time.monotonic() - started < 900, (
                f"fired {sorted(fired_points(state))} of {points} in 900 s:\n{tail(log)}"
            )
            time.sleep(5)
        done = run.batches_done()
        for i in range(put, len(chunks)):
            run.put(chunks[i], start=i * 120)
        wait_for(lambda: run.batches_done() > done, 300, "a batch after the last crash")
        wait_for(run.caught_up, 300, lambda: f"the job to commit every record put:\n{tail(log)}")
    finally:
        supervisor.stop("job", timeout_s=300)
    restarts = log.read_text(errors="replace").count("restart ")
    assert restarts >= len(points), f"{restarts} restarts for {len(points)} crashes"
    assert_sinks_hold(run, s)
