"""A micro-batch's transformation as stages whose column expressions are built once per
Spark session and reused by every batch.

Building an expression costs a py4j round trip per function (F.col, F.when, ...), and each
F.* call first resolves Spark's `functions` class by trying PySpark's wildcard imports in
turn: a failed class lookup over every jar of the classpath each. Built per batch, the
job's classification, outputs and dedupe for the four shipped types were thousands of such
calls, a second or more of the driver whatever the batch's size; built once, a batch makes
only the projections' own calls. A Column is an immutable,
unresolved expression tree, so the same objects serve each batch's new plan.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar
from weakref import WeakKeyDictionary

from pyspark import SparkContext
from pyspark.sql import Column, DataFrame

R = TypeVar("R")


# eq=False: comparing Columns builds an expression instead of answering.
@dataclass(frozen=True, eq=False)
class Stage:
    """One step of a frame's transformation: an optional filter, then a projection."""

    columns: tuple[Column | str, ...]
    where: Column | None = None

    def __call__(self, frame: DataFrame) -> DataFrame:
        if self.where is not None:
            frame = frame.where(self.where)
        return frame.select(*self.columns)


def apply(frame: DataFrame, stages: tuple[Stage, ...]) -> DataFrame:
    for stage in stages:
        frame = stage(frame)
    return frame


# SparkContext -> (builder, args) -> result. A new session (tests stop and start them) has
# a new context, whose JVM the old expressions do not belong to.
_BUILT: WeakKeyDictionary[SparkContext, dict[tuple[Hashable, ...], object]] = WeakKeyDictionary()
_LOCK = threading.Lock()


def per_session(builder: Callable[..., R]) -> Callable[..., R]:
    """`builder`'s result for the same (hashable) arguments built once per Spark session.
    `builder` must be a pure function of its arguments returning column expressions."""

    @functools.wraps(builder)
    def built(*args: Hashable) -> R:
        context = SparkContext._active_spark_context
        if context is None:  # no session: F.* will say so
            return builder(*args)
        key = (builder, *args)
        with _LOCK:
            cache = _BUILT.setdefault(context, {})
            if key in cache:
                return cache[key]  # type: ignore[return-value]
        result = builder(*args)
        with _LOCK:
            cache.setdefault(key, result)
        return result

    return built
