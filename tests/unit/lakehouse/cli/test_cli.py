"""The command line's parser and its error handling (lakehouse.cli)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lakehouse import cli
from lakehouse.cli import job, pipeline
from lakehouse.cli.common import duration
from lakehouse.core.config import ConfigError, Settings
from lakehouse.local.job_control import option_value
from lakehouse.local.supervisor import ServiceError
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
    for name in pipeline.SETTINGS_LOAD_OPTIONS:
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
    assert args.rates == (1000,) and args.profiles == ("fast", "baseline")


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

    monkeypatch.setitem(cli.COMMANDS, "up", cli.Command(failing, "start", "stack", "lakehouse up"))
    assert cli.main(["up"]) == 2
    assert "error: trino did not become healthy" in capsys.readouterr().err


def test_schema_diff_reads_the_job_s_warehouse_url() -> None:
    from lakehouse.inspect.schema_diff import split_s3_url

    assert split_s3_url("s3a://lakehouse/warehouse/lakehouse.db") == (
        "lakehouse",
        "warehouse/lakehouse.db",
    )
    assert split_s3_url("s3://b/") == ("b", "")
    with pytest.raises(ValueError, match="not an S3 URL"):
        split_s3_url("/tmp/warehouse")


def test_run_finds_the_job_s_tables_option_as_argparse_would() -> None:
    assert option_value(["--tables", "a.yaml", "--x"], "--tables") == "a.yaml"
    assert option_value(["--tables=a.yaml", "--tables", "b.yaml"], "--tables") == "b.yaml"
    assert option_value(["--trigger-seconds", "1"], "--tables") is None
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


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_command_is_in_a_group_and_its_help_ends_with_examples() -> None:
    parser = cli.build_parser()
    overview = parser.format_help()
    for group in cli.GROUPS:
        assert f"  {group}:\n" in overview
    commands = _subparsers(parser)
    assert set(commands) == set(cli.COMMANDS)
    for name, command in cli.COMMANDS.items():
        assert command.group in cli.GROUPS
        assert f"    {name} " in overview
    todo = list(commands.items())
    while todo:
        name, sub = todo.pop()
        text = sub.format_help()
        examples = text.split("\nexamples:\n", 1)[1].splitlines()
        assert examples and all(" lakehouse " in f" {line}" for line in examples), name
        todo += [(f"{name} {n}", p) for n, p in _subparsers(sub).items()]


def test_version_names_the_pinned_engines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        parse("--version")
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("lakehouse ") and "Spark 3.5" in out and "Trino " in out


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("5m", 300), ("1h30m", 5400), ("1m30s", 90), ("2.5", 2.5)],
)
def test_durations_read_as_locust_s_run_time(text: str, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "5 minutes", "1s2m"])
def test_a_wrong_duration_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


def test_former_option_names_still_work() -> None:
    assert parse("load", "--tables-file", "a.yaml").tables_file == "a.yaml"
    assert parse("demo", "--tables", "b.yaml").tables_file == "b.yaml"
    assert parse("bench", "--seconds", "30").seconds == 30
    assert parse("bench", "--run-time", "10m").seconds == 600
    args = parse("run", "--tables", "t.yaml", "--background", "--", "--trigger-seconds", "2")
    assert job.given_job_args(args) == ["--tables", "t.yaml", "--trigger-seconds", "2"]


def test_the_job_commands_parse() -> None:
    assert parse("job", "stop").timeout == 60
    restart = parse("job", "restart", "--tables", "x.yaml", "--timeout", "2m")
    assert (restart.action, restart.tables, restart.timeout) == ("restart", "x.yaml", 120)
    logs = parse("job", "logs", "-f", "-n", "5")
    assert (logs.follow, logs.lines) == (True, 5)
    assert parse("logs", "trino").service == "trino"
    with pytest.raises(SystemExit):
        parse("logs", "nonesuch")


def test_job_in_compose_prints_the_compose_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["job", "restart", "--compose"]) == 0
    out = capsys.readouterr().out
    assert "docker compose restart job" in out
    assert "docker compose up -d --wait --build job" in out


def test_logs_of_a_service_never_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path))
    assert cli.main(["logs", "trino"]) == 1
    assert "trino has no log yet" in capsys.readouterr().err
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "trino.log").write_text("one\ntwo\n")
    assert cli.main(["logs", "trino", "-n", "1"]) == 0
    assert capsys.readouterr().out == "two\n"


def test_send_reports_bad_lines_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadgen import kinesis

    class Fake:
        def list_shards(self, StreamName: str) -> dict:
            assert StreamName == "mine"
            shard = {"StartingHashKey": "0", "EndingHashKey": str(2**128 - 1)}
            return {"Shards": [{"HashKeyRange": shard, "SequenceNumberRange": {}}]}

        def put_records(self, StreamName: str, Records: list) -> dict:
            out = [{"ShardId": "shardId-0", "SequenceNumber": str(i)} for i in range(len(Records))]
            return {"FailedRecordCount": 0, "Records": out}

    monkeypatch.setattr(kinesis, "make_client", lambda *args, **kwargs: Fake())
    events = tmp_path / "events.jsonl"
    good = (
        '{"event_type":"ticker","event_id":"a","ticker":"X","price":1,'
        '"event_time":"2026-01-01T00:00:00Z"}'
    )
    events.write_text(f"{good}\n{{broken\n")
    assert cli.main(["send", str(events), "--stream", "mine"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("1 of 1 records acknowledged by stream mine; 1 lines skipped")
    assert err.startswith("line 2: skipped: not_json")
    events.write_text(f"{good}\n")
    assert cli.main(["send", str(events), "--stream", "mine"]) == 0


def test_tables_with_the_stack_down_says_so_and_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lakehouse.core import clients

    class Down:
        def cursor(self) -> Down:
            return self

        def execute(self, sql: str) -> None:
            raise ConnectionRefusedError("connection refused")

    monkeypatch.setattr(clients, "trino_connection", lambda *args, **kwargs: Down())
    assert cli.main(["tables"]) == 3
    assert "The stack is not running: Trino at" in capsys.readouterr().out
