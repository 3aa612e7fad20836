"""YARN's defaults leave the Hadoop configuration of a job not run on YARN, and only they."""

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.hadoop_conf import YARN_DEFAULTS, YarnDefaults

pytestmark = pytest.mark.unit


@pytest.fixture
def conf(spark: SparkSession) -> Iterator[object]:
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    yield conf
    conf.reloadConfiguration()  # the defaults back, for the tests after this one


def sources(conf: object) -> set[str]:
    found: set[str] = set()
    entries = conf.iterator()  # type: ignore[attr-defined]
    while entries.hasNext():
        found.update(conf.getPropertySources(entries.next().getKey()) or ())  # type: ignore[attr-defined]
    return found


def test_only_yarns_defaults_are_dropped_and_again_after_hadoop_reloads_them(
    spark: SparkSession, conf: object
) -> None:
    conf.set("yarn.example.users.own", "kept")  # type: ignore[attr-defined]
    before = conf.size()  # type: ignore[attr-defined]
    assert YARN_DEFAULTS in sources(conf)
    defaults = YarnDefaults(spark)

    dropped = defaults.drop()
    assert dropped > 100 and conf.size() == before - dropped  # type: ignore[attr-defined]
    assert YARN_DEFAULTS not in sources(conf)
    assert conf.get("yarn.resourcemanager.hostname") is None  # type: ignore[attr-defined]
    assert conf.get("yarn.example.users.own") == "kept"  # type: ignore[attr-defined]
    # core-default.xml's stay
    assert conf.get("io.file.buffer.size") is not None  # type: ignore[attr-defined]
    assert defaults.drop() == 0  # nothing came back: one size check

    conf.reloadConfiguration()  # type: ignore[attr-defined]
    assert conf.get("yarn.resourcemanager.hostname") is not None  # type: ignore[attr-defined]
    assert defaults.drop() == dropped
    assert YARN_DEFAULTS not in sources(conf)
