"""A Hudi table's timeline as the job reads it: the names in its `.hoodie` folder, and
whether a write has completed."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pyspark.sql import SparkSession

from lakehouse_job.hadoop_files import hadoop_path

# Completed write instants on the timeline, e.g. 20261123074753729.deltacommit.
_COMPLETED = re.compile(r"^\d+\.(commit|deltacommit|replacecommit)$")


def has_commit(timeline_files: Iterable[str]) -> bool:
    """Given the names in a table's `.hoodie` folder: has a write completed?"""
    return any(_COMPLETED.match(name) for name in timeline_files)


def timeline_files(spark: SparkSession, path: str) -> list[str] | None:
    """The names in the table's `.hoodie` folder; None when there is no such folder."""
    fs, timeline = hadoop_path(spark, f"{path}/.hoodie")
    if not fs.exists(timeline):
        return None
    return [status.getPath().getName() for status in fs.listStatus(timeline)]
