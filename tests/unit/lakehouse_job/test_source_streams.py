"""lakehouse_job.source_streams: --stream lists and the checkpoint's streams."""

import json

import pytest

from lakehouse_job.source_streams import (
    StreamListError,
    StreamsChanged,
    check_same_streams,
    offset_log_streams,
    parse_stream_list,
)

pytestmark = pytest.mark.unit


def offset_entry(*offsets: dict[str, object] | None) -> str:
    """An offset-log entry as Spark writes it: version, batch metadata, one line a source."""
    metadata = {"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": {}}
    lines = ["v1", json.dumps(metadata)]
    lines += ["-" if o is None else json.dumps(o) for o in offsets]
    return "\n".join(lines)


def test_a_stream_list_keeps_its_order() -> None:
    assert parse_stream_list("events") == ["events"]
    assert parse_stream_list("cdc.public.orders, cdc.public.customers") == [
        "cdc.public.orders",
        "cdc.public.customers",
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "names no stream"),
        (" , ", "names no stream"),
        ("a,a", "names a stream twice"),
        ("orders/raw", "is not a Kinesis stream name"),
        ("x" * 129, "is not a Kinesis stream name"),
    ],
)
def test_a_bad_stream_list_is_refused_with_the_reason(value: str, message: str) -> None:
    with pytest.raises(StreamListError, match=message):
        parse_stream_list(value)


def test_the_offset_log_names_each_sources_stream_in_order() -> None:
    entry = offset_entry(
        {"stream": "b", "streamIdentity": "x", "shards": {}},
        {"stream": "a", "shards": {}},
        None,
    )
    assert offset_log_streams(entry) == ["b", "a", None]


def test_something_else_than_an_offset_log_entry_is_an_error() -> None:
    with pytest.raises(ValueError, match="offset log"):
        offset_log_streams('{"stream": "a"}')


def test_the_same_streams_pass() -> None:
    check_same_streams("s3a://b/cp", ["a", "b"], ["a", "b"])


@pytest.mark.parametrize(
    "wanted",
    [["a", "b", "c"], ["b", "a"], ["a"]],
    ids=["added", "reordered", "removed"],
)
def test_changed_streams_are_refused_naming_both_lists(wanted: list[str]) -> None:
    with pytest.raises(StreamsChanged) as refused:
        check_same_streams("s3a://b/cp", ["a", "b"], wanted)
    message = str(refused.value)
    assert "s3a://b/cp" in message
    assert "[a, b]" in message and f"[{', '.join(wanted)}]" in message
    assert "new --checkpoint" in message
