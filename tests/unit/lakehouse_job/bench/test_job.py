"""lakehouse_job.bench.job: the benchmark's entry takes the job's options and --writer."""

import pytest

from lakehouse_job.bench.job import bench_parser
from lakehouse_job.cli import build_parser

pytestmark = pytest.mark.unit


def test_only_the_benchmarks_entry_takes_a_writer() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--writer", "hudi-streaming-sink"])
    args = bench_parser().parse_args(["--writer", "hudi-streaming-sink-all", "--available-now"])
    assert (args.writer, args.available_now) == ("hudi-streaming-sink-all", True)
    assert bench_parser().parse_args([]).writer == "foreach-batch"
