"""The CDC part's commands around the service (lakehouse.cdc, stack, cli): a capture that
cannot resume said in words, `lakehouse cdc reset`, and what `status` says."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lakehouse import cdc, cli
from lakehouse.cli.cdc import cdc_status_lines
from lakehouse.core.config import Settings, load_settings
from lakehouse.local import stack
from lakehouse.local.supervisor import ServiceError, ServiceSpec, ServiceStatus
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return dataclasses.replace(load_settings({}), state_dir=tmp_path / "state")


def test_a_reset_moves_the_engines_offsets_and_the_services_records_only() -> None:
    files = [
        "offsets.dat",
        "snapshot-delivered",
        "snapshot-keys-3",
        "incremental-keys-public.orders",
        "capture-state.json",
        "capture-error.json",
        "offsets.dat.tmp-other",
        "notes.txt",
    ]
    assert cdc.reset_plan(files) == sorted(files[:6])


class FakeConnection:
    """What reset asks the database: the slot (active or not), the signal table."""

    def __init__(self, slot: tuple[bool] | None, signal_table: bool = True) -> None:
        self.slot, self.signal_table = slot, signal_table
        self.statements: list[tuple[str, Any]] = []

    def __enter__(self) -> FakeConnection:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def execute(self, sql: str, args: Any = None) -> Any:
        self.statements.append((sql, args))
        conn = self

        class Rows:
            def fetchone(self) -> Any:
                if "pg_replication_slots" in sql:
                    return conn.slot
                if "to_regclass" in sql:
                    return (conn.signal_table,)
                return None

        return Rows()


def test_reset_drops_the_slot_and_keeps_the_old_state_aside(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = FakeConnection(slot=(False,))
    monkeypatch.setattr(cdc, "connect", lambda *_: conn)
    state = cdc.state_dir(settings)
    state.mkdir(parents=True)
    (state / "offsets.dat").write_bytes(b"old")
    (state / "capture-error.json").write_text("{}")

    aside = cdc.reset(settings, lambda _: None, now=datetime(2026, 12, 7, 23, 0, tzinfo=UTC))

    assert ("SELECT pg_drop_replication_slot(%s)", (settings["CDC_SLOT"],)) in conn.statements
    assert aside == state / "before-reset-20261207T230000Z"
    assert (aside / "offsets.dat").read_bytes() == b"old"
    assert not (state / "offsets.dat").exists()
    assert cdc.capture_error(settings) is None
    assert cdc.capture_state(settings) == {"initial_snapshot": False, "captured": [], "pending": {}}


def test_reset_refuses_while_a_service_reads_the_slot_or_without_the_signal_table(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cdc, "connect", lambda *_: FakeConnection(slot=(True,)))
    with pytest.raises(cdc.CdcError, match="is in use"):
        cdc.reset(settings, lambda _: None)
    conn = FakeConnection(slot=None, signal_table=False)
    monkeypatch.setattr(cdc, "connect", lambda *_: conn)
    with pytest.raises(cdc.CdcError, match=r"public\.debezium_signal .* does not exist"):
        cdc.reset(settings, lambda _: None)
    assert not any("pg_drop_replication_slot" in sql for sql, _ in conn.statements)
    assert not cdc.state_dir(settings).exists(), "nothing moved when refused"


def refusing_service(settings: Settings, message: str) -> ServiceSpec:
    """A CDC service that refuses as the real one does: its error file, then exit 3."""
    error = cdc.state_dir(settings) / cdc.CAPTURE_ERROR
    script = (
        "import json, sys, time; print('Exception in thread main: a long trace'); "
        f"open({str(error)!r}, 'w').write(json.dumps({{'message': {message!r}, "
        "'at_ms': time.time() * 1000})); sys.exit(3)"
    )
    return ServiceSpec("cdc", [sys.executable, "-c", script], {}, (), "probe://cdc", lambda: False)


def test_a_capture_that_cannot_resume_is_said_in_words(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    cdc.state_dir(settings).mkdir(parents=True)
    message = "the CDC capture cannot resume: replication slot 'lakehouse_cdc' ..."
    monkeypatch.setitem(stack.CDC_SERVICE_BUILDERS, "cdc", lambda s: refusing_service(s, message))
    with pytest.raises(ServiceError) as refused:
        stack.start_cdc_service(settings, lambda _: None)
    assert str(refused.value) == f"cdc: {message}"
    for rows in ([ServiceStatus("cdc", "stopped")], []):
        assert cdc_status_lines(settings, rows) == [f"CDC capture stopped: {message}"]


def test_an_error_left_by_an_earlier_start_does_not_explain_this_one(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = cdc.state_dir(settings)
    state.mkdir(parents=True)
    (state / cdc.CAPTURE_ERROR).write_text(json.dumps({"message": "old", "at_ms": 1}))
    crash = ServiceSpec(
        "cdc", [sys.executable, "-c", "raise SystemExit(1)"], {}, (), "probe://cdc", lambda: False
    )
    monkeypatch.setitem(stack.CDC_SERVICE_BUILDERS, "cdc", lambda _: crash)
    with pytest.raises(ServiceError, match="exited with code 1"):
        stack.start_cdc_service(settings, lambda _: None)


def test_status_names_the_tables_being_snapshotted(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    health = {"state": "running", "streaming": True, "snapshots_pending": ["public.items"]}
    monkeypatch.setattr(cdc, "debezium_health", lambda _: health)
    running = [ServiceStatus("cdc", "running")]
    assert cdc_status_lines(settings, running) == [
        "CDC: existing rows of public.items being snapshotted (incremental)"
    ]
    health["snapshots_failed"] = {"public.items": "NO_PRIMARY_KEY"}
    (line,) = cdc_status_lines(settings, running)
    assert line.startswith("CDC: the snapshot of public.items ended with NO_PRIMARY_KEY")
    health["snapshots_pending"], health["snapshots_failed"] = [], {}
    assert cdc_status_lines(settings, running) == []
    assert cdc_status_lines(settings, []) == []


def test_the_cdc_command_group_and_cdc_load_both_parse() -> None:
    assert cli.build_parser().parse_args(["cdc", "reset"]).action == "reset"
    assert cli.build_parser().parse_args(["cdc-load", "--users", "3"]).users == 3
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["cdc", "restart"])


def test_rows_are_keyed_by_one_column_or_several_and_duplicates_are_named() -> None:
    assert cdc.keyed([(1, "a"), (2, "b")], 1) == {1: ("a",), 2: ("b",)}
    rows = [(1, 1, "a"), (1, 2, "b"), (1, 2, "c")]
    assert cdc.keyed(rows, 2) == {(1, 1): ("a",), (1, 2): ("c",), cdc._DUPLICATES: ((1, 2),)}


def test_the_lakes_keys_are_written_as_the_cdc_service_reads_them(settings: Settings) -> None:
    assert cdc.lake_key_lines(("order_id", "line"), [(5, 2, 900), (6, 1, 901)]) == [
        '900\t{"order_id":5,"line":2}',
        '901\t{"order_id":6,"line":1}',
    ]
    assert cdc.lake_key_lines(("name",), [("é", 3)]) == ['3\t{"name":"é"}']

    class Cursor:
        def execute(self, sql: str) -> None:
            if "cdc_customers" in sql:
                raise RuntimeError("Table 'hive.db.cdc_customers' does not exist")
            assert sql == "SELECT order_id, source_lsn FROM hive.db.cdc_orders", sql

        def fetchall(self) -> list[tuple[int, int]]:
            return [(7, 70)]

    said: list[str] = []
    cdc.state_dir(settings).mkdir(parents=True)
    cdc.write_lake_keys(settings, Cursor(), "db", load_tables(cdc.CDC_TABLES_YAML), said.append)
    written = (cdc.state_dir(settings) / "lake-keys-public.orders").read_text()
    assert written == '70\t{"order_id":7}\n'
    assert not (cdc.state_dir(settings) / "lake-keys-public.customers").exists()
    assert "cannot be read" in said[0]
