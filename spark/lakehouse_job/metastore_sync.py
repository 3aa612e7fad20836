"""Which commits also update the metastore (Hive sync): a table's first of each run, and
any that brings a partition not synced before."""

from __future__ import annotations

from collections.abc import Iterable


class MetastoreSync:
    """Decides which commits also update the metastore.

    Hive sync is slow (schema and partitions read back from the metastore and the
    timeline, for every table), and only a new table, a new schema or a new partition
    changes what it writes. So a table is synced on its first commit of each run (which
    also catches up anything a crashed run committed but never synced) and when a commit
    brings a partition not synced before; unpartitioned tables only on the first.
    Profile 'baseline' syncs every commit, as the first release did.
    """

    def __init__(self, every_commit: bool = False) -> None:
        self.every_commit = every_commit
        self._synced: dict[str, set[str]] = {}

    def needed(self, table: str, partitions: Iterable[str] = ()) -> bool:
        if self.every_commit or table not in self._synced:
            return True
        return not set(partitions) <= self._synced[table]

    def done(self, table: str, partitions: Iterable[str] = ()) -> None:
        self._synced.setdefault(table, set()).update(partitions)
