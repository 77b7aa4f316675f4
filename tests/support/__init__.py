"""What the tests share, in one place: the sentinel key, config and page-server helpers, a
host that records what its tools raise, and the checks every fault test makes (no key anywhere,
a clean error, in time).

Fixtures stay in ``conftest.py`` files; everything a test imports comes from here or from this
package's modules: ``loopback`` (the one loopback server), ``fake_apis`` (Kagi, Exa, Brave,
Tavily), ``fault_server`` (scripted misbehaviour), ``hosts`` (pi-web, MCP and llm driven as a
user runs them), ``pdfs`` and ``kagi_mock``.
"""

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
from pi_hostspec import Host, PlainTheme, RenderOptions, ToolContext, ToolResult

#: The repository (README, docs, bench, examples, sample_config).
ROOT = Path(__file__).resolve().parents[2]

SECRET = "sk-SENTINEL-4f1c9d2e7b"  # a key that must never appear in any output

#: The timeout the fault suite configures for every provider, and the overrun a call may take.
TIMEOUT = 1.0
MARGIN = 1.0


#: A config with only the direct fetcher, allowed onto loopback (where the test pages live).
LOOPBACK_DIRECT = {
    "providers": [{"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}]
}


def kagi_config(base_url: str, **options) -> dict:
    """A one-provider Kagi config pointing at *base_url*."""
    return {
        "defaultProvider": "kagi",
        "providers": [
            {
                "name": "kagi",
                "type": "kagi",
                "apiKey": SECRET,
                "options": {"baseUrl": base_url, **options},
            }
        ],
    }


def serve(httpserver, routes: dict) -> str:
    """Answer each path of *routes* with its ``(status, content type, body)``; the root URL."""
    for path, (status, kind, body) in routes.items():
        httpserver.expect_request(path).respond_with_data(body, status=status, content_type=kind)
    return httpserver.url_for("").rstrip("/")


def hits(httpserver, path: str) -> int:
    """How many requests *path* received."""
    return sum(1 for request, _ in httpserver.log if request.path == path)


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
