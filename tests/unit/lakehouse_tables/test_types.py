"""lakehouse_tables.types: parsing, rendering and the errors of declared type strings."""

from __future__ import annotations

import pytest

from lakehouse_tables.types import (
    Array,
    Decimal,
    Map,
    Primitive,
    Struct,
    TypeSyntaxError,
    children,
    is_nested,
    parse_type,
)

pytestmark = pytest.mark.unit

ITEMS = Array(
    Struct(
        (
            ("sku", Primitive.STRING),
            ("qty", Primitive.LONG),
            ("price", Decimal(10, 2)),
        )
    )
)


@pytest.mark.parametrize("name", [p.value for p in Primitive])
def test_primitives_parse_to_themselves_and_equal_their_name(name: str) -> None:
    parsed = parse_type(name)

    assert parsed == Primitive(name)
    assert parsed == name  # existing code compares schema values with type names
    assert str(parsed) == name
    assert not is_nested(parsed)


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("decimal(12,2)", Decimal(12, 2), "decimal(12,2)"),
        ("decimal( 38 , 0 )", Decimal(38, 0), "decimal(38,0)"),
        ("decimal(1,1)", Decimal(1, 1), "decimal(1,1)"),
        ("array<long>", Array(Primitive.LONG), "array<long>"),
        ("map<string, date>", Map(Primitive.DATE), "map<string,date>"),
        (
            "array<struct<sku:string, qty:long, price:decimal(10, 2)>>",
            ITEMS,
            "array<struct<sku:string,qty:long,price:decimal(10,2)>>",
        ),
        (
            "map<string,array<map<string,timestamp>>>",
            Map(Array(Map(Primitive.TIMESTAMP))),
            "map<string,array<map<string,timestamp>>>",
        ),
        (
            " struct< a : struct<b:boolean> > ",
            Struct((("a", Struct((("b", Primitive.BOOLEAN),))),)),
            "struct<a:struct<b:boolean>>",
        ),
    ],
)
def test_parse_and_render_canonically(text: str, expected: object, canonical: str) -> None:
    parsed = parse_type(text)

    assert parsed == expected
    assert str(parsed) == canonical
    assert parse_type(canonical) == parsed  # the canonical form reads back


def test_types_are_immutable_and_hashable() -> None:
    with pytest.raises(AttributeError):
        ITEMS.element = Primitive.STRING  # type: ignore[misc]
    assert hash(parse_type("array<struct<sku:string,qty:long,price:decimal(10,2)>>")) == hash(ITEMS)
    assert Decimal(12, 2) != Decimal(12, 3)
    assert Decimal(12, 2).integer_digits == 10


def test_children_name_each_step() -> None:
    assert list(children(ITEMS)) == [("[]", ITEMS.element)]
    assert [step for step, _ in children(ITEMS.element)] == [".sku", ".qty", ".price"]
    assert list(children(Map(Primitive.STRING))) == [("{}", Primitive.STRING)]
    assert list(children(Decimal(3, 1))) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("decimal(0,0)", "decimal precision 0 is outside 1..38"),
        ("decimal(39,2)", "decimal precision 39 is outside 1..38"),
        ("decimal(5,6)", "decimal scale 6 is outside 0..5"),
        ("decimal(12)", "expected ',', found ')'"),
        ("decimal(1.5,1)", "expected ',', found '.'"),
        ("decimal(-1,0)", "expected the decimal precision (a whole number), found '-'"),
        ("Decimal(12,2)", "unknown type 'Decimal' (types are lower-case)"),
        ("int", "unknown type 'int'"),
        ("varchar", "unknown type 'varchar'"),
        ("array<string", "ends where '>' was expected"),
        ("array<>", "expected a type, found '>'"),
        ("map<long,string>", "the key type must be string, found 'long'"),
        ("map<string>", "expected ',', found '>'"),
        ("struct<>", "expected a struct field name, found '>'"),
        ("struct<a:string,a:long>", "struct field 'a' is declared twice"),
        ("struct<Sku:string>", "struct field name 'Sku' is not a lower-case identifier"),
        ("struct<a string>", "expected ':', found 'string'"),
        ("struct<a:string;b:long>", "expected ',' or '>' in struct, found ';'"),
        ("string string", "unexpected 'string' after the type"),
        ("", "ends where a type was expected"),
    ],
)
def test_errors_say_what_is_wrong_and_where(text: str, message: str) -> None:
    with pytest.raises(TypeSyntaxError) as info:
        parse_type(text)

    assert message in str(info.value)
    assert f"of {text!r}" in str(info.value)


@pytest.mark.parametrize("value", [None, 5, ["string"], {"a": "string"}])
def test_a_type_must_be_text(value: object) -> None:
    with pytest.raises(TypeSyntaxError, match="a type must be text"):
        parse_type(value)
