"""The command line's parser and its error handling (lakehouse.cli)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lakehouse import cli
from lakehouse.config import ConfigError, Settings
from lakehouse.supervisor import ServiceError
from lakehouse_tables.declarations import TABLES_YAML
from loadgen import options
from loadgen.options import LoadOptions

pytestmark = pytest.mark.unit


def parse(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(list(argv))


def test_load_takes_the_load_options() -> None:
    args = parse("load", "--workers", "3", "--users", "6", "--event-model", "mix", "--web")
    opts = options.from_namespace(args)
    assert (opts.workers, opts.users, opts.event_model, opts.web) == (3, 6, "mix", True)
    assert opts.late_rate == LoadOptions().late_rate


@pytest.mark.parametrize("command", ["load", "demo"])
def test_load_and_demo_leave_the_stream_to_the_settings(command: str) -> None:
    args = parse(command)
    for name in cli.SETTINGS_LOAD_OPTIONS:
        assert not hasattr(args, name)
    with pytest.raises(SystemExit):
        parse(command, "--stream-name", "other")


def test_demo_takes_the_run_time() -> None:
    assert parse("demo", "--run-time", "30s").run_time == "30s"
    assert parse("demo").run_time == LoadOptions().run_time


def test_verify_and_bench_options() -> None:
    assert parse("verify").table_suffix == "_cow"
    assert parse("verify", "--table-suffix", "_mor_ro").table_suffix == "_mor_ro"
    args = parse("bench", "--rates", "1000")
    assert args.rates == "1000" and args.profiles == "fast,baseline"


def test_run_passes_the_job_options_through() -> None:
    args = parse("run", "--background", "--", "--trigger-seconds", "2")
    assert args.background and args.job_args == ["--", "--trigger-seconds", "2"]


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit):
        parse()


def test_a_config_error_is_reported_with_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(environ: object = None) -> Settings:
        raise ConfigError("services/common.env:3: expected KEY=VALUE, got 'oops'")

    monkeypatch.setattr(cli, "load_settings", broken)
    assert cli.main(["status"]) == 2
    assert capsys.readouterr().err == (
        "error: services/common.env:3: expected KEY=VALUE, got 'oops'\n"
    )


def test_a_service_error_of_a_command_is_reported_with_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(settings: Settings, args: argparse.Namespace) -> int:
        raise ServiceError("trino did not become healthy within 60s")

    monkeypatch.setitem(cli.COMMANDS, "up", (failing, "start"))
    assert cli.main(["up"]) == 2
    assert "error: trino did not become healthy" in capsys.readouterr().err


def test_schema_diff_reads_the_job_s_warehouse_url() -> None:
    from lakehouse.schema_diff import split_s3_url

    assert split_s3_url("s3a://lakehouse/warehouse/lakehouse.db") == (
        "lakehouse",
        "warehouse/lakehouse.db",
    )
    assert split_s3_url("s3://b/") == ("b", "")
    with pytest.raises(ValueError, match="not an S3 URL"):
        split_s3_url("/tmp/warehouse")


def test_run_finds_the_job_s_tables_option_as_argparse_would() -> None:
    assert cli._option_value(["--tables", "a.yaml", "--x"], "--tables") == "a.yaml"
    assert cli._option_value(["--tables=a.yaml", "--tables", "b.yaml"], "--tables") == "b.yaml"
    assert cli._option_value(["--trigger-seconds", "1"], "--tables") is None
    assert cli.build_parser().parse_args(["run", "--cdc"]).cdc


def test_an_invalid_tables_file_is_an_error_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tables = tmp_path / "tables.yaml"
    tables.write_text(TABLES_YAML.read_text().replace("amount: double", "amount: money", 1))
    assert cli.main(["schema", "diff", "--tables", str(tables)]) == 5
    err = capsys.readouterr().err
    assert err.startswith("error: the tables file is not valid: ")
    assert "schema field 'amount' has type 'money'" in err and "Traceback" not in err
