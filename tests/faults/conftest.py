"""Fixtures of the fault-injection suite: a scripted loopback server, a host that keeps the
exceptions its tools raise, and one check that the sentinel key appears nowhere."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
import pytest
from pi_hostspec import Host, PlainTheme, RenderOptions, ToolContext, ToolResult

from ..conftest import SECRET
from .server import FaultServer

#: The configured timeout of every provider in this suite, and the allowed overrun.
TIMEOUT = 1.0
MARGIN = 1.0


@pytest.fixture
def server():
    """A started FaultServer, stopped after the test."""
    fault = FaultServer().start()
    yield fault
    fault.close()


@pytest.fixture
def debug_logs(caplog):
    """Capture every log record (urllib3 and requests included) at DEBUG level."""
    caplog.set_level(logging.DEBUG)
    return caplog


@dataclass
class Outcome:
    """One tool call through the host: the result, how long it took, what it raised, its views."""

    name: str
    args: Any
    result: ToolResult
    elapsed: float
    raised: list = field(default_factory=list)
    views: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.result.text


class TracingHost:
    """Runs calls through a real Host, recording any exception a tool raises (for chain checks)."""

    def __init__(self, host: Host):
        self.host = host
        self.raised: list[BaseException] = []
        for name, tool in list(host.tools.items()):
            host.tools[name] = attrs.evolve(tool, execute=self._tracing(tool.execute))

    def _tracing(self, execute):
        def run(args, ctx):
            try:
                return execute(args, ctx)
            except BaseException as exc:
                self.raised.append(exc)
                raise

        return run

    def call(self, name: str, args: Any, ctx: ToolContext | None = None) -> Outcome:
        """Call *name* and render the call and the result (collapsed and expanded)."""
        self.raised.clear()
        start = time.monotonic()
        result = self.host.call(name, args, ctx)
        elapsed = time.monotonic() - start
        theme = PlainTheme()
        views = [
            self.host.render_call(name, args, theme),
            self.host.render_result(name, result, RenderOptions(expanded=False), theme),
            self.host.render_result(name, result, RenderOptions(expanded=True), theme),
        ]
        return Outcome(name, args, result, elapsed, list(self.raised), views)


@pytest.fixture
def tools(host) -> TracingHost:
    """The web tools host, recording exceptions raised by tools."""
    return TracingHost(host)


def exception_chain(exc: BaseException | None) -> str:
    """Everything an exception chain would show: each exception's str, repr and args, and the
    formatted traceback, following __cause__ and __context__ even when suppressed."""
    seen: set[int] = set()
    parts: list[str] = []
    stack = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        parts += [str(current), repr(current), repr(current.args)]
        parts += traceback.format_exception(type(current), current, current.__traceback__)
        stack += [current.__cause__, current.__context__]
    return "\n".join(parts)


def temp_files_text() -> str:
    """The names and contents of every file under the (redirected) temp directory."""
    root = Path(tempfile.gettempdir())
    parts = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            parts.append(os.path.join(dirpath, name))
        for name in filenames:
            path = Path(dirpath, name)
            if path.is_file() and not path.is_symlink():
                parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def log_text(caplog) -> str:
    """Every captured record, formatted with its exception if any."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(record) for record in caplog.records)


def assert_no_secret(outcome: Outcome, caplog=None, secret: str = SECRET) -> None:
    """The key appears nowhere: text, details, renderings, temp files, logs, exception chain."""
    places = {
        "result text": outcome.text,
        "details": json.dumps(outcome.result.details),
        "renderings": "\n".join(outcome.views),
        "temp files": temp_files_text(),
        "exception chain": "\n".join(exception_chain(exc) for exc in outcome.raised),
    }
    if caplog is not None:
        places["log records"] = log_text(caplog)
    leaked = [where for where, text in places.items() if secret in text]
    assert not leaked, f"the key leaked into: {', '.join(leaked)}"


def assert_clean_error(outcome: Outcome, *needles: str) -> None:
    """An error result naming the cause (every needle), one paragraph, no traceback."""
    text = outcome.text
    assert outcome.result.is_error, f"expected an error, got: {text[:300]!r}"
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    assert "Traceback" not in text and 'File "' not in text
    assert "\n\n" not in text.strip(), f"more than one paragraph: {text!r}"
    assert "failed unexpectedly" not in text and "unexpected error" not in text


def assert_in_time(outcome: Outcome, timeout: float = TIMEOUT, margin: float = MARGIN) -> None:
    """The call ended within its configured timeout plus a small margin."""
    assert outcome.elapsed <= timeout + margin, (
        f"took {outcome.elapsed:.2f} s (timeout {timeout} s)"
    )
