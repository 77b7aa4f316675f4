"""State a team's replicas share: answers, single-flight, rate limits, cooldowns and usage.

One small interface, two homes:

- **this process** (the default, nothing to set): answers in the disk cache (:mod:`.cache`),
  and flights, rate limits, provider cooldowns and usage counts in memory;
- **a Redis or Valkey server**, when ``PI_WEB_STATE`` (or ``pi-web mcp --state``) names one
  (``redis://``, ``rediss://``, ``valkey://``, ``valkeys://``, ``unix://``): the same things,
  seen by every replica (:mod:`.state_redis`; the ``redis`` client is the ``team`` extra,
  imported only then).

Every operation that cannot reach the server (down, slower than :data:`OP_TIMEOUT_SECONDS`,
restarted, refusing) uses this process's own state instead: one warning line on stderr per
:data:`WARN_EVERY_SECONDS` while it lasts, a new try after :data:`RETRY_SECONDS`, and a line
when the server answers again (usage counted meanwhile is then added to it). Nothing read from
the server is ever executed: answers are compressed JSON text, a value that does not decode is
a miss. The URL's password is known to the redaction point from the moment it is read, and the
URL is only ever shown without it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import unquote

from ..api import redaction
from .state_redis import USAGE_DAYS, Unavailable

__all__ = [
    "STATE_ENV",
    "USAGE_DAYS",
    "Lease",
    "Unavailable",
    "cool",
    "cooling",
    "count",
    "describe",
    "hit",
    "lead",
    "notices",
    "remote",
    "reset",
    "usage",
    "wait_for",
]

STATE_ENV = "PI_WEB_STATE"
#: The URL schemes of a Redis or Valkey server (``valkey`` is read as ``redis``: one protocol).
SCHEMES = ("redis", "rediss", "valkey", "valkeys", "unix")
#: The longest one operation waits for the server before this process uses its own state.
OP_TIMEOUT_SECONDS = 0.5
#: After a failure, the server is tried again this long after (meanwhile: local state).
RETRY_SECONDS = 5.0
#: While the server stays unreachable, at most one warning line per this many seconds.
WARN_EVERY_SECONDS = 60.0
#: How often a follower looks whether the leader of a flight is done (local flights are woken).
POLL_SECONDS = 0.02

T = TypeVar("T")


def _log(line: str) -> None:
    print(f"pi-web: {redaction.redact_secrets(line)}", file=sys.stderr, flush=True)


# --- which state: the environment ---------------------------------------------------------------


def configured() -> str | None:
    """The shared-state URL from ``PI_WEB_STATE`` (stripped), or ``None`` (this process's own)."""
    value = os.environ.get(STATE_ENV, "").strip()
    return value or None


def describe(url: str | None = None) -> str:
    """The shared-state URL as it may be shown (never its password), or ``"this process"``."""
    url = configured() if url is None else url
    return redaction.without_password(url) if url else "this process"


def url_problem(url: str) -> str | None:
    """Why *url* cannot name a shared state server, or ``None``."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in SCHEMES:
        return (
            f"{STATE_ENV}: {describe(url)!r} is not a Redis or Valkey URL (redis://HOST:6379/0, "
            "rediss://, valkey://, unix:///path/to/socket)"
        )
    return None


class _Shared:
    """The process's connection to the shared server, and whether it is usable now."""

    def __init__(self, url: str):
        self.url = url
        self.backend: Any = None
        self.problem: str | None = None  # a lasting one: bad URL, client not installed
        self.down_until = 0.0
        self.down_since: float | None = None
        self.warned_at: float | None = None
        self.lock = threading.Lock()
        password = redaction.url_password(url)
        redaction.remember([password, unquote(password) if password else None])
        self.problem = url_problem(url)
        if self.problem is None:
            from .state_redis import RedisState

            try:
                self.backend = RedisState(url, timeout=OP_TIMEOUT_SECONDS)
            except ImportError:
                from pi_hostspec.install import install_command

                self.problem = (
                    f"{STATE_ENV} names a Redis server, but the redis client is not installed: "
                    f"{install_command('team')}"
                )
            except ValueError as exc:  # the client cannot read the URL (a bad port, a db)
                self.problem = f"{STATE_ENV}: {describe(url)!r} cannot be used: {exc}"

    def usable(self) -> bool:
        """Whether to try the server now (not marked down, or its retry time has come)."""
        if self.problem is not None:
            now = time.monotonic()
            if self.warned_at is None or now - self.warned_at >= WARN_EVERY_SECONDS:
                self.warned_at = now
                _log(f"{self.problem}; using this process's own cache, limits and cooldowns")
            return False
        return time.monotonic() >= self.down_until

    def failed(self, exc: BaseException) -> None:
        """An operation failed: use local state for :data:`RETRY_SECONDS`, and say so (at most
        once per :data:`WARN_EVERY_SECONDS`)."""
        now = time.monotonic()
        with self.lock:
            self.down_until = now + RETRY_SECONDS
            if self.down_since is None:
                self.down_since = now
            if self.warned_at is not None and now - self.warned_at < WARN_EVERY_SECONDS:
                return
            self.warned_at = now
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        _log(
            f"shared state {describe(self.url)} unavailable ({reason}); calls use this "
            f"process's own cache, limits and cooldowns, trying it again every {RETRY_SECONDS:g} s"
        )

    def answered(self) -> None:
        """An operation succeeded: after an outage, say so and hand over what was counted."""
        if self.down_since is None:
            return
        with self.lock:
            if self.down_since is None:
                return
            lasted = time.monotonic() - self.down_since
            self.down_since, self.warned_at = None, None
        _log(f"shared state {describe(self.url)} answers again (after {lasted:.0f} s)")
        _hand_over_usage(self)


_lock = threading.Lock()
_shared: _Shared | None = None


def _current() -> _Shared | None:
    """The shared server for ``PI_WEB_STATE`` as it is now (made on first use), or ``None``."""
    global _shared
    url = configured()
    if url is None:
        return None
    shared = _shared
    if shared is not None and shared.url == url:
        return shared
    with _lock:
        if _shared is None or _shared.url != url:
            old, _shared = _shared, _Shared(url)
            if old is not None and old.backend is not None:
                old.backend.close()
        return _shared


def _using(work: Callable[[Any], T], local: Callable[[], T]) -> T:
    """``work(backend)`` on the shared server when one is set and usable, else (or when it
    fails) ``local()``."""
    shared = _current()
    if shared is None or not shared.usable():
        return local()
    try:
        result = work(shared.backend)
    except Unavailable as exc:
        shared.failed(exc.__cause__ or exc)
        return local()
    shared.answered()
    return result


def remote() -> Any:
    """The shared server's backend when one is set and usable now, else ``None``: for the
    answer cache, whose local home is the disk (:mod:`.cache`). Its calls raise
    :class:`Unavailable`; pass the exception to :func:`failed`."""
    shared = _current()
    if shared is None or not shared.usable():
        return None
    return shared.backend


def failed(exc: Unavailable) -> None:
    """Tell the state that an operation on :func:`remote`'s backend failed."""
    shared = _current()
    if shared is not None:
        shared.failed(exc.__cause__ or exc)


def answered() -> None:
    """Tell the state that an operation on :func:`remote`'s backend succeeded."""
    shared = _current()
    if shared is not None:
        shared.answered()


def notices() -> list[str]:
    """The shared state's lasting problem or outage, for a tool's ``details.warnings``."""
    shared = _current()
    if shared is None:
        return []
    if shared.problem is not None:
        return [f"shared state: {shared.problem}; this process's own state is used"]
    if shared.down_since is not None:
        return [
            f"shared state {describe(shared.url)} is unavailable; this process's own cache, "
            "limits and cooldowns are used until it answers"
        ]
    return []


def check() -> str | None:
    """Reach the shared server now (``pi-web config``, start-up): ``None`` when it answers (or
    none is set), else why not."""
    shared = _current()
    if shared is None:
        return None
    if shared.problem is not None:
        return shared.problem
    try:
        shared.backend.ping()
    except Unavailable as exc:
        cause = exc.__cause__ or exc
        return " ".join(f"{type(cause).__name__}: {cause}".split())[:300]
    return None


# --- single-flight --------------------------------------------------------------------------


class Lease:
    """The right to make one answer (a page download) that others wait for; :meth:`release`
    when it is stored (or given up)."""

    def __init__(self, key: str, release: Callable[[], None]):
        self.key = key
        self._release = release
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            try:
                self._release()
            except Unavailable:
                pass  # the server's copy of the lease expires by itself


_flights_lock = threading.Lock()
_flights: dict[str, threading.Event] = {}


def _lead_locally(key: str) -> Lease | None:
    with _flights_lock:
        if key in _flights:
            return None
        _flights[key] = threading.Event()

    def release() -> None:
        with _flights_lock:
            event = _flights.pop(key, None)
        if event is not None:
            event.set()

    return Lease(key, release)


def lead(key: str, seconds: float) -> Lease | None:
    """A :class:`Lease` on *key* when nobody else is making its answer (for at most *seconds*:
    a leader that dies does not hold others past it), else ``None``: wait with
    :func:`wait_for`, then read the cache."""

    def shared(backend: Any) -> Lease | None:
        token = backend.lead(key, seconds)
        if token is None:
            return None
        return Lease(key, lambda: backend.done(key, token))

    return _using(shared, lambda: _lead_locally(key))


def wait_for(key: str, until: float, cancel: threading.Event | None = None) -> None:
    """Return when nobody leads *key* any more, at monotonic time *until*, or on *cancel*."""
    while time.monotonic() < until and not (cancel is not None and cancel.is_set()):
        with _flights_lock:
            event = _flights.get(key)
        leading = event is not None or _using(lambda backend: backend.leading(key), lambda: False)
        if not leading:
            return
        left = min(until - time.monotonic(), POLL_SECONDS)
        if event is not None:
            event.wait(max(0.0, left))
        else:
            time.sleep(max(0.0, left))


# --- rate limits (the limits library: moving windows) ----------------------------------------

_local_limiter: Any = None


def _limiter_here() -> Any:
    """This process's limiter (one for all threads: calls that start together share it)."""
    global _local_limiter
    with _lock:
        if _local_limiter is None:
            from limits.storage import MemoryStorage
            from limits.strategies import MovingWindowRateLimiter

            _local_limiter = MovingWindowRateLimiter(MemoryStorage())
        return _local_limiter


def _take(limiter: Any, rules: Sequence[Any], ids: tuple[str, ...]) -> float | None:
    for rule in rules:
        if not limiter.hit(rule, *ids):
            reset = limiter.get_window_stats(rule, *ids).reset_time
            return max(0.0, reset - time.time())
    return None


def hit(rules: Sequence[Any], *ids: str) -> float | None:
    """Count one call against every rate of *rules* (``limits`` items) for *ids*: ``None``
    when all allow it, else the seconds until the first that refuses allows one again."""
    if not rules:
        return None
    return _using(
        lambda backend: backend.take(rules, ids, _take),
        lambda: _take(_limiter_here(), rules, ids),
    )


# --- provider cooldowns ------------------------------------------------------------------------

_cool_lock = threading.Lock()
_cool_until: dict[str, float] = {}


def _cool_here(name: str, seconds: float) -> None:
    with _cool_lock:
        _cool_until[name] = max(_cool_until.get(name, 0.0), time.monotonic() + seconds)


def _cooling_here(name: str) -> float:
    with _cool_lock:
        return max(0.0, _cool_until.get(name, 0.0) - time.monotonic())


def cool(name: str, seconds: float) -> None:
    """Provider *name* is not called for *seconds* (a 429 or a ``Retry-After``), by any replica;
    a longer cooldown already set is kept."""
    if seconds <= 0:
        return
    _cool_here(name, seconds)  # this process knows at once, whatever the server does
    _using(lambda backend: backend.cool(name, seconds), lambda: None)


def cooling(name: str) -> float:
    """Seconds provider *name* still cools down (0: it may be called)."""
    here = _cooling_here(name)
    return max(here, _using(lambda backend: backend.cooling(name), lambda: 0.0))


# --- usage counts ------------------------------------------------------------------------------

_usage_lock = threading.Lock()
_usage_here: dict[tuple[str, str], Counter[str]] = {}


def today() -> str:
    """The UTC day usage is counted under (``2026-11-30``)."""
    return time.strftime("%Y-%m-%d", time.gmtime())


def _count_here(day: str, caller: str, provider: str, n: int) -> None:
    with _usage_lock:
        _usage_here.setdefault((day, caller), Counter())[provider] += n


def count(caller: str, provider: str, n: int = 1) -> None:
    """Count *n* calls by *caller* (a token's name) to *provider* today."""
    day = today()
    _using(
        lambda backend: backend.count(day, caller, provider, n),
        lambda: _count_here(day, caller, provider, n),
    )


def _hand_over_usage(shared: _Shared) -> None:
    """Add what this process counted while the server was away to the server's counts."""
    with _usage_lock:
        pending = [
            (day, caller, provider, n)
            for (day, caller), counts in _usage_here.items()
            for provider, n in counts.items()
        ]
        _usage_here.clear()
    for handed, (day, caller, provider, n) in enumerate(pending):
        try:
            shared.backend.count(day, caller, provider, n)
        except Unavailable as exc:  # keep what did not reach it (only that: no count twice)
            for left in pending[handed:]:
                _count_here(*left)
            shared.failed(exc.__cause__ or exc)
            return


def usage(days: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Calls per day, caller and provider for *days* (``{day: {caller: {provider: n}}}``):
    the shared server's counts plus those this process holds."""
    found: dict[str, dict[str, dict[str, int]]] = _using(
        lambda backend: backend.usage(days), lambda: {}
    )
    with _usage_lock:
        for (day, caller), counts in _usage_here.items():
            if day in days:
                mine = found.setdefault(day, {}).setdefault(caller, {})
                for provider, n in counts.items():
                    mine[provider] = mine.get(provider, 0) + n
    return found


@contextmanager
def holding(lease: Lease | None) -> Iterator[Lease | None]:
    """Release *lease* (if any) when the block ends, however it ends."""
    try:
        yield lease
    finally:
        if lease is not None:
            lease.release()


def reset() -> None:
    """Forget the server connection and every local flight, limit, cooldown and count (tests)."""
    global _shared, _local_limiter
    with _lock:
        if _shared is not None and _shared.backend is not None:
            _shared.backend.close()
        _shared = None
    _local_limiter = None
    with _flights_lock:
        _flights.clear()
    with _cool_lock:
        _cool_until.clear()
    with _usage_lock:
        _usage_here.clear()
