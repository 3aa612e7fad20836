"""Hudi tables whose creation a crash cut short.

Hudi creates a table by making its `.hoodie` folder and then writing
`.hoodie/hoodie.properties`. A job killed in between (it writes several tables side by
side, so a crash anywhere can land there) leaves a folder every later write fails on
("Could not load Hoodie properties"), and the restarted job would fail forever. Such a
table has never committed anything, so what it holds is the debris of a write that the
replayed batch writes again: it is removed at start, before any write. A table without
properties that has commits is not touched: that is damage to look at, not debris.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pyspark.sql import SparkSession

from lakehouse_job.hudi_timeline import has_commit, timeline_files

log = logging.getLogger(__name__)

PROPERTIES = ("hoodie.properties", "hoodie.properties.backup")


class DamagedTableError(RuntimeError):
    pass


def is_unfinished(timeline_files: Iterable[str]) -> bool:
    """Given the names in a table's `.hoodie` folder: created part-way, never committed?
    Raises DamagedTableError for a table with commits but no properties."""
    names = set(timeline_files)
    if names & set(PROPERTIES):
        return False
    if has_commit(names):
        raise DamagedTableError("has commits but no hoodie.properties (nor its backup)")
    return True


def clear_unfinished_tables(spark: SparkSession, paths: Iterable[str]) -> list[str]:
    """Remove each table under `paths` whose creation was cut short; returns those removed."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    removed = []
    for path in paths:
        names = timeline_files(spark, path)
        if names is None:
            continue
        try:
            unfinished = is_unfinished(names)
        except DamagedTableError as error:
            raise DamagedTableError(
                f"Hudi table {path} {error}: it cannot be read or written. Restore "
                f"{path}/.hoodie/hoodie.properties from a backup, or remove the table (and "
                "the job's checkpoint, so that it is rebuilt from the stream)."
            ) from None
        if unfinished:
            log.warning(
                "Hudi table %s was being created when a run ended (no hoodie.properties, "
                "no commit): removing it so that the replayed batch creates it again",
                path,
            )
            table = jvm.org.apache.hadoop.fs.Path(path)
            table.getFileSystem(conf).delete(table, True)
            removed.append(path)
    return removed
