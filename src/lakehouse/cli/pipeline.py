"""`lakehouse send|load|demo|verify|cdc-load`: records onto the stream, and the tables
checked against what was sent."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from lakehouse.cli.common import (
    Command,
    say,
    tables_option,
)
from lakehouse.cli.stack import print_urls, up
from lakehouse.compose import project
from lakehouse.core.config import Settings
from lakehouse.local import demo as demo_flow


def send(settings: Settings, args: argparse.Namespace) -> int:
    """A file of JSON lines onto the stream, one record a line (loadgen.send)."""
    from botocore.exceptions import BotoCoreError, ClientError

    from lakehouse_tables.declarations import default_tables_path, load_tables
    from loadgen import send
    from loadgen.kinesis import RetryPolicy, ShardRouter, list_open_shards, make_client

    stream = args.stream or settings["KINESIS_STREAM_NAME"]
    tables = send.for_stream(load_tables(args.tables or default_tables_path()), stream)
    if args.file == "-":
        plan = send.plan(send.read_lines(sys.stdin.buffer), tables, args.send_invalid)
    else:
        try:
            with open(args.file, "rb") as lines:
                plan = send.plan(send.read_lines(lines), tables, args.send_invalid)
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    client = make_client(settings.kinesis_endpoint or None, settings["AWS_REGION"])
    try:
        router = ShardRouter(list_open_shards(client, stream))
    except ClientError as error:
        print(f"error: stream {stream}: {error}", file=sys.stderr)
        return 2
    except (BotoCoreError, OSError) as error:
        print(f"error: Kinesis does not answer ({error}): is the stack up?", file=sys.stderr)
        return 3
    policy = RetryPolicy(max_attempts=args.max_attempts)
    results = send.send(client, stream, plan.records, router, args.kpl_aggregate, policy)
    summary = send.summarise(plan, results)
    for line in send.problem_lines(plan, summary):
        print(line, file=sys.stderr)
    for line in send.report(stream, plan, summary):
        say(line)
    return summary.exit_code


# Load options the settings decide (the local stream and where its ledger goes).
SETTINGS_LOAD_OPTIONS = (
    "stream_name",
    "kinesis_endpoint",
    "region",
    "ledger_dir",
    "create_stream_shards",
    "aws_access_key_id",
    "aws_secret_access_key",
    "metrics_port",
)


def load(settings: Settings, args: argparse.Namespace) -> int:
    """Locust master + workers against the local stream; the ledger goes to .local/ledger."""
    from loadgen import options
    from loadgen.runner import run_load

    opts = options.from_namespace(
        args,
        stream_name=settings["KINESIS_STREAM_NAME"],
        kinesis_endpoint=settings.kinesis_endpoint,
        region=settings["AWS_REGION"],
        ledger_dir=str(demo_flow.ledger_dir(settings)),
        metrics_port=settings.port("LOADGEN_METRICS_PORT"),
    )
    if opts.web:
        opts = opts.replace(run_time="")  # until stopped from the UI
    say(
        f"Load: {opts.workers} workers, {opts.users} users x {opts.events_per_sec:g} events/s, "
        f"model {opts.event_model}, "
        f"{f'web UI on http://{opts.web_host}:{opts.web_port}' if opts.web else opts.run_time}"
    )
    return run_load(opts, log_dir=settings.logs_dir)


def demo(settings: Settings, args: argparse.Namespace) -> int:
    """Stack up, job running, a minute of load, then row counts, a query, freshness."""
    up(settings, args)
    say("\nStarting the streaming job (Spark local[2])")
    demo_flow.start_job(settings, say)
    say(f"\nSending events for {args.run_time} (Locust, headless)")
    code = load(settings, args)
    if code != 0:
        say(f"warning: the load generator exited with {code}; see {settings.logs_dir}")
    target = demo_flow.acked_in_ledger(settings)
    say(f"\nWaiting for the job to process the {target:,} acknowledged records")
    demo_flow.wait_until_caught_up(settings, target, say)
    time.sleep(2)  # the last batch's hive sync
    demo_flow.report(settings, say)
    say("\nLedger check (every acknowledged event vs. Trino, `make verify`):")
    verified = all(demo_flow.verify_ledger(settings, suffix) for suffix in ("_cow", "_mor_ro"))
    say("")
    print_urls(settings)
    say("\nThe stack and the job keep running: explore, then `make local-down` stops all.")
    return 0 if verified else 1


def verify(settings: Settings, args: argparse.Namespace) -> int:
    """Compare what Trino returns with the load generator's ledger, or with PostgreSQL."""
    if args.cdc:
        return verify_cdc(settings, args.tables)
    if args.compose:
        return verify_compose(settings, args.table_suffix)
    return 0 if demo_flow.verify_ledger(settings, args.table_suffix) else 1


def verify_cdc(settings: Settings, tables_file: str | None) -> int:
    """The CDC oracle: every captured table in PostgreSQL equals its live view in Trino."""
    from lakehouse import cdc
    from lakehouse.core.clients import trino_connection
    from lakehouse_tables.declarations import load_tables

    tables = load_tables(tables_file or cdc.CDC_TABLES_YAML)
    cursor = trino_connection(settings.endpoints, "hive").cursor()
    try:
        ok = cdc.verify(settings, cursor, settings["LAKEHOUSE_DATABASE"], tables, say)
    except cdc.CdcError as error:
        say(f"error: {error}")
        return 2
    say("PostgreSQL and the lake agree." if ok else "PostgreSQL and the lake differ.")
    return 0 if ok else 1


def verify_compose(settings: Settings, table_suffix: str, timeout_s: float = 300) -> int:
    """The ledger of the Locust web UI's runs in the compose stack against its Trino,
    once the job has caught up (a compose job commits every few seconds)."""
    import tempfile

    from lakehouse.core.clients import Endpoints
    from loadgen.ledger import read_ledger

    with tempfile.TemporaryDirectory(prefix="ui-ledger-") as tmp:
        ledger = project.copy_ui_ledger(Path(tmp) / "ledger")
        acked = sum(1 for entry in read_ledger(ledger) if entry.get("acked"))
        endpoints = Endpoints(
            region=settings["AWS_REGION"], trino=f"http://{project.published('trino', 8080)}"
        )
        database = settings["LAKEHOUSE_DATABASE"]
        say(f"Ledger of the Locust UI's runs: {acked:,} records acknowledged")
        deadline = time.monotonic() + timeout_s
        while (done := project.job_records_processed()) < acked:
            if time.monotonic() > deadline:
                say(f"The job has processed {done:,} of {acked:,} records; checking anyway")
                say("  (why the job is behind: `docker compose logs job`, `docker compose ps job`)")
                break
            say(f"  the job has processed {done:,} of {acked:,} records; waiting")
            time.sleep(5)
        while not demo_flow.ledger_agrees(ledger, endpoints, database, table_suffix, io.StringIO()):
            if time.monotonic() > deadline:
                break
            time.sleep(5)  # the last commit's hive sync, or a compaction for _mor_ro
        ok = demo_flow.ledger_agrees(ledger, endpoints, database, table_suffix, sys.stdout)
    if not ok and table_suffix == "_mor_ro":
        say("MoR read-optimized views show compacted data only: `docker compose stop job`")
        say("compacts every MoR table before it exits; verify again after it.")
    return 0 if ok else 1


def cdc_load(settings: Settings, args: argparse.Namespace) -> int:
    """Locust users running the shop's transactions in the CDC part's PostgreSQL."""
    from lakehouse.cdc_workload import locust_command

    run_time = None if args.web else args.run_time
    if args.web:
        say("CDC load: Locust's web UI on http://127.0.0.1:8089 (Ctrl-C stops it)")
    else:
        say(
            f"CDC load: {args.users} users x {args.transactions_per_sec:g} transactions/s "
            f"for {args.run_time} on {settings['CDC_PG_HOST']}:{settings['CDC_PG_PORT']}"
        )
    command = locust_command(args.users, args.transactions_per_sec, run_time)
    env = {**os.environ, **settings.service_env()}
    try:
        return subprocess.run(command, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130


SEND_DETAILS = """\
Each line is one record, sent as written, partitioned by its entry's record key (a key's
records share a shard and keep their order); blank lines are skipped. A line the job
would quarantine (the tables file's record rules) is reported on standard error with its
number and the rule, and not sent unless --send-invalid. Standard output: the records
acknowledged in all, per entry and per shard.

exit codes: 0 every line acknowledged; 1 a line skipped or a record not acknowledged
after its attempts; 2 no such file or stream; 3 Kinesis does not answer (stack down)."""


def _send_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="JSON lines, one record a line; - for standard input")
    parser.add_argument("--stream", help="default: the stack's stream (KINESIS_STREAM_NAME)")
    tables_option(parser, " whose record rules each line is held to")
    parser.add_argument(
        "--send-invalid",
        action="store_true",
        help="send the lines the job will quarantine too (to try the quarantine)",
    )
    parser.add_argument(
        "--kpl-aggregate",
        type=int,
        default=0,
        metavar="N",
        help="N records to a KPL-aggregated Kinesis record (default 0: plain records)",
    )
    parser.add_argument(
        "--max-attempts", type=int, default=8, help="PutRecords attempts per record (default: 8)"
    )


def _load_arguments(parser: argparse.ArgumentParser) -> None:
    from loadgen import options

    options.add_arguments(parser, skip=(*SETTINGS_LOAD_OPTIONS, "tables_file"))
    parser.add_argument(
        "--tables",
        "--tables-file",
        dest="tables_file",
        default="",
        metavar="FILE",
        help="the tables file (default: $LAKEHOUSE_TABLES, else the packaged one; "
        "--tables-file is its former name)",
    )


def _verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table-suffix", default="_cow", help="_cow or _mor_ro")
    parser.add_argument(
        "--compose", action="store_true", help="the compose stack's Locust web UI runs"
    )
    parser.add_argument(
        "--cdc",
        action="store_true",
        help="the CDC part: each captured PostgreSQL table against its live view in Trino",
    )
    parser.add_argument(
        "--tables", help="with --cdc: the tables file (default: services/cdc/tables.yaml)"
    )


def _cdc_load_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--users", type=int, default=2)
    parser.add_argument("--transactions-per-sec", type=float, default=5, help="per user")
    parser.add_argument("--run-time", default="60s", help="how long, e.g. 60s, 5m")
    parser.add_argument("--web", action="store_true", help="Locust's web UI instead")


COMMANDS = {
    "send": Command(
        send,
        "send a file of JSON lines to the stream, one record a line",
        "pipeline",
        "lakehouse send my-events.jsonl\n"
        "cat my-events.jsonl | lakehouse send - --tables my-tables.yaml --kpl-aggregate 100",
        _send_arguments,
        SEND_DETAILS,
    ),
    "load": Command(
        load,
        "run the Locust load generator against the local stream",
        "pipeline",
        "lakehouse load --run-time 5m --users 4\n"
        "lakehouse load --tables my-tables.yaml --event-model sensors",
        _load_arguments,
    ),
    "demo": Command(
        demo,
        "the whole flow: stack up, job, load, results",
        "pipeline",
        "lakehouse demo\nlakehouse demo --run-time 30s",
        _load_arguments,
    ),
    "verify": Command(
        verify,
        "compare Trino's tables with the load generator's ledger",
        "pipeline",
        "lakehouse verify\nlakehouse verify --cdc",
        _verify_arguments,
    ),
    "cdc-load": Command(
        cdc_load,
        "Locust users making transactions in the CDC part's PostgreSQL",
        "pipeline",
        "lakehouse cdc-load --run-time 60s",
        _cdc_load_arguments,
    ),
}
