"""The on-disk cache of answers: extracted page text, search results and summaries.

Stored with diskcache (SQLite underneath, safe for several processes at once; its locking, size
cap and eviction are the library's) in the user cache directory for this application
(platformdirs), a 0700 directory whose files are 0600. Keys are hashes of the provider type,
its options (the base URL among them) and the normalized request: never an API key, and values
are redacted before they are stored, so no key byte reaches the directory. Only successes are
stored; errors and failed URLs never are.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from attrs import field, frozen

from ..api.redaction import redact_value

__all__ = [
    "DEFAULT_MAX_MEGABYTES",
    "DEFAULT_TTL_SECONDS",
    "CacheSettings",
    "Hit",
    "cache_directory",
    "clear",
    "get",
    "put",
    "usage",
]

APP_NAME = "pi-web-tools"
#: Bumped when what is stored changes shape, so old entries are simply never found.
FORMAT_VERSION = 1
DEFAULT_TTL_SECONDS = {"web_search": 3600, "web_fetch": 900, "summarize": 86400}
DEFAULT_MAX_MEGABYTES = 256
LOCK_TIMEOUT_SECONDS = 2.0


@frozen(kw_only=True)
class CacheSettings:
    """The ``cache`` object of ``web-search.json``: on or off, a time-to-live per tool, a size."""

    enabled: bool = True
    ttl_seconds: dict = field(factory=lambda: dict(DEFAULT_TTL_SECONDS))
    max_megabytes: float = DEFAULT_MAX_MEGABYTES

    def ttl(self, tool: str) -> float:
        """Seconds an answer of *tool* stays fresh (0: not cached)."""
        return float(self.ttl_seconds.get(tool, DEFAULT_TTL_SECONDS.get(tool, 0)))


@frozen(kw_only=True)
class Hit:
    """A cached answer and how old it is."""

    value: Any
    age_seconds: float


def cache_directory() -> Path:
    """Where the cache lives (``$XDG_CACHE_HOME/pi-web-tools`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


_lock = threading.Lock()
_store: Any = None
_store_key: tuple | None = None


def _private_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.is_symlink() or not path.is_dir():
        raise OSError(f"{path} is not a directory")
    os.chmod(path, 0o700)


def _open(settings: CacheSettings) -> Any:
    """The process's cache store for *settings* (opened once per directory and size)."""
    global _store, _store_key
    directory = cache_directory()
    key = (str(directory), settings.max_megabytes)
    with _lock:
        if _store is not None and _store_key == key:
            return _store
        import diskcache

        _private_directory(directory)
        old_umask = os.umask(0o077)  # the database (and SQLite's WAL files after it) 0600
        try:
            store = diskcache.Cache(
                str(directory),
                timeout=LOCK_TIMEOUT_SECONDS,
                size_limit=int(settings.max_megabytes * 1024 * 1024),
                disk_min_file_size=2**40,  # every value inside the database: no loose files
                eviction_policy="least-recently-stored",
            )
        finally:
            os.umask(old_umask)
        if _store is not None:
            _store.close()
        _store, _store_key = store, key
        return store


def close() -> None:
    """Close the store (tests; a new one opens on next use)."""
    global _store, _store_key
    with _lock:
        if _store is not None:
            _store.close()
        _store, _store_key = None, None


def make_key(tool: str, provider_type: str, options: Any, request: Any) -> str:
    """The cache key of an answer: a hash, so nothing of the request is readable on disk."""
    material = json.dumps(
        [FORMAT_VERSION, tool, provider_type, repr(options), request],
        sort_keys=True,
        default=repr,
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _clean(value: Any) -> Any:
    """*value* (JSON-like) with every known key redacted from its strings."""
    return redact_value(value)


def get(settings: CacheSettings, tool: str, key: str) -> Hit | None:
    """The fresh cached answer for *key*, or ``None`` (also when the cache is off or busy)."""
    if not settings.enabled or settings.ttl(tool) <= 0:
        return None
    try:
        found = _open(settings).get(key)
    except Exception:  # noqa: BLE001 - a broken or locked cache is a miss, never a failure
        return None
    if not isinstance(found, dict) or "stored" not in found:
        return None
    age = max(0.0, time.time() - found["stored"])
    if age > settings.ttl(tool):  # a shorter ttl configured since it was stored
        return None
    return Hit(value=found["value"], age_seconds=age)


def put(settings: CacheSettings, tool: str, key: str, value: Any) -> None:
    """Store *value* (JSON-like, redacted first) for the tool's time-to-live; never raises."""
    ttl = settings.ttl(tool)
    if not settings.enabled or ttl <= 0:
        return
    try:
        _open(settings).set(key, {"stored": time.time(), "value": _clean(value)}, expire=ttl)
    except Exception:  # noqa: BLE001 - a full disk or a locked cache only costs the next call
        pass


def usage(settings: CacheSettings) -> tuple[Path, int, int]:
    """(directory, bytes used, number of entries) for ``pi-web cache``."""
    directory = cache_directory()
    if not directory.exists():
        return directory, 0, 0
    store = _open(settings)
    store.expire()
    return directory, int(store.volume()), len(store)


def clear(settings: CacheSettings) -> int:
    """Empty the cache; return how many entries were removed."""
    if not cache_directory().exists():
        return 0
    return int(_open(settings).clear())
