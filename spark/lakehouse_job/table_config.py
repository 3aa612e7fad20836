"""What Hudi fixed at a table's first write, held against the options a run writes it with.

Hudi keeps a table's key, ordering field, key generator, partition fields and a few more in
`.hoodie/hoodie.properties` and refuses, at every write, options that say otherwise
(HoodieWriterUtils.validateTableConfig, 0.15: "Config conflict(key current value existing
value)"). Met at the first write of a streaming job, that refusal fails the batch, and the
job is restarted into the same failure: `--profile baseline` on tables the fast profile
wrote (date partitions, another key generator), or a `--hudi-option` that names another
record key. The job's start refuses them instead, all at once, before anything is written
(lakehouse_job.table_config_guard).

The rules are Hudi's: an option stored under its own name must have the stored value
(compared ignoring case, as Hudi's resolver does); the record key, ordering field and key
generator, stored under other names, must be equal; the partition fields are compared as
field names (a CustomKeyGenerator's "field:TYPE" stores "field").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

PARTITION_FIELD_OPTION: Final = "hoodie.datasource.write.partitionpath.field"
RECORD_KEY_OPTION: Final = "hoodie.datasource.write.recordkey.field"
PRECOMBINE_OPTION: Final = "hoodie.datasource.write.precombine.field"
# A write option whose value Hudi stores in hoodie.properties under another name.
STORED_AS: Final = {
    RECORD_KEY_OPTION: "hoodie.table.recordkey.fields",
    PRECOMBINE_OPTION: "hoodie.table.precombine.field",
    "hoodie.datasource.write.keygenerator.class": "hoodie.table.keygenerator.class",
    PARTITION_FIELD_OPTION: "hoodie.table.partition.fields",
}


class TableConfigRefused(RuntimeError):
    """A run asked for table settings that Hudi fixed when the table was created."""


@dataclass(frozen=True)
class Conflict:
    option: str
    asked: str
    stored: str
    stored_as: str

    def __str__(self) -> str:
        where = "" if self.stored_as == self.option else f" (stored as {self.stored_as})"
        return f"{self.option}: {self.asked!r}, created with {self.stored!r}{where}"


def _partition_fields(value: str) -> list[str]:
    return [field.split(":")[0].strip() for field in value.split(",") if field.strip()]


def _same(option: str, asked: str, stored: str) -> bool:
    if option == PARTITION_FIELD_OPTION:
        return _partition_fields(asked) == _partition_fields(stored)
    if option in STORED_AS:
        return asked == stored
    return asked.lower() == stored.lower()


def conflicts(options: Mapping[str, str], stored: Mapping[str, str]) -> list[Conflict]:
    """The options Hudi would refuse to write a table with the `stored` properties."""
    found = []
    for option, asked in options.items():
        key = STORED_AS.get(option, option)
        kept = stored.get(key)
        if kept is not None and not _same(option, asked, kept):
            found.append(Conflict(option, asked, kept, key))
    return found


def refusal(table: str, found: Iterable[Conflict]) -> str | None:
    listed = "; ".join(str(conflict) for conflict in found)
    if not listed:
        return None
    return (
        f"{table}: {listed}. Hudi fixes these when it creates a table and fails every write "
        "that asks otherwise. Start with the table's settings (drop the --hudi-option or "
        "--profile that changes them), or write a new table (another --warehouse)"
    )


def refusal_report(reasons: Iterable[str]) -> str:
    return (
        "this run's table settings differ from those the existing tables were created with; "
        "nothing was written (the tables, the metastore and the checkpoint are as they "
        "were):\n  - " + "\n  - ".join(reasons)
    )
