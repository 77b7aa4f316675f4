"""Themes: plain or ANSI, chosen from the stream and NO_COLOR."""

from __future__ import annotations

import io

import pytest
from pi_hostspec import AnsiTheme, PlainTheme, default_theme


class FakeStream(io.StringIO):
    """A text stream that claims (or denies) being a terminal."""

    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_tty_gets_ansi_theme():
    """A stream that is a TTY gets the ANSI theme."""
    assert isinstance(default_theme(FakeStream(tty=True)), AnsiTheme)


def test_non_tty_gets_plain_theme():
    """A stream that is not a TTY (pipe, file) gets the plain theme."""
    assert isinstance(default_theme(FakeStream(tty=False)), PlainTheme)


def test_no_stream_gets_plain_theme():
    """Without a stream, or with one lacking isatty, the theme is plain."""
    assert isinstance(default_theme(), PlainTheme)
    assert isinstance(default_theme(object()), PlainTheme)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["1", "true", "0", "anything"])
def test_no_color_wins_over_a_tty(monkeypatch, value):
    """NO_COLOR set to any non-empty value gives the plain theme even on a TTY."""
    monkeypatch.setenv("NO_COLOR", value)
    assert isinstance(default_theme(FakeStream(tty=True)), PlainTheme)


def test_empty_no_color_is_ignored(monkeypatch):
    """An empty NO_COLOR does not disable colour (no-color.org: present and not empty)."""
    monkeypatch.setenv("NO_COLOR", "")
    assert isinstance(default_theme(FakeStream(tty=True)), AnsiTheme)


def test_ansi_theme_wraps_in_escapes():
    """AnsiTheme.fg wraps text in the colour's SGR escape and a reset; bold likewise."""
    theme = AnsiTheme()
    assert theme.fg("error", "bad") == "\x1b[31mbad\x1b[0m"
    assert theme.fg("success", "ok") == "\x1b[32mok\x1b[0m"
    assert theme.bold("B") == "\x1b[1mB\x1b[0m"


def test_ansi_theme_leaves_unknown_colours_and_empty_text_plain():
    """Unknown colour names and empty strings are returned unchanged."""
    theme = AnsiTheme()
    assert theme.fg("no-such-colour", "x") == "x"
    assert theme.fg("error", "") == ""
    assert theme.bold("") == ""


def test_plain_theme_adds_nothing():
    """PlainTheme returns the text unchanged for every colour and for bold."""
    theme = PlainTheme()
    assert theme.fg("error", "bad") == "bad"
    assert theme.bold("B") == "B"
