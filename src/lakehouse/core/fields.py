"""Options built from another object's same-named attributes (an argparse namespace, a
wider options dataclass), instead of copied field by field."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def same_named(cls: type[T], source: object, **overrides: Any) -> T:
    """A `cls` (a dataclass) whose every field `source` has an attribute of the same name
    takes that value, `overrides` replace some, and the rest keep their defaults."""
    values = {
        f.name: getattr(source, f.name)
        for f in fields(cls)  # type: ignore[arg-type]
        if f.init and hasattr(source, f.name)
    }
    return cls(**{**values, **overrides})
