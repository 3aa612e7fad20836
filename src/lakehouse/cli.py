"""`lakehouse up|down|status|...`: the sandbox's command line (the Makefile calls it)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse import demo, installers, job_control, job_launcher, shells, stack
from lakehouse.aws_policy import PolicyError
from lakehouse.bench import JOB_RECORDS_PER_SHARD
from lakehouse.bootstrap import BootstrapError
from lakehouse.compose import ComposeError, engine, project
from lakehouse.config import ConfigError, Settings, load_settings
from lakehouse.installers import InstallError
from lakehouse.interrupts import sigterm_interrupts
from lakehouse.services import CDC_SERVICE_BUILDERS, service_names
from lakehouse.submit import SubmitError
from lakehouse.supervisor import ServiceError
from lakehouse.truststore import TruststoreError
from lakehouse_tables.declarations import TablesConfigError


def _say(message: str) -> None:
    print(message, flush=True)


def print_urls(settings: Settings) -> None:
    console = settings.port("MINIO_CONSOLE_PORT")
    _say("URLs:")
    _say(f"  Trino UI / API      {settings.trino_url}/ui/  (user: any name)")
    _say(
        f"  MinIO console       http://127.0.0.1:{console}  "
        f"(user {settings['S3_ACCESS_KEY']} / {settings['S3_SECRET_KEY']})"
    )
    _say(f"  S3 API              {settings.s3_endpoint}")
    _say(f"  Kinesis API         {settings.kinesis_endpoint}  ({settings['KINESIS_ENGINE']})")
    _say(f"  Hive Metastore      {settings.hms_uri}")
    _say("  Spark UI            http://127.0.0.1:4040  (while the job runs)")
    prometheus = f"http://127.0.0.1:{settings.port('PROMETHEUS_PORT')}"
    _say(f"  Prometheus          {prometheus}/alerts  (rules: services/prometheus/rules.yml)")
    job_metrics = settings.port("LAKEHOUSE_JOB_METRICS_PORT")
    _say(f"  Job metrics         http://127.0.0.1:{job_metrics}/metrics  (while the job runs)")
    _say("  Locust UI           http://127.0.0.1:8089  (while `lakehouse load --web` runs)")
    _say("  SQL                 `make sql` (Trino: live views orders, ...; raw JSON orders_json)")
    _say("  Notebooks           `make notebook` (JupyterLab on http://127.0.0.1:8888)")


def cmd_up(settings: Settings, args: argparse.Namespace) -> int:
    seconds = stack.up(settings, _say, with_cdc=getattr(args, "cdc", False))
    _say(f"\nAll services healthy in {seconds:.1f}s\n")
    _say(stack.format_status_table(stack.statuses(settings)))
    _say("")
    print_urls(settings)
    _say("\nStop everything with `make local-down` (or `lakehouse down`).")
    return 0


def cmd_down(settings: Settings, _: argparse.Namespace) -> int:
    _say("Stopping local stack")
    stack.down(settings, _say)
    still = stack.bound_ports(settings)
    if still:
        _say(f"warning: ports still accepting connections: {still} (not started by this stack?)")
        return 1
    return 0


def cmd_status(settings: Settings, _: argparse.Namespace) -> int:
    rows = stack.statuses(settings)
    _say(stack.format_status_table(rows))
    total = sum(r.rss_mb or 0 for r in rows)
    _say(f"\nTotal resident memory of running services: {total:.0f} MiB")
    running_job = any(row.name == stack.JOB for row in rows)
    report = job_launcher.job_report(settings) if running_job else []
    if report:
        _say("")
        _say("\n".join(report))
    return 0 if all(r.state == "running" for r in rows) else 3


def cmd_top(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse import top

    url = f"http://127.0.0.1:{settings.port('PROMETHEUS_PORT')}"
    job = f"http://127.0.0.1:{settings.port('LAKEHOUSE_JOB_METRICS_PORT')}/metrics"
    try:
        return top.run_top(
            url, sys.stdout, every_s=args.every, once=args.once, keys=sys.stdin, job_url=job
        )
    except KeyboardInterrupt:
        return 0


def cmd_install(settings: Settings, _: argparse.Namespace) -> int:
    """Fetch every download into the cache, so `up` and the tests start warm."""
    _say(f"Installing into {settings.cache_dir} (first run downloads ~2 GB)")
    installers.prefetch(settings, _say)
    stack.build_specs(settings, _say)
    installers.ensure_kinesis_source_jar(settings, _say)
    installers.ensure_cdc_service_jar(settings, _say)
    _say("Everything is installed.")
    return 0


def cmd_java_test(settings: Settings, _: argparse.Namespace) -> int:
    """The JUnit tests: the Kinesis source's (offset and shard logic) and the CDC
    service's (its Kinesis sink and snapshot mark), both run whatever the first gives."""
    source = installers.run_kinesis_source_tests(settings)
    service = installers.run_cdc_service_tests(settings, _say)
    return source or service


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """The streaming job: in the foreground (Ctrl-C stops after the batch in flight)
    or, with --background, supervised like the services (`down` stops it)."""
    given = _given_job_args(args)
    if args.background:
        return _job_started(settings, given)
    job_args = _job_args(settings, given)
    if job_args is None:
        return 2
    return _in_foreground(
        job_launcher.job_command(job_args), job_launcher.job_env(settings, record_classes=True)
    )


def _given_job_args(args: argparse.Namespace) -> list[str]:
    """The job's own options of `run` and `job start|restart`: --tables (--cdc: the CDC
    part's tables file), then what follows `--`."""
    from lakehouse import cdc

    given = [a for a in getattr(args, "job_args", []) if a != "--"]
    tables = getattr(args, "tables", None)
    if getattr(args, "cdc", False):
        tables = tables or str(cdc.CDC_TABLES_YAML)
    return ["--tables", tables, *given] if tables else given


def _job_started(settings: Settings, given: list[str]) -> int:
    try:
        job_control.start(settings, given, _say)
    except job_launcher.JobStreamsError as error:
        _say(f"error: {error}")
        return 2
    return 0


def _job_args(settings: Settings, given: list[str]) -> list[str] | None:
    """The job's streams and checkpoint (job_launcher.default_job_args) before `given`;
    None, with the error said, when its tables file names streams that do not exist."""
    try:
        return job_control.job_args(settings, given)
    except job_launcher.JobStreamsError as error:
        _say(f"error: {error}")
        return None


def _in_foreground(command: list[str], env: dict[str, str]) -> int:
    """Run the job until it ends; Ctrl-C or SIGTERM to this command stops it after the
    batch in flight."""
    process = subprocess.Popen(command, env=env)
    try:
        with sigterm_interrupts():
            return process.wait()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGTERM)
        return process.wait()


# What `lakehouse job ACTION --compose` prints: the Compose stack's job is its service `job`.
COMPOSE_JOB = {
    "start": ["docker compose start job"],
    "stop": ["docker compose stop job    # after the batch in flight, MoR tables compacted"],
    "restart": [
        "docker compose restart job    # the same tables file",
        "docker compose up -d --wait --build job    # after changing the tables file "
        "(it is in the job's image)",
    ],
    "logs": ["docker compose logs --tail=200 job    # -f to follow"],
}


def cmd_job(settings: Settings, args: argparse.Namespace) -> int:
    """The job alone, in local mode: start, stop (after the batch in flight), restart
    (re-reading the tables file), logs; the stack keeps running."""
    if args.compose:
        _say("In Compose the job is the service `job`:")
        for line in COMPOSE_JOB[args.action]:
            _say(f"  {line}")
        return 0
    if args.action == "start":
        return _job_started(settings, _given_job_args(args))
    if args.action == "stop":
        job_control.stop(settings, _say, args.timeout)
        return 0
    if args.action == "restart":
        given = [a for a in args.job_args if a != "--"]
        try:
            job_control.restart(settings, _say, args.tables, given, args.timeout)
        except job_launcher.JobStreamsError as error:
            _say(f"error: {error}")
            return 2
        return 0
    return _show_log(settings, stack.JOB, args)


def cmd_logs(settings: Settings, args: argparse.Namespace) -> int:
    """A local service's log (or the job's): its last lines, then with -f what follows."""
    return _show_log(settings, args.service, args)


def _show_log(settings: Settings, name: str, args: argparse.Namespace) -> int:
    from lakehouse import service_logs

    path = stack.supervisor_for(settings).log_file(name)
    if not path.exists():
        print(f"error: {name} has no log yet ({path}): it has not been started", file=sys.stderr)
        return 1
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends following
        service_logs.show(path, sys.stdout, args.lines, args.follow)
    return 0


def cmd_send(settings: Settings, args: argparse.Namespace) -> int:
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
        _say(line)
    return summary.exit_code


def cmd_tables(settings: Settings, args: argparse.Namespace) -> int:
    """Each entry of the tables file: its tables, row counts, newest commit (Trino)."""
    from datetime import datetime

    from lakehouse import tables_report
    from lakehouse.clients import trino_connection
    from lakehouse_tables.declarations import default_tables_path, load_tables

    tables = load_tables(args.tables or default_tables_path())
    database = settings["LAKEHOUSE_DATABASE"]
    cursor = trino_connection(settings.endpoints, "hive", database).cursor()

    def query(sql: str) -> list[Any]:
        cursor.execute(sql)
        return list(cursor.fetchall())

    try:
        reports = tables_report.gather(query, tables, database)
    except tables_report.UNREACHABLE as error:
        _say(f"The stack is not running: Trino at {settings.trino_url} does not answer ({error}).")
        _say("Start it with `lakehouse up` (or `make local-up`).")
        return 3
    _say(f"Database {database}, tables file {args.tables or default_tables_path()}")
    _say(tables_report.format_reports(reports, datetime.now().astimezone()))
    return 0


def cmd_cost(settings: Settings, args: argparse.Namespace) -> int:
    """The same pipeline's monthly cost on AWS (lakehouse.cost)."""
    from lakehouse import cost

    try:
        work = cost.Workload(
            events_per_sec=args.events_per_sec,
            event_bytes=args.event_bytes,
            distinct_keys=args.distinct_keys,
            event_types=args.event_types,
            trigger_seconds=args.trigger_seconds,
            utilisation=args.utilisation,
        )
    except cost.CostError as error:
        _say(f"error: {error}")
        return 2
    if args.cpu_s_per_1k:
        cpu, cpu_from = args.cpu_s_per_1k, "--cpu-s-per-1k"
    else:
        cpu, cpu_from = cost.measured_cpu_s_per_1k()
    prices = cost.load_prices()
    _say(cost.report(work, cost.estimate(work, cpu, prices), prices, cpu_from))
    return 0


def cmd_aws_policy(settings: Settings, args: argparse.Namespace) -> int:
    """An IAM policy of the AWS target, filled in for the account the credentials reach."""
    import json

    from lakehouse import aws_policy
    from lakehouse.clients import sts_identity

    if settings.target != "aws":
        _say("error: set LAKEHOUSE_TARGET=aws (and LAKEHOUSE_BUCKET, a region): docs/aws.md")
        return 2
    arn = sts_identity(settings.endpoints)
    values = {
        "partition": arn.split(":")[1],
        "region": settings["AWS_REGION"],
        "account": arn.split(":")[4],
        "bucket": settings["LAKEHOUSE_BUCKET"],
        "stream": args.stream or settings["KINESIS_STREAM_NAME"],
        "database": settings["LAKEHOUSE_DATABASE"],
    }
    print(json.dumps(aws_policy.render(args.role, values), indent=2))
    return 0


def cmd_submit(settings: Settings, args: argparse.Namespace) -> int:
    """The job with its executors on a Spark standalone cluster (lakehouse.submit), as pods
    on Kubernetes (lakehouse.kubernetes), as an EMR Serverless job run
    (lakehouse.emr_serverless) or as a step of an EMR cluster (lakehouse.emr_on_ec2)."""
    from lakehouse import submit

    targets = [t for t in ("master", "emr_serverless", "emr_cluster") if getattr(args, t)]
    if len(targets) != 1:
        _say(
            "error: say where, once: --master spark://host:7077 or k8s://https://host:port, "
            "--emr-serverless "
            "APPLICATION_ID or --emr-cluster CLUSTER_ID"
        )
        return 2
    if args.emr_serverless:
        return _submit_emr_serverless(settings, args)
    if args.emr_cluster:
        return _submit_emr_on_ec2(settings, args)
    job_args = _job_args(settings, [a for a in args.job_args if a != "--"])
    if job_args is None:
        return 2
    if args.master.startswith("k8s://"):
        return _submit_kubernetes(settings, args, job_args)
    cluster = submit.Cluster(
        master=args.master,
        total_executor_cores=args.total_executor_cores,
        executor_memory=args.executor_memory,
        driver_host=args.driver_host,
        ship_jars=args.ship_jars,
    )
    env = submit.cluster_env(settings, cluster)
    _say(f"The job's driver here, its executors on {cluster.master}")
    return _in_foreground(job_launcher.job_command(job_args, master=cluster.master), env)


def _submit_kubernetes(settings: Settings, args: argparse.Namespace, job_args: list[str]) -> int:
    from lakehouse import kubernetes

    run = kubernetes.KubernetesRun(
        master=args.master,
        image=args.image,
        namespace=args.namespace,
        service_account=args.service_account,
        executors=args.executors,
        executor_memory=args.executor_memory,
    )
    command = kubernetes.prepare(settings, run, job_args)
    if args.dry_run:
        _say("dry run: start it with")
        print(shlex.join(command))
        return 0
    _say(f"The job's driver and executors as pods in namespace {run.namespace} of {run.master}")
    env = {**os.environ, "JAVA_HOME": str(installers.spark_java_home())}
    rc = subprocess.run(command, env=env).returncode
    if rc == 0:
        _say(f"the driver's pod is created; follow it: {kubernetes.follow_hint(run)}")
    return rc


def _emr_request(
    settings: Settings, args: argparse.Namespace, needs: Sequence[str], build: Any
) -> dict[str, Any] | None:
    """The request `build(job_args, s3)` prepares, written to --request-out; None (and the
    reason said) when an option is missing or the job cannot run there."""
    from lakehouse.clients import s3_client
    from lakehouse.emr import EmrError

    target = "--emr-serverless" if args.emr_serverless else "--emr-cluster"
    for option in needs:
        if not getattr(args, option):
            _say(f"error: {target} needs --{option.replace('_', '-')}")
            return None
    job_args = _job_args(settings, [a for a in args.job_args if a != "--"])
    if job_args is None:
        return None
    try:
        request: dict[str, Any] = build(job_args, s3_client(settings.endpoints))
    except EmrError as error:
        _say(f"error: {error}")
        return None
    Path(args.request_out).write_text(json.dumps(request, indent=2) + "\n")
    _say(f"wrote the request to {args.request_out}")
    return request


def _submit_emr_serverless(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse import emr_serverless
    from lakehouse.clients import emr_serverless_client

    def build(job_args: list[str], s3: Any) -> dict[str, Any]:
        run = emr_serverless.JobRun(
            application_id=args.emr_serverless,
            execution_role_arn=args.execution_role_arn,
            python_env=args.python_env,
            logs_uri=args.logs_uri,
        )
        return emr_serverless.prepare(settings, run, job_args, s3, _say)

    request = _emr_request(settings, args, ("execution_role_arn", "python_env"), build)
    if request is None:
        return 2
    if args.dry_run:
        _say(
            "dry run: start it with `aws emr-serverless start-job-run "
            f"--cli-input-json file://{args.request_out}`"
        )
        return 0
    started = emr_serverless_client(settings.endpoints).start_job_run(**request)
    _say(
        f"started job run {started['jobRunId']} on application {started['applicationId']}; "
        f"follow it: aws emr-serverless get-job-run --application-id "
        f"{started['applicationId']} --job-run-id {started['jobRunId']}"
    )
    return 0


def _submit_emr_on_ec2(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse import emr_on_ec2
    from lakehouse.clients import emr_client

    def build(job_args: list[str], s3: Any) -> dict[str, Any]:
        step = emr_on_ec2.Step(cluster_id=args.emr_cluster, python_env=args.python_env)
        return emr_on_ec2.prepare(settings, step, job_args, s3, _say)

    request = _emr_request(settings, args, ("python_env",), build)
    if request is None:
        return 2
    cluster = request["JobFlowId"]
    if args.dry_run:
        _say(f"dry run: add it with boto3, emr.add_job_flow_steps(**request) ({cluster})")
        return 0
    step_id = emr_client(settings.endpoints).add_job_flow_steps(**request)["StepIds"][0]
    _say(
        f"added step {step_id} to cluster {cluster}: it ends once YARN accepts the job; "
        f"follow it: aws emr describe-step --cluster-id {cluster} --step-id {step_id}, "
        "then the application in YARN's resource manager (`yarn application -list` on the "
        "primary node) or Spark's history server"
    )
    return 0


def cmd_aws_trino_catalogs(settings: Settings, args: argparse.Namespace) -> int:
    """Trino's catalogs over Glue and S3 for the aws target (lakehouse.trino_glue)."""
    from lakehouse.trino_glue import glue_catalogs

    for name, properties in glue_catalogs(settings).items():
        if args.dir:
            path = Path(args.dir) / f"{name}.properties"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(properties)
            _say(f"wrote {path}")
        else:
            print(f"# --- {name}.properties\n{properties}", end="")
    return 0


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    """Re-read one entry's raw JSON copy, or its quarantined records, into its Hudi tables
    (lakehouse_job.backfill)."""
    if stack.supervisor_for(settings).is_running(stack.JOB):
        _say("The streaming job is running: stop it first (a backfill writes the same tables),")
        _say("e.g. `lakehouse down` then `lakehouse up`, and start the job again after.")
        return 3
    job_args = ["--event-type", args.table]
    if args.arrived_from:
        job_args.append(f"--from={args.arrived_from}")
    if args.from_quarantine:
        job_args.append("--from-quarantine")
    if args.tables:
        job_args += ["--tables", args.tables]
    command = job_launcher.job_command(job_args, module="lakehouse_job.backfill")
    return subprocess.run(command, env=job_launcher.job_env(settings), check=False).returncode


def cmd_schema(settings: Settings, args: argparse.Namespace) -> int:
    """`schema diff`: what the next start of the job would change in each table."""
    from lakehouse import schema_diff
    from lakehouse.clients import s3_client
    from lakehouse_tables.declarations import default_tables_path

    tables = Path(args.tables) if args.tables else default_tables_path()
    warehouse = args.warehouse or (
        f"s3a://{settings['LAKEHOUSE_BUCKET']}/warehouse/{settings['LAKEHOUSE_DATABASE']}.db"
    )
    refused = schema_diff.diff(s3_client(settings.endpoints), tables, warehouse, _say)
    return 5 if refused else 0


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


def cmd_load(settings: Settings, args: argparse.Namespace) -> int:
    """Locust master + workers against the local stream; the ledger goes to .local/ledger."""
    from loadgen import options
    from loadgen.runner import run_load

    opts = options.from_namespace(
        args,
        stream_name=settings["KINESIS_STREAM_NAME"],
        kinesis_endpoint=settings.kinesis_endpoint,
        region=settings["AWS_REGION"],
        ledger_dir=str(demo.ledger_dir(settings)),
        metrics_port=settings.port("LOADGEN_METRICS_PORT"),
    )
    if opts.web:
        opts = opts.replace(run_time="")  # until stopped from the UI
    _say(
        f"Load: {opts.workers} workers, {opts.users} users x {opts.events_per_sec:g} events/s, "
        f"model {opts.event_model}, "
        f"{f'web UI on http://{opts.web_host}:{opts.web_port}' if opts.web else opts.run_time}"
    )
    return run_load(opts, log_dir=settings.logs_dir)


def cmd_cdc_load(settings: Settings, args: argparse.Namespace) -> int:
    """Locust users running the shop's transactions in the CDC part's PostgreSQL."""
    from lakehouse.cdc_workload import locust_command

    run_time = None if args.web else args.run_time
    if args.web:
        _say("CDC load: Locust's web UI on http://127.0.0.1:8089 (Ctrl-C stops it)")
    else:
        _say(
            f"CDC load: {args.users} users x {args.transactions_per_sec:g} transactions/s "
            f"for {args.run_time} on {settings['CDC_PG_HOST']}:{settings['CDC_PG_PORT']}"
        )
    command = locust_command(args.users, args.transactions_per_sec, run_time)
    env = {**os.environ, **settings.service_env()}
    try:
        return subprocess.run(command, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130


def cmd_verify(settings: Settings, args: argparse.Namespace) -> int:
    """Compare what Trino returns with the load generator's ledger, or with PostgreSQL."""
    if args.cdc:
        return verify_cdc(settings, args.tables)
    if args.compose:
        return verify_compose(settings, args.table_suffix)
    return 0 if demo.verify_ledger(settings, args.table_suffix) else 1


def verify_cdc(settings: Settings, tables_file: str | None) -> int:
    """The CDC oracle: every captured table in PostgreSQL equals its live view in Trino."""
    from lakehouse import cdc
    from lakehouse.clients import trino_connection
    from lakehouse_tables.declarations import load_tables

    tables = load_tables(tables_file or cdc.CDC_TABLES_YAML)
    cursor = trino_connection(settings.endpoints, "hive").cursor()
    try:
        ok = cdc.verify(settings, cursor, settings["LAKEHOUSE_DATABASE"], tables, _say)
    except cdc.CdcError as error:
        _say(f"error: {error}")
        return 2
    _say("PostgreSQL and the lake agree." if ok else "PostgreSQL and the lake differ.")
    return 0 if ok else 1


def verify_compose(settings: Settings, table_suffix: str, timeout_s: float = 300) -> int:
    """The ledger of the Locust web UI's runs in the compose stack against its Trino,
    once the job has caught up (a compose job commits every few seconds)."""
    import tempfile

    from lakehouse.clients import Endpoints
    from loadgen.ledger import read_ledger

    with tempfile.TemporaryDirectory(prefix="ui-ledger-") as tmp:
        ledger = project.copy_ui_ledger(Path(tmp) / "ledger")
        acked = sum(1 for entry in read_ledger(ledger) if entry.get("acked"))
        endpoints = Endpoints(
            region=settings["AWS_REGION"], trino=f"http://{project.published('trino', 8080)}"
        )
        database = settings["LAKEHOUSE_DATABASE"]
        _say(f"Ledger of the Locust UI's runs: {acked:,} records acknowledged")
        deadline = time.monotonic() + timeout_s
        while (done := project.job_records_processed()) < acked:
            if time.monotonic() > deadline:
                _say(f"The job has processed {done:,} of {acked:,} records; checking anyway")
                _say(
                    "  (why the job is behind: `docker compose logs job`, `docker compose ps job`)"
                )
                break
            _say(f"  the job has processed {done:,} of {acked:,} records; waiting")
            time.sleep(5)
        while not demo.ledger_agrees(ledger, endpoints, database, table_suffix, io.StringIO()):
            if time.monotonic() > deadline:
                break
            time.sleep(5)  # the last commit's hive sync, or a compaction for _mor_ro
        ok = demo.ledger_agrees(ledger, endpoints, database, table_suffix, sys.stdout)
    if not ok and table_suffix == "_mor_ro":
        _say("MoR read-optimized views show compacted data only: `docker compose stop job`")
        _say("compacts every MoR table before it exits; verify again after it.")
    return 0 if ok else 1


def cmd_demo(settings: Settings, args: argparse.Namespace) -> int:
    """Stack up, job running, a minute of load, then row counts, a query, freshness."""
    cmd_up(settings, args)
    _say("\nStarting the streaming job (Spark local[2])")
    demo.start_job(settings, _say)
    _say(f"\nSending events for {args.run_time} (Locust, headless)")
    code = cmd_load(settings, args)
    if code != 0:
        _say(f"warning: the load generator exited with {code}; see {settings.logs_dir}")
    target = demo.acked_in_ledger(settings)
    _say(f"\nWaiting for the job to process the {target:,} acknowledged records")
    demo.wait_until_caught_up(settings, target, _say)
    time.sleep(2)  # the last batch's hive sync
    demo.report(settings, _say)
    _say("\nLedger check (every acknowledged event vs. Trino, `make verify`):")
    verified = all(demo.verify_ledger(settings, suffix) for suffix in ("_cow", "_mor_ro"))
    _say("")
    print_urls(settings)
    _say("\nThe stack and the job keep running: explore, then `make local-down` stops all.")
    return 0 if verified else 1


def cmd_bench(settings: Settings, args: argparse.Namespace) -> int:
    """Throughput, freshness and cost of the job at fixed input rates; commit cost vs size."""
    from lakehouse.bench.pipeline import parse_variant, profile_settings
    from lakehouse.bench.run import BenchOptions, run_bench

    def ints(text: str) -> tuple[int, ...]:
        return tuple(int(x) for x in text.split(",") if x)

    try:
        variants = tuple(parse_variant(v) for v in args.variant)
    except ValueError as error:
        _say(f"error: {error}")
        return 2
    for name, _ in variants:
        try:
            profile_settings(settings, name, variants)  # a wrong setting, before any work
        except ConfigError as error:
            _say(f"error: --variant {name}: {error}")
            return 2
    options = BenchOptions(
        rates=ints(args.rates),
        seconds=args.seconds,
        keys=args.keys,
        shards=args.shards,
        trigger_s=args.trigger,
        drain_s=args.drain,
        profiles=tuple(args.profiles.split(",")),
        warmup_s=args.warmup,
        probe=args.probe,
        rt_probe=not args.no_rt_probe,
        job_args=tuple(shlex.split(args.job_args)),
        variants=variants,
        pipeline=not args.commit_cost_only,
        commit_cost=args.commit_cost or args.commit_cost_only,
        commit_sizes=ints(args.commit_sizes),
        commit_batch=args.commit_batch,
        drain_events=args.drain_events,
        repeat=args.repeat,
        max_records_per_shard=args.max_records_per_shard,
        json_path=Path(args.json) if args.json else None,
        s3_requests=args.s3_requests,
        keep_tables=args.keep_tables,
    )
    return run_bench(settings, options, _say)


def cmd_sql(settings: Settings, args: argparse.Namespace) -> int:
    """Trino's CLI on the local stack (catalog hive, the lakehouse database)."""
    extra = [a for a in args.shell_args if a != "--"]
    return subprocess.call(shells.trino_cli_command(settings, extra))


def cmd_spark_sql(settings: Settings, args: argparse.Namespace) -> int:
    """Spark SQL with Hudi on the local stack's metastore and S3."""
    extra = [a for a in args.shell_args if a != "--"]
    return subprocess.call(
        shells.spark_sql_command(settings, extra), env=shells.spark_env(settings)
    )


def cmd_notebook(settings: Settings, args: argparse.Namespace) -> int:
    """JupyterLab over notebooks/ against the local stack (started first if needed)."""
    return shells.run_notebook_server(settings, _say, args.port)


def cmd_compose(settings: Settings, args: argparse.Namespace) -> int:
    """The stack in containers: prepare this machine, then plain `docker compose`."""
    if args.action in ("prepare", "up"):
        _say("Preparing Docker (each step only where the normal path fails)")
        project.prepare(settings, _say)
    if args.action == "up":
        seconds = project.up(_say, *[a for a in args.compose_args if a != "--"])
        _say(f"\nAll services healthy in {seconds:.0f}s\n")
    if args.action in ("up", "status"):
        rows = project.services()
        _say(project.format_table(rows))
        total = sum(row.memory_mib or 0 for row in rows)
        _say(f"\nMemory in use by the stack's containers: {total:,.0f} MiB")
        if args.action == "up":
            _say("\nLoad from the Locust UI, then `lakehouse verify --compose` checks it in Trino.")
            _say("Stop with `make down` (keeps the data) or `docker compose down -v` (deletes it).")
        return 0 if rows and all(row.state == "running" for row in rows) else 3
    if args.action == "down":
        project.down(volumes=args.volumes)
    if args.action == "engine-down":
        engine.stop_engine(settings, _say)
    return 0


Handler = Callable[[Settings, argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    handler: Handler
    help: str
    group: str
    examples: str  # the end of its --help: one or two command lines


# `lakehouse --help` lists the commands in these groups, in this order.
GROUPS = ("stack", "pipeline", "query", "tables", "AWS", "development")

COMMANDS: dict[str, Command] = {
    # --- stack
    "up": Command(
        cmd_up,
        "start every service as a host process, wait until healthy, bootstrap",
        "stack",
        "lakehouse up\nlakehouse up --cdc    # with PostgreSQL and the Debezium service",
    ),
    "down": Command(cmd_down, "stop what `up` started (the job first)", "stack", "lakehouse down"),
    "status": Command(
        cmd_status,
        "table of services: state, URL, PID, memory, log",
        "stack",
        "lakehouse status",
    ),
    "logs": Command(
        cmd_logs,
        "a local service's log: its last lines, -f to follow",
        "stack",
        "lakehouse logs trino\nlakehouse logs job -f",
    ),
    "top": Command(
        cmd_top,
        "the pipeline live from Prometheus: in, behind, fresh, quarantined",
        "stack",
        "lakehouse top\nlakehouse top --once",
    ),
    "compose": Command(
        cmd_compose,
        "the stack in containers: prepare | up | status | down",
        "stack",
        "lakehouse compose up\nlakehouse compose down --volumes",
    ),
    "install": Command(
        cmd_install,
        "download and build everything the stack needs, into the cache",
        "stack",
        "lakehouse install",
    ),
    # --- pipeline
    "run": Command(
        cmd_run,
        "run the streaming job (extra job options after --)",
        "pipeline",
        "lakehouse run -- --trigger-seconds 10\nlakehouse run --background --tables my-tables.yaml",
    ),
    "job": Command(
        cmd_job,
        "the job alone: start | stop | restart | logs (the stack keeps running)",
        "pipeline",
        "lakehouse job restart    # after editing the tables file\nlakehouse job logs -f",
    ),
    "send": Command(
        cmd_send,
        "send a file of JSON lines to the stream, one record a line",
        "pipeline",
        "lakehouse send my-events.jsonl\n"
        "cat my-events.jsonl | lakehouse send - --tables my-tables.yaml --kpl-aggregate 100",
    ),
    "load": Command(
        cmd_load,
        "run the Locust load generator against the local stream",
        "pipeline",
        "lakehouse load --run-time 5m --users 4\n"
        "lakehouse load --tables my-tables.yaml --event-model sensors",
    ),
    "demo": Command(
        cmd_demo,
        "the whole flow: stack up, job, load, results",
        "pipeline",
        "lakehouse demo\nlakehouse demo --run-time 30s",
    ),
    "verify": Command(
        cmd_verify,
        "compare Trino's tables with the load generator's ledger",
        "pipeline",
        "lakehouse verify\nlakehouse verify --cdc",
    ),
    "cdc-load": Command(
        cmd_cdc_load,
        "Locust users making transactions in the CDC part's PostgreSQL",
        "pipeline",
        "lakehouse cdc-load --run-time 60s",
    ),
    # --- query
    "sql": Command(
        cmd_sql,
        "Trino's CLI on the local stack (extra CLI options after --)",
        "query",
        "lakehouse sql\nlakehouse sql -- --execute 'SELECT count(*) FROM orders'",
    ),
    "spark-sql": Command(
        cmd_spark_sql,
        "Spark SQL with Hudi on the local stack (_rt, time travel)",
        "query",
        "lakehouse spark-sql\nlakehouse spark-sql -- -e 'SELECT count(*) FROM hudi_orders_mor_rt'",
    ),
    "notebook": Command(
        cmd_notebook,
        "JupyterLab on 127.0.0.1:8888 over notebooks/",
        "query",
        "lakehouse notebook",
    ),
    # --- tables
    "tables": Command(
        cmd_tables,
        "each declared entry: its tables, row counts, newest commit",
        "tables",
        "lakehouse tables\nlakehouse tables --tables my-tables.yaml",
    ),
    "schema": Command(
        cmd_schema,
        "schema diff: what the job's next start changes in each table",
        "tables",
        "lakehouse schema diff --tables my-tables.yaml",
    ),
    "backfill": Command(
        cmd_backfill,
        "refill an entry's Hudi tables from its raw copy or quarantine",
        "tables",
        "lakehouse backfill --table orders --from 2026-01-01T00:00:00Z\n"
        "lakehouse backfill --table orders --from-quarantine",
    ),
    # --- AWS
    "submit": Command(
        cmd_submit,
        "the job on a Spark cluster: standalone, Kubernetes or EMR",
        "AWS",
        "lakehouse submit --master spark://10.0.0.10:7077\n"
        "lakehouse submit --emr-serverless APP_ID --execution-role-arn ARN "
        "--python-env env.tar.gz --dry-run",
    ),
    "cost": Command(
        cmd_cost,
        "monthly cost of this pipeline on AWS, from dated list prices",
        "AWS",
        "lakehouse cost --events-per-sec 1000 --event-bytes 300",
    ),
    "aws-policy": Command(
        cmd_aws_policy,
        "the job's or load generator's IAM policy for your account",
        "AWS",
        "LAKEHOUSE_TARGET=aws LAKEHOUSE_BUCKET=my-lakehouse lakehouse aws-policy job",
    ),
    "aws-trino-catalogs": Command(
        cmd_aws_trino_catalogs,
        "Trino's catalog files for the tables in Glue",
        "AWS",
        "LAKEHOUSE_TARGET=aws LAKEHOUSE_BUCKET=my-lakehouse "
        "lakehouse aws-trino-catalogs etc/catalog",
    ),
    # --- development
    "bench": Command(
        cmd_bench,
        "benchmark the job: throughput, freshness, CPU, commit cost",
        "development",
        "lakehouse bench --rates 1000 --run-time 2m\n"
        "lakehouse bench --drain-events 200000 --profiles fast",
    ),
    "java-test": Command(
        cmd_java_test,
        "run the JUnit tests (Kinesis source, CDC service)",
        "development",
        "lakehouse java-test",
    ),
}


def duration(text: str) -> float:
    """Seconds from a duration as Locust's --run-time takes it: 90, 90s, 5m, 1h30m, 1m30s."""
    match = re.fullmatch(
        r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", text.strip()
    )
    if not text.strip() or match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 90, 90s, 5m, 1h30m)")
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def version_text() -> str:
    """The package's version and the pinned versions of the engines (versions.env)."""
    from importlib.metadata import PackageNotFoundError, version

    from lakehouse.config import REPO_ROOT, parse_env_file

    try:
        own = version("streaming-lakehouse-sandbox")
    except PackageNotFoundError:
        own = "(not installed)"
    pinned = parse_env_file(REPO_ROOT / "versions.env")
    return (
        f"lakehouse {own}: Spark {pinned['PYSPARK_VERSION']}, Hudi {pinned['HUDI_VERSION']}, "
        f"Trino {pinned['TRINO_VERSION']} (versions.env)"
    )


class _Version(argparse.Action):
    """--version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the versions and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_text())
        parser.exit()


def _overview() -> str:
    """`lakehouse --help`'s list of commands, by group."""
    width = max(len(name) for name in COMMANDS)
    lines = ["commands:"]
    for group in GROUPS:
        lines.append(f"  {group}:")
        lines += [
            f"    {name:<{width}}  {command.help}"
            for name, command in COMMANDS.items()
            if command.group == group
        ]
    lines += ["", "`lakehouse COMMAND --help` lists a command's options, with examples."]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lakehouse",
        usage="lakehouse [-h] [--version] COMMAND ...",
        description=__doc__,
        epilog=_overview(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="lakehouse")
    parsers = {
        name: sub.add_parser(name, **_described(command.help, command.examples))
        for name, command in COMMANDS.items()
    }
    _stack_arguments(parsers)
    _pipeline_arguments(parsers)
    _tables_arguments(parsers)
    _aws_arguments(parsers)
    add_bench_arguments(parsers["bench"])
    return parser


def _described(text: str, examples: str) -> dict[str, Any]:
    """A subcommand's description, and its examples at the end of its --help."""
    lines = "\n".join(f"  {line}" for line in examples.split("\n"))
    return {
        "help": text,
        "description": text,
        "epilog": f"examples:\n{lines}",
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def _tables_option(
    parser: argparse.ArgumentParser,
    what: str = "",
    default: str = "$LAKEHOUSE_TABLES, else the packaged one",
) -> None:
    parser.add_argument(
        "--tables", metavar="FILE", help=f"the tables file{what} (default: {default})"
    )


def _log_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--follow", action="store_true", help="then print what follows")
    parser.add_argument(
        "-n", "--lines", type=int, default=200, help="how many last lines (default: 200)"
    )


def _stack_arguments(parsers: dict[str, argparse.ArgumentParser]) -> None:
    parsers["up"].add_argument(
        "--cdc",
        action="store_true",
        help="also the CDC part: PostgreSQL and the Debezium service (or CDC_ENABLED=1)",
    )
    logs = parsers["logs"]
    logs.add_argument(
        "service",
        choices=[*service_names(), *CDC_SERVICE_BUILDERS, stack.JOB],
        help="the service (the names `lakehouse status` shows), or job",
    )
    _log_options(logs)
    top = parsers["top"]
    top.add_argument(
        "--every", type=duration, default=2.0, help="time between refreshes (default: 2s)"
    )
    top.add_argument("--once", action="store_true", help="print one screen and exit")
    compose = parsers["compose"]
    compose.add_argument(
        "action",
        choices=["prepare", "up", "status", "down", "engine-down"],
        help="prepare: engine, Compose v2, base image, stand-ins (each only if missing); "
        "up: prepare, then docker compose up -d --wait --build, then the status table; "
        "engine-down: stop a dockerd that prepare started",
    )
    compose.add_argument("--volumes", action="store_true", help="down: delete the data too")
    compose.add_argument("compose_args", nargs=argparse.REMAINDER, help="up: more compose args")


def _job_options(parser: argparse.ArgumentParser) -> None:
    """How `run` and `job start` name the job's tables file and its own options."""
    _tables_option(parser, " the job reads")
    parser.add_argument(
        "--cdc",
        action="store_true",
        help="the CDC part's tables (services/cdc/tables.yaml) from every table's stream",
    )
    parser.add_argument(
        "job_args",
        nargs=argparse.REMAINDER,
        help="the job's own options, after -- (`python -m lakehouse_job.job --help`)",
    )


def _pipeline_arguments(parsers: dict[str, argparse.ArgumentParser]) -> None:
    run = parsers["run"]
    run.add_argument(
        "--background",
        action="store_true",
        help="supervised, like the services: restarted if it fails, stopped by `lakehouse "
        "down` or `lakehouse job stop` (same as `lakehouse job start`); without it, in the "
        "foreground until Ctrl-C, which stops it after the batch in flight",
    )
    _job_options(run)
    job = parsers["job"].add_subparsers(
        dest="action", required=True, metavar="ACTION", prog="lakehouse job"
    )
    start = job.add_parser(
        "start",
        **_described(
            "start it supervised, as `run --background`",
            "lakehouse job start\n"
            "lakehouse job start --tables my-tables.yaml -- --trigger-seconds 10",
        ),
    )
    _job_options(start)
    stop = job.add_parser(
        "stop",
        **_described(
            "stop it after the batch in flight (SIGTERM, as `lakehouse down` does)",
            "lakehouse job stop",
        ),
    )
    restart = job.add_parser(
        "restart",
        **_described(
            "stop it, then start it with the options it ran with, re-reading the tables file "
            "(`lakehouse schema diff` shows first what the start will change)",
            "lakehouse job restart\nlakehouse job restart --tables my-tables.yaml",
        ),
    )
    _tables_option(restart, " to read from now on", "the one it ran with")
    restart.add_argument(
        "job_args",
        nargs=argparse.REMAINDER,
        help="the job's own options, after -- (default: those it ran with)",
    )
    for action in (stop, restart):
        action.add_argument(
            "--timeout",
            type=duration,
            default=job_control.STOP_TIMEOUT_S,
            help="how long the batch in flight may take before the job is killed "
            f"(default: {job_control.STOP_TIMEOUT_S:.0f}s)",
        )
    _log_options(
        job.add_parser(
            "logs",
            **_described(
                "its log: the last lines, -f to follow", "lakehouse job logs\nlakehouse job logs -f"
            ),
        )
    )
    for action in job.choices.values():
        action.add_argument(
            "--compose", action="store_true", help="print the Compose stack's command instead"
        )
    parsers["job"].set_defaults(tables=None, job_args=[], cdc=False)
    send = parsers["send"]
    send.add_argument("file", help="JSON lines, one record a line; - for standard input")
    send.add_argument("--stream", help="default: the stack's stream (KINESIS_STREAM_NAME)")
    _tables_option(send, " whose record rules each line is held to")
    send.add_argument(
        "--send-invalid",
        action="store_true",
        help="send the lines the job will quarantine too (to try the quarantine)",
    )
    send.add_argument(
        "--kpl-aggregate",
        type=int,
        default=0,
        metavar="N",
        help="N records to a KPL-aggregated Kinesis record (default 0: plain records)",
    )
    send.add_argument(
        "--max-attempts", type=int, default=8, help="PutRecords attempts per record (default: 8)"
    )
    from loadgen import options

    for name in ("load", "demo"):
        options.add_arguments(parsers[name], skip=(*SETTINGS_LOAD_OPTIONS, "tables_file"))
        parsers[name].add_argument(
            "--tables",
            "--tables-file",
            dest="tables_file",
            default="",
            metavar="FILE",
            help="the tables file (default: $LAKEHOUSE_TABLES, else the packaged one; "
            "--tables-file is its former name)",
        )
    verify = parsers["verify"]
    verify.add_argument("--table-suffix", default="_cow", help="_cow or _mor_ro")
    verify.add_argument(
        "--compose", action="store_true", help="the compose stack's Locust web UI runs"
    )
    verify.add_argument(
        "--cdc",
        action="store_true",
        help="the CDC part: each captured PostgreSQL table against its live view in Trino",
    )
    verify.add_argument(
        "--tables", help="with --cdc: the tables file (default: services/cdc/tables.yaml)"
    )
    cdc_load = parsers["cdc-load"]
    cdc_load.add_argument("--users", type=int, default=2)
    cdc_load.add_argument("--transactions-per-sec", type=float, default=5, help="per user")
    cdc_load.add_argument("--run-time", default="60s", help="how long, e.g. 60s, 5m")
    cdc_load.add_argument("--web", action="store_true", help="Locust's web UI instead")
    for name in ("sql", "spark-sql"):
        parsers[name].add_argument("shell_args", nargs=argparse.REMAINDER)
    parsers["notebook"].add_argument("--port", type=int, default=shells.NOTEBOOK_PORT)


def _tables_arguments(parsers: dict[str, argparse.ArgumentParser]) -> None:
    _tables_option(parsers["tables"])
    schema = parsers["schema"]
    schema.add_argument("action", choices=["diff"])
    _tables_option(schema)
    schema.add_argument("--warehouse", help="the job's --warehouse (default: the local stack's)")
    backfill = parsers["backfill"]
    backfill.add_argument("--table", required=True, help="the tables file entry, e.g. orders")
    backfill.add_argument(
        "--from", dest="arrived_from", help="records that arrived from this time on (ISO 8601)"
    )
    _tables_option(backfill)
    backfill.add_argument(
        "--from-quarantine",
        action="store_true",
        help="the entry's quarantined records instead of its raw copy: those the job accepts "
        "now (a type declared or widened since) go to its tables and leave the quarantine",
    )


def _aws_arguments(parsers: dict[str, argparse.ArgumentParser]) -> None:
    submit = parsers["submit"]
    submit.add_argument(
        "--master",
        help="the standalone master, spark://host:7077, or Kubernetes, k8s://https://host:port",
    )
    k8s = submit.add_argument_group("Kubernetes (--master k8s://...; docs/aws.md)")
    k8s.add_argument("--image", default="", help="the lakehouse/spark image the pods run")
    k8s.add_argument("--namespace", default="default")
    k8s.add_argument(
        "--service-account",
        default="lakehouse-job",
        help="the driver's service account (bound to the job's IAM role on EKS)",
    )
    k8s.add_argument("--executors", type=int, default=1, help="executor pods")
    emr = submit.add_argument_group("EMR (instead of --master; docs/aws.md)")
    emr.add_argument("--emr-serverless", metavar="APPLICATION_ID", help="start a job run there")
    emr.add_argument(
        "--emr-cluster", metavar="CLUSTER_ID", help="add the job as a step of that EMR cluster"
    )
    emr.add_argument("--execution-role-arn", help="EMR Serverless: the role the job runs as")
    emr.add_argument(
        "--python-env",
        help="the job's Python environment archive (local or s3://): "
        "services/aws/emr-serverless/Dockerfile builds it",
    )
    emr.add_argument("--logs-uri", default="", help="EMR Serverless: s3:// for the job run's logs")
    emr.add_argument(
        "--request-out",
        default="emr-request.json",
        help="where the request (StartJobRun, or AddJobFlowSteps) is written",
    )
    emr.add_argument(
        "--dry-run",
        action="store_true",
        help="upload and write the request (Kubernetes: print the command), start nothing",
    )
    submit.add_argument("--total-executor-cores", type=int, default=1)
    submit.add_argument("--executor-memory", default="1g")
    submit.add_argument(
        "--driver-host",
        default="127.0.0.1",
        help="this machine's address as the cluster's hosts reach it",
    )
    submit.add_argument(
        "--ship-jars",
        action="store_true",
        help="send the jars to each executor (default: they are at the same paths on its host)",
    )
    submit.add_argument("job_args", nargs=argparse.REMAINDER)
    cost = parsers["cost"]
    cost.add_argument("--events-per-sec", type=float, required=True)
    cost.add_argument("--event-bytes", type=int, required=True, help="average record size")
    cost.add_argument("--distinct-keys", type=int, default=1_000_000, help="rows in a table")
    cost.add_argument("--event-types", type=int, default=1, help="entries of the tables file")
    cost.add_argument("--trigger-seconds", type=float, default=5.0, help="micro-batch interval")
    cost.add_argument(
        "--cpu-s-per-1k",
        type=float,
        help="the job's CPU-seconds per 1,000 events (default: the newest drain benchmark's)",
    )
    cost.add_argument("--utilisation", type=float, default=0.6, help="of the job's vCPUs")
    parsers["aws-trino-catalogs"].add_argument(
        "dir",
        nargs="?",
        help="write hudi.properties and hive.properties here (Trino's etc/catalog)",
    )
    policy = parsers["aws-policy"]
    policy.add_argument("role", choices=["job", "load-generator"])
    policy.add_argument("--stream", help="stream name or pattern (default: KINESIS_STREAM_NAME)")


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rates", default="1000,2500,5000", help="input events/s, comma-separated")
    p.add_argument(
        "--run-time",
        "--seconds",
        dest="seconds",
        type=duration,
        default=60,
        help="sending time per rate, e.g. 60s, 10m (the budget's figure is over 10m: a job's "
        "JIT compiler is still busy in its first minutes, see the p95 by minute; --seconds "
        "is its former name)",
    )
    p.add_argument("--keys", type=int, default=50_000, help="distinct order ids sent")
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--trigger", type=duration, default=2.0, help="job trigger interval (2s)")
    p.add_argument(
        "--drain", type=duration, default=60, help="longest wait after sending (default: 60s)"
    )
    p.add_argument(
        "--profiles",
        default="fast,baseline",
        help="job profiles to compare: fast, baseline (table layouts), hudi-sink (Hudi's "
        "streaming sink, the Hudi tables only), hudi-sink-all (Hudi's sink for the tables and "
        "the quarantine, Spark's JSON file sink for the raw copy: every output the job "
        "writes), fast-nometrics (fast without its Prometheus metrics and Hudi's)",
    )
    p.add_argument(
        "--warmup", type=duration, default=60, help="time sent at the rate before measuring (60s)"
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="also poll the tables (Trino, hudi-rs) for freshness as readers see it: a spot "
        "check that takes CPU from the job, and the only freshness of hudi-sink",
    )
    p.add_argument("--no-rt-probe", action="store_true", help="with --probe: skip hudi-rs")
    p.add_argument("--commit-cost", action="store_true", help="also per-commit cost vs size")
    p.add_argument("--commit-cost-only", action="store_true")
    p.add_argument("--commit-sizes", default="10000,100000,1000000")
    p.add_argument("--commit-batch", type=int, default=10_000)
    p.add_argument("--job-args", default="", help='extra job options, e.g. "--trigger-seconds 4"')
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JOB_OPTIONS",
        help="a profile of your own to compare, run interleaved after --profiles: the fast "
        "profile with these job options, e.g. --variant 'noreadahead=--kinesis-option "
        "readAhead=false'; leading SETTING=VALUE words set versions.env or services/*.env for "
        "its job, e.g. 'hudi102=HUDI_VERSION=1.0.2 ...' (repeatable)",
    )
    p.add_argument(
        "--drain-events",
        type=int,
        default=0,
        help="drain mode: fill a stream with this many orders first, then each profile "
        "drains it alone (--available-now), --repeat times interleaved",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="runs per profile, interleaved, reported as medians and ranges (default: 3 in "
        "drain mode, 1 in rate mode)",
    )
    p.add_argument(
        "--max-records-per-shard",
        type=int,
        default=JOB_RECORDS_PER_SHARD,
        help="drain mode: batch size per shard (default: the job's own default)",
    )
    p.add_argument(
        "--s3-requests",
        action="store_true",
        help="only count the S3 requests of a micro-batch on MinIO (lakehouse cost's input)",
    )
    p.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep each run's tables in the bucket and the metastore (by default they are "
        "removed once the run is measured; a failed run's are kept)",
    )
    p.add_argument("--json", help="also write the summary here")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
        return COMMANDS[args.command].handler(settings, args)
    except (
        ConfigError,
        InstallError,
        ServiceError,
        BootstrapError,
        ComposeError,
        PolicyError,
        TruststoreError,
        SubmitError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TablesConfigError as exc:  # as the job refuses it: nothing done, exit 5
        print(f"error: the tables file is not valid: {exc}", file=sys.stderr)
        return 5
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM where a command turns it into one
        return 130


if __name__ == "__main__":
    sys.exit(main())
