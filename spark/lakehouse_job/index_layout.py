"""The index a Hudi table's file groups were laid out by, held against the one this run asks
for, at start, before anything is written.

A bucket index finds a key's file group by hashing it (hash of the hash field modulo the
bucket count) and names each file group after its bucket. Hudi keeps neither the index nor
the bucket count in the table's properties and checks neither: a run that asks for another
bucket count or hash field sends the keys already stored to other file groups, so each
updated key is then stored twice (measured: a Merge-on-Read table written with 4 buckets,
then with `--hudi-option hoodie.bucket.index.num.buckets=8`, held 77 rows for 62 keys), and
a bucket index over file groups that another index created fails on their names.

So every write records its index in its commit's metadata (LAYOUT_KEY: Hudi copies write
options named with its commit-metadata prefix, "_", into the commit), and a start refuses a
change that would move keys (lakehouse_job.index_guard). Allowed: the same bucket layout,
and any index that looks keys up (Bloom, simple), which finds a key in whatever file group
holds it. A table written before the job recorded its index has its layout read from its
file names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

LAYOUT_KEY: Final = "_lakehouse.index.layout"
BUCKETS_OPTION: Final = "hoodie.bucket.index.num.buckets"
# Hudi's defaults (0.15) for what a write leaves unset.
DEFAULT_INDEX: Final = "SIMPLE"
DEFAULT_BUCKET_ENGINE: Final = "SIMPLE"
DEFAULT_BUCKETS: Final = 256
# The newest commits searched for a recorded layout: a compaction's commit records none, and
# a table older than the record has none at all (its file names tell).
COMMITS_SEARCHED: Final = 10
# A bucket's file group id: the bucket number in 8 digits, then the rest of a UUID.
_BUCKET_FILE_ID: Final = re.compile(r"^(\d{8})-")


class IndexLayoutRefused(RuntimeError):
    """A run asked for an index that would move the keys an existing table holds."""


@dataclass(frozen=True)
class IndexLayout:
    index: str  # hoodie.index.type; "other" when only known not to be a bucket index
    engine: str = ""  # the rest only for a bucket index
    buckets: int = 0
    hash_field: str = ""

    @property
    def is_bucket(self) -> bool:
        return self.index == "BUCKET"

    def __str__(self) -> str:
        if not self.is_bucket:
            return f"index={self.index}"
        return (
            f"index=BUCKET engine={self.engine} buckets={self.buckets} hash_field={self.hash_field}"
        )

    @classmethod
    def parse(cls, text: str) -> IndexLayout | None:
        fields = dict(part.split("=", 1) for part in text.split() if "=" in part)
        if "index" not in fields:
            return None
        if fields["index"] != "BUCKET":
            return cls(fields["index"])
        return cls(
            "BUCKET",
            fields.get("engine", ""),
            int(fields.get("buckets", 0)),
            fields.get("hash_field", ""),
        )


def asked_layout(options: Mapping[str, str]) -> IndexLayout:
    """The layout a write with these Hudi options lays its new file groups out by."""
    index = options.get("hoodie.index.type", DEFAULT_INDEX).upper()
    if index != "BUCKET":
        return IndexLayout(index)
    return IndexLayout(
        "BUCKET",
        options.get("hoodie.index.bucket.engine", DEFAULT_BUCKET_ENGINE).upper(),
        _bucket_count(options.get(BUCKETS_OPTION, str(DEFAULT_BUCKETS))),
        options.get(
            "hoodie.bucket.index.hash.field",
            options.get("hoodie.datasource.write.recordkey.field", ""),
        ),
    )


def _bucket_count(value: str) -> int:
    if not value.strip().isdigit() or int(value) < 1:
        raise IndexLayoutRefused(
            f"{BUCKETS_OPTION}={value!r} is not a bucket count: give a whole number of 1 or "
            "more (--hudi-option), or leave it out"
        )
    return int(value)


def with_layout(options: dict[str, str]) -> dict[str, str]:
    """`options` with the layout they ask for recorded in the commit's metadata."""
    options[LAYOUT_KEY] = str(asked_layout(options))
    return options


def recorded_layout(commit_text: str) -> IndexLayout | None:
    """The layout a commit's metadata records, if any."""
    try:
        metadata = json.loads(commit_text)
    except ValueError:
        return None
    text = (metadata.get("extraMetadata") or {}).get(LAYOUT_KEY)
    return IndexLayout.parse(text) if text else None


def file_id(file_name: str) -> str | None:
    """A data file's file group id: `<id>_<token>_<instant>.parquet` or a log file
    `.<id>_<instant>.log.<version>_<token>`; None for anything else."""
    name = file_name[1:] if file_name.startswith(".") else file_name
    if "_" not in name or not (name.endswith(".parquet") or ".log." in name):
        return None
    return name.split("_", 1)[0]


def inferred_layout(
    file_ids: Iterable[str], record_key: str, default_buckets: int
) -> IndexLayout | None:
    """A layout from file group ids alone (a table written before layouts were recorded):
    bucket-named ids are the job's bucket index, hashed on the record key, with its
    default bucket count or as many buckets as the ids show; None without file groups."""
    ids = set(file_ids)
    if not ids:
        return None
    buckets = [m[1] for i in ids if (m := _BUCKET_FILE_ID.match(i))]
    if len(buckets) < len(ids):
        return IndexLayout("other")
    count = max(default_buckets, max(int(b) for b in buckets) + 1)
    return IndexLayout("BUCKET", DEFAULT_BUCKET_ENGINE, count, record_key)


def refusal(table: str, stored: IndexLayout, asked: IndexLayout, recorded: bool) -> str | None:
    """Why `asked` cannot write a table laid out by `stored`; None when it can."""
    if not asked.is_bucket or stored == asked:
        return None
    how = "" if recorded else " (read from its file names: written before layouts were recorded)"
    if not stored.is_bucket:
        return (
            f"{table}: its file groups were laid out by another index ({stored}){how}; a "
            f"bucket index ({asked}) cannot find the keys they hold. Keep the table's "
            "hoodie.index.type, or write a new table (another --warehouse)"
        )
    return (
        f"{table}: laid out as {stored}{how}; this run asks for {asked}, which would hash the "
        "keys it holds to other file groups and store each updated key twice. Keep the "
        "table's bucket settings (drop the --hudi-option that changes them), or write a new "
        "table (another --warehouse)"
    )


def refusal_report(reasons: Iterable[str]) -> str:
    return (
        "the index this run asks for cannot write the existing tables; nothing was written "
        "(the tables, the metastore and the checkpoint are as they were):\n  - "
        + "\n  - ".join(reasons)
    )
