"""A Kinesis fault proxy: forwards every call to a real engine, or answers some with an error.

The job's Kinesis client (AWS SDK v1, CBOR disabled) speaks JSON over HTTP/1.1: a POST with
`X-Amz-Target: Kinesis_20131202.<Operation>`, and errors come back as
`{"__type": "<Code>", "message": ...}`. The proxy answers a configurable share of the calls of
given operations with such an error instead of forwarding them, so the engine never sees those
calls: nothing is half done, as with a real throttle.

What the SDK does with each injected error (RetryUtils in the 1.12 bundle) decides which layer
is tested: ProvisionedThroughputExceededException (400) is a throttling code and 500
InternalFailure a retryable status, so the SDK retries both (3 times by default) before the
source sees them; LimitExceededException and ExpiredIteratorException (400) reach the source
at once.

Decisions are drawn per operation from a generator seeded with (seed, operation), so the n-th
call of an operation gets the same answer in every run, whatever the threads interleave.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

ENGINE = "http://127.0.0.1:4566"
TARGET_PREFIX = "Kinesis_20131202."
JSON = "application/x-amz-json-1.1"
# Not forwarded either way: they describe one hop's connection, not the call.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
SET_BY_SERVER = frozenset({"date", "server"})  # send_response adds its own


@dataclass(frozen=True)
class Fault:
    """Answer `share` of the calls of `operations` (all operations if empty) with an error.

    With `lasting_s`, a call drawn for the fault starts an outage: every call of that operation
    gets the error for that many seconds, long enough to outlast the SDK's own retries.
    """

    kind: str  # the name it is counted under
    share: float
    status: int
    error_type: str
    message: str
    operations: frozenset[str] = frozenset()
    lasting_s: float = 0.0

    def applies_to(self, operation: str) -> bool:
        return not self.operations or operation in self.operations


def throttling(
    share: float, operations: Iterable[str] = ("GetRecords",), lasting_s: float = 0.0
) -> Fault:
    return Fault(
        "throttled",
        share,
        400,
        "ProvisionedThroughputExceededException",
        "Rate exceeded for shard in stream (injected by the test proxy).",
        frozenset(operations),
        lasting_s,
    )


def expired_iterator(share: float, lasting_s: float = 0.0) -> Fault:
    return Fault(
        "expired_iterator",
        share,
        400,
        "ExpiredIteratorException",
        "Iterator expired (injected by the test proxy).",
        frozenset({"GetRecords"}),
        lasting_s,
    )


def limit_exceeded(
    share: float,
    operations: Iterable[str] = ("GetShardIterator", "ListShards"),
    lasting_s: float = 0.0,
) -> Fault:
    return Fault(
        "limit_exceeded",
        share,
        400,
        "LimitExceededException",
        "Rate exceeded for stream (injected by the test proxy).",
        frozenset(operations),
        lasting_s,
    )


def internal_failure(share: float, operations: Iterable[str] = (), lasting_s: float = 0.0) -> Fault:
    return Fault(
        "internal_failure",
        share,
        500,
        "InternalFailure",
        "Internal service failure (injected by the test proxy).",
        frozenset(operations),
        lasting_s,
    )


class KinesisFaultProxy:
    """A local HTTP proxy in front of a Kinesis engine; use it as a context manager.

    For each call, one draw picks at most one fault among those that apply to its operation
    (their shares add up, so they must not exceed 1 per operation).
    """

    def __init__(self, faults: Iterable[Fault] = (), seed: int = 0, upstream: str = ENGINE):
        self.faults = _checked(faults)
        self.seed = seed
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"upstream must be an http:// URL, got {upstream!r}")
        self._upstream = (parts.hostname, parts.port or 80)
        self._lock = threading.Lock()
        self._draws: dict[str, random.Random] = {}
        self._outages: dict[str, tuple[Fault, float]] = {}  # operation -> (fault, until)
        self.injected: Counter[str] = Counter()  # by fault kind
        self.injected_by_operation: Counter[tuple[str, str]] = Counter()  # (kind, operation)
        self.outages: Counter[str] = Counter()  # outages started, by fault kind
        self.forwarded: Counter[str] = Counter()  # by operation
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("the proxy is not running: use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def set_faults(self, faults: Iterable[Fault]) -> None:
        """Change what is injected from the next call on (e.g. none, for a clean pass)."""
        checked = _checked(faults)
        with self._lock:
            self.faults = checked
            self._outages.clear()

    def decide(self, operation: str) -> Fault | None:
        """The fault to answer this call with, or None to forward it (counted either way)."""
        with self._lock:
            rng = self._draws.get(operation)
            if rng is None:
                rng = self._draws[operation] = random.Random(f"{self.seed}/{operation}")
            # One draw per call, outage or not, so the n-th call's draw never moves.
            chosen = self._pick(operation, rng.random())
            now = time.monotonic()
            ongoing = self._outages.get(operation)
            if ongoing is not None and now < ongoing[1]:
                chosen = ongoing[0]
            elif chosen is not None and chosen.lasting_s > 0:
                self._outages[operation] = (chosen, now + chosen.lasting_s)
                self.outages[chosen.kind] += 1
            if chosen is None:
                self.forwarded[operation] += 1
            else:
                self.injected[chosen.kind] += 1
                self.injected_by_operation[(chosen.kind, operation)] += 1
            return chosen

    def _pick(self, operation: str, draw: float) -> Fault | None:
        edge = 0.0
        for fault in self.faults:
            if fault.applies_to(operation):
                edge += fault.share
                if draw < edge:
                    return fault
        return None

    def __enter__(self) -> KinesisFaultProxy:
        proxy = self

        class Handler(_ProxyHandler):
            owner = proxy

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="kinesis-fault-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(10)
        self._server = None
        self._thread = None


def _checked(faults: Iterable[Fault]) -> list[Fault]:
    faults = list(faults)
    for op in {op for f in faults for op in f.operations} | {"any other operation"}:
        total = sum(f.share for f in faults if f.applies_to(op))
        if not 0 <= total <= 1:
            raise ValueError(f"fault shares for {op} add up to {total}; at most 1 per operation")
    return faults


class _ProxyHandler(BaseHTTPRequestHandler):
    owner: KinesisFaultProxy
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    _upstream: http.client.HTTPConnection | None = None

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        target = self.headers.get("X-Amz-Target", "")
        operation = target.removeprefix(TARGET_PREFIX)
        fault = self.owner.decide(operation)
        if fault is not None:
            payload = json.dumps({"__type": fault.error_type, "message": fault.message}).encode()
            self._answer(
                fault.status,
                [("Content-Type", JSON), ("x-amzn-RequestId", str(uuid.uuid4()))],
                payload,
            )
            return
        try:
            status, headers, payload = self._forward(body)
        except (http.client.HTTPException, OSError) as error:
            # The engine is down or hung up: say so as a gateway would (the SDK retries 502).
            message = f"test proxy: engine {self.owner._upstream} unreachable: {error}"
            payload = json.dumps({"__type": "BadGateway", "message": message}).encode()
            self._answer(502, [("Content-Type", JSON)], payload)
            return
        self._answer(status, headers, payload)

    def _forward(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        for attempt in (1, 2):
            if self._upstream is None:
                self._upstream = http.client.HTTPConnection(*self.owner._upstream, timeout=60)
            try:
                self._upstream.request(self.command, self.path, body=body, headers=headers)
                response = self._upstream.getresponse()
                payload = response.read()
            except (http.client.HTTPException, OSError):
                # A kept-alive connection the engine closed meanwhile: one fresh try.
                self._upstream.close()
                self._upstream = None
                if attempt == 2:
                    raise
                continue
            kept = [
                (k, v)
                for k, v in response.getheaders()
                if k.lower() not in HOP_BY_HOP | SET_BY_SERVER
            ]
            return response.status, kept, payload
        raise AssertionError("unreachable")

    def _answer(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def finish(self) -> None:
        super().finish()
        if self._upstream is not None:
            self._upstream.close()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per call would drown the test's output
