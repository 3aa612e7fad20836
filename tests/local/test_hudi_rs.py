"""The tables read by an independent reader, hudi-rs (PyPI `hudi`): snapshot (MoR with
log merging, before any compaction), time travel, and incremental reads."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiQueryType, HudiReadOptions

from lakehouse.core.clients import hudi_rs_table
from tests.support.pipeline import Run, iso_ms, tail, wait_for

# One worker runs this module's tests, which share its module-scoped fixtures
# (tests/support/xdist_modules.py).
pytestmark = pytest.mark.local

T0 = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
T1 = T0 + timedelta(hours=2)


def order(op: str, n: int, ts: datetime, amount: float = 0.0) -> bytes:
    event: dict[str, object] = {
        "event_type": "orders",
        "op": op,
        "order_id": f"k{n:03d}",
        "order_ts": iso_ms(ts),
    }
    if op != "d":
        event.update(customer_id=f"c{n % 5}", amount=amount, status="s")
    return json.dumps(event).encode()


PHASE_1 = [order("c", n, T0 + timedelta(seconds=n), amount=float(n)) for n in range(40)]
PHASE_2 = (
    [order("u", n, T1, amount=1000.0 + n) for n in range(10)]
    + [order("d", n, T1) for n in range(10, 15)]
    + [order("c", n, T1, amount=float(n)) for n in range(40, 50)]
)
STATE_1 = {f"k{n:03d}": float(n) for n in range(40)}
STATE_2 = {
    **{k: v for k, v in STATE_1.items() if not 10 <= int(k[1:]) < 15},
    **{f"k{n:03d}": 1000.0 + n for n in range(10)},
    **{f"k{n:03d}": float(n) for n in range(40, 50)},
}
CHANGED_IN_PHASE_2 = {f"k{n:03d}" for n in [*range(15), *range(40, 50)]}


def table(run: Run, name: str):
    return hudi_rs_table(run.settings.endpoints, f"s3://{run.bucket}/{run.prefix}/warehouse/{name}")


def live_amounts(batches: list[pa.RecordBatch]) -> dict[str, float]:
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    keys = [r["order_id"] for r in rows]
    assert len(keys) == len(set(keys)), "a key appears twice in one snapshot"
    return {r["order_id"]: r["amount"] for r in rows if not r["_is_deleted"]}


def latest_instant(hudi_table) -> str:
    return hudi_table.get_timeline().get_latest_commit_timestamp()


@pytest.fixture(scope="module")
def two_phases(stack, tmp_path_factory) -> tuple[Run, dict[str, str]]:
    """Phase 1's commits, then phase 2's, by one running job (one JVM start, not two); the
    latest instants after phase 1 are the time-travel and incremental reads' start."""
    run = Run.new(stack.settings, Path(tmp_path_factory.mktemp("hudi_rs")))
    run.create_stream(shards=2)
    run.put(PHASE_1)
    job = run.start_job("--trigger-seconds", "1")

    def committed(phase: str) -> None:
        wait_for(
            lambda: job.poll() is not None or run.caught_up(),
            300,
            lambda: f"{phase}:\n{tail(run.log)}",
        )
        assert job.poll() is None, f"the job exited {job.returncode}:\n{tail(run.log)}"

    try:
        committed("the job to commit phase 1")
        after_phase_1 = {
            name: latest_instant(table(run, name))
            for name in ("hudi_orders_cow", "hudi_orders_mor")
        }
        run.put(PHASE_2, start=len(PHASE_1))
        committed("the job to commit phase 2")
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone already: committed() says why
            os.killpg(job.pid, signal.SIGTERM)  # stops it between batches
        code = job.wait(180)
    assert code == 0, f"the job exited {code} on SIGTERM:\n{tail(run.log)}"
    return run, after_phase_1


@pytest.mark.parametrize("name", ["hudi_orders_cow", "hudi_orders_mor"])
def test_snapshot_equals_expected_state(two_phases, name: str) -> None:
    run, _ = two_phases
    hudi_table = table(run, name)
    if name.endswith("_mor"):
        # Not compacted yet: this read merges the log files onto the base files.
        assert not hudi_table.get_timeline().get_completed_commits()
    assert live_amounts(hudi_table.read()) == STATE_2


@pytest.mark.parametrize("name", ["hudi_orders_cow", "hudi_orders_mor"])
def test_time_travel_gives_that_commits_state(two_phases, name: str) -> None:
    run, after_phase_1 = two_phases
    options = HudiReadOptions().with_as_of_timestamp(after_phase_1[name])
    assert live_amounts(table(run, name).read(options)) == STATE_1


@pytest.mark.parametrize("name", ["hudi_orders_cow", "hudi_orders_mor"])
def test_incremental_read_gives_exactly_the_changed_keys(two_phases, name: str) -> None:
    run, after_phase_1 = two_phases
    hudi_table = table(run, name)
    options = (
        HudiReadOptions()
        .with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp(after_phase_1[name])
        .with_end_timestamp(latest_instant(hudi_table))
    )
    batches = hudi_table.read(options)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    assert {r["order_id"] for r in rows} == CHANGED_IN_PHASE_2
    deleted = {r["order_id"] for r in rows if r["_is_deleted"]}
    assert deleted == {f"k{n:03d}" for n in range(10, 15)}
