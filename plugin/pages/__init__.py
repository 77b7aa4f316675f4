"""Pages: fetched bytes to text, through one bounded pipeline.

:func:`read` is the one entry point. It decides what a body is (HTML, PDF, JSON, a feed,
plain text; by its signature and root element as much as by its ``Content-Type``), and every
conversion that parses runs in a bounded worker process (:mod:`.workers`): a memory limit per
worker, the call's deadline and its cancellation. A hostile document costs its URL a note and
a fallback (the whole-page text, the JSON or feed as it came, an empty PDF); the process, the
other URLs of the call and other clients' calls go on. Plain text is only decoded (linear).

The modules: ``charsets`` and ``content`` (decoding, kinds, app shells), ``extraction`` (main
content of HTML), ``documents`` (PDF, JSON, feeds), ``convert`` (what a worker runs),
``workers`` (the bounded processes), ``markdown`` (Markdown that sites offer).
"""

from __future__ import annotations

import threading

from attrs import frozen

from .content import content_kind
from .markdown import ACCEPT as ACCEPT_MARKDOWN_FIRST
from .markdown import MARKDOWN_TYPES, looks_like_html, markdown_alternate

__all__ = [
    "ACCEPT_MARKDOWN_FIRST",
    "MARKDOWN_TYPES",
    "PageText",
    "Unreadable",
    "content_kind",
    "looks_like_html",
    "markdown_alternate",
    "prewarm",
    "read",
]


@frozen(kw_only=True)
class PageText:
    """A body read as text: its title, text, notes for the model, links (text, URL), and why
    another fetcher may do better (``escalate``: ``"app shell"``, ``"no text"``), and why the
    conversion fell back (``degraded``: the deadline, memory or a stopped worker), so the
    answer is not cached for long."""

    title: str | None = None
    text: str = ""
    notes: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    escalate: str | None = None
    degraded: str | None = None


class Unreadable(ValueError):
    """The body is not something :func:`read` can turn into text; the message says why."""


def prewarm() -> None:
    """Start a bounded worker in the background if none is up (cheap when one is), so its
    start-up overlaps a download."""
    from . import workers

    workers.prewarm()


_NO_TEXT_LAYER = "the PDF has no text layer"


def read(
    body: bytes,
    *,
    kind: str,
    content_type: str = "",
    url: str | None = None,
    deadline: float | None = None,
    cancel: threading.Event | None = None,
) -> PageText:
    """*body* as text. *kind* is what the ``Content-Type`` promised
    (:func:`~.content.content_kind`: ``html``, ``pdf``, ``json``, ``feed``, ``text`` or
    ``sniff``); *url* is the page's final URL (links are made absolute against it).

    Raises :class:`Unreadable` for a body that is not text, ``InterruptedError`` when *cancel*
    is set. Past *deadline* (monotonic), a conversion falls back with a note.
    """
    from ..api.redaction import known_secrets, redact_bytes
    from . import workers
    from .content import APP_SHELL_NOTE, decode_body, sniff_kind
    from .convert import encode_body
    from .documents import is_feed, is_pdf

    body = redact_bytes(body)  # before any cut below (a summary at 500 characters, a fallback)
    if is_pdf(body):  # also when the server called it HTML or a generic binary
        kind = "pdf"
    elif kind == "sniff":
        kind = sniff_kind(body)
        if kind is None:
            raise Unreadable("unsupported content type (none given, and the body is not text)")
    elif kind in ("text", "html") and is_feed(body):
        kind = "feed"
    bounds = {"deadline": deadline, "cancel": cancel}
    fell_back: list[str] = []

    def marked(fallback):  # noqa: ANN001, ANN202 - a conversion's fallback, remembered
        def run(reason: str) -> tuple:
            fell_back.append(reason)
            return fallback(reason)

        return run

    def page(*result: object, escalate: str | None = None) -> PageText:
        return _page(*result, escalate, fell_back[0] if fell_back else None)

    if kind == "pdf":
        title, text, notes, links = workers.convert_bounded(
            {**encode_body("pdf", body), "url": url},
            fallback=marked(
                lambda reason: (None, "", [f"the PDF could not be read: reading it {reason}"], [])
            ),
            **bounds,
        )
        no_text = not text and any(_NO_TEXT_LAYER in note for note in notes)
        return page(title, text, notes, links, escalate="no text" if no_text else None)

    text = decode_body(body, content_type)
    if kind == "feed":
        result = workers.convert_bounded(
            {
                **encode_body("feed", body),
                "url": url,
                "content_type": content_type,
                # The worker decodes entities (a key spelled &#115;k-...) and then cuts each
                # entry's summary: it redacts the decoded text before that cut.
                "secrets": list(known_secrets()),
            },
            fallback=marked(
                lambda reason: (
                    None,
                    text,
                    [
                        f"the feed could not be read as a feed (reading it {reason}); showing its source"
                    ],
                    [],
                )
            ),
            **bounds,
        )
        return page(*result)
    if kind == "json":
        result = workers.convert_bounded(
            {"kind": "json", "text": text, "url": url},
            fallback=marked(
                lambda reason: (
                    None,
                    text,
                    [f"JSON shown as it came: re-indenting it {reason}"],
                    [],
                )
            ),
            **bounds,
        )
        return page(*result)
    if kind == "html":
        title, text, notes, links = workers.extract_html(
            text, url, on_fallback=fell_back.append, **bounds
        )
        shell = "app shell" if APP_SHELL_NOTE in notes else None
        return page(title, text, notes, links, escalate=shell)
    return PageText(text=text)


def _page(title, text, notes, links, escalate=None, degraded=None) -> PageText:  # noqa: ANN001 - a worker's answer
    return PageText(
        title=title or None,
        text=text or "",
        notes=tuple(str(note) for note in notes),
        links=tuple((str(label), str(link)) for label, link in links),
        escalate=escalate,
        degraded=degraded,
    )
