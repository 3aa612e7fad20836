import pytest

from tests.support.pipeline import wait_for

pytestmark = pytest.mark.unit


def test_a_callable_message_is_read_at_the_timeout_not_at_the_start() -> None:
    log = ["started"]

    def waited() -> bool:
        log.append("still waiting")
        return False

    with pytest.raises(AssertionError, match="still waiting") as raised:
        wait_for(waited, 0.2, lambda: log[-1])
    assert "timed out after 0.2s" in str(raised.value)


def test_a_plain_message_and_a_predicate_that_holds() -> None:
    wait_for(lambda: True, 1, "nothing")
    with pytest.raises(AssertionError, match="waiting for the batch"):
        wait_for(lambda: False, 0.1, "the batch")
