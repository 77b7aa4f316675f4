"""The retry policy, and the one retry loop every HTTP path uses (API providers and the direct
fetcher alike).

:class:`RetryPolicy` is shaped like urllib3's ``Retry``: which statuses are retried, how many
times, exponential backoff with jitter, and ``Retry-After`` honoured up to a cap. Every wait
fits inside the call's deadline and ends at once when the call is cancelled. While another
provider stands ready to take the call over (:func:`another_provider_ready`, set by search
failover), the loop does not wait at all: the next provider answers sooner than a backoff.
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from attrs import field, frozen

__all__ = [
    "DEFAULT_RETRY",
    "RetryPolicy",
    "Retryable",
    "another_provider_ready",
    "parse_retry_after",
    "with_retries",
]

#: Set while another provider stands ready to take over the call of this thread.
_HANDED_ON = contextvars.ContextVar("pi_web_tools_another_provider_ready", default=False)


@contextlib.contextmanager
def another_provider_ready(ready: bool = True) -> Iterator[None]:
    """Within this block (in this thread), a retryable failure is not retried: it is raised at
    once, for the next provider to take the call over (search failover). With *ready* false,
    retries are as usual."""
    token = _HANDED_ON.set(ready)
    try:
        yield
    finally:
        _HANDED_ON.reset(token)


T = TypeVar("T")


@frozen(kw_only=True)
class RetryPolicy:
    """How failed attempts are retried.

    :param total: retries after the first attempt.
    :param status_forcelist: HTTP statuses worth another attempt.
    :param backoff_factor: the first wait; each further wait doubles it.
    :param backoff_jitter: up to this many seconds are added at random to each wait.
    :param retry_after_cap: the longest ``Retry-After`` honoured (a longer one still waits this).
    """

    total: int = 2
    status_forcelist: frozenset = field(
        default=frozenset({429, 502, 503, 504}), converter=frozenset
    )
    backoff_factor: float = 0.5
    backoff_jitter: float = 0.25
    retry_after_cap: float = 10.0

    def is_retry_status(self, status: int) -> bool:
        """Whether an answer with *status* may be tried again."""
        return status in self.status_forcelist

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number *attempt* (0-based)."""
        delay = self.backoff_factor * (2**attempt) + random.uniform(0, self.backoff_jitter)
        hinted = parse_retry_after(retry_after)
        if hinted is not None:
            delay = max(delay, min(hinted, self.retry_after_cap))
        return delay

    def wait(
        self,
        attempt: int,
        retry_after: str | None,
        deadline: float,
        cancel: threading.Event | None = None,
    ) -> bool:
        """Sleep before retry *attempt*; ``False`` (without sleeping) when no retry is left or the
        wait would not fit before the monotonic *deadline*. Raises ``InterruptedError`` as soon
        as *cancel* is set."""
        if attempt >= self.total:
            return False
        delay = self.delay(attempt, retry_after)
        if time.monotonic() + delay >= deadline - 0.05:
            return False
        if cancel is not None:
            if cancel.wait(delay):
                raise InterruptedError("cancelled")
            return True
        time.sleep(delay)
        return True


DEFAULT_RETRY = RetryPolicy()


class Retryable(Exception):
    """Raised by an attempt that may be tried again; *final* is the exception to raise when no
    retry is left, *retry_after* the server's ``Retry-After`` value, if any."""

    def __init__(self, final: BaseException, retry_after: str | None = None):
        super().__init__(str(final))
        self.final = final
        self.retry_after = retry_after


def with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    deadline: float,
    cancel: threading.Event | None = None,
) -> T:
    """``attempt()``, called again after each :class:`Retryable` while *policy* allows and the
    wait fits before *deadline* (never while :func:`another_provider_ready`); then the last
    failure's ``final`` exception is raised."""
    tries = 0
    while True:
        try:
            return attempt()
        except Retryable as exc:
            if _HANDED_ON.get() or not policy.wait(tries, exc.retry_after, deadline, cancel):
                raise exc.final from None
            tries += 1


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` value (delta seconds or an HTTP date), else ``None``."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - time.time())
