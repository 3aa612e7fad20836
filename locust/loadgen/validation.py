"""Is a Kinesis record valid? The ledger's side of the "Record rules" in tables.yaml.

The streaming job decides the same question with Spark expressions (lakehouse_job.parse);
tests/vectors/records.jsonl holds the cases both must classify alike. `classify` applies
the rules in the documented order and names the first one broken with a ledger kind.

Where Python's json module and the job's JSON parser (Jackson, inside Spark) differ, this
module follows Jackson's settings: NaN/Infinity are not numbers, numbers are at most 1000
digits, and the whole text must be one object (json.loads already rejects trailing data).
"""

from __future__ import annotations

import decimal
import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any, Final

from lakehouse_tables import types as T
from lakehouse_tables.declarations import FieldType, Tables, TableSpec
from lakehouse_tables.rules import (
    DEFAULT_OP,
    EMPTY,
    INVALID_OP,
    INVALID_TIME,
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    MISSING_KEY,
    MISSING_TIME,
    NOT_JSON,
    NOT_UTF8,
    OPS,
    OUT_OF_WINDOW,
    OVERSIZE,
    UNKNOWN_EVENT_TYPE,
    VALID,
    WRONG_TYPES,
)
from loadgen.timefmt import parse_iso_micros

_ISO_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_WIDE: Final = decimal.Context(prec=1000)  # quantize exactly whatever the digits

_SHALLOW: Final = 100  # brackets that json.loads can always nest, whatever the stack
_LONG_MIN: Final = -(2**63)
_LONG_MAX: Final = 2**63 - 1


class _Rejected(ValueError):
    """The text is JSON to Python but not to the job's parser."""


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers whether a field name appeared twice."""

    duplicate: bool = False


def classify(data: bytes, tables: Tables) -> tuple[str, dict[str, Any] | None]:
    """(VALID, event as decoded) or (the kind of the first rule broken, None)."""
    if not data:
        return EMPTY, None
    if len(data) > tables.max_record_bytes:
        return OVERSIZE, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8, None
    event = parse_object(text)
    if event is None:
        return NOT_JSON, None
    event_type = event.get("event_type")
    if not isinstance(event_type, str) or event_type not in tables:
        return UNKNOWN_EVENT_TYPE, None
    spec = tables[event_type]
    if len(data) > spec.max_record_bytes:
        return OVERSIZE, None
    kind = _check_fields(event, spec)
    return (VALID, event) if kind is None else (kind, None)


def normalise_op(event: dict[str, Any], spec: TableSpec) -> str | None:
    """c, u or d as the job stores it (None if invalid): Spark's trim strips only U+0020."""
    if spec.op_field is None or event.get(spec.op_field) is None:
        return DEFAULT_OP
    raw = event[spec.op_field]
    # A non-string's JSON text can never become c/u/d, so the job rejects it too.
    op = raw.strip(" ").lower() if isinstance(raw, str) else None
    return op if op in OPS else None


def parse_object(text: str) -> dict[str, Any] | None:
    """The JSON object `text` holds, or None if the job's parser would not read it as one."""
    try:
        with _nesting_allowed(text):
            value = json.loads(
                text,
                object_pairs_hook=_object,
                parse_constant=_reject_constant,
                parse_int=_int,
                parse_float=_float,
            )
    except (ValueError, RecursionError):  # JSONDecodeError and _Rejected are ValueErrors
        return None
    # Only the top level counts: the job ignores undeclared fields, whatever they hold.
    if not isinstance(value, _Object) or value.duplicate:
        return None
    return value


def _check_fields(event: dict[str, Any], spec: TableSpec) -> str | None:
    for name in spec.record_keys:  # each field of a key of several columns
        key = event.get(name)
        if key is None or (spec.schema[name] == "string" and key == ""):
            return MISSING_KEY
    for name in dict.fromkeys([spec.precombine, spec.partition_source]):
        if event.get(name) is None:
            return MISSING_TIME
    for name, field_type in spec.schema.items():
        value = event.get(name)
        if value is None:
            continue
        if field_type == "timestamp":
            micros = parse_iso_micros(value)
            if micros is None:
                return INVALID_TIME
            lo, hi = spec.event_time_window
            if name in spec.event_time_fields and not lo <= micros <= hi:
                return OUT_OF_WINDOW
        elif not type_ok(field_type, value):
            return WRONG_TYPES
    if normalise_op(event, spec) is None:
        return INVALID_OP
    return None


def type_ok(field_type: FieldType, value: Any) -> bool:
    """A present, non-null value of a declared field of a type other than timestamp
    (rule 9): as lakehouse_job.field_checks reads it."""
    if isinstance(field_type, T.Decimal):
        return decimal_fits(field_type, value)
    if field_type == "date":
        return isinstance(value, str) and _date_ok(value)
    if T.is_nested(field_type):
        return _shape_ok(field_type, value)
    if field_type == "string":
        return isinstance(value, str)
    if field_type == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if field_type == "long":
        return isinstance(value, int) and _LONG_MIN <= value <= _LONG_MAX
    try:  # double: JSON 1e400 and integers beyond the double range are out of range
        return math.isfinite(float(value))
    except OverflowError:
        return False


def decimal_fits(t: T.Decimal, value: Any, rounded: bool = False) -> bool:
    """A JSON number or numeric string the declared decimal holds exactly: no more decimal
    places than its scale, no more integer digits than precision - scale. `rounded`: as a
    nested decimal is read, rounded half up to the scale first."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    try:
        number = decimal.Decimal(getattr(value, "text", None) or str(value))
    except decimal.InvalidOperation:
        return False
    if not number.is_finite():
        return False
    step = decimal.Decimal(1).scaleb(-t.scale)
    exact = number.quantize(step, rounding=decimal.ROUND_HALF_UP, context=_WIDE)
    return (rounded or exact == number) and abs(exact) < decimal.Decimal(10) ** t.integer_digits


def _date_ok(text: str) -> bool:
    if not _ISO_DATE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _shape_ok(t: T.FieldType, value: Any) -> bool:
    """A nested value of the declared shape; JSON null anywhere inside is allowed. A nested
    string takes any JSON scalar (Spark renders it as its text), a nested timestamp a
    string, a nested decimal is rounded to its scale (Spark's from_json does so)."""
    if value is None:
        return True
    if isinstance(t, T.Struct):
        return isinstance(value, dict) and all(_shape_ok(ft, value.get(n)) for n, ft in t.fields)
    if isinstance(t, T.Array):
        return isinstance(value, list) and all(_shape_ok(t.element, v) for v in value)
    if isinstance(t, T.Map):
        return isinstance(value, dict) and all(_shape_ok(t.value, v) for v in value.values())
    if t == "string":
        return not isinstance(value, dict | list)
    if t == "timestamp":
        return isinstance(value, str)
    if isinstance(t, T.Decimal):
        return decimal_fits(t, value, rounded=True)
    return type_ok(t, value)


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.duplicate = len(obj) != len(pairs)
    return obj


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"{name} is not JSON")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _Rejected("number too long")
    return int(text)


class _Number(float):
    """A JSON number with a fraction or exponent that keeps its text: a decimal field is
    checked on the digits sent, not on their nearest double."""

    text: str


def _float(text: str) -> float:
    # Jackson counts integer, fraction and exponent digits, and no digit for a lone 0.
    mantissa, _, exponent = text.lstrip("-").lower().partition("e")
    integer, _, fraction = mantissa.partition(".")
    digits = (0 if integer == "0" else len(integer)) + len(fraction) + len(exponent.lstrip("+-"))
    if digits > MAX_NUMBER_DIGITS:
        raise _Rejected("number too long")
    number = _Number(text)
    number.text = text
    return number


@contextmanager
def _nesting_allowed(text: str) -> Iterator[None]:
    """Reject nesting deeper than MAX_DEPTH, and let json.loads go that deep.

    Python's json recurses once per level and hits the interpreter's recursion limit well
    before Jackson's depth limit, so the limit is raised for the few texts that could nest
    deeply (more than _SHALLOW brackets); ordinary records skip the scan.
    """
    if text.count("{") + text.count("[") <= _SHALLOW:
        yield
        return
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise _Rejected("nested too deep")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + depth)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _depth(text: str) -> int:
    """Deepest bracket nesting outside string literals (the text may not be JSON at all)."""
    deepest = depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest
