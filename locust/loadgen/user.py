"""The Locust side: command-line options and the Kinesis user.

Each Locust user owns an EventGenerator (its own key namespace) and sends batches
of `--batch-size` records with PutRecords, paced to `--events-per-sec` per user.
Each worker process shares one boto3 client, one shard router and one ledger file.
Every PutRecords call (attempt) is reported via events.request.fire, and records
that finally fail are reported as a failed "records dropped" request and written
to the ledger with acked=false.
"""

from __future__ import annotations

# isort: off
# locust first: its gevent monkey patching must precede boto3 (else ssl recursion)
from locust import User, events, task
import gevent
from gevent.pool import Group
from locust.env import Environment
from locust.runners import MasterRunner, WorkerRunner

# isort: on
import json
import logging
import os
import random
import secrets
import threading
import time
from argparse import Namespace
from typing import Any, ClassVar

from lakehouse.core.bootstrap import ensure_stream
from lakehouse_tables.declarations import load_tables
from loadgen import kpl
from loadgen.batching import BatchLimits, split_batches
from loadgen.kinesis import (
    CallReport,
    PutResult,
    RetryPolicy,
    ShardRouter,
    list_open_shards,
    make_client,
    put_records_with_retry,
)
from loadgen.ledger import LedgerWriter, key_prefix
from loadgen.metrics import EVENTS_ACKED
from loadgen.metrics import serve as serve_metrics
from loadgen.models import (
    MALFORMED_KINDS,
    EventGenerator,
    GenConfig,
    Record,
    parse_cardinality,
    parse_mix,
)
from loadgen.options import add_locust_arguments

log = logging.getLogger("loadgen")

DEFAULT_STOP_TIMEOUT = 30.0  # seconds, when --stop-timeout is not given


def gen_config_from_options(
    opts: Namespace, key_prefix: str, seed: int | None, event_types: list[str]
) -> GenConfig:
    model = opts.event_model
    mix = parse_mix(opts.event_mix) if model == "mix" else {model: 1.0}
    for t in mix:
        if t not in event_types:
            raise ValueError(f"unknown event type {t!r}; declared: {event_types}")
    return GenConfig(
        event_mix=mix,
        op_mix=parse_mix(opts.op_mix, ("c", "u", "d")),
        key_cardinality=parse_cardinality(opts.key_cardinality),
        duplicate_rate=float(opts.duplicate_rate),
        out_of_order_rate=float(opts.out_of_order_rate),
        late_rate=float(opts.late_rate),
        late_max_seconds=float(opts.late_max_seconds),
        malformed_rate=float(opts.malformed_rate),
        malformed_mix=parse_mix(opts.malformed_mix, MALFORMED_KINDS),
        max_delay=int(opts.max_delay),
        seed=seed,
        key_prefix=key_prefix,
    )


class WorkerContext:
    """Per-process state shared by the users of one worker."""

    _current: ClassVar[WorkerContext | None] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()  # a gevent lock once patched

    def __init__(self, env: Environment) -> None:
        self.env = env
        o = env.parsed_options
        assert o is not None
        self.opts = o
        self.tables = load_tables(o.tables_file or None)
        self.worker_index = int(getattr(env.runner, "worker_index", 0) or 0)
        self.run_id = o.run_id or (f"s{o.seed}" if o.seed != "" else secrets.token_hex(3))
        self.base_seed = int(o.seed) if o.seed != "" else None
        self.client = make_client(
            o.kinesis_endpoint or None,
            o.region,
            o.aws_access_key_id or None,
            o.aws_secret_access_key or None,
        )
        self.router = ShardRouter(list_open_shards(self.client, o.stream_name))
        self.policy = RetryPolicy(max_attempts=int(o.max_attempts))
        self.limits = BatchLimits()
        path = os.path.join(
            o.ledger_dir, f"ledger-{self.run_id}-w{self.worker_index}-{os.getpid()}.jsonl"
        )
        self.ledger = LedgerWriter(path)
        self.generators: dict[str, EventGenerator] = {}
        self.rng = random.Random()
        self.started = time.monotonic()
        self.taken = 0
        self.inflight = Group()  # send greenlets, shielded from user kills
        log.info("loadgen worker %s writing %s", self.worker_index, path)

    @classmethod
    def get(cls, env: Environment) -> WorkerContext:
        with cls._lock:  # __init__ does I/O: other greenlets run meanwhile
            if cls._current is None:
                cls._current = WorkerContext(env)
            return cls._current

    @classmethod
    def close_current(cls) -> None:
        with cls._lock:
            ctx, cls._current = cls._current, None
        if ctx is not None:
            ctx.close()

    def new_generator(self) -> tuple[str, EventGenerator]:
        n = len(self.generators)
        gen_id = f"{self.run_id}-w{self.worker_index}-u{n}"
        seed = None
        if self.base_seed is not None:
            seed = self.base_seed * 1_000_003 + self.worker_index * 10_007 + n
        cfg = gen_config_from_options(self.opts, key_prefix(gen_id), seed, self.tables.event_types)
        gen = EventGenerator(self.tables, cfg)
        self.generators[gen_id] = gen
        return gen_id, gen

    def _report(self, r: CallReport) -> None:
        self.env.events.request.fire(
            request_type="kinesis",
            name=r.name,
            response_time=r.response_time_ms,
            response_length=r.request_bytes,
            exception=r.exception,
            context={"records": r.records, "failed": r.failed},
        )

    def _acked(self, n: int, begun: float) -> None:
        """One request entry per acknowledged event, so Locust's figures (RPS, count) read
        as events beside the PutRecords calls; its time is the batch's, retries included."""
        elapsed_ms = (time.perf_counter() - begun) * 1000
        for _ in range(n):
            self.env.events.request.fire(
                request_type="kinesis",
                name=EVENTS_ACKED,
                response_time=elapsed_ms,
                response_length=0,
                exception=None,
                context={},
            )

    def _dropped(self, n: int, why: str) -> None:
        self.env.events.request.fire(
            request_type="kinesis",
            name="records dropped",
            response_time=0,
            response_length=n,
            exception=RuntimeError(f"{n} records finally failed: {why}"),
            context={"records": n},
        )

    def send(self, gen_id: str, records: list[Record]) -> None:
        """Send and record every record; a record whose fate is unknown because the
        greenlet is killed mid-call is written as failed and ambiguous. With
        --kpl-aggregate N the records go out N to a KPL aggregate (loadgen.kpl), and
        each is recorded at its aggregate's sequence number and its index in it."""
        if self.opts.kpl_aggregate > 0:
            self.send_aggregated(gen_id, records)
            return
        self.taken += len(records)
        done = 0
        batches, too_big = split_batches(records, self.limits)
        try:
            for rec in too_big:
                self.ledger.write(gen_id, rec, PutResult(error_code="RecordTooLarge"))
                done += 1
            if too_big:
                self._dropped(len(too_big), "RecordTooLarge")
            for batch in batches:
                begun = time.perf_counter()
                results = put_records_with_retry(
                    self.client,
                    self.opts.stream_name,
                    batch,
                    self.policy,
                    self.router,
                    report=self._report,
                    rng=self.rng,
                )
                failed: dict[str, int] = {}
                for rec, res in zip(batch, results, strict=True):
                    self.ledger.write(gen_id, rec, res)
                    done += 1
                    if not res.acked:
                        failed[str(res.error_code)] = failed.get(str(res.error_code), 0) + 1
                self._acked(len(batch) - sum(failed.values()), begun)
                if failed:
                    self._dropped(sum(failed.values()), json.dumps(failed))
        except BaseException as exc:
            unsent = (
                [r for b in batches for r in b][done - len(too_big) :]
                if done >= len(too_big)
                else records
            )
            log.warning("send interrupted (%r): %d records recorded as failed", exc, len(unsent))
            for rec in unsent:
                self.ledger.write(
                    gen_id, rec, PutResult(error_code=type(exc).__name__, ambiguous=True)
                )
            self._dropped(len(unsent), type(exc).__name__)
            raise

    def send_aggregated(self, gen_id: str, records: list[Record]) -> None:
        self.taken += len(records)
        aggregates = kpl.aggregate(records, int(self.opts.kpl_aggregate), self.router.hash_key)
        batches, _too_big = split_batches(aggregates, self.limits)  # none: 50 KiB each
        recorded: set[int] = set()
        try:
            for batch in batches:
                begun = time.perf_counter()
                results = put_records_with_retry(
                    self.client,
                    self.opts.stream_name,
                    batch,
                    self.policy,
                    self.router,
                    report=self._report,
                    rng=self.rng,
                )
                acked = failed = 0
                for agg, res in zip(batch, results, strict=True):
                    for index, rec in enumerate(agg.members):
                        self.ledger.write(gen_id, rec, res, sub_sequence=index)
                        recorded.add(id(rec))
                    acked += len(agg.members) if res.acked else 0
                    failed += 0 if res.acked else len(agg.members)
                self._acked(acked, begun)
                if failed:
                    self._dropped(failed, "aggregates failed")
        except BaseException as exc:
            unsent = [r for r in records if id(r) not in recorded]
            log.warning("send interrupted (%r): %d records recorded as failed", exc, len(unsent))
            for rec in unsent:
                self.ledger.write(
                    gen_id, rec, PutResult(error_code=type(exc).__name__, ambiguous=True)
                )
            self._dropped(len(unsent), type(exc).__name__)
            raise

    def summary(self) -> dict[str, Any]:
        gen_stats: dict[str, int] = {}
        pending = 0
        for g in self.generators.values():
            for k, v in g.stats.items():
                gen_stats[k] = gen_stats.get(k, 0) + v
            pending += g.pending
        return {
            "run_id": self.run_id,
            "worker_index": self.worker_index,
            "pid": os.getpid(),
            "users": len(self.generators),
            "seconds": round(time.monotonic() - self.started, 3),
            "ledger": str(self.ledger.path),
            "taken": self.taken,
            "acked": self.ledger.counts["acked"],
            "failed": self.ledger.counts["failed"],
            "generated": gen_stats,
            "held_unsent": pending,
        }

    def close(self) -> None:
        # sends still running after the stop timeout: kill them, so that their records
        # are written as failed (ambiguous) before the ledger closes
        self.inflight.join(timeout=1)
        self.inflight.kill(block=True, timeout=10)
        summary = self.summary()
        self.ledger.close()
        with open(str(self.ledger.path)[: -len(".jsonl")] + ".summary.json", "w") as f:
            json.dump(summary, f)
        log.info("loadgen worker summary: %s", summary)


class KinesisUser(User):
    """Sends generated events to Kinesis with PutRecords."""

    gen_id: str
    gen: EventGenerator

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._next_due = 0.0

    def wait_time(self) -> float:
        o = self.environment.parsed_options
        rate = float(o.events_per_sec) if o is not None else 0.0
        if rate <= 0:
            return 0.0
        interval = int(o.batch_size) / rate
        now = time.monotonic()
        self._next_due = max(self._next_due + interval, now - interval)
        return max(0.0, self._next_due - now)

    def on_start(self) -> None:
        ctx = WorkerContext.get(self.environment)
        self.gen_id, self.gen = ctx.new_generator()
        self._next_due = time.monotonic()

    @task
    def send_batch(self) -> None:
        ctx = WorkerContext.get(self.environment)
        records = self.gen.take(int(ctx.opts.batch_size))
        # Send in a separate greenlet: Locust may kill a user it believes is waiting
        # while it has just woken up and is mid-call. The in-flight batch is then still
        # completed and recorded (within --stop-timeout) before the user stops.
        g = ctx.inflight.spawn(ctx.send, self.gen_id, records)
        try:
            g.join()
        except gevent.GreenletExit:
            g.join(timeout=max(float(self.environment.stop_timeout or 0), 30.0))
            raise
        g.get()  # re-raise what the send raised


@events.init_command_line_parser.add_listener
def _on_parser(parser: Any, **_: Any) -> None:
    add_locust_arguments(parser)


@events.init.add_listener
def _on_init(environment: Environment, **_: Any) -> None:
    o = environment.parsed_options
    if o is None:
        return
    if not isinstance(environment.runner, WorkerRunner) and not environment.stop_timeout:
        # let in-flight batches finish and be reported when the test stops
        # (the master forwards this to its workers)
        environment.stop_timeout = DEFAULT_STOP_TIMEOUT
    if isinstance(environment.runner, MasterRunner) and not o.run_id:
        # forwarded to the workers with every spawn message
        o.run_id = f"s{o.seed}" if o.seed != "" else secrets.token_hex(3)
    if not isinstance(environment.runner, WorkerRunner) and int(o.metrics_port) > 0:
        try:
            serve_metrics(environment.runner, int(o.metrics_port), o.metrics_host)
        except OSError as error:  # a second load on the same machine: it runs unwatched
            log.warning("not serving metrics on port %s: %s", o.metrics_port, error)
    if not environment.host:
        # The web UI's Host field: what the users write to (they read the stream and the
        # endpoint from their own options; the field is informational).
        environment.host = target(o.kinesis_endpoint, o.region, o.stream_name)


def target(endpoint: str, region: str, stream: str) -> str:
    """'http://127.0.0.1:4566/events': the Kinesis endpoint (AWS's if none) and stream."""
    base = endpoint.rstrip("/") if endpoint else f"https://kinesis.{region}.amazonaws.com"
    return f"{base}/{stream}"


@events.test_start.add_listener
def _on_test_start(environment: Environment, **_: Any) -> None:
    o = environment.parsed_options
    if o is None or isinstance(environment.runner, WorkerRunner):
        return
    if int(o.create_stream_shards) > 0:
        client = make_client(
            o.kinesis_endpoint or None,
            o.region,
            o.aws_access_key_id or None,
            o.aws_secret_access_key or None,
        )
        ensure_stream(client, o.stream_name, shards=int(o.create_stream_shards))


@events.test_stop.add_listener
def _on_test_stop(environment: Environment, **_: Any) -> None:
    WorkerContext.close_current()


@events.quitting.add_listener
def _on_quit(environment: Environment, **_: Any) -> None:
    WorkerContext.close_current()
