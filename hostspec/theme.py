"""Themes for renderers: plain text, or ANSI colours when the terminal wants them."""

from __future__ import annotations

import os
from typing import IO, Protocol

__all__ = ["AnsiTheme", "PlainTheme", "Theme", "default_theme"]


class Theme(Protocol):
    """What a renderer may ask of a theme (pi's ``theme.fg`` and ``theme.bold``)."""

    def fg(self, color: str, text: str) -> str:
        """Colour *text* with a named colour (accent, success, error, warning, muted, dim, ...)."""

    def bold(self, text: str) -> str:
        """Make *text* bold."""


class PlainTheme:
    """A theme that adds nothing: for pipes, logs, tests and NO_COLOR."""

    def fg(self, color: str, text: str) -> str:
        """Return *text* unchanged."""
        return text

    def bold(self, text: str) -> str:
        """Return *text* unchanged."""
        return text


_ANSI_COLORS = {
    "accent": "36",
    "toolTitle": "1;37",
    "success": "32",
    "error": "31",
    "warning": "33",
    "muted": "90",
    "dim": "2",
    "text": "0",
    "toolOutput": "0",
    "mdLink": "34",
    "mdLinkUrl": "4;34",
    "border": "90",
}


class AnsiTheme:
    """A theme that colours with ANSI SGR escapes."""

    def fg(self, color: str, text: str) -> str:
        """Wrap *text* in the colour's escape; unknown colours leave it plain."""
        code = _ANSI_COLORS.get(color)
        if not code or not text:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def bold(self, text: str) -> str:
        """Wrap *text* in bold."""
        return f"\x1b[1m{text}\x1b[0m" if text else text


def default_theme(stream: IO | None = None) -> Theme:
    """ANSI for a terminal, plain when NO_COLOR is set (any value) or output is not a TTY."""
    if os.environ.get("NO_COLOR", "") != "":
        return PlainTheme()
    isatty = getattr(stream, "isatty", None)
    if stream is not None and isatty is not None and isatty():
        return AnsiTheme()
    return PlainTheme()
