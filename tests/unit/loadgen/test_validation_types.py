"""The ledger's record rules (loadgen.validation) for decimals, dates and nested values
agree with the job's (tests/unit/lakehouse_job/test_validate_types.py, same records)."""

from __future__ import annotations

import pytest

from lakehouse_tables import rules
from lakehouse_tables.types import Decimal, parse_type
from loadgen import validation
from tests.unit.lakehouse_job.test_validate_types import QUARANTINED, VALID, tables

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seq", sorted(VALID))
def test_what_the_job_writes_the_ledger_expects(seq: int) -> None:
    kind, _ = validation.classify(VALID[seq].encode(), tables())
    assert kind == rules.VALID


@pytest.mark.parametrize("seq", sorted(QUARANTINED))
def test_what_the_job_quarantines_the_ledger_expects_there(seq: int) -> None:
    text, reason = QUARANTINED[seq]
    kind, _ = validation.classify(text.encode(), tables())
    assert kind == rules.ledger_kind(reason)


@pytest.mark.parametrize(
    ("value", "fits"),
    [(1, True), ("1.20", True), (1.234, False), ("1e1", True), (100, False), (-99.99, True)],
)
def test_a_decimal_fits_exactly_or_not(value: object, fits: bool) -> None:
    assert validation.decimal_fits(Decimal(4, 2), value) is fits


def test_nested_decimals_are_rounded_as_spark_reads_them() -> None:
    lines = parse_type("array<struct<price:decimal(4,2)>>")
    assert validation.type_ok(lines, [{"price": 1.234}])
    assert not validation.type_ok(lines, [{"price": 100}])
    assert not validation.type_ok(lines, {"price": 1})


def test_the_ledger_and_trino_give_the_same_canonical_values() -> None:
    from datetime import date
    from decimal import Decimal as D

    from loadgen.ledger import normalize
    from loadgen.verify import normalize_actual

    spec = tables()["invoices"]
    sent = validation.parse_object(VALID[1])
    assert sent is not None
    trino = {
        "amount": D("1234.50"),
        "due": date(2026, 12, 31),
        "lines": [("a", 2, D("9.99")), ("b", 1, D("0.50"))],
        "tags": {"channel": "web"},
        "device": ("d-1", 21.5),
    }
    for name, value in trino.items():
        t = spec.schema[name]
        assert normalize(t, sent[name]) == normalize_actual(t, value), name
