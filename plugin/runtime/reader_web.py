"""The web a site reader gets: the one HTTP path behind the network guard, bounded by the call.

:class:`SiteWeb` implements :class:`~pi_web_tools.api.readers.ReaderWeb`. Every request is a GET
made through the shared session machinery (:func:`~pi_web_tools.api._http_client.new_session`,
:func:`~pi_web_tools.api._http_client.send`, :func:`~pi_web_tools.api._http_client.read_body`),
retried by the one retry loop (:func:`~pi_web_tools.api.retry.with_retries`) within the call's
deadline, stopped when the call is cancelled, with capped bodies, on a session of the network
guard (:func:`~pi_web_tools.api._netguard.guarded_session`: the one host rule on every request
and every connected socket). Redirects are followed here, hop by hop, so that the reader's token
is sent only over https to the hosts its :class:`ReaderToken` names: a redirect to any other
host drops it.

A ``baseUrl`` override (for tests and mirrors) sends every request to
``{baseUrl}/{host}{path}``: the real host becomes the first path segment. No token is ever sent
there.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from functools import partial
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from pi_hostspec.truncate import format_size

from ..api import redaction
from ..api import retry as retry_module
from ..api._http_client import (
    LazySession,
    is_retryable,
    network_error_message,
    new_session,
    read_body,
    send,
    socket_timeouts,
)
from ..api._netguard import RefusedAddress, guarded_session
from ..api.readers import Reader, ReaderError, ReaderToken, Reading, WebResponse, host_matches
from ..api.retry import Retryable

__all__ = ["DEFAULT_MAX_BYTES", "SiteWeb", "close_sessions", "token_for"]

#: The body cap of a reader's request unless it asks for another (the direct fetcher's default).
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
#: The most of an error answer's body that is read.
ERROR_BODY_BYTES = 256 * 1024
MAX_REDIRECTS = 5
#: The longest a token command (``gh auth token``) may take.
TOKEN_COMMAND_SECONDS = 5.0


def _new_session(guarded: bool) -> requests.Session:
    """A session for the readers: on the network guard's adapter (:func:`guarded_session`:
    the one host rule on every request it sends, each redirect hop included, and on every
    connected socket) unless the guard is off."""
    if guarded:
        return guarded_session(keep_cookies=False)
    adapter = requests.adapters.HTTPAdapter(pool_connections=8, pool_maxsize=20, max_retries=0)
    return new_session(adapter=adapter, keep_cookies=False)


_sessions = {guarded: LazySession(partial(_new_session, guarded)) for guarded in (True, False)}


def close_sessions() -> None:
    """Close the readers' sessions and their pooled connections (new ones open on next use)."""
    for session in _sessions.values():
        session.close()


# --- tokens -----------------------------------------------------------------------------------

_command_tokens: dict[tuple[str, ...], str | None] = {}
_token_lock = threading.Lock()


def _from_command(command: tuple[str, ...]) -> str | None:
    """The token *command* prints (run once per process, within a few seconds), or ``None``."""
    with _token_lock:
        if command in _command_tokens:
            return _command_tokens[command]
        token = None
        if command and shutil.which(command[0]):
            try:
                done = subprocess.run(
                    list(command),
                    capture_output=True,
                    text=True,
                    timeout=TOKEN_COMMAND_SECONDS,
                    stdin=subprocess.DEVNULL,
                    check=False,
                )
                words = done.stdout.split() if done.returncode == 0 else []
                token = words[0] if len(words) == 1 else None
            except (OSError, subprocess.SubprocessError, UnicodeError):
                token = None
        _command_tokens[command] = token
        redaction.remember([token])
        return token


def token_for(spec: ReaderToken | None) -> str | None:
    """The token *spec* names: its first environment variable that is set, else what its
    command prints; ``None`` when there is none. Every value is known to redaction."""
    import os

    if spec is None:
        return None
    redaction.watch_env(spec.env)
    for name in spec.env:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return _from_command(spec.command) if spec.command else None


def forget_command_tokens() -> None:
    """Forget tokens read from commands (tests; a host after ``gh auth login``)."""
    with _token_lock:
        _command_tokens.clear()


# --- the client -------------------------------------------------------------------------------


class _Answer(Exception):
    """A retryable answer (429, 502, ...) carried out of an attempt; returned when no retry is
    left, so the reader can say what the site said."""

    def __init__(self, response: WebResponse):
        super().__init__(response.status)
        self.response = response


class SiteWeb:
    """A reader's :class:`~pi_web_tools.api.readers.ReaderWeb` for one call.

    :param reader: the reader (its token rule and its name in messages), or ``None`` for the
        runtime's own requests to a site (no token; *source* names the site in messages).
    :param deadline: the call's monotonic deadline; *cancel* its cancellation event.
    :param allow_private: the network guard is off (the user's direct fetcher allows private
        networks), as it is for the direct fetcher.
    :param base_url: the override every request goes to instead (``{base}/{host}{path}``).
    """

    def __init__(
        self,
        reader: Reader | None,
        *,
        deadline: float,
        cancel: threading.Event | None = None,
        allow_private: bool = False,
        base_url: str | None = None,
        retry: retry_module.RetryPolicy | None = None,
        source: str = "the site",
    ):
        self.reader = reader
        self.source = reader.via if reader is not None else source
        self.spec = reader.token if reader is not None else None
        self.deadline = deadline
        self.cancel = cancel
        self.allow_private = allow_private
        self.base_url = base_url.rstrip("/") if base_url else None
        self.retry = retry
        self.requests = 0
        self._token = token_for(self.spec) if self.spec is not None else None
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled."""
        return self.cancel is not None and self.cancel.is_set()

    @property
    def has_token(self) -> bool:
        """Whether the reader's token was found."""
        return bool(self._token)

    @property
    def policy(self) -> retry_module.RetryPolicy:
        """The retry policy in force."""
        return self.retry if self.retry is not None else retry_module.DEFAULT_RETRY

    def _route(self, url: str) -> str:
        """Where a request for *url* really goes: itself, or under the ``baseUrl`` override."""
        if self.base_url is None or url.startswith(self.base_url + "/"):
            return url
        parts = urlsplit(url)
        rest = parts.path or "/"
        query = f"?{parts.query}" if parts.query else ""
        return f"{self.base_url}/{parts.netloc.lower()}{rest}{query}"

    def _headers(self, url: str, routed: str, extra: Mapping[str, str] | None) -> dict:
        headers = {name: value for name, value in (extra or {}).items() if value is not None}
        spec = self.spec
        if self._token and spec is not None and routed == url:
            parts = urlsplit(url)
            if parts.scheme == "https" and host_matches(parts.hostname or "", spec.hosts):
                headers[spec.header] = f"{spec.prefix}{self._token}"
        return headers

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        source: str = "",
    ) -> WebResponse:
        """GET *url* (see :meth:`ReaderWeb.get <pi_web_tools.api.readers.ReaderWeb.get>`)."""
        if params:
            prepared = requests.PreparedRequest()
            prepared.prepare_url(url, dict(params))
            url = prepared.url or url
        where = source or self.source
        cap = max_bytes or DEFAULT_MAX_BYTES

        def attempt() -> WebResponse:
            answer = self._follow(url, headers, cap, where)
            if self._worth_retrying(answer):
                raise Retryable(_Answer(answer), answer.headers.get("Retry-After"))
            return answer

        try:
            return retry_module.with_retries(
                attempt, policy=self.policy, deadline=self.deadline, cancel=self.cancel
            )
        except _Answer as last:
            return last.response
        except InterruptedError:
            raise ReaderError(f"{where}: cancelled") from None

    def _worth_retrying(self, answer: WebResponse) -> bool:
        """A 429/502/503/504 is tried again, unless the site says to wait longer than the
        retry loop would (a spent hourly quota: ``x-ratelimit-remaining: 0``, or a long
        ``Retry-After``)."""
        if not self.policy.is_retry_status(answer.status):
            return False
        if answer.headers.get("x-ratelimit-remaining", "").strip() == "0":
            return False
        hinted = retry_module.parse_retry_after(answer.headers.get("Retry-After"))
        return hinted is None or hinted <= self.policy.retry_after_cap

    def _follow(
        self, url: str, headers: Mapping[str, str] | None, cap: int, where: str
    ) -> WebResponse:
        """One attempt: the request and its redirects, each hop guarded."""
        current = url
        visited = {url}
        for _hop in range(MAX_REDIRECTS + 1):
            if self.cancelled:
                raise InterruptedError("cancelled")
            routed = self._route(current)
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise ReaderError(f"{where}: timed out")
            session = _sessions[not self._unguarded(routed)].get()
            with self._lock:
                self.requests += 1
            try:
                response = send(
                    session,
                    "GET",
                    routed,
                    cancel=self.cancel,
                    deadline=self.deadline,
                    stream=True,
                    allow_redirects=False,
                    headers=self._headers(current, routed, headers),
                    timeout=socket_timeouts(remaining),
                )
            except requests.exceptions.RequestException as exc:
                failure = ReaderError(f"{where}: {network_error_message(exc)}")
                if is_retryable(exc):
                    raise Retryable(failure) from None
                raise failure from None
            except RefusedAddress as exc:  # the guard's host rule, on this hop
                raise ReaderError(f"{where}: {exc}") from None
            except TimeoutError:
                raise ReaderError(f"{where}: timed out waiting for the response") from None
            try:
                target = session.get_redirect_target(response)
                if target or getattr(response, "invalid_location", False):
                    following = self._next_hop(routed, target, response.status_code, where)
                    if following in visited:
                        raise ReaderError(f"{where}: redirect loop at {following}")
                    visited.add(following)
                    current = following
                    continue
                return self._answer(current, response, cap, where)
            finally:
                response.close()
        raise ReaderError(f"{where}: too many redirects (more than {MAX_REDIRECTS})")

    def _unguarded(self, routed: str) -> bool:
        """Whether *routed* skips the private-address check: the guard is off, or it is the
        configured ``baseUrl``."""
        return self.allow_private or (
            self.base_url is not None and routed.startswith(self.base_url + "/")
        )

    @staticmethod
    def _next_hop(routed: str, target: str | None, status: int, where: str) -> str:
        if not target:
            raise ReaderError(f"{where}: redirected to an invalid URL (HTTP {status})")
        try:
            return requests.utils.requote_uri(urljoin(routed, target))
        except ValueError:
            raise ReaderError(f"{where}: redirected to an invalid URL (HTTP {status})") from None

    def _answer(self, url: str, response: requests.Response, cap: int, where: str) -> WebResponse:
        status = response.status_code
        limit = cap if 200 <= status < 300 else min(cap, ERROR_BODY_BYTES)
        try:
            body, too_big = read_body(
                response, max_bytes=limit, deadline=self.deadline, cancel=self.cancel
            )
        except TimeoutError:
            raise ReaderError(f"{where}: timed out while reading the response") from None
        except requests.exceptions.RequestException as exc:
            failure = ReaderError(f"{where}: {network_error_message(exc)}")
            if is_retryable(exc):
                raise Retryable(failure) from None
            raise failure from None
        return WebResponse(
            url=url,
            status=status,
            headers=response.headers,
            body=body,
            truncated=too_big,
            source=where,
        )

    def to_text(self, response: WebResponse) -> Reading:
        """*response*'s body through the page pipeline, bounded like every fetched page."""
        from .. import pages

        kind = pages.content_kind(response.content_type) or "sniff"
        try:
            found = pages.read(
                response.body,
                kind=kind,
                content_type=response.headers.get("Content-Type", ""),
                url=response.url,
                deadline=self.deadline,
                cancel=self.cancel,
            )
        except pages.Unreadable as exc:
            raise ReaderError(f"{response.source or self.source}: {exc}") from None
        except InterruptedError:
            raise ReaderError("cancelled") from None
        notes = list(found.notes)
        if response.truncated:
            notes.insert(0, f"Stopped reading after {format_size(len(response.body))}")
        return Reading(title=found.title, text=found.text, notes=tuple(notes))
