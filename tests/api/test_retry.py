"""The retry policy and the one retry loop."""

from __future__ import annotations

import email.utils
import time

import pytest
from pi_web_tools.api.retry import Retryable, RetryPolicy, with_retries


class RecordingEvent:
    """A stand-in for the cancel event: records the wait instead of sleeping."""

    def __init__(self):
        self.waits = []

    def is_set(self) -> bool:
        return False

    def wait(self, delay: float) -> bool:
        self.waits.append(delay)
        return False


def test_wait_uses_retry_after_seconds_and_caps_it():
    """wait waits the Retry-After seconds when larger than the backoff, but never past the cap."""
    policy = RetryPolicy(backoff_factor=0.001, backoff_jitter=0.0005)
    far = time.monotonic() + 1000
    event = RecordingEvent()
    assert policy.wait(0, "3", far, event) is True
    assert policy.wait(0, "100", far, event) is True
    assert event.waits[0] == pytest.approx(3.0)
    assert event.waits[1] == pytest.approx(policy.retry_after_cap)


def test_wait_understands_http_date_retry_after():
    """A Retry-After given as an HTTP date is turned into seconds from now."""
    policy = RetryPolicy(backoff_factor=0.001, backoff_jitter=0.0005)
    event = RecordingEvent()
    moment = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert policy.wait(0, moment, time.monotonic() + 1000, event) is True
    assert 3.5 <= event.waits[0] <= 5.5


def test_wait_backoff_grows_exponentially_with_jitter():
    """Without Retry-After the wait is base * 2**attempt plus at most half a base of jitter."""
    policy = RetryPolicy(total=5, backoff_factor=0.1, backoff_jitter=0.05)
    event = RecordingEvent()
    far = time.monotonic() + 1000
    for attempt in range(3):
        policy.wait(attempt, None, far, event)
    for attempt, delay in enumerate(event.waits):
        assert 0.1 * 2**attempt <= delay <= 0.1 * 2**attempt + 0.05


def test_wait_refuses_when_it_would_pass_the_deadline():
    """wait returns False (no sleep) when the wait would not fit before the deadline."""
    policy = RetryPolicy(backoff_factor=0.001, backoff_jitter=0.0005)
    event = RecordingEvent()
    assert policy.wait(0, "5", time.monotonic() + 1, event) is False
    assert event.waits == []


def test_policy_allows_no_more_than_total_retries():
    """After `total` retries the policy refuses, without sleeping."""
    policy = RetryPolicy(total=1, backoff_factor=0.001, backoff_jitter=0)
    far = time.monotonic() + 100
    assert policy.wait(0, None, far) is True
    assert policy.wait(1, None, far) is False


def test_loop_retries_then_raises_the_last_final_error():
    """with_retries calls again after each Retryable and raises the last one's final error."""
    calls = []

    def attempt():
        calls.append(1)
        raise Retryable(ValueError(f"attempt {len(calls)}"))

    policy = RetryPolicy(total=2, backoff_factor=0.001, backoff_jitter=0)
    with pytest.raises(ValueError, match="attempt 3"):
        with_retries(attempt, policy=policy, deadline=time.monotonic() + 10)
    assert len(calls) == 3


def test_loop_returns_the_first_success_and_passes_other_errors_through():
    """A success ends the loop; an exception that is not Retryable is never retried."""
    outcomes = iter([Retryable(KeyError("x")), "done"])

    def attempt():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    policy = RetryPolicy(backoff_factor=0.001, backoff_jitter=0)
    assert with_retries(attempt, policy=policy, deadline=time.monotonic() + 10) == "done"

    def broken():
        raise RuntimeError("not retryable")

    with pytest.raises(RuntimeError):
        with_retries(broken, policy=policy, deadline=time.monotonic() + 10)


def test_cancellation_interrupts_the_wait():
    """A set cancel event ends the wait at once with InterruptedError."""
    import threading

    cancel = threading.Event()
    cancel.set()
    policy = RetryPolicy(backoff_factor=5, backoff_jitter=0)
    start = time.monotonic()
    with pytest.raises(InterruptedError):
        policy.wait(0, None, time.monotonic() + 100, cancel)
    assert time.monotonic() - start < 1


def test_a_retryable_failure_is_raised_at_once_while_another_provider_is_ready():
    """Search failover: the next provider answers sooner than a backoff would."""
    from pi_web_tools.api.retry import another_provider_ready

    calls = []

    def attempt():
        calls.append(1)
        raise Retryable(ValueError("rate limited"))

    policy = RetryPolicy(total=2, backoff_factor=5, backoff_jitter=0)
    start = time.monotonic()
    with another_provider_ready(), pytest.raises(ValueError):
        with_retries(attempt, policy=policy, deadline=time.monotonic() + 60)
    assert len(calls) == 1 and time.monotonic() - start < 1
    with another_provider_ready(False), pytest.raises(ValueError):  # the last provider retries
        with_retries(
            attempt,
            policy=RetryPolicy(total=1, backoff_factor=0.001),
            deadline=time.monotonic() + 60,
        )
    assert len(calls) == 3
