"""lakehouse_tables.rules: the reason <-> ledger kind map."""

import pytest

from lakehouse_tables import rules

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("empty record", rules.EMPTY),
        (rules.too_large_reason(300), rules.OVERSIZE),
        (rules.NOT_UTF8_REASON, rules.NOT_UTF8),
        ("not a JSON object", rules.NOT_JSON),
        (rules.TRAILING_REASON, rules.NOT_JSON),
        ("duplicate key 'order_id'", rules.NOT_JSON),
        ("missing event_type", rules.UNKNOWN_EVENT_TYPE),
        ("unknown event_type 'refunds'", rules.UNKNOWN_EVENT_TYPE),
        ("missing record key order_id", rules.MISSING_KEY),
        ("missing event time order_ts", rules.MISSING_TIME),
        ("invalid timestamp in order_ts", rules.INVALID_TIME),
        ("event time outside the window in order_ts", rules.OUT_OF_WINDOW),
        ("wrong type for amount: expected double", rules.WRONG_TYPES),
        ("number out of range for amount", rules.WRONG_TYPES),
        ("invalid op 'x'", rules.INVALID_OP),
        ("not a Debezium change event: no source.lsn", rules.NOT_DEBEZIUM),
        (rules.DEBEZIUM_TRUNCATE_REASON, rules.TRUNCATE),
    ],
)
def test_every_reason_names_its_ledger_kind(reason: str, kind: str) -> None:
    assert rules.ledger_kind(reason) == kind


def test_a_reason_outside_the_rules_is_an_error() -> None:
    with pytest.raises(ValueError, match="matches no record rule"):
        rules.ledger_kind("cosmic rays")


def test_every_kind_but_valid_has_a_reason() -> None:
    kinds = {kind for _, kind in rules.REASON_KINDS}
    assert kinds == {
        rules.EMPTY, rules.OVERSIZE, rules.NOT_UTF8, rules.NOT_JSON, rules.UNKNOWN_EVENT_TYPE,
        rules.MISSING_KEY, rules.MISSING_TIME, rules.INVALID_TIME, rules.OUT_OF_WINDOW,
        rules.WRONG_TYPES, rules.INVALID_OP, rules.CORRUPT_AGGREGATE, rules.NOT_DEBEZIUM,
        rules.TRUNCATE, rules.UNAVAILABLE_VALUE,
    }  # fmt: skip


def test_a_record_key_is_its_value_or_hudis_complex_form() -> None:
    assert rules.key_text(("order_id",), {"order_id": "o1"}) == "o1"
    assert rules.key_text(("order_id", "line"), {"order_id": 7, "line": 2}) == "order_id:7,line:2"
