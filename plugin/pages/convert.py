"""Turns one body of a known kind into text: the work a bounded worker does.

:func:`convert` is what runs inside a worker process (:mod:`pi_web_tools.pages.workers`), or
in the calling thread where processes cannot be bounded. Every kind answers the same shape,
``[title, text, notes, links]``, and every library is imported when a body needs it.
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["KINDS", "convert", "encode_body"]

#: The kinds a worker converts (plain text needs no worker: decoding is linear).
KINDS = ("html", "pdf", "json", "feed")


def encode_body(kind: str, body: bytes | str) -> dict:
    """The request fields that carry *body* to a worker: text as it is, bytes as base64."""
    if isinstance(body, str):
        return {"kind": kind, "text": body}
    return {"kind": kind, "b64": base64.b64encode(body).decode("ascii")}


def _body(request: dict) -> bytes | str:
    if "b64" in request:
        return base64.b64decode(request["b64"])
    return request.get("text") or ""


def convert(request: dict) -> list[Any]:
    """``[title, text, notes, links]`` of the body in *request* (``kind``, ``text`` or ``b64``,
    ``url``, ``content_type``)."""
    from . import documents

    kind = request.get("kind")
    body = _body(request)
    url = request.get("url")
    if kind == "html":
        from .content import extract_html

        title, text, notes, links = extract_html(_text(body, request), url)
        return [title, text, list(notes), [list(link) for link in links]]
    if kind == "pdf":
        text, notes = documents.pdf_to_text(body if isinstance(body, bytes) else body.encode())
        return [None, text, notes, []]
    if kind == "json":
        text, notes = documents.pretty_json(_text(body, request))
        return [None, text, notes, []]
    if kind == "feed":
        raw = body if isinstance(body, bytes) else body.encode("utf-8")
        parsed = documents.feed_to_text(raw, secrets=request.get("secrets") or ())
        if parsed is None:
            return [None, _text(body, request), [], []]
        title, text = parsed
        return [title, text, ["a feed: its entries are listed"], []]
    raise ValueError(f"unknown kind {kind!r}")


def _text(body: bytes | str, request: dict) -> str:
    if isinstance(body, str):
        return body
    from .content import decode_body

    return decode_body(body, request.get("content_type") or "")
