"""At start, before anything is written: every existing Hudi table's index layout
(lakehouse_job.index_layout) held against the one this run asks for; a change that would
move the keys a table holds stops the job (IndexLayoutRefused)."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import SparkSession

from lakehouse_job.hadoop_files import hadoop_path, read_text
from lakehouse_job.hudi_options import MOR_BUCKETS, WrittenTable
from lakehouse_job.hudi_timeline import timeline_files
from lakehouse_job.index_layout import (
    COMMITS_SEARCHED,
    IndexLayout,
    IndexLayoutRefused,
    asked_layout,
    file_id,
    inferred_layout,
    recorded_layout,
    refusal,
    refusal_report,
)
from lakehouse_tables.schema_change import completed_instants


def file_group_ids(spark: SparkSession, path: str) -> set[str]:
    """The file group ids of the table's data files, in every partition."""
    fs, root = hadoop_path(spark, path)
    ids = set()
    files = fs.listFiles(root, True)
    while files.hasNext():
        found = files.next().getPath()
        if "/.hoodie/" in str(found):
            continue
        if (group := file_id(str(found.getName()))) is not None:
            ids.add(group)
    return ids


def stored_layout(
    spark: SparkSession, path: str, record_key: str
) -> tuple[IndexLayout, bool] | None:
    """(the layout of the table at `path`, whether a commit recorded it), or None when the
    table has no completed commit."""
    instants = completed_instants(timeline_files(spark, path) or [])
    if not instants:
        return None
    for instant in instants[:COMMITS_SEARCHED]:
        layout = recorded_layout(read_text(spark, f"{path}/.hoodie/{instant}"))
        if layout is not None:
            return layout, True
    inferred = inferred_layout(file_group_ids(spark, path), record_key, MOR_BUCKETS)
    return (inferred, False) if inferred is not None else None


def check_index_layouts(spark: SparkSession, tables: Iterable[WrittenTable]) -> None:
    """Raises IndexLayoutRefused, naming every table whose layout this run would break."""
    reasons = []
    for table in tables:
        asked = asked_layout(table.options)
        if not asked.is_bucket:
            continue  # a look-up index finds keys in any file group: nothing to read
        stored = stored_layout(spark, table.path, table.record_key)
        if stored is not None and (reason := refusal(table.name, stored[0], asked, stored[1])):
            reasons.append(reason)
    if reasons:
        raise IndexLayoutRefused(refusal_report(reasons))
