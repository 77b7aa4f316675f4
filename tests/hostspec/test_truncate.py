"""truncate_head (pi's truncateHead, snake_case), format_size and the temp-file spill helper."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

import pytest
from pi_hostspec import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    truncate_output,
)
from pi_hostspec import truncate as truncate_mod


def _lines(count: int, width: int = 3) -> str:
    return "\n".join(f"{i:0{width}d}" for i in range(count))


# --------------------------------------------------------------------------- truncate_head


def test_defaults_match_pi():
    """The defaults are pi's: 2000 lines and 50 KiB."""
    assert DEFAULT_MAX_LINES == 2000
    assert DEFAULT_MAX_BYTES == 50 * 1024


def test_no_truncation_returns_text_unchanged():
    """Text under both limits comes back whole, with every count filled in and no flags set."""
    text = "alpha\nbeta\ngamma"
    result = truncate_head(text, max_lines=10, max_bytes=100)
    assert result.content == text
    assert result.truncated is False
    assert result.truncated_by is None
    assert result.total_lines == result.output_lines == 3
    assert result.total_bytes == result.output_bytes == len(text)
    assert result.first_line_exceeds_limit is False
    assert result.last_line_partial is False
    assert (result.max_lines, result.max_bytes) == (10, 100)


def test_exactly_at_line_limit_is_not_truncated():
    """A text with exactly max_lines lines is kept whole."""
    text = _lines(5)
    result = truncate_head(text, max_lines=5, max_bytes=10_000)
    assert result.truncated is False
    assert result.content == text
    assert result.output_lines == 5


def test_one_line_over_line_limit_is_truncated_by_lines():
    """One line more than max_lines keeps exactly max_lines whole lines, truncated_by 'lines'."""
    text = _lines(6)
    result = truncate_head(text, max_lines=5, max_bytes=10_000)
    assert result.truncated is True
    assert result.truncated_by == "lines"
    assert result.content == _lines(5)
    assert result.output_lines == 5
    assert result.total_lines == 6
    assert result.output_bytes == len(_lines(5))
    assert result.total_bytes == len(text)


def test_exactly_at_byte_limit_is_not_truncated():
    """A text whose UTF-8 size equals max_bytes is kept whole."""
    text = "abc\ndef"  # 7 bytes
    result = truncate_head(text, max_lines=100, max_bytes=7)
    assert result.truncated is False
    assert result.content == text
    assert result.output_bytes == 7


def test_one_byte_over_byte_limit_is_truncated_by_bytes():
    """One byte over max_bytes drops the whole last line (never part of it), truncated_by 'bytes'."""
    text = "abc\ndefg"  # 8 bytes
    result = truncate_head(text, max_lines=100, max_bytes=7)
    assert result.truncated is True
    assert result.truncated_by == "bytes"
    assert result.content == "abc"
    assert result.output_lines == 1
    assert result.output_bytes == 3
    assert result.total_bytes == 8
    assert result.first_line_exceeds_limit is False


def test_newline_separator_counts_towards_bytes():
    """The newline joining kept lines counts as a byte, as in pi."""
    # "ab" (2) + "\n" (1) + "cd" (2) = 5 > 4, so only the first line fits.
    result = truncate_head("ab\ncd", max_lines=100, max_bytes=4)
    assert result.content == "ab"
    assert result.truncated_by == "bytes"


def test_line_limit_wins_when_hit_first():
    """When both limits are exceeded, the one hit first while scanning decides truncated_by."""
    text = _lines(50)  # 50 lines of 3 chars: 199 bytes
    assert truncate_head(text, max_lines=3, max_bytes=100).truncated_by == "lines"
    assert truncate_head(text, max_lines=40, max_bytes=20).truncated_by == "bytes"


def test_first_line_larger_than_max_bytes_gives_empty_content():
    """A first line larger than max_bytes yields content '' with first_line_exceeds_limit set."""
    text = "x" * 100 + "\nshort"
    result = truncate_head(text, max_lines=100, max_bytes=10)
    assert result.content == ""
    assert result.truncated is True
    assert result.truncated_by == "bytes"
    assert result.first_line_exceeds_limit is True
    assert result.output_lines == 0
    assert result.output_bytes == 0
    assert result.total_lines == 2
    assert result.total_bytes == 106


def test_bytes_are_counted_as_utf8_not_characters():
    """Multi-byte characters count by their UTF-8 size: 'é' is 2 bytes."""
    text = "é\né"  # 5 bytes, 3 characters
    assert truncate_head(text, max_bytes=5).truncated is False
    result = truncate_head(text, max_bytes=4)
    assert result.truncated is True
    assert result.truncated_by == "bytes"
    assert result.content == "é"
    assert result.output_bytes == 2
    assert result.total_bytes == 5


def test_emoji_at_the_byte_boundary_is_never_split():
    """An emoji (4 UTF-8 bytes) straddling the limit drops its whole line; no broken character."""
    text = "ab\n😀😀"  # 2 + 1 + 8 = 11 bytes
    result = truncate_head(text, max_bytes=10)
    assert result.content == "ab"
    assert result.total_bytes == 11
    result.content.encode("utf-8")  # a valid string
    assert truncate_head(text, max_bytes=11).content == text


def test_first_line_of_multibyte_characters_over_limit():
    """A first line of multi-byte characters over the limit (in bytes, not in chars) is flagged."""
    text = "é" * 6  # 6 characters, 12 bytes
    result = truncate_head(text, max_bytes=10)
    assert result.first_line_exceeds_limit is True
    assert result.content == ""


def test_trailing_newline_counts_as_an_extra_empty_line():
    """A trailing newline adds one empty line, as JavaScript's split('\\n') does."""
    assert truncate_head("a\nb\n").total_lines == 3
    assert truncate_head("").total_lines == 1
    result = truncate_head("a\n", max_lines=1)
    assert result.truncated is True
    assert result.truncated_by == "lines"
    assert result.content == "a"
    assert result.total_lines == 2
    assert truncate_head("a\n", max_lines=2).truncated is False


def test_to_dict_has_camel_case_facts_without_content():
    """to_dict gives the truncation facts in camelCase and never the content."""
    facts = truncate_head("a\nb\nc", max_lines=2).to_dict()
    assert facts["truncated"] is True
    assert facts["truncatedBy"] == "lines"
    assert facts["totalLines"] == 3
    assert facts["outputLines"] == 2
    assert "content" not in facts


@pytest.mark.parametrize(
    "size, text",
    [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0KB"),
        (50 * 1024, "50.0KB"),
        (int(1.5 * 1024 * 1024), "1.5MB"),
    ],
)
def test_format_size(size, text):
    """format_size follows pi's formatSize: bytes below 1 KiB, one decimal for KB and MB."""
    assert format_size(size) == text


# --------------------------------------------------------------------------- truncate_output


def _temp_root() -> Path:
    return Path(tempfile.gettempdir())


def test_truncate_output_notice_text_exactly():
    """A cut output ends with pi's notice naming shown/total lines and sizes, omissions and path."""
    text = _lines(10)  # 10 lines, 39 bytes
    out = truncate_output(text, max_lines=4, max_bytes=10_000, prefix="pi-test")
    shown = _lines(4)
    assert out.full_output_path is not None
    expected_notice = (
        f"[Output truncated: showing 4 of 10 lines ({format_size(len(shown))} of 39B). "
        f"6 lines ({format_size(39 - len(shown))}) omitted. Full output saved to: {out.full_output_path}]"
    )
    assert out.text == f"{shown}\n\n{expected_notice}"
    assert out.save_error is None
    assert out.truncation.truncated_by == "lines"


def test_truncate_output_writes_full_text_privately():
    """The temp file holds the full text, the file is 0600 and its directory 0700."""
    text = "première ligne\n" + "😀 line\n" * 50
    out = truncate_output(text, max_lines=5, prefix="pi-test")
    path = Path(out.full_output_path)
    assert path.read_text(encoding="utf-8") == text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.name.startswith("pi-test-")
    assert path.parent.parent == _temp_root()


def test_truncate_output_details():
    """details() carries the truncation facts and the full output path when cut."""
    out = truncate_output(_lines(10), max_lines=2)
    facts = out.details()
    assert facts["fullOutputPath"] == out.full_output_path
    assert facts["truncation"]["truncatedBy"] == "lines"


def test_truncate_output_no_file_when_nothing_cut():
    """When nothing is truncated the text is unchanged, no file is written and details are empty."""
    before = set(_temp_root().iterdir())
    out = truncate_output("short\ntext", max_lines=10, max_bytes=100)
    assert out.text == "short\ntext"
    assert out.full_output_path is None
    assert out.details() == {}
    assert set(_temp_root().iterdir()) == before


def test_truncate_output_missing_temp_dir_still_truncates(monkeypatch, tmp_path):
    """A temp directory that does not exist still gives the truncated text with a 'could not be saved' note."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "does" / "not" / "exist"))
    out = truncate_output(_lines(10), max_lines=3)
    assert out.full_output_path is None
    assert out.save_error
    assert out.text.startswith(_lines(3) + "\n\n[Output truncated: showing 3 of 10 lines")
    assert "could not be saved" in out.text
    assert "Full output saved to" not in out.text
    assert out.text.endswith("]")
    assert out.details()["fullOutputError"] == out.save_error


def test_truncate_output_disk_full_still_truncates(monkeypatch):
    """A writer failing with OSError (disk full) gives the truncated text and the reason, not a failure."""

    def full(text, prefix):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(truncate_mod, "_write_private", full)
    out = truncate_output(_lines(10), max_lines=3)
    assert out.full_output_path is None
    assert "could not be saved: No space left on device]" in out.text
    assert out.text.startswith(_lines(3))


def test_truncate_output_first_line_too_long_shows_its_head():
    """When line 1 alone is over the byte limit, its head (UTF-8 safe) is shown, not nothing."""
    text = "é" * 100 + "\nsecond line"
    out = truncate_output(text, max_bytes=11)
    assert out.truncation.first_line_exceeds_limit is True
    head = out.text.split("\n\n[Output truncated:")[0]
    assert head == "é" * 5  # 10 bytes: the sixth 'é' would need 12
    assert re.search(
        r"\[Output truncated: showing 0 of 2 lines \(10B of 212B\)\. 2 lines \(202B\) omitted\. "
        r"Line 1 alone is 200B, so only its first 10B are shown\. Full output saved to: \S+\]$",
        out.text,
    ), out.text
    assert Path(out.full_output_path).read_text(encoding="utf-8") == text


def test_truncate_output_first_line_emoji_head_is_not_split():
    """The head of an over-long first line never ends in a broken multi-byte character."""
    out = truncate_output("😀" * 10, max_bytes=6)
    head = out.text.split("\n\n[Output truncated:")[0]
    assert head == "😀"


def test_truncate_output_writes_a_new_file_each_time_in_one_private_directory():
    """Each spill is a brand-new file (never a reused path) in the user's private spill directory."""
    root = _temp_root()
    first = Path(truncate_output(_lines(10), max_lines=2).full_output_path)
    second = Path(truncate_output(_lines(10), max_lines=2).full_output_path)
    assert first != second and first.parent == second.parent
    assert first.parent.parent == root and first.parent.name == f"pi-tool-output-{os.getuid()}"
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    assert not first.parent.is_symlink() and not first.is_symlink()


def test_spill_files_older_than_a_day_or_over_the_size_cap_are_pruned(monkeypatch):
    """Writing a spill deletes files past the age limit, then the oldest past the total size cap."""
    from pi_hostspec import truncate

    monkeypatch.setattr(truncate, "SPILL_MAX_TOTAL_BYTES", 2500)
    old = Path(truncate_output(_lines(10), max_lines=2).full_output_path)
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    kept = [Path(truncate_output("x" * 1000 + "\n" + _lines(5), max_lines=2).full_output_path)]
    assert not old.exists()
    for _ in range(3):
        time.sleep(0.01)
        kept.append(
            Path(truncate_output("y" * 1000 + "\n" + _lines(5), max_lines=2).full_output_path)
        )
    left = sorted(p for p in kept[0].parent.iterdir())
    assert kept[-1] in left  # the newest is always kept
    assert sum(p.stat().st_size for p in left if p != kept[-1]) <= 2500
    assert kept[0] not in left  # the oldest went first


def test_a_planted_spill_directory_link_is_never_followed(tmp_path):
    """A symlink planted at the spill directory's path is not used: a fresh private directory is."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (_temp_root() / f"pi-tool-output-{os.getuid()}").symlink_to(victim)
    out = truncate_output(_lines(10), max_lines=2)
    assert list(victim.iterdir()) == []
    path = Path(out.full_output_path)
    assert path.parent.name.startswith("pi-tool-output-") and not path.parent.is_symlink()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_spill_directory_open_to_others_is_never_used():
    """A directory at the spill path that others can write (or that is not ours) is skipped."""
    shared = _temp_root() / f"pi-tool-output-{os.getuid()}"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    out = truncate_output(_lines(10), max_lines=2)
    assert Path(out.full_output_path).parent != shared


def test_truncate_output_never_follows_a_planted_file_link(monkeypatch, tmp_path):
    """Even if the spill file's path already is a symlink, the target is never written through it."""
    import secrets as secrets_module

    victim = tmp_path / "victim.txt"
    victim.write_text("original", encoding="utf-8")
    directory = _temp_root() / f"pi-tool-output-{os.getuid()}"
    directory.mkdir(mode=0o700)
    (directory / "pi-tool-0123456789abcdef.txt").symlink_to(victim)
    monkeypatch.setattr(secrets_module, "token_hex", lambda n: "0123456789abcdef")
    out = truncate_output("secret data\n" * 10, max_lines=2)
    assert victim.read_text(encoding="utf-8") == "original"
    assert out.full_output_path is None
    assert "could not be saved" in out.text
    assert out.text.startswith("secret data\nsecret data\n\n")


def test_truncate_output_file_mode_ignores_umask():
    """The spill file is 0600 even under a permissive umask."""
    old = os.umask(0)
    try:
        out = truncate_output(_lines(10), max_lines=2)
    finally:
        os.umask(old)
    path = Path(out.full_output_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
