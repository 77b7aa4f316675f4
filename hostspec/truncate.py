"""Output truncation with pi's semantics (``truncateHead``) plus a temp-file spill helper."""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import Any

from attrs import frozen

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "TruncatedOutput",
    "TruncationResult",
    "format_size",
    "spill_output",
    "truncate_head",
    "truncate_output",
]

from .limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES


@frozen(kw_only=True)
class TruncationResult:
    """What ``truncate_head`` kept and why (pi's ``TruncationResult`` in snake_case)."""

    content: str
    truncated: bool
    truncated_by: str | None  # "lines", "bytes" or None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_dict(self) -> dict:
        """The facts without the content, for a result's ``details``."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(num_bytes: int) -> str:
    """pi's ``formatSize``: ``512B``, ``50.0KB``, ``1.5MB``."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"


_LEN_CHUNK = 1 << 20


def _utf8_len(text: str) -> int:
    """UTF-8 size of *text*, encoding at most 1 Mi characters at a time (no full copy)."""
    if text.isascii():
        return len(text)
    return sum(
        len(text[i : i + _LEN_CHUNK].encode("utf-8", "surrogatepass"))
        for i in range(0, len(text), _LEN_CHUNK)
    )


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole leading lines until *max_lines* or *max_bytes* (UTF-8), whichever hits first.

    Lines are counted as pi counts them (``split("\\n")``: a trailing newline adds an empty
    line). When the first line alone exceeds *max_bytes* the content is empty and
    ``first_line_exceeds_limit`` is set. Only the kept lines are ever copied.
    """
    total_lines = text.count("\n") + 1
    total_bytes = _utf8_len(text)

    def result(content: str, truncated_by: str | None, lines: int, first_exceeds=False):
        return TruncationResult(
            content=content,
            truncated=truncated_by is not None,
            truncated_by=truncated_by,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=lines,
            output_bytes=_utf8_len(content),
            last_line_partial=False,
            first_line_exceeds_limit=first_exceeds,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )

    if total_lines <= max_lines and total_bytes <= max_bytes:
        return result(text, None, total_lines)

    kept_bytes = 0
    kept_lines = 0
    end = 0  # index just past the last kept line
    start = 0
    truncated_by = "lines"
    while kept_lines < max_lines and start <= len(text):
        newline = text.find("\n", start)
        line_end = len(text) if newline == -1 else newline
        # Encode at most max_bytes + 1 characters' worth to bound the work on a huge line.
        line = text[start : min(line_end, start + max_bytes + 1)]
        line_bytes = _utf8_len(line) + (1 if kept_lines > 0 else 0)
        if kept_bytes + line_bytes > max_bytes:
            if kept_lines == 0:
                return result("", "bytes", 0, first_exceeds=True)
            truncated_by = "bytes"
            break
        kept_bytes += line_bytes
        kept_lines += 1
        end = line_end
        if newline == -1:
            break
        start = newline + 1
    return result(text[:end], truncated_by, kept_lines)


@frozen(kw_only=True)
class TruncatedOutput:
    """Model-facing text after truncation, and where the full text went."""

    text: str
    truncation: TruncationResult
    full_output_path: str | None
    save_error: str | None = None

    def details(self) -> dict:
        """Truncation facts for a result's ``details`` (empty when nothing was cut)."""
        if not self.truncation.truncated:
            return {}
        facts: dict[str, Any] = {"truncation": self.truncation.to_dict()}
        if self.full_output_path:
            facts["fullOutputPath"] = self.full_output_path
        if self.save_error:
            facts["fullOutputError"] = self.save_error
        return facts


#: What the spill directory keeps: files younger than a day, at most 64 MB in all (the newest
#: file is always kept, whatever its size).
SPILL_MAX_AGE_SECONDS = 24 * 3600
SPILL_MAX_TOTAL_BYTES = 64 * 1024 * 1024


def _private_directory(path: str, uid: int) -> str:
    """Make *path* a 0700 directory of this user if it is missing. ``"ok"``: it is one;
    ``"taken"``: something else is there (a link, a file, another user's directory, or one open
    to others, who may have planted files in it), never used; ``"error"``: it cannot be made."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return "error"
    try:
        info = os.lstat(path)
    except OSError:
        return "error"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or stat.S_IMODE(info.st_mode) & 0o077:
        return "taken"
    return "ok"


_fallback_lock = threading.Lock()
_fallback: tuple[tuple, str] | None = None  # (where it was chosen for, the folder)


def spill_directory() -> str:
    """The private directory full outputs go to: ``$TMPDIR/pi-tool-output-<uid>`` (0700).

    When that name is taken by something else (a planted link or file, another user's directory,
    a directory others can write), the outputs go to ``pi-tool-output-<uid>`` in the user's
    cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``), which others cannot create: one stable
    folder, so pruning still sees every file. Only when neither can be used is a fresh private
    directory made, once per process.
    """
    import tempfile

    global _fallback
    uid = os.getuid() if hasattr(os, "getuid") else 0
    name = f"pi-tool-output-{uid}"
    path = os.path.join(tempfile.gettempdir(), name)
    state = _private_directory(path, uid)
    if state == "ok":
        return path
    if state == "error":  # an unwritable temp directory: the caller says it could not save
        return tempfile.mkdtemp(prefix="pi-tool-output-")
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    where = (tempfile.gettempdir(), cache, uid)
    with _fallback_lock:
        if _fallback is not None and _fallback[0] == where:
            if _private_directory(_fallback[1], uid) == "ok":
                return _fallback[1]
        path = os.path.join(cache, name)
        try:
            os.makedirs(cache, 0o700, exist_ok=True)
        except OSError:
            pass
        if not (os.path.isabs(path) and _private_directory(path, uid) == "ok"):
            path = tempfile.mkdtemp(prefix="pi-tool-output-")
        _fallback = (where, path)
        return path


def _prune(directory: str, keep: str) -> None:
    """Delete spill files older than a day, then the oldest until the rest fit the size cap."""
    now = time.time()
    files = []
    with os.scandir(directory) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.path == keep or not stat.S_ISREG(info.st_mode):
                continue
            files.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    for mtime, size, path in sorted(files):
        if now - mtime < SPILL_MAX_AGE_SECONDS and total <= SPILL_MAX_TOTAL_BYTES:
            continue
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass


def _write_private(text: str, prefix: str) -> str:
    """Write *text* to a new 0600 file in :func:`spill_directory`; return its path.

    Older files there are pruned (age and total size); a failed write (a full disk) removes
    what it made: no half file is left behind.
    """
    import secrets

    directory = spill_directory()
    path = os.path.join(directory, f"{prefix}-{secrets.token_hex(8)}.txt")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    created = False
    try:
        fd = os.open(path, flags, 0o600)
        created = True
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    except OSError:
        if created:
            try:
                os.unlink(path)
            except OSError:
                pass
        raise
    try:
        _prune(directory, keep=path)
    except OSError:
        pass  # pruning is housekeeping: never a reason to lose this output
    return path


def _clip_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of *text* (first line only) that fits in *max_bytes* UTF-8 bytes."""
    head = text[: max_bytes + 1].split("\n", 1)[0]
    return head.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore")


def truncate_output(
    text: str,
    *,
    prefix: str = "pi-tool",
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TruncatedOutput:
    """Truncate *text* for the model; when cut, save the full text privately and say where.

    The notice reads ``[Output truncated: showing X of Y lines (A of B). N lines (C) omitted.
    Full output saved to: PATH]``. When the temp file cannot be written (full or read-only temp
    directory) the truncated text is still returned, with a notice saying the full output could
    not be saved. When the first line alone exceeds the byte limit, its head is shown instead
    of nothing, and a sentence before the path says so.
    """
    truncation = truncate_head(text, max_lines=max_lines, max_bytes=max_bytes)
    if not truncation.truncated:
        return TruncatedOutput(text=text, truncation=truncation, full_output_path=None)
    shown = truncation.content
    partial = ""
    if truncation.first_line_exceeds_limit:
        shown = _clip_utf8(text, max_bytes)
        first_line = _utf8_len(text.split("\n", 1)[0])
        partial = (
            f"Line 1 alone is {format_size(first_line)}, so only its first "
            f"{format_size(_utf8_len(shown))} are shown. "
        )
    return spill_output(
        text,
        shown,
        prefix=prefix,
        truncation=truncation,
        note=partial,
        shown_lines=truncation.output_lines,
    )


def spill_output(
    text: str,
    shown: str,
    *,
    prefix: str = "pi-tool",
    truncation: TruncationResult | None = None,
    note: str = "",
    after: str = "",
    shown_lines: int | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TruncatedOutput:
    """*shown* (a shortened form of *text* that a tool made to fit the limits) with the standard
    truncation notice; the full *text* is saved privately and the notice says where.

    *note* is a sentence placed inside the notice, before the path; *after* a line after it
    (what was shortened, how to read on), so the notice itself keeps pi's exact form.
    """
    if shown_lines is None:
        shown_lines = shown.count("\n") + 1 if shown else 0
    shown_bytes = _utf8_len(shown)
    total_lines = text.count("\n") + 1
    total_bytes = _utf8_len(text)
    if truncation is None:
        truncation = TruncationResult(
            content=shown,
            truncated=True,
            truncated_by="bytes" if total_bytes > max_bytes else "lines",
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=shown_lines,
            output_bytes=shown_bytes,
            last_line_partial=False,
            first_line_exceeds_limit=False,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )
    path: str | None = None
    save_error: str | None = None
    try:
        path = _write_private(text, prefix)
    except OSError as exc:
        save_error = exc.strerror or type(exc).__name__
    notice = (
        f"[Output truncated: showing {shown_lines} of {total_lines} lines "
        f"({format_size(shown_bytes)} of {format_size(total_bytes)}). "
        f"{total_lines - shown_lines} lines ({format_size(total_bytes - shown_bytes)}) omitted. "
        f"{note}"
    )
    if path:
        notice += f"Full output saved to: {path}]"
    else:
        notice += f"Full output could not be saved: {save_error}]"
    if after:
        notice += f"\n{after}"
    return TruncatedOutput(
        text=f"{shown}\n\n{notice}" if shown else notice,
        truncation=truncation,
        full_output_path=path,
        save_error=save_error,
    )
