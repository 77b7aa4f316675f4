"""Terminal and model safety for text that comes from the web."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "clip",
    "map_strings",
    "strip_control",
    "url_password",
    "valid_unicode",
    "without_password",
]

# CSI, OSC (ended by BEL or ST), and other two-byte escapes; then C0/C1 controls except \t and \n.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# Controls, bidi marks and overrides (U+061C included), and the invisible format characters that
# have no place in page text: soft hyphen, zero-width space, word joiner and invisible operators,
# deprecated format controls, the BOM, interlinear annotations, and the tag characters
# (U+E0000-E007F, a known way to hide instructions from people).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# Zero-width (non-)joiners shape emoji and many scripts; between ASCII characters, or in runs,
# they only hide things. Runs of variation selectors likewise (one follows a character at most).
_JOINERS = re.compile(
    "[\u200c\u200d]{2,}|(?<=[\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?=[\x00-\x7f])"
    "|^[\u200c\u200d]|[\u200c\u200d]$"
    "|[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}",
    re.MULTILINE,
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """*text* as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD.

    Lone surrogates (from a page's odd encoding, or JSON's ``"\\ud800"``) cannot be encoded
    as UTF-8: a host writing them (an MCP server, a log) would crash.
    """
    if not text or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def strip_control(text: str) -> str:
    """Remove ANSI escapes, control characters, bidi overrides and invisible format characters
    (tag characters, zero-width spaces, BOMs); keep newlines and tabs. The result is valid
    Unicode (:func:`valid_unicode`).

    Carriage returns become newlines when they end a line (``\\r\\n``) and vanish otherwise,
    so a page cannot overwrite what the terminal already shows.
    """
    if not text:
        return text
    text = valid_unicode(text).replace("\r\n", "\n")
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    if _CONTROL.search(text) is not None:
        text = _CONTROL.sub("", text)
    if text.isascii():
        return text
    return _JOINERS.sub("", text)


def clip(text: str, width: int) -> str:
    """Shorten *text* to *width* characters with an ellipsis, on one line, after a whole word
    when one ends in the last third (never in the middle of one that could fit)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: max(0, width - 1)]
    space = cut.rfind(" ")
    if space >= (2 * width) // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"


def map_strings(fn: Callable[[str], str], value: Any, *, keys: bool = False) -> Any:
    """*value* with *fn* applied to every string in it: JSON-like values (dicts, lists, tuples)
    and attrs instances, rebuilt only where something changed. Dict keys too when *keys*."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {
            (fn(key) if keys and isinstance(key, str) else key): map_strings(fn, item, keys=keys)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        items = [map_strings(fn, item, keys=keys) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) or type(value) is tuple else items
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        import attrs

        changes = {}
        for attribute in fields:
            if not attribute.init:
                continue
            old = getattr(value, attribute.name)
            new = map_strings(fn, old, keys=keys)
            if new is not old:
                changes[attribute.alias or attribute.name.lstrip("_")] = new
        return attrs.evolve(value, **changes) if changes else value
    return value


#: Query parameters of a URL that carry a password (redis-py reads ``?password=``).
PASSWORD_PARAMETERS = ("password",)


def url_password(value: object) -> str | None:
    """The password inside *value* when it is a URL with ``user:password@`` (or, failing that,
    a ``?password=`` query parameter, as it is written), else ``None``."""
    if not isinstance(value, str) or ("@" not in value and "password" not in value.lower()):
        return None
    try:
        parts = urlsplit(value)
        if parts.password:
            return parts.password
    except ValueError:
        return None
    for name, _, given in (pair.partition("=") for pair in parts.query.split("&")):
        if name.lower() in PASSWORD_PARAMETERS and given:
            return given
    return None


def without_password(value: str) -> str:
    """*value* with the password of a ``user:password@`` URL, and any ``?password=``
    parameter, shown as ``***``."""
    if url_password(value) is None:
        return value
    parts = urlsplit(value)
    if parts.password:
        user, _, _ = parts.netloc.rpartition("@")[0].partition(":")
        host = parts.netloc.rpartition("@")[2]
        value = urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    head, mark, tail = value.partition("?")
    if not mark:
        return value
    query, hash_mark, fragment = tail.partition("#")
    query = "&".join(
        f"{name}=***" if name.lower() in PASSWORD_PARAMETERS and given else pair
        for pair in query.split("&")
        for name, _, given in [pair.partition("=")]
    )
    return f"{head}?{query}{hash_mark}{fragment}"
