"""lakehouse_job.job: a tables file refused at start, before Spark starts."""

import signal
from pathlib import Path

import pytest

from lakehouse_job.cli import build_parser
from lakehouse_job.config import JobConfig
from lakehouse_job.job import run
from lakehouse_job.startup import EXIT_REFUSED_CONFIG
from lakehouse_tables.declarations import TABLES_YAML

pytestmark = pytest.mark.unit


def test_an_invalid_tables_file_is_refused_not_restarted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tables = tmp_path / "tables.yaml"
    tables.write_text(TABLES_YAML.read_text().replace("amount: double", "amount: money", 1))
    config = JobConfig.from_args(build_parser().parse_args(["--tables", str(tables)]))
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert run(config) == EXIT_REFUSED_CONFIG  # the supervisor does not restart exit 5
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert "the tables file is not valid" in caplog.text
    assert "schema field 'amount' has type 'money'" in caplog.text
