"""Split records into PutRecords calls within the Kinesis limits.

A PutRecords call takes at most 500 records and 5 MiB in total, where a record
counts its data plus its partition key; one record is at most 1 MiB likewise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

MiB = 1024 * 1024


class HasPayload(Protocol):
    @property
    def data(self) -> bytes: ...

    @property
    def partition_key(self) -> str: ...


T = TypeVar("T", bound=HasPayload)


@dataclass(frozen=True)
class BatchLimits:
    max_records: int = 500
    max_bytes: int = 5 * MiB
    max_record_bytes: int = 1 * MiB

    def __post_init__(self) -> None:
        if not 1 <= self.max_records <= 500:
            raise ValueError("max_records must be within 1..500")
        if not 1 <= self.max_record_bytes <= self.max_bytes <= 5 * MiB:
            raise ValueError("need 1 <= max_record_bytes <= max_bytes <= 5 MiB")


def record_size(rec: HasPayload) -> int:
    """Bytes a record counts against the limits: data + UTF-8 partition key."""
    return len(rec.data) + len(rec.partition_key.encode())


def split_batches(
    records: Iterable[T], limits: BatchLimits = BatchLimits()
) -> tuple[list[list[T]], list[T]]:
    """Greedy, order-preserving split into calls; also returns the unsendable
    records (bigger than one record may be), which the caller must count as failed."""
    batches: list[list[T]] = []
    too_big: list[T] = []
    cur: list[T] = []
    cur_bytes = 0
    for rec in records:
        size = record_size(rec)
        if size > limits.max_record_bytes:
            too_big.append(rec)
            continue
        if cur and (len(cur) >= limits.max_records or cur_bytes + size > limits.max_bytes):
            batches.append(cur)
            cur, cur_bytes = [], 0
        cur.append(rec)
        cur_bytes += size
    if cur:
        batches.append(cur)
    return batches, too_big
