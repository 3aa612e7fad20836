"""lakehouse_job.config: the command line read once into a frozen JobConfig."""

import dataclasses

import pytest

from lakehouse_job.cli import build_parser
from lakehouse_job.config import JobConfig

pytestmark = pytest.mark.unit


def test_the_config_holds_every_option_frozen() -> None:
    args = build_parser().parse_args(
        ["--kinesis-option", "readAhead=false", "--hudi-option", "a=b", "--catalog", "glue"]
    )
    config = JobConfig.from_args(args)
    assert config.kinesis_options == (("readAhead", "false"),)
    assert config.spark_settings == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.stream = "other"  # type: ignore[misc]
    sink = config.sink_settings()
    assert sink.extra_options == (("a", "b"),)
    assert sink.hive_sync  # Glue registers the tables without a metastore URI
    assert not JobConfig.from_args(build_parser().parse_args([])).sink_settings().hive_sync


def test_every_option_has_a_config_field_and_every_field_an_option() -> None:
    parser = build_parser()
    options = {a.dest for a in parser._actions if a.dest != "help"}
    named = {field.name for field in dataclasses.fields(JobConfig)}
    renamed = {"kinesis_option", "spark_conf", "hudi_option"}
    assert named == (options - renamed) | {"kinesis_options", "spark_settings", "hudi_options"}
