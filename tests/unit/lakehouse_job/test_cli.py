"""lakehouse_job.cli: the job's repeatable NAME=VALUE options."""

import pytest

from lakehouse_job.cli import build_parser

pytestmark = pytest.mark.unit


def test_kinesis_source_options_pass_through_as_name_value_pairs() -> None:
    args = build_parser().parse_args(
        ["--kinesis-option", "readAhead=false", "--kinesis-option", " maxFetchDurationMs = 5000"]
    )
    assert args.kinesis_option == [("readAhead", "false"), ("maxFetchDurationMs", "5000")]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--kinesis-option", "readAhead"])


def test_spark_settings_pass_through_as_key_value_pairs() -> None:
    args = build_parser().parse_args(
        ["--spark-conf", "spark.sql.shuffle.partitions=4", "--spark-conf", "a.b = c=d"]
    )
    assert args.spark_conf == [("spark.sql.shuffle.partitions", "4"), ("a.b", "c=d")]
    assert build_parser().parse_args([]).spark_conf == []
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--spark-conf", "spark.sql.shuffle.partitions"])


def test_hudi_settings_pass_through_as_key_value_pairs() -> None:
    args = build_parser().parse_args(["--hudi-option", "hoodie.clean.max.commits=3"])
    assert args.hudi_option == [("hoodie.clean.max.commits", "3")]
    assert build_parser().parse_args([]).hudi_option == []
