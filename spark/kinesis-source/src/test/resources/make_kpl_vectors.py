"""Writes kpl-vectors.tsv: KPL aggregates made by PyPI's aws-kinesis-agg (the format KPL,
the Kinesis Agent and Fluent Bit write) and what de-aggregating each must give.

    .venv/bin/python spark/kinesis-source/src/test/resources/make_kpl_vectors.py

Each line: name, the Kinesis record's data (base64), then the expected user records as
JSON [[partition key, explicit hash key or null, data (base64)], ...] or "error:" and a
fragment of the reason. Re-running gives the same file (the inputs are fixed).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from aws_kinesis_agg.aggregator import RecordAggregator

OUT = Path(__file__).with_name("kpl-vectors.tsv")


def aggregate(records: list[tuple[str, str | None, bytes]]) -> bytes:
    aggregator = RecordAggregator()
    for key, hash_key, data in records:
        aggregator.add_user_record(key, data, explicit_hash_key=hash_key)
    _key, _hash, data = aggregator.clear_and_get().get_contents()
    return bytes(data)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def main() -> None:
    one = [("order-1", None, b'{"event_type":"orders","order_id":"o-1"}')]
    many = [(f"k{i % 3}", None, json.dumps({"i": i}).encode()) for i in range(25)]
    hashed = [
        ("a", "340282366920938463463374607431768211455", b"first"),
        ("b", None, b"second"),
        ("a", "0", b""),
    ]
    lines = []
    for name, records in (("one", one), ("many-shared-keys", many), ("explicit-hash-keys", hashed)):
        expected = [[k, h, b64(d)] for k, h, d in records]
        lines.append((name, b64(aggregate(records)), json.dumps(expected)))
    good = aggregate(many)
    flipped = bytearray(good)
    flipped[10] ^= 0x01
    lines.append(("md5-mismatch", b64(bytes(flipped)), "error:MD5 mismatch"))
    lines.append(("truncated-digest", b64(good[:-3]), "error:MD5 mismatch"))
    lines.append(("magic-only", b64(good[:4]), "error:truncated"))
    # A body cut short with its MD5 recomputed: the checksum passes, the protobuf does not.
    import hashlib

    body = good[4:-16][:-5]
    lines.append(
        ("truncated-body", b64(good[:4] + body + hashlib.md5(body).digest()), "error:protobuf")
    )
    # A user record pointing past the partition key table (field 1 of Record = index 7).
    record = bytes([0x08, 0x07, 0x1A, 0x01, 0x78])
    body = bytes([0x0A, 0x01, 0x6B, 0x1A, len(record)]) + record
    lines.append(
        (
            "key-index-out-of-range",
            b64(good[:4] + body + hashlib.md5(body).digest()),
            "error:partition key index 7 outside its table of 1",
        )
    )
    OUT.write_text("".join("\t".join(line) + "\n" for line in lines))
    print(f"wrote {len(lines)} vectors to {OUT}")


if __name__ == "__main__":
    main()
