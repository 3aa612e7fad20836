"""The load run's options and their one set of defaults (loadgen.options)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

import pytest

from loadgen.options import (
    LoadOptions,
    add_arguments,
    add_locust_arguments,
    flag,
    from_namespace,
    user_fields,
)

pytestmark = pytest.mark.unit

USER_NAMES = {f.name for f in user_fields()}


def parser_for(**kwargs: Any) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments(parser, **kwargs)
    return parser


def test_the_parser_gives_the_dataclass_defaults() -> None:
    assert from_namespace(parser_for().parse_args([])) == LoadOptions()


def test_the_parser_takes_other_defaults_and_skips_options() -> None:
    parser = parser_for(defaults={"stream_name": "other"}, skip=("region",))
    args = parser.parse_args([])
    assert args.stream_name == "other"
    assert not hasattr(args, "region")
    with pytest.raises(SystemExit):
        parser.parse_args(["--region", "eu-west-1"])


def test_flags_are_typed() -> None:
    args = parser_for().parse_args(["--workers", "4", "--spawn-rate", "0.5", "--web"])
    opts = from_namespace(args)
    assert (opts.workers, opts.spawn_rate, opts.web) == (4, 0.5, True)


def test_from_namespace_round_trip_ignores_other_keys_and_applies_overrides() -> None:
    opts = LoadOptions(workers=5, users=9, event_model="mix", seed="42")
    namespace = argparse.Namespace(**asdict(opts), log_dir="/tmp/logs")
    assert from_namespace(namespace) == opts
    assert from_namespace(namespace, region="eu-west-1") == opts.replace(region="eu-west-1")


def test_replace_changes_only_what_it_names() -> None:
    opts = LoadOptions().replace(users=7, run_time="")
    assert (opts.users, opts.run_time) == (7, "")
    assert opts.replace() == opts
    assert opts.workers == LoadOptions().workers


def test_replace_rejects_unknown_names() -> None:
    with pytest.raises(TypeError, match="no_such_option"):
        LoadOptions().replace(no_such_option=1)


def test_user_args_hold_only_the_user_fields() -> None:
    opts = LoadOptions(stream_name="s", batch_size=3, seed="7")
    args = opts.user_args()
    flags = args[::2]
    assert set(flags) <= {flag(name) for name in USER_NAMES}
    assert "--workers" not in args and "--web" not in args
    pairs = dict(zip(flags, args[1::2], strict=True))
    assert (pairs["--stream-name"], pairs["--batch-size"], pairs["--seed"]) == ("s", "3", "7")
    assert USER_NAMES.isdisjoint({"workers", "users", "run_time", "web"})


def test_user_args_leave_out_empty_values_and_the_aws_keys() -> None:
    opts = LoadOptions(run_id="", aws_access_key_id="AK", aws_secret_access_key="SK")
    args = opts.user_args()
    assert "--run-id" not in args and "--kinesis-endpoint" not in args
    assert not {"AK", "SK", "--aws-access-key-id", "--aws-secret-access-key"} & set(args)
    # Everything else is there.
    kept = {f.name for f in user_fields() if getattr(opts, f.name) != ""} - {
        "aws_access_key_id",
        "aws_secret_access_key",
    }
    assert set(args[::2]) == {flag(name) for name in kept}


class RecordingParser:
    """Accepts Locust's extra keywords (env_var, include_in_web_ui, is_secret)."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, Any]] = {}

    def add_argument(self, name: str, **kwargs: Any) -> None:
        assert name not in self.calls, f"{name} registered twice"
        self.calls[name] = kwargs


def test_add_locust_arguments_registers_every_user_field() -> None:
    parser = RecordingParser()
    add_locust_arguments(parser)
    assert set(parser.calls) == {flag(name) for name in USER_NAMES}
    for f in user_fields():
        call = parser.calls[flag(f.name)]
        assert call["default"] == f.default
        assert call["type"] is type(f.default)
        assert call["help"]
        assert {"env_var", "include_in_web_ui", "is_secret"} <= set(call)


def test_locust_arguments_name_env_vars_and_hide_secrets() -> None:
    parser = RecordingParser()
    add_locust_arguments(parser)
    calls = parser.calls
    assert calls["--stream-name"]["env_var"] == "LOADGEN_STREAM"
    assert calls["--kinesis-endpoint"]["env_var"] == "KINESIS_ENDPOINT"
    assert calls["--batch-size"]["env_var"] is None
    secret = {name for name, call in calls.items() if call["is_secret"]}
    assert secret == {"--aws-secret-access-key"}
    hidden = {name for name, call in calls.items() if not call["include_in_web_ui"]}
    # Set at start-up (the master serves its metrics from then on), not per test run.
    assert hidden == {
        "--aws-access-key-id", "--aws-secret-access-key", "--metrics-port", "--metrics-host",
    }  # fmt: skip
