"""pi_hostspec: the host contract for pi-style tools (hooks, types, truncation, host).

Names are loaded on first access (PEP 562), so a plugin that needs only ``Tool`` and
``hookimpl`` does not pay for the host, the schema checker or the truncation helpers: hosts
import every plugin at every start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_names

_HOME = {
    "ENTRY_POINT_GROUP": "hookspecs",
    "PROJECT": "hookspecs",
    "hookimpl": "hookspecs",
    "hookspec": "hookspecs",
    "CORE_COMMANDS": "host",
    "DuplicateToolError": "host",
    "Host": "host",
    "UnknownToolError": "host",
    "get_plugin_manager": "host",
    "LoadTimeout": "loading",
    "import_timeout": "loading",
    "load_within": "loading",
    "clip": "sanitize",
    "strip_control": "sanitize",
    "SchemaDefinitionError": "schema",
    "SchemaError": "schema",
    "check_schema": "schema",
    "describe": "schema",
    "validate": "schema",
    "AnsiTheme": "theme",
    "PlainTheme": "theme",
    "Theme": "theme",
    "default_theme": "theme",
    "DEFAULT_MAX_BYTES": "limits",
    "DEFAULT_MAX_LINES": "limits",
    "TruncatedOutput": "truncate",
    "TruncationResult": "truncate",
    "format_size": "truncate",
    "spill_output": "truncate",
    "truncate_head": "truncate",
    "truncate_output": "truncate",
    "Command": "types",
    "RenderOptions": "types",
    "TextPart": "types",
    "Tool": "types",
    "ToolContext": "types",
    "ToolError": "types",
    "ToolResult": "types",
}


# The lazy names as type checkers see them (tests/test_plugin.py keeps them in step with the map).
if TYPE_CHECKING:
    from .hookspecs import (
        ENTRY_POINT_GROUP,
        PROJECT,
        hookimpl,
        hookspec,
    )
    from .host import (
        CORE_COMMANDS,
        DuplicateToolError,
        Host,
        UnknownToolError,
        get_plugin_manager,
    )
    from .limits import (
        DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES,
    )
    from .loading import LoadTimeout, import_timeout, load_within
    from .sanitize import (
        clip,
        strip_control,
    )
    from .schema import (
        SchemaDefinitionError,
        SchemaError,
        check_schema,
        describe,
        validate,
    )
    from .theme import (
        AnsiTheme,
        PlainTheme,
        Theme,
        default_theme,
    )
    from .truncate import (
        TruncatedOutput,
        TruncationResult,
        format_size,
        spill_output,
        truncate_head,
        truncate_output,
    )
    from .types import (
        Command,
        RenderOptions,
        TextPart,
        Tool,
        ToolContext,
        ToolError,
        ToolResult,
    )

__getattr__, __dir__ = lazy_names(__name__, _HOME)


__all__ = [
    "CORE_COMMANDS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "ENTRY_POINT_GROUP",
    "PROJECT",
    "AnsiTheme",
    "Command",
    "DuplicateToolError",
    "Host",
    "LoadTimeout",
    "PlainTheme",
    "RenderOptions",
    "SchemaDefinitionError",
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
    "check_schema",
    "clip",
    "default_theme",
    "describe",
    "format_size",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "import_timeout",
    "load_within",
    "spill_output",
    "strip_control",
    "truncate_head",
    "truncate_output",
    "validate",
]
