"""The on-disk cache of answers: extracted page text, search results and summaries.

Stored with diskcache (SQLite underneath, safe for several processes at once; its locking, size
cap and eviction are the library's) in the user cache directory for this application
(platformdirs), a 0700 directory whose files are 0600. Keys are hashes of the provider type,
its options (the base URL among them) and the normalized request: never an API key, and values
are redacted before they are stored, so no key byte reaches the directory.

Values are JSON text, stored and read through a disk class that handles nothing else: a value
pickled into the database (planted by another user while the folder was open to them) is never
unpickled, and a row naming a file is never followed. Before the store opens, every file in the
folder that is not a regular file of this user without group or other permission bits is moved
aside (renamed ``<name>.untrusted-<time>``) with a warning, so a planted database is never read.

With a shared state server (``PI_WEB_STATE``, :mod:`.state`), the same keys and values (and
times to live) are kept there instead, compressed, for every replica; the disk serves while
the server cannot be reached.

Cache I/O never outlasts the call: each call has a :class:`Budget` (its deadline); the first
wait on a busy database that runs out makes every other cache step of that call a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any

from attrs import field, frozen

from ..api.redaction import redact_value
from . import state

__all__ = [
    "BRIEF_TTL_SECONDS",
    "IMMUTABLE_TTL_SECONDS",
    "DEFAULT_MAX_MEGABYTES",
    "DEFAULT_TTL_SECONDS",
    "Budget",
    "CacheDamaged",
    "CacheSettings",
    "Hit",
    "cache_directory",
    "clear",
    "get",
    "notices",
    "put",
    "usage",
]

APP_NAME = "pi-web-tools"
#: Bumped when what is stored changes shape, so old entries are simply never found.
FORMAT_VERSION = 2
DEFAULT_TTL_SECONDS = {"web_search": 3600, "web_fetch": 900, "summarize": 86400}
DEFAULT_MAX_MEGABYTES = 256
#: The longest one call waits on a busy cache (less when its deadline is nearer).
LOCK_TIMEOUT_SECONDS = 2.0
#: The least wait a cache step gets past the call's deadline (an idle database answers at once).
MIN_WAIT_SECONDS = 0.05
#: How long degraded answers (extraction cut short, application shells) and failures that the
#: fetch ladder paid for are kept: long enough to read on or retry, not a full time-to-live.
BRIEF_TTL_SECONDS = 120.0
#: How long content that never changes (a file at a full commit SHA) is kept.
IMMUTABLE_TTL_SECONDS = 7 * 24 * 3600.0
DATABASE = "cache.db"
#: The suffix of files moved aside (``cache.db.untrusted-1700000000``).
UNTRUSTED = ".untrusted-"


class CacheDamaged(OSError):
    """The cache database cannot be read (not a database, malformed)."""


class Budget:
    """How long one call may wait on the cache: until *seconds* from now, and only until the
    first wait that runs out (the database is held by another process: everything else of the
    call is a miss)."""

    def __init__(self, seconds: float | None = None):
        self.deadline = time.monotonic() + (LOCK_TIMEOUT_SECONDS if seconds is None else seconds)
        self.busy = False

    def wait(self) -> float | None:
        """Seconds the next cache step may wait, or ``None``: skip it."""
        if self.busy:
            return None
        left = self.deadline - time.monotonic()
        return min(LOCK_TIMEOUT_SECONDS, max(MIN_WAIT_SECONDS, left))


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
#: What the cache had to do this process: (whether it is about a damaged database, the text).
_notices: list[tuple[bool, str]] = []


def notices() -> list[str]:
    """What the cache had to do about its folder or database this process (files moved aside,
    a damaged database), for the tools' ``details.warnings`` and ``pi-web cache``."""
    with _lock:
        return [text for _, text in _notices]


def _notice(message: str, *, damaged: bool = False) -> None:
    if (damaged, message) not in _notices:
        _notices.append((damaged, message))


#: SQLite's result codes for a database another connection holds (SQLITE_BUSY, SQLITE_LOCKED).
_BUSY, _LOCKED = 5, 6


def _sqlite_code(exc: sqlite3.Error) -> int | None:
    """The primary SQLite result code of *exc* (Python 3.11+), or ``None``."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _database_busy(exc: sqlite3.Error, *, or_locked: bool = False) -> bool:
    """Whether another connection holds the database (SQLITE_BUSY; with *or_locked*,
    SQLITE_LOCKED too). Python 3.10 gives no result code: SQLite's own message says it."""
    code = _sqlite_code(exc)
    if code is None:  # Python 3.10
        return str(exc) == "database is locked" or (or_locked and "locked" in str(exc))
    return code == _BUSY or (or_locked and code == _LOCKED)


def _private_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.is_symlink() or not path.is_dir():
        raise OSError(f"{path} is not a directory")
    os.chmod(path, 0o700)


def _untrusted(info: os.stat_result) -> str | None:
    """Why a file in the cache folder cannot be trusted, or ``None``."""
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"it is owned by another user (uid {info.st_uid})"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return f"other users could write it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _set_aside(directory: Path) -> None:
    """Move aside every file of the (already private) folder that others could have written:
    only files this user made, readable by no one else, are ever opened."""
    if os.name != "posix":
        return
    stamp = int(time.time())
    with os.scandir(directory) as entries:
        found = [(entry.name, entry.stat(follow_symlinks=False)) for entry in entries]
    for name, info in found:
        if UNTRUSTED in name:
            continue  # moved aside before: never opened, left for the user to look at
        why = _untrusted(info)
        if why is None:
            continue
        path = directory / name
        aside = directory / f"{name}{UNTRUSTED}{stamp}"
        try:
            os.rename(path, aside)
        except OSError as exc:
            raise OSError(
                f"{path} cannot be trusted ({why}) and could not be moved aside "
                f"({exc.strerror or exc}); remove it"
            ) from None
        _notice(
            f"cache: {path} was moved aside to {aside.name} and is never read: {why}, so "
            "another user could have planted it; delete it once you have looked at it"
        )


def _store_class() -> tuple[type, type]:
    """diskcache's ``Cache`` with opening bounded by a deadline, and a disk class that keeps
    JSON text only: it never unpickles, never reads or removes a file a row names."""
    import diskcache
    from diskcache.core import MODE_RAW, UNKNOWN

    class Refused(ValueError):
        """A row that is not JSON text written by this module."""

    class JsonTextDisk(diskcache.Disk):
        def put(self, key: Any) -> tuple:
            if type(key) is not str:
                raise TypeError("cache keys are strings")
            return key, True

        def get(self, key: Any, raw: bool) -> Any:
            if not raw or type(key) is not str:
                raise Refused("a cache key that is not text")
            return key

        def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> tuple:
            if read or type(value) is not str:
                raise TypeError("cache values are JSON text")
            return 0, MODE_RAW, None, value

        def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> Any:
            if mode != MODE_RAW or filename is not None or read or type(value) is not str:
                raise Refused("a cache value that is not JSON text")
            return value

        def remove(self, file_path: Any) -> None:
            return None  # values never live in files; a name in a row is never followed

    class Store(diskcache.Cache):
        """Opening waits for a busy database only until *open_deadline* (diskcache retries
        its set-up statements for 60 s)."""

        def __init__(self, *args: Any, open_deadline: float, **kwargs: Any):
            self._open_deadline = open_deadline
            super().__init__(*args, **kwargs)

        @property
        def _sql_retry(self) -> Any:
            sql = self._sql
            deadline = self._open_deadline

            def execute(statement: str, *args: Any, **kwargs: Any) -> Any:
                while True:
                    try:
                        return sql(statement, *args, **kwargs)
                    except sqlite3.OperationalError as exc:
                        if not _database_busy(exc) or time.monotonic() > deadline:
                            raise
                        time.sleep(0.005)

            return execute

    return Store, JsonTextDisk


def _damaged(exc: sqlite3.DatabaseError, directory: Path) -> CacheDamaged:
    return CacheDamaged(
        f"the cache database {directory / DATABASE} is damaged ({exc}); run: pi-web cache clear"
    )


def _open(settings: CacheSettings, wait: float = LOCK_TIMEOUT_SECONDS) -> Any:
    """The process's cache store for *settings* (opened once per directory and size), waiting
    at most *wait* seconds for a busy database. Raises ``OSError`` (:class:`CacheDamaged` for
    a database that is not one) and ``sqlite3.OperationalError`` (busy)."""
    global _store, _store_key
    directory = cache_directory()
    key = (str(directory), settings.max_megabytes)
    with _lock:
        if _store is not None and _store_key == key:
            return _store
        _private_directory(directory)  # first: nobody else can add a file after the check
        _set_aside(directory)
        Store, Disk = _store_class()
        old_umask = os.umask(0o077)  # the database (and SQLite's WAL files after it) 0600
        try:
            store = Store(
                str(directory),
                open_deadline=time.monotonic() + wait,
                timeout=LOCK_TIMEOUT_SECONDS,
                disk=Disk,
                size_limit=int(settings.max_megabytes * 1024 * 1024),
                disk_min_file_size=2**40,  # every value inside the database: no loose files
                eviction_policy="least-recently-stored",
                statistics=0,
                tag_index=0,
            )
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            damaged = _damaged(exc, directory)
            _notice(f"cache: {damaged}", damaged=True)
            raise damaged from None
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
        _notices.clear()


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


def _step(settings: CacheSettings, budget: Budget | None, work: Any) -> Any:
    """``work(store)`` within the call's *budget*; ``None`` when the cache is busy, broken or
    the budget is spent (a busy step spends it: the rest of the call skips the cache)."""
    budget = budget if budget is not None else Budget()
    wait = budget.wait()
    if wait is None:
        return None
    try:
        store = _open(settings, wait)
        store._con.execute(f"PRAGMA busy_timeout = {max(1, int(wait * 1000))}")
        return work(store)
    except Exception as exc:  # noqa: BLE001 - a broken or locked cache is a miss, never a failure
        if _is_busy(exc):
            budget.busy = True
        return None


def _is_busy(exc: BaseException) -> bool:
    import diskcache

    return isinstance(exc, diskcache.Timeout) or (
        isinstance(exc, sqlite3.OperationalError) and _database_busy(exc, or_locked=True)
    )


def get(
    settings: CacheSettings, tool: str, key: str, *, budget: Budget | None = None
) -> Hit | None:
    """The fresh cached answer for *key*, or ``None`` (also when the cache is off, busy past
    the call's *budget*, or holds something that is not this module's JSON)."""
    if not settings.enabled or settings.ttl(tool) <= 0:
        return None
    text = _read(settings, key, budget)
    if not isinstance(text, str):
        return None
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("stored"), (int, float)):
        return None
    age = max(0.0, time.time() - found["stored"])
    kept = found.get("immutable")  # content that never changes keeps its own time to live
    limit = kept if isinstance(kept, (int, float)) and not isinstance(kept, bool) else None
    if age > (limit or settings.ttl(tool)):  # a shorter ttl configured since it was stored
        return None
    return Hit(value=found.get("value"), age_seconds=age)


def put(
    settings: CacheSettings,
    tool: str,
    key: str,
    value: Any,
    *,
    budget: Budget | None = None,
    ttl: float | None = None,
    immutable: bool = False,
) -> None:
    """Store *value* (JSON-like, redacted first) for the tool's time-to-live, or *ttl* seconds
    when shorter (brief answers), or :data:`IMMUTABLE_TTL_SECONDS` when it is *immutable*
    (content at a fixed version, which never changes); never raises, never waits past the call's
    *budget*."""
    seconds = settings.ttl(tool)
    if ttl is not None:
        seconds = min(seconds, ttl)
    if not settings.enabled or seconds <= 0:
        return
    record: dict = {"stored": time.time(), "value": _clean(value)}
    if immutable:
        seconds = max(seconds, IMMUTABLE_TTL_SECONDS)
        record["immutable"] = seconds
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return  # not JSON: never stored
    shared = state.remote()
    if shared is not None:
        try:
            shared.put(key, text, seconds)
        except state.Unavailable as exc:
            state.failed(exc)
        else:
            state.answered()
            return
    _step(settings, budget, lambda store: store.set(key, text, expire=seconds))


def _read(settings: CacheSettings, key: str, budget: Budget | None) -> Any:
    """The stored text for *key*: from the shared state's server when one is set and answers
    (:mod:`.state`), else from the disk."""
    shared = state.remote()
    if shared is not None:
        try:
            text = shared.get(key)
        except state.Unavailable as exc:
            state.failed(exc)
        else:
            state.answered()
            return text
    return _step(settings, budget, lambda store: store.get(key))


def _put_aside(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if UNTRUSTED in p.name)


def usage(settings: CacheSettings) -> tuple[Path, int, int]:
    """(directory, bytes used, number of entries) for ``pi-web cache``; raises ``OSError``
    (:class:`CacheDamaged` when the database is damaged)."""
    directory = cache_directory()
    if not directory.exists():
        return directory, 0, 0
    store = _open(settings)
    store.expire()
    return directory, int(store.volume()), len(store)


def set_aside_files() -> list[str]:
    """The names of files moved aside in the cache folder (never read), for ``pi-web cache``."""
    directory = cache_directory()
    try:
        return _put_aside(directory)
    except OSError:
        return []


def clear(settings: CacheSettings) -> int:
    """Empty the cache; return how many entries were removed. A damaged database is deleted
    (with SQLite's files beside it) and a new one is made; files moved aside are deleted too."""
    directory = cache_directory()
    if not directory.exists():
        return 0
    try:
        removed = int(_open(settings).clear())
    except CacheDamaged:
        removed = 0
        for name in (DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", f"{DATABASE}-journal"):
            try:
                (directory / name).unlink()
            except FileNotFoundError:
                pass
        with _lock:
            _notices[:] = [(damaged, text) for damaged, text in _notices if not damaged]
        _open(settings)
    for name in _put_aside(directory):
        try:
            (directory / name).unlink()
        except IsADirectoryError:
            shutil.rmtree(directory / name, ignore_errors=True)
        except OSError:
            pass
    return removed
