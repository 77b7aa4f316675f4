"""Keeping stdout for the host's own output while plugins run."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

__all__ = ["reserved_stdout"]


@contextlib.contextmanager
def reserved_stdout() -> Iterator[TextIO]:
    """While inside, whatever anything writes to stdout goes to stderr: ``print``, writes to
    file descriptor 1 from C code and child processes alike. The stream yielded writes to the
    real stdout, so a host's machine-readable output (``pi-web call --json``) is all it
    carries, whatever a plugin prints while it loads or runs."""
    _flush(sys.stdout, sys.__stdout__)
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 or 2 (a detached process): only Python's streams
        with contextlib.redirect_stdout(sys.stderr):
            yield sys.__stdout__ or sys.stderr
        return
    previous = sys.stdout
    out: TextIO
    if _descriptor(previous) == 1:  # the usual case: a stream on the saved descriptor
        encoding = getattr(previous, "encoding", None) or "utf-8"
        out = open(saved, "w", encoding=encoding, errors="replace", closefd=False)  # noqa: SIM115
    else:  # stdout is already something else (a capture, a StringIO): it stays the output
        out = previous
    sys.stdout = sys.stderr
    try:
        yield out
    finally:
        with contextlib.suppress(OSError, ValueError):
            out.flush()
        _flush(previous, sys.__stdout__, sys.stdout)  # their buffers hold plugin output
        sys.stdout = previous
        os.dup2(saved, 1)
        os.close(saved)


def _descriptor(stream: object) -> int | None:
    try:
        return stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None


def _flush(*streams: TextIO | None) -> None:
    for stream in streams:
        if stream is not None:
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.flush()
