"""The Kinesis streams one job reads, and the check that its checkpoint read the same ones.

A job reads several streams (Debezium writes one per captured table) as one Kinesis source
per stream, unioned: Spark keeps each source's offsets in the checkpoint by its position
in the query. A checkpoint therefore belongs to one ordered list of streams, and Spark
stops a query whose sources differ from its checkpoint's with an assertion that names
neither. The job checks first, from the newest entry of the checkpoint's offset log
(each Kinesis offset names its stream), and refuses with what changed and what to do,
before anything is read or written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession

_STREAM_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,128}$")


class StreamListError(ValueError):
    """A --stream value that names no valid list of streams."""


class StreamsChanged(Exception):
    """The checkpoint was written for other streams than the job is asked to read."""


def parse_stream_list(value: str) -> list[str]:
    """`--stream a,b`: the names in the given order, each once (the order is the sources'
    order in the query, which the checkpoint keeps)."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise StreamListError(f"--stream {value!r} names no stream")
    bad = [name for name in names if not _STREAM_NAME.match(name)]
    if bad:
        raise StreamListError(
            f"--stream: {', '.join(map(repr, bad))} is not a Kinesis stream name "
            "([a-zA-Z0-9_.-], at most 128 characters)"
        )
    if len(set(names)) != len(names):
        raise StreamListError(f"--stream {value!r} names a stream twice")
    return names


def offset_log_streams(entry: str) -> list[str | None]:
    """The stream of each source in one offset-log entry (Spark's OffsetSeq: a version
    line, the batch metadata, then one line per source); None for a source whose offset
    names no stream."""
    lines = entry.splitlines()
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"not a Structured Streaming offset log entry: {entry[:80]!r}")
    streams: list[str | None] = []
    for line in lines[2:]:
        if line.strip() in ("", "-"):  # a source with no offset yet
            streams.append(None)
            continue
        try:
            offset = json.loads(line)
        except json.JSONDecodeError:
            streams.append(None)
            continue
        stream = offset.get("stream") if isinstance(offset, dict) else None
        streams.append(stream if isinstance(stream, str) else None)
    return streams


def check_same_streams(
    checkpoint: str, recorded: Sequence[str | None], wanted: Sequence[str]
) -> None:
    """Raises StreamsChanged unless `wanted` is what the checkpoint's sources read."""
    if list(recorded) == list(wanted):
        return
    before = ", ".join(s or "?" for s in recorded)
    raise StreamsChanged(
        f"the checkpoint {checkpoint} reads the stream(s) [{before}] and the job was asked "
        f"to read [{', '.join(wanted)}]. A checkpoint keeps each stream's position by its "
        "place in the list, so its streams cannot change: give --stream the checkpoint's "
        "list in that order, or start from a new --checkpoint (it reads every stream from "
        "--starting-position; rows already in the tables are upserted again, unchanged, "
        "while the raw JSON copy gets those records a second time). `lakehouse run` names "
        "its checkpoint after the streams it reads, so a changed list starts a new one."
    )


def checkpoint_streams(spark: SparkSession, checkpoint: str) -> list[str | None] | None:
    """The streams of the checkpoint's newest offset-log entry; None before its first."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    offsets = jvm.org.apache.hadoop.fs.Path(f"{checkpoint.rstrip('/')}/offsets")
    fs = offsets.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(offsets):
        return None
    batches = [
        int(status.getPath().getName())
        for status in fs.listStatus(offsets)
        if status.getPath().getName().isdigit()
    ]
    if not batches:
        return None
    newest = jvm.org.apache.hadoop.fs.Path(offsets, str(max(batches)))
    stream = fs.open(newest)
    try:
        text = str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()
    return offset_log_streams(text)


def union_all(frames: Sequence[DataFrame]) -> DataFrame:
    """The streams' rows as one DataFrame, sources in the given order."""
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union
