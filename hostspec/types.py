"""The host contract's value types: tools, results, contexts and render options."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs
from attrs import field, frozen

__all__ = [
    "Command",
    "RenderOptions",
    "TextPart",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
]


@frozen(kw_only=True)
class TextPart:
    """One text block of a tool result, as the model sees it."""

    text: str
    type: str = "text"


def _to_parts(value: Any) -> tuple[TextPart, ...]:
    """Accept a string, a list of strings / TextParts / {"type","text"} dicts."""
    if isinstance(value, str):
        return (TextPart(text=value),)
    parts = []
    for item in value:
        if isinstance(item, TextPart):
            parts.append(item)
        elif isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, dict):
            parts.append(
                TextPart(text=str(item.get("text", "")), type=str(item.get("type", "text")))
            )
        else:
            raise TypeError(f"content items must be text parts, not {type(item).__name__}")
    return tuple(parts)


@frozen(kw_only=True)
class ToolResult:
    """What a tool returns: text parts for the model, details for renderers and logs."""

    content: tuple[TextPart, ...] = field(converter=_to_parts, factory=tuple)
    details: dict = field(factory=dict)
    is_error: bool = False

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        return "\n".join(part.text for part in self.content)

    def to_json(self) -> dict:
        """The result in pi's wire shape: content, details, isError."""
        return {
            "content": [{"type": part.type, "text": part.text} for part in self.content],
            "details": self.details,
            "isError": self.is_error,
        }


@attrs.define(kw_only=True)
class ToolContext:
    """Per-call context: a cancellation event, a callback for partial results, and who is
    calling: ``caller`` is the name of the bearer token a shared server authenticated the call
    with (``None`` for a local host), for the tools' per-caller limits and accounting; never
    the token itself."""

    cancel: threading.Event = field(factory=threading.Event)
    on_update: Callable[[ToolResult], None] | None = None
    caller: str | None = None

    @property
    def cancelled(self) -> bool:
        """True once the host asked the tool to stop."""
        return self.cancel.is_set()

    def update(self, result: ToolResult) -> None:
        """Send a partial result to the host, if it listens."""
        if self.on_update is not None:
            self.on_update(result)

    def progress(self, done: int, total: int, message: str) -> None:
        """Tell the host that *done* of *total* steps are finished (a partial result whose
        details hold ``progress`` and ``total``: MCP clients that asked get a progress
        notification, ``pi-web`` a line on a terminal)."""
        self.update(
            ToolResult(content=message, details={"partial": True, "progress": done, "total": total})
        )


@frozen(kw_only=True)
class Tool:
    """A tool a plugin registers: model-facing name, description and JSON Schema, and code.

    ``execute(args, ctx)`` receives validated arguments and a :class:`ToolContext` and returns a
    :class:`ToolResult`, or raises :class:`ToolError` to fail. ``prepare_arguments`` may rewrite
    raw arguments before validation (for example to fold a lone ``query`` into ``queries``).

    The ``*_hint`` fields are what the tool promises about its effects, passed to MCP clients
    as tool annotations (``None``: no promise, the protocol's cautious default applies).
    """

    name: str = field(validator=attrs.validators.matches_re(r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$"))
    label: str
    description: str
    parameters: dict
    execute: Callable[[dict, ToolContext], ToolResult] = field(repr=False)
    prepare_arguments: Callable[[Any], Any] | None = field(default=None, repr=False)
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None
    plugin_name: str | None = None


@frozen(kw_only=True)
class Command:
    """A ``pi-web`` subcommand a plugin adds through ``register_commands``.

    ``add_arguments(parser)`` declares its arguments on an ``argparse`` sub-parser;
    ``run(options, cli)`` does the work and returns the exit status, where *cli* is the
    :class:`~pi_hostspec.cli.CommandContext` (the host, and ``call_tool`` to run a tool and
    print what the model sees).
    """

    name: str = field(validator=attrs.validators.matches_re(r"^[a-z][a-z0-9-]{0,31}$"))
    help: str
    run: Callable[[Any, Any], int] = field(repr=False)
    add_arguments: Callable[[Any], None] | None = field(default=None, repr=False)
    plugin_name: str | None = None


@frozen(kw_only=True)
class RenderOptions:
    """How a result is rendered: collapsed or expanded, final or partial."""

    expanded: bool = False
    is_partial: bool = False


class ToolError(Exception):
    """Raised by a tool to fail; the host turns it into an error result with this message."""

    def __init__(self, message: str, details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.details = dict(details or {})

    def __str__(self) -> str:
        return self.message
