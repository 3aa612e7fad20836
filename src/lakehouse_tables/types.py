"""The declared field types of tables.yaml as a small immutable tree.

A type string (`decimal(12,2)`, `array<struct<sku:string,qty:long>>`) is parsed once, by
`parse_type`, into one of:

- `Primitive`: string, long, double, boolean, timestamp, date. A `StrEnum`, so a
  primitive is also its name: `schema["amount"] == "double"` holds.
- `Decimal(precision, scale)`: 1 <= precision <= 38, 0 <= scale <= precision (Spark's,
  Hive's and Trino's limits).
- `Struct(fields)`: named fields in order, names lower-case identifiers as columns are.
- `Array(element)`.
- `Map(value)`: keys are strings (a JSON object's names), so only the value is a type.

`str(t)` renders the canonical form (no spaces: `map<string,decimal(10,2)>`), which
`parse_type` reads back to an equal tree. Equal trees are equal types; how one type may
change into another is not decided here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

MAX_DECIMAL_PRECISION: Final = 38

# Hive Metastore lower-cases identifiers and Trino matches them case-insensitively, so a
# mixed-case name would be read back under another name.
IDENTIFIER: Final[re.Pattern[str]] = re.compile(r"[a-z][a-z0-9_]*")


class Primitive(StrEnum):
    STRING = "string"
    LONG = "long"
    DOUBLE = "double"
    BOOLEAN = "boolean"
    TIMESTAMP = "timestamp"
    DATE = "date"


@dataclass(frozen=True)
class Decimal:
    precision: int
    scale: int

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= MAX_DECIMAL_PRECISION:
            raise TypeSyntaxError(
                f"decimal precision {self.precision} is outside 1..{MAX_DECIMAL_PRECISION}"
            )
        if not 0 <= self.scale <= self.precision:
            raise TypeSyntaxError(
                f"decimal scale {self.scale} is outside 0..{self.precision} (the precision)"
            )

    @property
    def integer_digits(self) -> int:
        """Digits allowed before the decimal point."""
        return self.precision - self.scale

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@dataclass(frozen=True)
class Struct:
    fields: tuple[tuple[str, FieldType], ...]

    def __post_init__(self) -> None:
        if not self.fields:
            raise TypeSyntaxError("a struct needs at least one field")
        names = [name for name, _ in self.fields]
        for name in names:
            if not IDENTIFIER.fullmatch(name):
                raise TypeSyntaxError(
                    f"struct field name {name!r} is not a lower-case identifier ([a-z][a-z0-9_]*)"
                )
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TypeSyntaxError(f"struct field {duplicates[0]!r} is declared twice")

    def __str__(self) -> str:
        return "struct<" + ",".join(f"{name}:{t}" for name, t in self.fields) + ">"


@dataclass(frozen=True)
class Array:
    element: FieldType

    def __str__(self) -> str:
        return f"array<{self.element}>"


@dataclass(frozen=True)
class Map:
    """A JSON object with any names (always strings) and values of one type."""

    value: FieldType

    def __str__(self) -> str:
        return f"map<string,{self.value}>"


FieldType = Primitive | Decimal | Struct | Array | Map
Nested = Struct | Array | Map


class TypeSyntaxError(ValueError):
    """A type string that names no type; the message says what is wrong and where."""


def parse_type(text: object) -> FieldType:
    """The type a declared type string names; TypeSyntaxError says what is wrong."""
    if not isinstance(text, str):
        raise TypeSyntaxError(f"a type must be text such as 'string', got {text!r}")
    parser = _Parser(text)
    parsed = parser.type()
    parser.expect_end()
    return parsed


_SPARK_NAMES: Final[dict[Primitive, str]] = {
    Primitive.STRING: "string",
    Primitive.LONG: "bigint",
    Primitive.DOUBLE: "double",
    Primitive.BOOLEAN: "boolean",
    Primitive.TIMESTAMP: "timestamp",
    Primitive.DATE: "date",
}


def spark_simple(t: FieldType) -> str:
    """Spark's simpleString of the type a declared type is written as (bigint for long,
    struct<a:string,...>): what lakehouse_tables.schema_change compares with the table's
    stored schema."""
    if isinstance(t, Primitive):
        return _SPARK_NAMES[t]
    if isinstance(t, Decimal):
        return str(t)
    if isinstance(t, Struct):
        return "struct<" + ",".join(f"{name}:{spark_simple(ft)}" for name, ft in t.fields) + ">"
    if isinstance(t, Array):
        return f"array<{spark_simple(t.element)}>"
    return f"map<string,{spark_simple(t.value)}>"


def is_nested(t: FieldType) -> bool:
    return isinstance(t, Struct | Array | Map)


def children(t: FieldType) -> Iterator[tuple[str, FieldType]]:
    """The direct parts of a nested type with their path step: `.name` for a struct
    field, `[]` for an array's elements, `{}` for a map's values; none for a leaf."""
    if isinstance(t, Struct):
        for name, field_type in t.fields:
            yield f".{name}", field_type
    elif isinstance(t, Array):
        yield "[]", t.element
    elif isinstance(t, Map):
        yield "{}", t.value


# Names, numbers, punctuation; anything else is an error at its position.
_TOKEN: Final = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|([0-9]+)|([<>(),:])|(\S))")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        kinds = ("name", "int", "punct", "bad")
        for m in _TOKEN.finditer(text):
            group = m.lastindex or 0  # the one alternative that matched
            self.tokens.append((kinds[group - 1], m.group(group), m.start(group)))
        self.i = 0

    def type(self) -> FieldType:
        kind, word, at = self._next("a type")
        if kind != "name":
            raise self._error(f"expected a type, found {word!r}", at)
        if word in Primitive.__members__.values():
            return Primitive(word)
        if word == "decimal":
            self._punct("(")
            precision = self._int("the decimal precision")
            self._punct(",")
            scale = self._int("the decimal scale")
            self._punct(")")
            return self._build(lambda: Decimal(precision, scale), at)
        if word == "array":
            self._punct("<")
            element = self.type()
            self._punct(">")
            return Array(element)
        if word == "map":
            self._punct("<")
            _, key, key_at = self._next("the map key type")
            if key != "string":
                raise self._error(
                    f"map keys are JSON object names, so the key type must be string, "
                    f"found {key!r}",
                    key_at,
                )
            self._punct(",")
            value = self.type()
            self._punct(">")
            return Map(value)
        if word == "struct":
            self._punct("<")
            fields: list[tuple[str, FieldType]] = []
            while True:
                name_kind, name, name_at = self._next("a struct field name")
                if name_kind != "name":
                    raise self._error(f"expected a struct field name, found {name!r}", name_at)
                self._punct(":")
                fields.append((name, self.type()))
                _, sep, sep_at = self._next("',' or '>'")
                if sep == ">":
                    break
                if sep != ",":
                    raise self._error(f"expected ',' or '>' in struct, found {sep!r}", sep_at)
            return self._build(lambda: Struct(tuple(fields)), at)
        hint = " (types are lower-case)" if word.lower() != word else ""
        raise self._error(
            f"unknown type {word!r}{hint}; expected one of "
            f"{', '.join(Primitive)}, decimal(p,s), struct<...>, array<...>, map<string,...>",
            at,
        )

    def expect_end(self) -> None:
        if self.i < len(self.tokens):
            _, word, at = self.tokens[self.i]
            raise self._error(f"unexpected {word!r} after the type", at)

    def _build(self, make: Callable[[], FieldType], at: int) -> FieldType:
        try:
            return make()
        except TypeSyntaxError as exc:
            raise self._error(str(exc), at) from None

    def _next(self, wanted: str) -> tuple[str, str, int]:
        if self.i >= len(self.tokens):
            raise self._error(f"ends where {wanted} was expected", len(self.text))
        token = self.tokens[self.i]
        self.i += 1
        return token

    def _punct(self, char: str) -> None:
        _, word, at = self._next(repr(char))
        if word != char:
            raise self._error(f"expected {char!r}, found {word!r}", at)

    def _int(self, what: str) -> int:
        kind, word, at = self._next(what)
        if kind != "int":
            raise self._error(f"expected {what} (a whole number), found {word!r}", at)
        return int(word)

    def _error(self, message: str, at: int) -> TypeSyntaxError:
        return TypeSyntaxError(f"{message} (at character {at + 1} of {self.text!r})")
