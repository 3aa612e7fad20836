"""lakehouse.core.bootstrap: creating the stream and retrying bootstrap steps, with a fake
client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from botocore.exceptions import ClientError

from lakehouse.core import bootstrap
from lakehouse.core.bootstrap import BootstrapError, ensure_stream

pytestmark = pytest.mark.unit


class FakeClock:
    """Stands in for the module `time` in bootstrap: sleeping only moves the clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(bootstrap, "time", fake)
    return fake


def client_error(code: str, operation: str = "CreateStream") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}}, operation)


class FakeKinesis:
    """create_stream fails as AWS does if the stream exists; describe_stream_summary
    returns `statuses` in turn, then the last one for ever."""

    def __init__(
        self, exists: bool = False, statuses: tuple[str, ...] = ("ACTIVE",), error: str = ""
    ) -> None:
        self.exists = exists
        self.statuses = list(statuses)
        self.error = error
        self.created: list[dict[str, Any]] = []
        self.described = 0

    def create_stream(self, **kwargs: Any) -> None:
        if self.error:
            raise client_error(self.error)
        if self.exists:
            raise client_error("ResourceInUseException")
        self.created.append(kwargs)
        self.exists = True

    def describe_stream_summary(self, StreamName: str) -> dict[str, Any]:
        self.described += 1
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return {"StreamDescriptionSummary": {"StreamName": StreamName, "StreamStatus": status}}


def test_provisioned_stream_is_created_with_its_shards_and_waited_for() -> None:
    client = FakeKinesis(statuses=("CREATING", "CREATING", "ACTIVE"))
    assert ensure_stream(client, "events", shards=3) == "events"
    assert client.created == [{"StreamName": "events", "ShardCount": 3}]
    assert client.described == 3


def test_on_demand_stream_has_no_shard_count() -> None:
    client = FakeKinesis()
    ensure_stream(client, "events", mode="on_demand", engine="kinesis-mock")
    assert client.created == [
        {"StreamName": "events", "StreamModeDetails": {"StreamMode": "ON_DEMAND"}}
    ]


def test_an_existing_stream_is_kept() -> None:
    client = FakeKinesis(exists=True)
    assert ensure_stream(client, "events") == "events"
    assert client.created == []
    assert client.described == 1


def test_other_client_errors_are_raised() -> None:
    with pytest.raises(ClientError, match="LimitExceededException"):
        ensure_stream(FakeKinesis(error="LimitExceededException"), "events")


def test_kinesalite_has_no_on_demand_streams() -> None:
    client = FakeKinesis()
    with pytest.raises(BootstrapError, match="kinesalite"):
        ensure_stream(client, "events", mode="ON_DEMAND", engine="kinesalite")
    assert client.created == []


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(BootstrapError, match="'SERVERLESS'"):
        ensure_stream(FakeKinesis(), "events", mode="serverless")


def test_a_stream_that_never_becomes_active_is_named(clock: FakeClock) -> None:
    client = FakeKinesis(statuses=("CREATING",))
    with pytest.raises(BootstrapError, match="stream events is still CREATING after 2s"):
        ensure_stream(client, "events", timeout_s=2)
    assert 2 <= clock.now < 3


def test_retry_until_the_step_succeeds(clock: FakeClock) -> None:
    attempts: list[float] = []

    def step(env: Mapping[str, str]) -> str:
        attempts.append(clock.now)
        if len(attempts) < 3:
            raise ConnectionError("not listening yet")
        return env["NAME"]

    assert bootstrap._retry("the bucket", step, {"NAME": "lakehouse"}, wait_s=10) == "lakehouse"
    assert attempts == [0, 2, 4]


def test_retry_gives_up_at_the_deadline_naming_the_step(clock: FakeClock) -> None:
    def step(env: Mapping[str, str]) -> str:
        raise ConnectionError("connection refused")

    with pytest.raises(BootstrapError, match="creating the stream failed: connection refused"):
        bootstrap._retry("the stream", step, {}, wait_s=5)
    assert clock.now >= 5


def test_retry_without_wait_tries_once(clock: FakeClock) -> None:
    calls = 0

    def step(env: Mapping[str, str]) -> str:
        nonlocal calls
        calls += 1
        raise ConnectionError("down")

    with pytest.raises(BootstrapError, match="the database"):
        bootstrap._retry("the database", step, {}, wait_s=0)
    assert calls == 1 and clock.sleeps == 0


def test_retry_does_not_retry_a_bootstrap_error(clock: FakeClock) -> None:
    def step(env: Mapping[str, str]) -> str:
        raise BootstrapError("kinesalite has no on-demand streams")

    with pytest.raises(BootstrapError, match="on-demand"):
        bootstrap._retry("the stream", step, {}, wait_s=60)
    assert clock.sleeps == 0


class Deleting:
    """A Kinesis client whose delete_stream answers `outcome` (None: deleted)."""

    def __init__(self, outcome: ClientError | None) -> None:
        self.outcome = outcome
        self.calls: list[dict[str, Any]] = []

    def delete_stream(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)
        if self.outcome is not None:
            raise self.outcome


def test_delete_stream_takes_a_stream_already_gone_and_raises_anything_else() -> None:
    deleted = Deleting(None)
    bootstrap.delete_stream(deleted, "s")
    assert deleted.calls == [{"StreamName": "s", "EnforceConsumerDeletion": True}]
    bootstrap.delete_stream(
        Deleting(client_error("ResourceNotFoundException", "DeleteStream")), "s"
    )
    with pytest.raises(ClientError, match="LimitExceededException"):
        bootstrap.delete_stream(
            Deleting(client_error("LimitExceededException", "DeleteStream")), "s"
        )
