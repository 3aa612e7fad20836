"""lakehouse_job.source_streams: --stream lists."""

import pytest

from lakehouse_job.source_streams import StreamListError, parse_stream_list

pytestmark = pytest.mark.unit


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
