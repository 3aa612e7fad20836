"""`lakehouse send`, `job start|restart|stop` and `tables` end to end (marker `local`), as
a user runs them: an event type the project does not ship, declared in a tables file of
the test's own; its records sent from a file of JSON lines to the test's stream (a bad
line reported with its number and skipped); the supervised job started on that file; Trino
then holds exactly what was sent. The file then gains a field, and `job restart` alone (the
stack keeps running) makes the job read it: a record carrying the field shows it.

The CLI runs as subprocesses with a state folder of the test's own, so that its job,
PID file and log are not the stack's job's (another test may run that one meanwhile)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.pipeline import Run, wait_for

pytestmark = pytest.mark.local

TABLES = """
event_types:
  parcels:
    table: parcel_scans
    schema:
      parcel_id: string
      depot: string
      weight_kg: double
      scanned_at: timestamp
    record_key: parcel_id
    precombine: scanned_at
    partition_by: {name: scan_date, from: scanned_at}
"""
# The field the tables file gains before the restart.
WITH_CARRIER = TABLES.replace(
    "      weight_kg: double\n", "      weight_kg: double\n      carrier: string\n"
)


def parcel(n: int, minute: int, depot: str, **extra: object) -> str:
    return json.dumps(
        {
            "event_type": "parcels",
            "parcel_id": f"p{n}",
            "depot": depot,
            "weight_kg": n + 0.5,
            "scanned_at": f"2026-03-01T10:{minute:02d}:00.000Z",
            **extra,
        }
    )


def lakehouse(
    state: Path, *args: str, stdin: str | None = None, database: str | None = None
) -> subprocess.CompletedProcess:
    """The CLI as a user runs it; `database`: the settings' LAKEHOUSE_DATABASE."""
    env = {**os.environ, "LAKEHOUSE_STATE": str(state)}
    if database:
        env["LAKEHOUSE_DATABASE"] = database
    return subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_send_a_file_then_restart_the_job_on_a_changed_tables_file(
    run: Run, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    tables = tmp_path / "tables.yaml"
    tables.write_text(TABLES)
    # p1..p6 scanned twice: the later scan (minute 30+) wins whatever the order sent.
    lines = [parcel(n, 30 + n, "late") for n in range(1, 7)]
    lines += [parcel(n, n, "early") for n in range(1, 7)]
    lines.insert(4, '{"event_type": "parcels", "depot": "no key", "weight_kg": 1}')
    events = tmp_path / "parcels.jsonl"
    events.write_text("\n".join(lines) + "\n")

    sent = lakehouse(state, "send", str(events), "--stream", run.stream, "--tables", str(tables))
    assert sent.returncode == 1, sent  # a line was skipped
    assert sent.stdout.startswith(
        f"12 of 12 records acknowledged by stream {run.stream}; 1 lines skipped"
    ), sent.stdout
    reported = [line for line in sent.stderr.splitlines() if line.startswith("line ")]
    assert reported == ['line 5: skipped: missing_key (rule 7: record key missing, null or "")']

    started = lakehouse(
        state,
        "job",
        "start",
        "--tables",
        str(tables),
        "--",
        *run.job_args("--trino-url", run.settings.trino_url),
    )
    try:
        assert started.returncode == 0, started
        expected = sorted((f"p{n}", "late", n + 0.5) for n in range(1, 7))
        wait_for(
            lambda: _rows(run, "SELECT parcel_id, depot, weight_kg FROM parcels") == expected,
            300,
            lambda: f"the live view to hold what was sent; job log:\n{_log(state)}",
        )

        # The raw copy is written after the Hudi tables of the same batch: wait for it.
        def report_row() -> list[str]:
            report = lakehouse(state, "tables", "--tables", str(tables), database=run.database)
            assert report.returncode == 0, report
            return report.stdout.splitlines()[2].split()[:5]

        wanted = ["parcels", "parcels", "6", "parcels_json", "12"]
        wait_for(lambda: report_row() == wanted, 120, lambda: f"lakehouse tables: {report_row()}")

        tables.write_text(WITH_CARRIER)
        restarted = lakehouse(state, "job", "restart")
        assert restarted.returncode == 0, restarted
        assert "Stopping the job after its batch in flight" in restarted.stdout
        one = parcel(7, 50, "late", carrier="post") + "\n"
        again = lakehouse(
            state, "send", "-", "--stream", run.stream, "--tables", str(tables), stdin=one
        )
        assert again.returncode == 0, again
        wait_for(
            lambda: (
                _rows(run, "SELECT parcel_id, carrier FROM parcels WHERE carrier IS NOT NULL")
                == [("p7", "post")]
            ),
            300,
            lambda: f"the new field in the live view; job log:\n{_log(state)}",
        )
    finally:
        stopped = lakehouse(state, "job", "stop")
    assert stopped.returncode == 0 and "The job stopped." in stopped.stdout, stopped


def _rows(run: Run, sql: str) -> list[tuple]:
    try:
        return sorted(tuple(row) for row in run.query(sql, catalog="hive"))
    except Exception:  # the view is not there yet
        return []


def _log(state: Path) -> str:
    log = state / "logs" / "job.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-40:]) if log.exists() else ""
