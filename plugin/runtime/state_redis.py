"""The shared state on a Redis or Valkey server (``PI_WEB_STATE=redis://…``): see :mod:`.state`.

Keys (all under ``pi-web:``, each with a time to live, so ``maxmemory-policy volatile-lru``
can evict any of them):

- ``pi-web:cache:<hash>``: an answer, the disk cache's JSON text compressed (zlib) after a
  format tag; its time to live is the disk cache's. A value without the tag, that does not
  decompress within :data:`MAX_VALUE_BYTES` or is not UTF-8 is a miss: nothing read here is
  ever unpickled or executed.
- ``pi-web:flight:<hash>``: who is making an answer now (``SET NX PX``), released by a script
  that deletes it only for the holder.
- ``pi-web:limits:LIMITER/…``: the ``limits`` library's moving windows.
- ``pi-web:cool:<provider>``: a provider's cooldown, for as long as it lasts.
- ``pi-web:usage:<day>:<caller>``: a hash of calls per provider, kept :data:`USAGE_DAYS`.

Every failure to reach the server (refused, timed out after the operation timeout, reset,
loading after a restart, refused authentication) is raised as :class:`Unavailable`.
"""

from __future__ import annotations

import secrets
import threading
import zlib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "MAX_VALUE_BYTES",
    "USAGE_DAYS",
    "RedisState",
    "Unavailable",
    "decode_value",
    "encode_value",
]

PREFIX = "pi-web:"
#: The tag before every compressed answer (a value without it is not ours: a miss).
TAG = b"pi-web/zlib1:"
#: The most text one stored answer may expand to (a planted compression bomb is a miss).
MAX_VALUE_BYTES = 64 * 1024 * 1024

#: Usage counts are kept this many days.
USAGE_DAYS = 40

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


class Unavailable(Exception):
    """The shared server cannot be used now (down, slow, refusing): use local state."""


def encode_value(text: str) -> bytes:
    """*text* (an answer's JSON) as it is stored: the tag, then zlib."""
    return TAG + zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def decode_value(blob: Any) -> str | None:
    """The text of a stored answer, or ``None`` when *blob* is not one of ours."""
    if not isinstance(blob, bytes) or not blob.startswith(TAG):
        return None
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(blob[len(TAG) :], MAX_VALUE_BYTES)
    except zlib.error:
        return None
    if inflate.unconsumed_tail or not inflate.eof:
        return None  # larger than allowed, or cut short
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def client_url(url: str) -> str:
    """*url* as the redis client reads it (``valkey://`` is ``redis://``: one protocol)."""
    scheme, sep, rest = url.partition("://")
    scheme = {"valkey": "redis", "valkeys": "rediss"}.get(scheme.lower(), scheme.lower())
    return f"{scheme}{sep}{rest}"


class RedisState:
    """One connection pool to the server; every operation bounded by *timeout* seconds."""

    def __init__(self, url: str, *, timeout: float):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.url = client_url(url)
        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
        # One immediate retry on a broken connection: a pooled connection to a server that
        # restarted fails once, the next one is new. No retry on a timeout (slow means local).
        self.client = redis.Redis.from_url(
            self.url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
            retry_on_timeout=False,
            client_name="pi-web",
        )
        self._release = self.client.register_script(_RELEASE)
        self._limiter: Any = None
        self._limiter_lock = threading.Lock()

    def _run(self, work: Callable[[], Any]) -> Any:
        try:
            return work()
        except self._errors as exc:
            raise Unavailable(str(exc)) from exc

    def close(self) -> None:
        try:
            self.client.close()
        except self._errors:
            pass

    def ping(self) -> None:
        self._run(self.client.ping)

    # answers

    def get(self, key: str) -> str | None:
        """The answer stored under the cache *key*, or ``None``."""
        return decode_value(self._run(lambda: self.client.get(f"{PREFIX}cache:{key}")))

    def put(self, key: str, text: str, seconds: float) -> None:
        """Store *text* under the cache *key* for *seconds*."""
        blob = encode_value(text)
        ms = max(1, int(seconds * 1000))
        self._run(lambda: self.client.set(f"{PREFIX}cache:{key}", blob, px=ms))

    def clear(self) -> int:
        """Delete every stored answer (nothing else: limits, cooldowns and counts stay)."""

        def work() -> int:
            removed = 0
            batch: list[bytes] = []
            for key in self.client.scan_iter(match=f"{PREFIX}cache:*", count=1000):
                batch.append(key)
                if len(batch) >= 1000:
                    removed += int(self.client.unlink(*batch))
                    batch = []
            if batch:
                removed += int(self.client.unlink(*batch))
            return removed

        return int(self._run(work))

    # single-flight

    def lead(self, key: str, seconds: float) -> str | None:
        token = secrets.token_hex(8)
        ms = max(1, int(seconds * 1000))
        taken = self._run(lambda: self.client.set(f"{PREFIX}flight:{key}", token, nx=True, px=ms))
        return token if taken else None

    def done(self, key: str, token: str) -> None:
        self._run(lambda: self._release(keys=[f"{PREFIX}flight:{key}"], args=[token]))

    def leading(self, key: str) -> bool:
        return bool(self._run(lambda: self.client.exists(f"{PREFIX}flight:{key}")))

    # rate limits

    def take(
        self,
        rules: Sequence[Any],
        ids: tuple[str, ...],
        take: Callable[[Any, Sequence[Any], tuple[str, ...]], float | None],
    ) -> float | None:
        """``take(limiter, rules, ids)`` with the ``limits`` library's moving windows here."""
        from limits.errors import StorageError

        try:
            with self._limiter_lock:
                self._make_limiter()
            return take(self._limiter, rules, ids)
        except (StorageError, *self._errors) as exc:  # type: ignore[misc]
            cause = getattr(exc, "storage_error", None) or exc  # the client's own error
            raise Unavailable(str(cause)) from cause

    def _make_limiter(self) -> None:
        if self._limiter is None:
            from limits.storage import RedisStorage
            from limits.strategies import MovingWindowRateLimiter

            storage = RedisStorage(
                self.url if self.url.startswith("redis") else "redis://",
                connection_pool=self.client.connection_pool,
                key_prefix=f"{PREFIX}limits",
                wrap_exceptions=True,
            )
            self._limiter = MovingWindowRateLimiter(storage)

    # cooldowns

    def cool(self, name: str, seconds: float) -> None:
        key, ms = f"{PREFIX}cool:{name}", max(1, int(seconds * 1000))

        def work() -> None:
            if self.client.pttl(key) < ms:
                self.client.set(key, b"1", px=ms)

        self._run(work)

    def cooling(self, name: str) -> float:
        left = self._run(lambda: self.client.pttl(f"{PREFIX}cool:{name}"))
        return max(0, int(left)) / 1000 if isinstance(left, int) else 0.0

    # usage

    def count(self, day: str, caller: str, provider: str, n: int) -> None:
        key = f"{PREFIX}usage:{day}:{caller}"

        def work() -> None:
            pipe = self.client.pipeline(transaction=False)
            pipe.hincrby(key, provider, n)
            pipe.expire(key, USAGE_DAYS * 86400)
            pipe.execute()

        self._run(work)

    def usage(self, days: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
        found: dict[str, dict[str, dict[str, int]]] = {}

        def work() -> None:
            for day in days:
                prefix = f"{PREFIX}usage:{day}:"
                for raw in self.client.scan_iter(match=f"{prefix}*", count=500):
                    caller = _text(raw)[len(prefix) :]
                    counts = {}
                    for provider, n in self.client.hgetall(raw).items():
                        try:
                            counts[_text(provider)] = int(n)
                        except ValueError:
                            continue  # not a count of ours
                    if counts:
                        found.setdefault(day, {})[caller] = counts

        self._run(work)
        return found
