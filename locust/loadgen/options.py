"""The options of a load run, with their one set of defaults.

`lakehouse load`, `python -m loadgen.runner` and the Locust user's own command-line
options (which the web UI shows) are all built from LoadOptions' fields. Fields marked
`user` are the Locust user's options: the runner passes them to Locust, and Locust's
master forwards them to its workers; the others say how many processes and users run.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from loadgen.models import MALFORMED_KINDS


def _user(default: Any, help: str, *, env: str | None = None, web: bool = True) -> Any:
    return field(default=default, metadata={"user": True, "help": help, "env": env, "web": web})


def _run(default: Any, help: str) -> Any:
    return field(default=default, metadata={"user": False, "help": help})


@dataclass(frozen=True)
class LoadOptions:
    # --- the processes: master, workers, users --------------------------------------
    workers: int = _run(2, "Locust worker processes")
    users: int = _run(2, "users in all (each sends --events-per-sec)")
    spawn_rate: float = _run(0.0, "users started per second (0: all at once)")
    run_time: str = _run("60s", "how long to send, e.g. 60s, 5m (web UI: until stopped)")
    web: bool = _run(False, "serve the Locust web UI instead of running headless")
    web_host: str = _run("127.0.0.1", "address the web UI listens on")
    web_port: int = _run(8089, "web UI port")
    master_port: int = _run(5557, "port the master listens on for its workers (loopback)")
    stop_timeout: float = _run(30.0, "seconds in-flight batches get to finish at the end")
    # --- what each user sends (Locust options; the web UI shows them) -----------------
    stream_name: str = _user("events", "Kinesis stream to write to", env="LOADGEN_STREAM")
    kinesis_endpoint: str = _user("", "Kinesis endpoint URL (empty: AWS)", env="KINESIS_ENDPOINT")
    region: str = _user("us-east-1", "AWS region", env="AWS_REGION")
    event_model: str = _user(
        "orders", "orders | ticker | clicks | iot | any declared event type | mix"
    )
    event_mix: str = _user(
        "orders=1,ticker=1,clicks=1,iot=1", "weights used when --event-model=mix"
    )
    op_mix: str = _user("c=0.5,u=0.4,d=0.1", "CDC op weights for orders")
    events_per_sec: float = _user(50.0, "target events/s per user (0: as fast as possible)")
    batch_size: int = _user(100, "records per task (<=500 per PutRecords call)")
    kpl_aggregate: int = _user(
        0, "user records per KPL-aggregated Kinesis record, as KPL sends them (0: plain)"
    )
    key_cardinality: str = _user(
        "10000", "keys per user and event type: 10000 or orders=1000,ticker=0 (0: unbounded)"
    )
    duplicate_rate: float = _user(0.02, "share of records resent byte-identical")
    out_of_order_rate: float = _user(0.0, "share of records held back")
    late_rate: float = _user(0.02, "share of events with an old event time")
    late_max_seconds: float = _user(6 * 3600.0, "how old a late event can be (s)")
    max_delay: int = _user(200, "held-back and duplicate records reappear 1..N records later")
    malformed_rate: float = _user(0.01, "share of malformed records")
    malformed_mix: str = _user(",".join(MALFORMED_KINDS), "malformed kinds and weights")
    seed: str = _user("", "random seed (empty: random)")
    run_id: str = _user("", "key and ledger prefix (default: from the seed, else random)")
    ledger_dir: str = _user(
        "ledger", "where each worker writes its ledger", env="LOADGEN_LEDGER_DIR"
    )
    tables_file: str = _user("", "tables.yaml (default: the packaged declarations)")
    max_attempts: int = _user(8, "PutRecords attempts per record")
    create_stream_shards: int = _user(
        0, "create the stream with this many shards if missing (0: do not create)"
    )
    metrics_port: int = _user(
        0, "serve the load's figures for Prometheus on this port (0: not served)", web=False
    )
    metrics_host: str = _user(
        "127.0.0.1", "address the figures are served on (compose: 0.0.0.0)", web=False
    )
    aws_access_key_id: str = _user("", "AWS access key (empty: the default chain)", web=False)
    aws_secret_access_key: str = _user("", "AWS secret key", web=False)

    def replace(self, **changes: Any) -> LoadOptions:
        return dataclasses.replace(self, **changes)  # TypeError naming an unknown option

    def user_args(self) -> list[str]:
        """The Locust user's options as command-line flags, e.g. ['--stream-name', 'events'].

        Empty values are left out (Locust applies the same defaults), and so are the AWS
        keys, which would show in the process list: pass them in the environment
        (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)."""
        args: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata["user"] and value != "" and not f.name.startswith("aws_"):
                args += [flag(f.name), str(value)]
        return args


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def user_fields() -> list[Any]:
    return [f for f in fields(LoadOptions) if f.metadata["user"]]


def add_locust_arguments(parser: Any) -> None:
    """The user's options on Locust's parser (env_var, web UI and secret are Locust's)."""
    for f in user_fields():
        parser.add_argument(
            flag(f.name),
            type=_type(f),
            default=f.default,
            env_var=f.metadata["env"],
            help=f.metadata["help"],
            include_in_web_ui=f.metadata["web"],
            is_secret="secret" in f.name,
        )


def add_arguments(
    parser: argparse.ArgumentParser,
    defaults: Mapping[str, Any] | None = None,
    skip: Sequence[str] = (),
) -> None:
    """Every option on an argparse parser (the CLI and the runner); `defaults` replaces
    some defaults (e.g. the stream and endpoint from the settings)."""
    defaults = defaults or {}
    for f in fields(LoadOptions):
        if f.name in skip:
            continue
        default = defaults.get(f.name, f.default)
        if f.type in (bool, "bool"):
            parser.add_argument(
                flag(f.name), action="store_true", default=default, help=f.metadata["help"]
            )
        else:
            shown = f" (default: {default})" if default != "" else ""
            parser.add_argument(
                flag(f.name), type=_type(f), default=default, help=f.metadata["help"] + shown
            )


def from_namespace(args: argparse.Namespace, **overrides: Any) -> LoadOptions:
    names = {f.name for f in fields(LoadOptions)}
    values = {k: v for k, v in vars(args).items() if k in names}
    return LoadOptions(**{**values, **overrides})


def _type(f: Any) -> type:
    kinds = {"int": int, "float": float, "str": str, "bool": bool}
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    if f.default is MISSING:
        raise TypeError(f"load option {f.name} has no default")
    return kinds[kind]
