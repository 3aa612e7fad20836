"""The sinks a checkpoint's committed batches went to, held against this run's, at start,
before anything is written.

A checkpoint's offsets say which records are done, wherever they were written: a run on
the same checkpoint with another --warehouse (or --raw) writes only what comes after them,
and its tables would silently lack every record committed before. So a checkpoint keeps
the sinks it commits to (SINKS_FILE, inside it; Spark ignores other files there), and a
start that asks for others is refused (exit 5) with what to do instead. The file is
(re)written at a start that passed every check while the checkpoint has no committed
batch, and at the first start of a checkpoint older than the file (its sinks are taken to
be this run's: there is nothing else to go by).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass
from typing import Final

from pyspark.sql import SparkSession

from lakehouse_job.hadoop_files import hadoop_path, read_text

log = logging.getLogger(__name__)

SINKS_FILE: Final = "lakehouse-sinks.json"
_SCHEME: Final = re.compile(r"^s3[an]?://")


def _normalized(url: str) -> str:
    """s3://, s3a:// and s3n:// name one bucket; a trailing slash changes nothing."""
    return _SCHEME.sub("s3://", url).rstrip("/")


class CheckpointSinksRefused(RuntimeError):
    """This run's sinks are not the ones the checkpoint's committed batches went to."""


@dataclass(frozen=True)
class CheckpointSinks:
    warehouse: str
    raw: str

    def normalized(self) -> CheckpointSinks:
        return CheckpointSinks(_normalized(self.warehouse), _normalized(self.raw))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CheckpointSinks:
        fields = json.loads(text)
        return cls(warehouse=str(fields["warehouse"]), raw=str(fields["raw"]))


def refusal(checkpoint: str, recorded: CheckpointSinks, asked: CheckpointSinks) -> str | None:
    """Why a run asking for `asked` cannot go on from a checkpoint committed to `recorded`."""
    if recorded.normalized() == asked.normalized():
        return None
    moved = [
        f"{what} {old} -> {new}"
        for what, old, new in (
            ("--warehouse", recorded.warehouse, asked.warehouse),
            ("--raw", recorded.raw, asked.raw),
        )
        if _normalized(old) != _normalized(new)
    ]
    return (
        f"the checkpoint {checkpoint} has committed batches to other sinks "
        f"({'; '.join(moved)}); nothing was written: going on from it, the new ones would lack "
        "every record it committed. Use a new --checkpoint (the streams are read again from "
        "their trim horizon), or the sinks it belongs to"
    )


# --- the checkpoint's files (Spark's file system) ----------------------------------------


def has_committed_batch(spark: SparkSession, checkpoint: str) -> bool:
    """Has a batch of this checkpoint been committed (a numbered file under commits/)?"""
    fs, commits = hadoop_path(spark, f"{checkpoint.rstrip('/')}/commits")
    if not fs.exists(commits):
        return False
    return any(str(s.getPath().getName()).isdigit() for s in fs.listStatus(commits))


def recorded_sinks(spark: SparkSession, checkpoint: str) -> CheckpointSinks | None:
    """The sinks the checkpoint records; None without a record, or with one that cannot be
    read (a local file cut short by a crash), which the start then writes again."""
    path = f"{checkpoint.rstrip('/')}/{SINKS_FILE}"
    fs, file = hadoop_path(spark, path)
    if not fs.exists(file):
        return None
    try:
        return CheckpointSinks.from_json(read_text(spark, path))
    except (ValueError, KeyError, TypeError) as unreadable:
        log.warning("%s cannot be read (%s): this start's sinks replace it", path, unreadable)
        return None


def check_checkpoint_sinks(spark: SparkSession, checkpoint: str, asked: CheckpointSinks) -> None:
    """Raises CheckpointSinksRefused when the checkpoint committed batches to other sinks."""
    recorded = recorded_sinks(spark, checkpoint)
    if recorded is None or not has_committed_batch(spark, checkpoint):
        return
    if reason := refusal(checkpoint, recorded, asked):
        raise CheckpointSinksRefused(reason)


def record_checkpoint_sinks(spark: SparkSession, checkpoint: str, asked: CheckpointSinks) -> None:
    """Writes this run's sinks into the checkpoint unless it holds them already (call once
    every check of the start has passed)."""
    recorded = recorded_sinks(spark, checkpoint)
    if recorded is not None and recorded.normalized() == asked.normalized():
        return
    if recorded is not None and has_committed_batch(spark, checkpoint):
        return  # check_checkpoint_sinks refused this start already
    fs, file = hadoop_path(spark, f"{checkpoint.rstrip('/')}/{SINKS_FILE}")
    out = fs.create(file, True)
    try:
        out.write(bytearray(asked.to_json().encode()))
    finally:
        out.close()
