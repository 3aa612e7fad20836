"""Files on the job's storage (s3a, or a local path) through Hadoop's FileSystem, with the
session's settings: the start-up checks and the redrive read and list them this way."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession


def hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """(Hadoop's FileSystem of `path` with the job's settings, its Path): py4j objects."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    found = jvm.org.apache.hadoop.fs.Path(path)
    return found.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), found


def read_text(spark: SparkSession, path: str) -> str:
    """The file at `path`, as UTF-8 text."""
    fs, file = hadoop_path(spark, path)
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a live session has its gateway
    stream = fs.open(file)
    try:
        return str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()
