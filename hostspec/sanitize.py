"""Terminal and model safety for text that comes from the web."""

from __future__ import annotations

import re

__all__ = ["strip_control", "clip"]

# CSI, OSC (ended by BEL or ST), and other two-byte escapes; then C0/C1 controls except \t and \n.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def strip_control(text: str) -> str:
    """Remove ANSI escapes, control characters and bidi overrides; keep newlines and tabs.

    Carriage returns become newlines when they end a line (``\\r\\n``) and vanish otherwise,
    so a page cannot overwrite what the terminal already shows.
    """
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    text = _ANSI.sub("", text)
    return _CONTROL.sub("", text)


def clip(text: str, width: int) -> str:
    """Shorten *text* to *width* characters with an ellipsis, on one line."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…"
