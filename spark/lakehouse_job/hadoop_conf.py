"""YARN's default settings taken out of the Hadoop configuration of a job not run on YARN.

Hudi serializes Spark's whole Hadoop configuration into its tasks, and Hadoop writes each
property with its source through a gzip stream of its own (Configuration.write): about 970
properties, 64 ms to write and read back once (measured in the job's JVM). 438 of them
are yarn-default.xml's, which Hadoop's MapReduce classes load into every configuration and
nothing reads outside YARN. Without them, a Copy-on-Write and a Merge-on-Read upsert of
4,000 orders took 4.40 and 5.68 CPU-s instead of 5.22 and 6.26 (two runs, medians of 12
rounds interleaved in one JVM; docs/performance.md, Drain capacity).
"""

from __future__ import annotations

import logging

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

YARN_DEFAULTS = "yarn-default.xml"


class YarnDefaults:
    """The properties of Spark's Hadoop configuration whose only source is YARN's defaults
    file, dropped while the job does not run on YARN."""

    def __init__(self, spark: SparkSession) -> None:
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()
        on_yarn = (spark.sparkContext.master or "").startswith("yarn")
        self.keys: list[str] = [] if on_yarn else _only_from(self.conf, YARN_DEFAULTS)
        self.size_after_drop: int | None = None

    def drop(self) -> int:
        """Unset them; after the first time, only if Hadoop has since reloaded the
        configuration from its files (a class registering another defaults file does):
        one call to learn that. How many were unset."""
        if not self.keys:
            return 0
        if self.size_after_drop is not None and self.conf.size() <= self.size_after_drop:
            return 0
        if self.size_after_drop is not None:
            log.info("Hadoop reloaded its configuration: dropping %s again", YARN_DEFAULTS)
        for key in self.keys:
            self.conf.unset(key)
        self.size_after_drop = self.conf.size()
        return len(self.keys)


def _only_from(conf: object, source: str) -> list[str]:
    keys = []
    entries = conf.iterator()  # type: ignore[attr-defined]
    while entries.hasNext():
        key = entries.next().getKey()
        sources = conf.getPropertySources(key)  # type: ignore[attr-defined]
        if sources is not None and list(sources) == [source]:
            keys.append(key)
    return keys
