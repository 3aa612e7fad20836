"""A writer lease on S3: one job per checkpoint (and per warehouse) across hosts.

writer_lock's flock guards one machine. Jobs on several hosts that share a checkpoint on
S3 (two clusters' drivers, two containers, a job resubmitted while the old one still
runs) take a lease: an object beside the checkpoint, created only if absent
(If-None-Match) and rewritten only if unchanged since it was read (If-Match), so two jobs
can never both hold it. The holder renews it every quarter of its time to live and stops
(exits, so its supervisor restarts it) if it could not renew it for three quarters of it,
before anyone else may take it over. A job that finds the lease held by another host
watches it: renewed meanwhile, the holder is alive and the job is refused; unchanged for a
whole time to live, the holder is gone and the lease is taken over. A lease of this very
host is a dead predecessor's (the caller holds the host's flock first) and is taken over at
once, so a job restarted after kill -9 does not wait.

S3 (since 2024) and MinIO honour both conditions; an S3 API that ignores them would let
two holders in, so acquire() checks that a second create is refused.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from lakehouse_job.writer_lock import WriterLockError
from lakehouse_tables.locations import s3_location

log = logging.getLogger(__name__)

LEASE_SUFFIX = ".writer-lease"
DEFAULT_TTL_S = 60.0
EXIT_LEASE_LOST = 1  # a failure the supervisor restarts: the restarted job asks again


def lease_location(uri: str) -> tuple[str, str] | None:
    """(bucket, key) of the lease beside an s3:// or s3a:// path; None for other paths."""
    location = s3_location(uri)
    if location is None:
        return None
    bucket, path = location
    return bucket, path + LEASE_SUFFIX


def _precondition_failed(error: Exception) -> bool:
    response = getattr(error, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ("PreconditionFailed", "412") or status == 412


def _lost_and_exit(lease: WriterLease) -> None:
    log.error(
        "stopping: the writer lease %s could not be renewed for %.0f s (S3 unreachable, or "
        "another job took it over); a job that may no longer hold it must not write",
        lease.name,
        lease.ttl_s * 0.75,
    )
    logging.shutdown()
    os._exit(EXIT_LEASE_LOST)


def s3_client_from_env() -> Any:
    """boto3's S3 client, configured from the environment spark-defaults.conf configures
    S3A from: S3_ENDPOINT (unset: AWS_ENDPOINT_URL or AWS's own), S3_ACCESS_KEY and
    S3_SECRET_KEY (empty: the default provider chain), AWS_REGION, S3A_PATH_STYLE."""
    import boto3
    from botocore.config import Config

    keys = {}
    if os.environ.get("S3_ACCESS_KEY"):
        keys = {
            "aws_access_key_id": os.environ["S3_ACCESS_KEY"],
            "aws_secret_access_key": os.environ.get("S3_SECRET_KEY", ""),
        }
    path_style = os.environ.get("S3A_PATH_STYLE", "true").lower() == "true"
    return boto3.client(
        "s3",
        endpoint_url=os.environ.get("S3_ENDPOINT") or None,
        region_name=os.environ.get("AWS_REGION") or None,
        config=Config(s3={"addressing_style": "path" if path_style else "virtual"}),
        **keys,
    )


class WriterLease:
    def __init__(
        self,
        client: Any,
        uri: str,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        host: str | None = None,
        on_lost: Callable[[WriterLease], None] = _lost_and_exit,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        location = lease_location(uri)
        if location is None:
            raise ValueError(f"a writer lease needs an s3:// or s3a:// path, not {uri!r}")
        self.client, self.resource = client, uri
        self.bucket, self.key = location
        self.name = f"s3://{self.bucket}/{self.key}"
        self.ttl_s, self.on_lost = ttl_s, on_lost
        self.host = host or socket.gethostname()
        self.holder = f"{self.host} pid {os.getpid()}"
        self.clock, self.sleep = clock, sleep
        self.etag: str | None = None
        self.renewed_at = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        return json.dumps(
            {"holder": self.holder, "host": self.host, "ttl_s": self.ttl_s, "at": time.time()}
        ).encode()

    def _read(self) -> tuple[dict[str, Any], str] | None:
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except self.client.exceptions.NoSuchKey:
            return None
        return json.loads(found["Body"].read() or b"{}"), found["ETag"]

    def _put(self, **condition: str) -> bool:
        """Write the lease under a condition; False if the condition did not hold."""
        try:
            written = self.client.put_object(
                Bucket=self.bucket, Key=self.key, Body=self._body(), **condition
            )
        except Exception as error:
            if _precondition_failed(error):
                return False
            raise
        self.etag, self.renewed_at = written["ETag"], self.clock()
        return True

    def acquire(self) -> WriterLease:
        """Take the lease, watching another host's for up to one time to live."""
        watched: tuple[str, float] | None = None  # (etag, since) of another host's lease
        while True:
            if self._put(IfNoneMatch="*"):
                self._check_conditions_honoured()
                break
            current = self._read()
            if current is None:
                continue  # released between our create and our read
            lease, etag = current
            if lease.get("host") == self.host:
                if self._put(IfMatch=etag):
                    log.info("writer lease %s: taken over from %s", self.name, lease["holder"])
                    break
                continue
            if watched is None or watched[0] != etag:
                if watched is not None:
                    raise self._refused(lease, "renewed it while this job waited")
                watched = (etag, self.clock())
                log.info(
                    "writer lease %s is held by %s: waiting up to %.0f s to see it renewed",
                    self.name,
                    lease.get("holder"),
                    self.ttl_s,
                )
            elif self.clock() - watched[1] >= self.ttl_s:
                if self._put(IfMatch=etag):
                    log.warning(
                        "writer lease %s: %s did not renew it for %.0f s; taken over",
                        self.name,
                        lease.get("holder"),
                        self.ttl_s,
                    )
                    break
                raise self._refused(lease, "took it over first")
            self.sleep(min(2.0, self.ttl_s / 10))
        log.info(
            "writer lease %s held by %s (renewed every %.0f s)",
            self.name,
            self.holder,
            self.ttl_s / 4,
        )
        self._thread = threading.Thread(target=self._renew_loop, name="writer-lease", daemon=True)
        self._thread.start()
        return self

    def _check_conditions_honoured(self) -> None:
        if self._put(IfNoneMatch="*"):
            self.release()
            raise WriterLockError(
                f"the S3 endpoint ignored If-None-Match on {self.name}, so it cannot keep two "
                "jobs apart: use an S3 API with conditional writes (AWS S3, MinIO) or run "
                "one job per checkpoint without --writer-lease"
            )

    def _refused(self, lease: dict[str, Any], what: str) -> WriterLockError:
        return WriterLockError(
            f"{self.resource} is in use by {lease.get('holder')} (writer lease {self.name}), "
            f"which {what}: another job writes there; stop it first, or give this one its "
            "own --checkpoint and --warehouse"
        )

    def renew(self) -> bool:
        """Renew once; False if the lease was changed by someone else."""
        assert self.etag is not None, "renew() before acquire()"
        return self._put(IfMatch=self.etag)

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl_s / 4):
            if not self.keep():
                self.on_lost(self)
                return

    def keep(self) -> bool:
        """One renewal; False once the lease is lost: changed by another job, or not
        renewed for three quarters of its time to live (S3 unreachable)."""
        try:
            if not self.renew():
                return False
        except Exception as error:  # S3 unreachable: try again until it is too late
            log.warning("writer lease %s not renewed: %s", self.name, error)
        return self.clock() - self.renewed_at < self.ttl_s * 0.75

    def release(self) -> None:
        """Stop renewing and delete the lease if it is still this job's; if S3 cannot be
        reached, the lease expires by itself."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        try:
            current = self._read() if self.etag else None
            if current is not None and current[1] == self.etag:
                self.client.delete_object(Bucket=self.bucket, Key=self.key)
                log.info("writer lease %s released", self.name)
        except Exception as error:
            log.warning("writer lease %s not released (it expires): %s", self.name, error)
        self.etag = None
