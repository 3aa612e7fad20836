"""Drop databases and every table in them from the metastore (a benchmark run's, once it is
measured: lakehouse.bench.leftovers). Through Spark because the tables are Hudi's: Trino's
Hive catalog refuses to drop them ("Cannot query Hudi table") and its Hudi catalog is
read-only. The tables are external, so their files are left to the caller."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pyspark.sql import SparkSession


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lakehouse_job.bench.drop_databases")
    parser.add_argument("--master", default="local[1]")
    parser.add_argument("databases", nargs="+")
    args = parser.parse_args(argv)
    spark = (
        SparkSession.builder.master(args.master)
        .appName("lakehouse-drop-databases")
        .config("spark.ui.enabled", "false")
        .enableHiveSupport()
        .getOrCreate()
    )
    try:
        for database in args.databases:
            spark.sql(f"DROP DATABASE IF EXISTS `{database}` CASCADE")
            print(f"dropped {database}", flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
