"""strip_control and clip: web text made safe for terminals and models."""

from __future__ import annotations

import pytest
from pi_hostspec import clip, strip_control
from pi_hostspec.sanitize import valid_unicode


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("\x1b[1;38;5;196mbold\x1b[m", "bold"),
        ("\x1b[2J\x1b[Hcleared", "cleared"),
    ],
)
def test_removes_csi_sequences(raw, clean):
    """CSI sequences (colours, cursor moves, screen clears) are removed, the text stays."""
    assert strip_control(raw) == clean


def test_removes_osc8_hyperlinks_keeping_the_label():
    """OSC 8 hyperlinks (ST terminated) are removed; the visible label stays."""
    raw = "see \x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\ now"
    assert strip_control(raw) == "see click here now"


def test_removes_osc_title_sequences():
    """OSC window-title sequences ended by BEL are removed entirely."""
    assert strip_control("\x1b]0;pwned title\x07after") == "after"
    assert strip_control("\x1b]2;title\x1b\\after") == "after"


def test_removes_unterminated_osc():
    """An OSC sequence that never ends cannot swallow the terminal: it is removed."""
    assert "\x1b" not in strip_control("before\x1b]0;never ends")
    assert strip_control("before\x1b]0;never ends").startswith("before")


def test_removes_bare_escape():
    """A lone ESC character is removed."""
    assert strip_control("a\x1bb") == "ab"
    assert strip_control("end\x1b") == "end"


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x08", "\x0b", "\x0c", "\x1f", "\x7f"])
def test_removes_c0_controls_and_del(char):
    """C0 controls (NUL, BEL, backspace, VT, FF, ...) and DEL are removed."""
    assert strip_control(f"a{char}b") == "ab"


def test_lone_carriage_return_is_removed_crlf_becomes_newline():
    """A bare \\r (which would overwrite the line) vanishes; \\r\\n becomes \\n."""
    assert strip_control("safe\rEVIL") == "safeEVIL"
    assert strip_control("one\r\ntwo\r\n") == "one\ntwo\n"


def test_removes_c1_controls():
    """C1 controls, including the 8-bit CSI \\x9b and its parameters, are removed."""
    assert strip_control("\x9b31mred") == "red"
    assert strip_control("end\x9b") == "end"
    assert strip_control("a\x85b\x9dc") == "abc"


@pytest.mark.parametrize(
    "char", ["\u202e", "\u202a", "\u202d", "\u2066", "\u2069", "\u200e", "\u200f"]
)
def test_removes_bidi_controls(char):
    """Bidi overrides, embeddings, isolates and marks (e.g. U+202E) are removed."""
    assert strip_control(f"abc{char}def") == "abcdef"


def test_keeps_newlines_tabs_and_ordinary_unicode():
    """Newlines, tabs and ordinary Unicode (accents, CJK, emoji, RTL letters) are kept."""
    text = "Title\n\tindented — café 世界 😀 שלום\n"
    assert strip_control(text) == text


def test_empty_and_clean_text_unchanged():
    """Empty text and text without controls come back unchanged."""
    assert strip_control("") == ""
    assert strip_control("plain text") == "plain text"


def test_clip_short_text_collapses_whitespace():
    """clip joins whitespace (including newlines) into single spaces and keeps short text whole."""
    assert clip("a  b\n\tc", 10) == "a b c"


def test_clip_long_text_gets_an_ellipsis_within_width():
    """Text longer than width is cut to exactly width characters ending in an ellipsis."""
    clipped = clip("abcdefghij", 5)
    assert clipped == "abcd…"
    assert len(clipped) == 5
    assert clip("abcde", 5) == "abcde"


@pytest.mark.parametrize(
    "char", ["\U000e0041", "\U000e007f", "\u061c", "\u200b", "\u2060", "\ufeff", "\xad", "\u2064"]
)
def test_removes_tag_characters_and_invisible_format_controls(char):
    """Tag characters, U+061C, zero-width spaces, word joiners, BOMs and soft hyphens go."""
    assert strip_control(f"ig{char}nore") == "ignore"


def test_zero_width_joiners_stay_inside_emoji_and_scripts_only():
    """A joiner between emoji or non-Latin letters stays; between ASCII letters or in runs it goes."""
    assert strip_control("👨\u200d👩") == "👨\u200d👩"
    assert strip_control("\u0645\u200c\u0627") == "\u0645\u200c\u0627"
    assert strip_control("a\u200cb") == "ab"
    assert strip_control("é\u200c\u200d\u200cè") == "éè"


def test_runs_of_variation_selectors_are_removed():
    """One variation selector after a character stays; a hidden run of them goes."""
    assert strip_control("❤\ufe0f") == "❤\ufe0f"
    assert strip_control("a\U000e0100\U000e0101\U000e0102b") == "ab"


def test_valid_unicode_replaces_lone_surrogates_and_joins_pairs():
    """Lone surrogates become U+FFFD; a split surrogate pair becomes its character."""
    assert valid_unicode("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert valid_unicode("\ud83d\ude00") == "😀"
    text = "clean é 😀"
    assert valid_unicode(text) is text


def test_strip_control_output_is_always_valid_unicode():
    """Whatever comes in, the stripped text encodes as UTF-8."""
    strip_control("x\ud800\x1b[2Jy").encode("utf-8")
