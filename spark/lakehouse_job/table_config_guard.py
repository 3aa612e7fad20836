"""At start, before anything is written: the settings Hudi fixed when it created each
existing table (lakehouse_job.table_config) held against the options this run writes it
with; a difference Hudi would refuse at the first write stops the job (TableConfigRefused)
instead of failing every batch of a restarted job."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import SparkSession

from lakehouse_job.hadoop_files import hadoop_path
from lakehouse_job.hudi_options import WrittenTable
from lakehouse_job.schema_evolution import properties_path, read_properties
from lakehouse_job.table_config import (
    PRECOMBINE_OPTION,
    RECORD_KEY_OPTION,
    Conflict,
    TableConfigRefused,
    conflicts,
    refusal,
    refusal_report,
)


def stored_properties(spark: SparkSession, path: str) -> dict[str, str] | None:
    """The table's hoodie.properties, or None when there is no table at `path`."""
    fs, file = hadoop_path(spark, properties_path(path))
    return read_properties(spark, path) if fs.exists(file) else None


def _declared(table: WrittenTable, conflict: Conflict) -> bool:
    """A conflict the tables file's declaration asked for: a changed record key or ordering
    field is lakehouse_job.schema_evolution's to judge and report."""
    if table.spec is None:
        return False
    declared = {RECORD_KEY_OPTION: table.spec.record_key, PRECOMBINE_OPTION: table.spec.precombine}
    return declared.get(conflict.option) == conflict.asked


def check_table_configs(spark: SparkSession, tables: Iterable[WrittenTable]) -> None:
    """Raises TableConfigRefused, naming every existing table and each setting Hudi would
    refuse."""
    reasons = []
    for table in tables:
        stored = stored_properties(spark, table.path)
        if stored is None:
            continue
        found = [c for c in conflicts(table.options, stored) if not _declared(table, c)]
        if reason := refusal(table.name, found):
            reasons.append(reason)
    if reasons:
        raise TableConfigRefused(refusal_report(reasons))
