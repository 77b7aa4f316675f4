"""Site readers on the default fetch path: which reader claims a URL, and running it.

:func:`read` is called by :func:`pi_web_tools.runtime.run.fetch` for the URLs of a call that
names no ``provider``, before any fetcher downloads them. A URL whose host a reader claims (and
that the config leaves on) is read through the site's own API by that reader, with a
:class:`~pi_web_tools.runtime.reader_web.SiteWeb` bounded by the call; what it returns becomes
the URL's :class:`~pi_web_tools.api.types.FetchedPage`, which the caller then treats exactly like
a fetcher's page (control characters, redaction, the cache, paging, the fair budget). A reader
that declines, fails with ``fall_back``, or breaks leaves the URL to the usual fetch, with a
note saying why when there is one.
"""

from __future__ import annotations

import difflib
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import attrs
from attrs import frozen

from ..api.readers import Reader, ReaderError, Reading
from ..api.types import FetchedPage, one_line

__all__ = ["ReadOutcome", "claimant", "read", "settings_warnings", "token_state"]

#: URLs read at once (each reader's requests are its own).
MAX_PARALLEL = 8
#: Past the call's deadline, a reader that ignores it is given up on after this long.
GRACE_SECONDS = 1.0
#: How often a wait for a reader looks at the call's cancellation.
POLL_SECONDS = 0.05


@frozen(kw_only=True)
class ReadOutcome:
    """One URL's result from a reader: its *page* (``None``: fetch it as usual), a *note* for
    the usual fetch's page when the reader fell back, and whether the page is *immutable*
    (content at a fixed version: cached long)."""

    page: FetchedPage | None = None
    note: str | None = None
    immutable: bool = False
    reader: str = ""


def _readers(config: Any) -> list[Reader]:
    from .registry import readers

    settings = getattr(config, "readers", None)
    return [
        reader for reader in readers().values() if settings is None or settings.is_on(reader.name)
    ]


def claimant(url: str, config: Any) -> Reader | None:
    """The first reader (built-in ones first) that claims *url*'s host and is on, or ``None``."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return None
    if not host:
        return None
    return next((reader for reader in _readers(config) if reader.claims(host)), None)


def settings_warnings(config: Any) -> list[str]:
    """Warnings for reader names in ``readers`` that no registered reader has."""
    from .registry import readers

    settings = getattr(config, "readers", None)
    if settings is None:
        return []
    known = list(readers())
    warnings = []
    for name in settings.named:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        warnings.append(
            f"readers: no reader is called {name!r} ({hint}readers: {', '.join(known) or 'none'})"
        )
    return warnings


def token_state(reader: Reader) -> str | None:
    """Where the reader's token would come from, in words (never the token), or ``None`` for a
    keyless reader. The token command is not run for this."""
    import os
    import shutil

    spec = reader.token
    if spec is None:
        return None
    named = next((name for name in spec.env if os.environ.get(name, "").strip()), None)
    if named:
        return f"token from {named}"
    if spec.command and shutil.which(spec.command[0]):
        return f"token from `{' '.join(spec.command)}` when logged in, else none"
    return f"no token ({' or '.join(spec.env)} unset)"


def _page(url: str, reader: Reader, reading: Reading) -> FetchedPage:
    source = reading.source or reader.via
    return FetchedPage(
        url=url,
        ok=True,
        title=reading.title,
        text=reading.text,
        final_url=reading.final_url,
        content_type=reading.content_type,
        notes=(f"read via {source}", *reading.notes),
        more_text=reading.more_text,
    )


def _read_one(url: str, reader: Reader, web: Any) -> ReadOutcome:
    """One URL through *reader*; every failure becomes an outcome, never an exception."""
    try:
        reading = reader.read(url, web)
    except ReaderError as exc:
        message = one_line(exc.message, 600)
        if exc.fall_back:
            return ReadOutcome(note=f"{reader.label}: {message}")
        return ReadOutcome(
            page=FetchedPage(
                url=url,
                ok=False,
                error=message,
                status=exc.status,
                code=exc.code or "reader",
                suggestions=exc.suggestions,
            )
        )
    except InterruptedError:
        return ReadOutcome(page=FetchedPage(url=url, ok=False, error="cancelled"))
    except Exception as exc:  # noqa: BLE001 - a reader's bug must not cost the URL
        return ReadOutcome(
            note=f"the {reader.label} reader failed ({type(exc).__name__}); the page was fetched instead"
        )
    if reading is None:
        return ReadOutcome()
    if not isinstance(reading, Reading) or not isinstance(reading.text, str):
        return ReadOutcome(
            note=f"the {reader.label} reader returned {type(reading).__name__}, not a Reading; "
            "the page was fetched instead"
        )
    return ReadOutcome(page=_page(url, reader, reading), immutable=reading.immutable)


class _Pool:
    """A few daemon threads, started when first needed and reused (a thread's start costs as
    much as a loopback request). Daemon threads, unlike ``ThreadPoolExecutor``'s, never hold up
    the process's exit: a reader that hangs is left behind at the call's deadline and dies
    with the process."""

    def __init__(self, size: int):
        self.size = size
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.idle = 0
        self.lock = threading.Lock()

    def submit(self, work: Callable[[], ReadOutcome]) -> Future:
        """Run *work* on a pool thread; its future."""
        future: Future = Future()
        with self.lock:
            if self.idle > 0:
                self.idle -= 1  # a waiting thread takes it
            elif len(self.threads) < self.size:
                thread = threading.Thread(
                    target=self._serve, name=f"site-reader-{len(self.threads)}", daemon=True
                )
                self.threads.append(thread)
                thread.start()
            # else: every thread is busy; the first one free takes it
        self.jobs.put((work, future))
        return future

    def _serve(self) -> None:
        while True:
            work, future = self.jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting call
                    future.set_exception(exc)
            with self.lock:
                self.idle += 1


_pool = _Pool(MAX_PARALLEL)


def _outcome(url: str, reader: Reader, future: Any, deadline: float, cancel: Any) -> ReadOutcome:
    """The outcome of a read running in *future*, given up on when the call is cancelled or
    its deadline (and a grace) has passed, whatever the reader does."""
    while True:
        remaining = deadline + GRACE_SECONDS - time.monotonic()
        try:
            return future.result(timeout=max(0.0, min(POLL_SECONDS, remaining)))
        except FutureTimeout:
            if cancel is not None and cancel.is_set():
                return ReadOutcome(page=FetchedPage(url=url, ok=False, error="cancelled"))
            if remaining <= 0:
                return ReadOutcome(
                    page=FetchedPage(
                        url=url, ok=False, error=f"{reader.label}: timed out", code="reader"
                    )
                )


def read(
    urls: list[str],
    config: Any,
    ctx: Any,
    deadline: float,
    *,
    allow_private: bool = False,
) -> dict[str, ReadOutcome]:
    """Each URL of *urls* that a reader claims, and what came of reading it (URLs no reader
    claims are absent). *allow_private* turns the network guard off for the readers' requests
    (the user's direct fetcher allows private networks)."""
    from .reader_web import SiteWeb

    claimed = {url: reader for url in urls if (reader := claimant(url, config)) is not None}
    if not claimed:
        return {}
    settings = getattr(config, "readers", None)
    cancel = getattr(ctx, "cancel", None)

    def one(url: str, reader: Reader) -> ReadOutcome:
        web = SiteWeb(
            reader,
            deadline=deadline,
            cancel=cancel,
            allow_private=allow_private,
            base_url=settings.base_url(reader.name) if settings is not None else None,
        )
        return attrs.evolve(_read_one(url, reader, web), reader=reader.name)

    futures = {url: _pool.submit(partial(one, url, reader)) for url, reader in claimed.items()}
    return {
        url: _outcome(url, claimed[url], future, deadline, cancel)
        for url, future in futures.items()
    }
