"""Site readers: URLs that a site's own API (or raw file host) answers cleanly, read through it.

A plugin registers a :class:`Reader` through the ``register_readers`` hook
(:data:`pi_web_tools.hookimpl`), beside ``register_provider_types``. On the default fetch path
(a ``web_fetch`` call that names no ``provider``), a URL whose host a reader claims is handed
to its ``read`` function before any fetcher downloads it. The function gets the URL and a
:class:`ReaderWeb`: the one HTTP path (retries, timeouts, the call's deadline and cancellation,
capped bodies) behind the network guard (every hop, redirects included), the reader's token
sent only to the hosts it names, and the page pipeline for bodies that need converting. What
it returns (a :class:`Reading`) becomes the URL's page: the same page model, cache, paging,
fair share of the output, redaction; the page says where the text came from.

A reader returns ``None`` for a URL it does not read after all (an unknown URL form): the URL
is fetched as usual. It raises :class:`ReaderError` for a failure, which is the URL's error, or
with ``fall_back=True`` a note added to the usual fetch of the URL.

This module is cheap to import (attrs only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import attrs
from attrs import field, frozen

from .errors import ProviderError

__all__ = [
    "Reader",
    "ReaderError",
    "ReaderToken",
    "ReaderWeb",
    "Reading",
    "WebResponse",
    "host_matches",
]

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_HOST = re.compile(r"^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$")


def _hosts(value: Any) -> tuple[str, ...]:
    return tuple(str(host).lower() for host in value)


def _check_hosts(_instance: Any, _attribute: Any, value: tuple[str, ...]) -> None:
    bad = [host for host in value if not _HOST.match(host)]
    if bad:
        raise ValueError(
            f"hosts must be host names or '*.' followed by a domain, got {', '.join(bad)}"
        )


def host_matches(host: str, patterns: tuple[str, ...] | frozenset[str]) -> bool:
    """Whether *host* is one of *patterns*: a name exactly, or ``*.domain`` for any name ending
    in ``.domain`` (not ``domain`` itself)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return True
        elif host == pattern:
            return True
    return False


@frozen(kw_only=True)
class ReaderToken:
    """A token a reader may send, and where: read from the first environment variable of *env*
    that is set, else from the output of *command* (run once, within 5 seconds, when the
    program is installed), and sent as ``{header}: {prefix}{token}`` only over https to the
    hosts named in *hosts* (``*.domain`` patterns allowed): never to another host, not after a
    redirect, never to a ``baseUrl`` override. It is redacted from every output like an API key.
    """

    env: tuple[str, ...] = field(converter=tuple)
    hosts: tuple[str, ...] = field(converter=_hosts, validator=_check_hosts)
    command: tuple[str, ...] = field(default=(), converter=tuple)
    header: str = "Authorization"
    prefix: str = "Bearer "


@frozen(kw_only=True)
class Reader:
    """A site reader, registered through ``register_readers(register)``.

    :param name: its key in the config's ``readers`` object (``"github"``: ``"readers":
        {"github": false}`` switches it off).
    :param label: the site's name in messages (``"GitHub"``).
    :param hosts: the hosts whose URLs it claims (``"github.com"``, ``"*.stackexchange.com"``).
    :param read: ``read(url, web)``: a :class:`Reading`, or ``None`` when the URL is not one it
        reads after all (then the URL is fetched as usual); raises :class:`ReaderError`.
    :param source: where its text comes from, for the page's note ``read via {source}``
        (``"the GitHub API"``); default: the label.
    :param description: what it reads, in a few words, for ``pi-web config``.
    :param token: a :class:`ReaderToken` it may use, or ``None`` (keyless).
    """

    name: str = field(validator=attrs.validators.matches_re(_NAME))
    label: str
    hosts: tuple[str, ...] = field(converter=_hosts, validator=_check_hosts)
    read: Callable[[str, ReaderWeb], Reading | None] = field(repr=False)
    source: str = ""
    description: str = ""
    token: ReaderToken | None = None
    plugin_name: str | None = None

    @property
    def via(self) -> str:
        """The words after ``read via`` on its pages."""
        return self.source or self.label

    def claims(self, host: str) -> bool:
        """Whether URLs of *host* are this reader's to read."""
        return host_matches(host, self.hosts)


@frozen(kw_only=True)
class Reading:
    """What a reader read: the page's title and text, and notes for the model.

    ``source`` replaces the reader's own for this page (``"raw.githubusercontent.com"``);
    ``immutable``: the text is of a fixed version (a full commit SHA) and is cached long;
    ``final_url`` and ``content_type`` describe what was read, when useful.
    """

    text: str
    title: str | None = None
    notes: tuple[str, ...] = ()
    source: str | None = None
    final_url: str | None = None
    content_type: str | None = None
    immutable: bool = False
    more_text: bool = False


class ReaderError(ProviderError):
    """A reader's failure for one URL, in one line that says what to do (``status``: the HTTP
    status it stands for, such as 404; ``suggestions``: URLs that exist and may be what was
    meant). With ``fall_back=True`` the URL is fetched as usual instead, and the message becomes
    a note on that page."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        fall_back: bool = False,
        suggestions: Iterable[str] = (),
    ):
        super().__init__(message, status=status, code=code)
        self.fall_back = fall_back
        self.suggestions = tuple(suggestions)


@frozen(kw_only=True)
class WebResponse:
    """One answer read by :meth:`ReaderWeb.get`: the final URL (after redirects), the status,
    the headers (case-insensitive), the body (at most the cap asked for; ``truncated`` when
    there was more)."""

    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    truncated: bool = False
    source: str = ""

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300

    @property
    def content_type(self) -> str:
        """The media type, lower case, without parameters (``""`` when none was sent)."""
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        """The body decoded (UTF-8 unless the ``Content-Type`` names a charset; errors
        replaced)."""
        match = re.search(r"charset=([\w.:-]+)", self.headers.get("Content-Type", ""), re.I)
        encoding = match.group(1) if match else "utf-8"
        try:
            return self.body.decode(encoding, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON, keys redacted; :class:`ReaderError` naming the answer when it is
        not JSON (or was cut at the size cap)."""
        import json

        from .redaction import redact_value

        where = self.source or "the site"
        if self.truncated:
            raise ReaderError(f"{where} answered more than the size limit; not read")
        try:
            return redact_value(json.loads(self.body))
        except (ValueError, RecursionError):
            kind = self.content_type or "no content type"
            raise ReaderError(
                f"{where} answered something that is not JSON (HTTP {self.status}, {kind})"
            ) from None


class ReaderWeb(Protocol):
    """What a reader's ``read`` gets besides the URL: the web, bounded and guarded."""

    #: The monotonic time by which the read must be done (the call's deadline).
    deadline: float

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled (stop and return)."""

    @property
    def has_token(self) -> bool:
        """Whether the reader's :class:`ReaderToken` was found (a message may say how to set
        one)."""

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        source: str = "",
    ) -> WebResponse:
        """GET *url* and return its answer, whatever the status (redirects followed, each hop
        passing the network guard; 429/502/503/504 and broken connections retried within the
        deadline). *source* names the service in messages (``"the GitHub API"``). Raises
        :class:`ReaderError` when no answer came (network failure, timeout, a refused host)."""

    def to_text(self, response: WebResponse) -> Reading:
        """*response*'s body through the page pipeline (HTML to main-content Markdown, PDF to
        text with page markers, JSON, feeds), bounded like every fetched page."""
