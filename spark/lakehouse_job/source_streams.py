"""The Kinesis streams one job reads (`--stream a,b`).

They are read by one Kinesis source (spark/kinesis-source), whose offset holds each
stream's shard positions by the stream's name: a stream added to the list is read from its
trim horizon on the next start, one left out keeps its position, and one that does not
exist is reported while the others are read. So the list may change between runs of a
checkpoint; it only has to name valid streams.
"""

from __future__ import annotations

import re

_STREAM_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,128}$")


class StreamListError(ValueError):
    """A --stream value that names no valid list of streams."""


def parse_stream_list(value: str) -> list[str]:
    """`--stream a,b`: the names in the given order, each once."""
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
