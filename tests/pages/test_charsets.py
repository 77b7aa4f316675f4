"""WHATWG encoding labels: only the Encoding Standard's names pick a decoder."""

from __future__ import annotations

import pytest
from pi_web_tools.pages.charsets import REPLACEMENT, decode, web_codec


@pytest.mark.parametrize(
    "label, codec",
    [
        ("utf-8", "utf-8"),
        (" UTF8 ", "utf-8"),
        ("latin1", "cp1252"),
        ("ISO-8859-1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("gbk", "gb18030"),
        ("shift_jis", "cp932"),
        ("utf-16", "utf-16-le"),
        ("iso-2022-kr", REPLACEMENT),
    ],
)
def test_web_labels_map_to_their_decoder(label, codec):
    """Each Standard label gives the codec that decodes its encoding."""
    assert web_codec(label) == codec


@pytest.mark.parametrize(
    "label", ["utf-7", "unicode_escape", "raw_unicode_escape", "punycode", "rot13", "idna", "hex"]
)
def test_python_codec_names_are_not_web_encodings(label):
    """A Python-only codec name is ignored (None), never used to decode a page."""
    assert web_codec(label) is None


def test_a_utf16_label_inside_the_page_means_utf8():
    """<meta charset=utf-16> was readable as ASCII, so the page is UTF-8 (as the HTML standard says)."""
    assert web_codec("utf-16le", in_document=True) == "utf-8"


def test_the_replacement_encoding_decodes_to_one_replacement_character():
    """iso-2022-kr and friends decode to a single U+FFFD (never a Python iso2022 decoder)."""
    assert decode(b"\x1b$)Cabc", REPLACEMENT) == "\ufffd"
    assert decode(b"", REPLACEMENT) == ""
