"""`lakehouse schema diff`: what the job's next start would do to each table, read from S3.

The job plans the same way at start (lakehouse_job.schema_evolution); this reads the
stored state with boto3 instead of Spark, so it answers in a second with no JVM.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lakehouse_tables.declarations import TableType, load_tables
from lakehouse_tables.locations import s3_location
from lakehouse_tables.schema_change import (
    Change,
    StoredTable,
    commit_schema,
    completed_instants,
    parse_properties,
    plan_table,
    stored_table,
    table_type_changes,
)

TABLE_TYPES: tuple[TableType, ...] = ("COPY_ON_WRITE", "MERGE_ON_READ")


def split_s3_url(url: str) -> tuple[str, str]:
    """s3a://bucket/a/b or s3://bucket/a/b -> (bucket, "a/b")."""
    location = s3_location(url)
    if location is None:
        raise ValueError(f"not an S3 URL: {url!r} (expected s3a://bucket/path)")
    return location


def read_stored(s3: Any, warehouse: str, table: str) -> StoredTable | None:
    bucket, prefix = split_s3_url(warehouse)
    timeline = f"{prefix}/{table}/.hoodie/".lstrip("/")
    names = []
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=timeline, Delimiter="/"
    ):
        names += [obj["Key"][len(timeline) :] for obj in page.get("Contents", [])]
    if "hoodie.properties" not in names:
        return None

    def text(name: str) -> str:
        return s3.get_object(Bucket=bucket, Key=timeline + name)["Body"].read().decode()

    for instant in completed_instants(names):
        schema = commit_schema(text(instant))
        if schema is not None:
            return stored_table(table, parse_properties(text("hoodie.properties")), schema)
    return None


def diff(
    s3: Any,
    tables_path: Path,
    warehouse: str,
    say: Callable[[str], None],
) -> list[Change]:
    """Print every table's planned changes; returns the refused ones."""
    specs = load_tables(tables_path)
    refused: list[Change] = []
    say(f"{tables_path} against the tables in {warehouse}:")
    for spec in specs.values():
        stored = {t: read_stored(s3, warehouse, spec.table_name(t)) for t in TABLE_TYPES}
        existing = [t for t, table in stored.items() if table is not None]
        type_changes = table_type_changes(spec, existing, str(tables_path))
        entry_refused = [c for c in type_changes if not c.allowed]
        lines = [f"{'applied' if c.allowed else 'refused'}: {c.message}" for c in type_changes]
        for table_type in spec.table_types:
            plan = plan_table(spec, table_type, stored[table_type], str(tables_path))
            entry_refused += plan.refused
            for change in plan.changes:
                if change.kind == "new table":
                    lines.append(f"{plan.table}: new table, created by the first batch")
                else:
                    verdict = "applied" if change.allowed else "refused"
                    lines.append(f"{verdict}: {change.message}")
        say(f"  {spec.event_type}:")
        for line in lines or ["no change"]:
            say(f"    {line}")
        refused += entry_refused
    if refused:
        say(
            f"The job would refuse to start (exit 5) and write nothing: {len(refused)} "
            "refused change(s) above."
        )
    else:
        say("The job would start and apply the changes above.")
    return refused
