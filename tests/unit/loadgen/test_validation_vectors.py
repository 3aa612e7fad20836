"""The ledger classifies every shared record vector as listed (tests/vectors)."""

from __future__ import annotations

import pytest

from lakehouse_tables.declarations import Tables
from loadgen.ledger import VALID, classify
from tests.vectors import load_vectors, vector_specs

pytestmark = pytest.mark.unit


def test_ledger_classifies_every_vector_as_listed() -> None:
    tables = Tables(vector_specs())
    vectors = load_vectors()

    wrong = {
        v.label: got
        for v in vectors
        if (got := classify(v.data, tables)[0]) != (VALID if v.valid else v.ledger_kind)
    }

    assert wrong == {}
    assert len(vectors) >= 40
