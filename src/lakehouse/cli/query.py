"""`lakehouse sql|spark-sql|notebook`: the tables queried from Trino, Spark SQL or JupyterLab."""

from __future__ import annotations

import argparse
import subprocess

from lakehouse.cli.common import (
    Command,
    say,
)
from lakehouse.core.config import Settings
from lakehouse.local import shells


def sql(settings: Settings, args: argparse.Namespace) -> int:
    """Trino's CLI on the local stack (catalog hive, the lakehouse database)."""
    extra = [a for a in args.shell_args if a != "--"]
    return subprocess.call(shells.trino_cli_command(settings, extra))


def spark_sql(settings: Settings, args: argparse.Namespace) -> int:
    """Spark SQL with Hudi on the local stack's metastore and S3."""
    extra = [a for a in args.shell_args if a != "--"]
    return subprocess.call(
        shells.spark_sql_command(settings, extra), env=shells.spark_env(settings)
    )


def notebook(settings: Settings, args: argparse.Namespace) -> int:
    """JupyterLab over notebooks/ against the local stack (started first if needed)."""
    return shells.run_notebook_server(settings, say, args.port)


def _shell_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell_args", nargs=argparse.REMAINDER)


def _notebook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=shells.NOTEBOOK_PORT)


COMMANDS = {
    "sql": Command(
        sql,
        "Trino's CLI on the local stack (extra CLI options after --)",
        "query",
        "lakehouse sql\nlakehouse sql -- --execute 'SELECT count(*) FROM orders'",
        _shell_arguments,
    ),
    "spark-sql": Command(
        spark_sql,
        "Spark SQL with Hudi on the local stack (_rt, time travel)",
        "query",
        "lakehouse spark-sql\nlakehouse spark-sql -- -e 'SELECT count(*) FROM hudi_orders_mor_rt'",
        _shell_arguments,
    ),
    "notebook": Command(
        notebook,
        "JupyterLab on 127.0.0.1:8888 over notebooks/",
        "query",
        "lakehouse notebook",
        _notebook_arguments,
    ),
}
