"""pi_hostspec: the host contract for pi-style tools (hooks, types, truncation, host)."""

from .hookspecs import ENTRY_POINT_GROUP, PROJECT, hookimpl, hookspec
from .host import DuplicateToolError, Host, UnknownToolError, get_plugin_manager
from .sanitize import clip, strip_control
from .schema import SchemaError, validate
from .theme import AnsiTheme, PlainTheme, Theme, default_theme
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncatedOutput,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_output,
)
from .types import RenderOptions, TextPart, Tool, ToolContext, ToolError, ToolResult

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "ENTRY_POINT_GROUP",
    "PROJECT",
    "AnsiTheme",
    "DuplicateToolError",
    "Host",
    "PlainTheme",
    "RenderOptions",
    "SchemaError",
    "TextPart",
    "Theme",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "TruncatedOutput",
    "TruncationResult",
    "UnknownToolError",
    "clip",
    "default_theme",
    "format_size",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "strip_control",
    "truncate_head",
    "truncate_output",
    "validate",
]
