"""The reference host: discovers plugins, collects tools, validates and runs calls, renders."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import pluggy

from . import hookspecs
from .schema import SchemaDefinitionError, SchemaError, check_schema, validate
from .theme import PlainTheme, Theme
from .types import Command, RenderOptions, TextPart, Tool, ToolContext, ToolError, ToolResult

__all__ = [
    "CORE_COMMANDS",
    "DuplicateToolError",
    "Host",
    "SkippedPlugin",
    "UnknownToolError",
    "distribution_of",
    "get_plugin_manager",
    "skipped_plugins",
]

#: ``pi-web`` subcommands of the host itself; a plugin cannot register these names.
CORE_COMMANDS = ("tools", "call", "mcp")

DISABLE_ENV = "PI_DISABLE_PLUGINS"


class DuplicateToolError(ValueError):
    """Two plugins registered a tool with the same name."""


class UnknownToolError(LookupError):
    """A call named a tool that no plugin registered."""


def get_plugin_manager(
    *, load_entrypoints: bool = True, plugins: Iterable[object] = (), blocked: Iterable[str] = ()
) -> pluggy.PluginManager:
    """Build the ``pi`` plugin manager: hookspecs, blocked names, entry points, extra plugins.

    ``PI_DISABLE_PLUGINS`` (comma separated entry-point names) blocks plugins too. Tests pass
    ``load_entrypoints=False`` and their own ``plugins``.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    names = set(blocked) | {
        n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()
    }
    for name in names:
        pm.set_blocked(name)
    skipped: list[SkippedPlugin] = []
    if load_entrypoints:
        skipped = _load_entry_points(pm)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    pm.pi_skipped_plugins = tuple(skipped)  # type: ignore[attr-defined] # skipped_plugins() reads it
    return pm


@attrs.frozen(kw_only=True)
class SkippedPlugin:
    """An entry-point plugin that was skipped: its name, distribution (``name version``), the
    cause in one line; ``str()`` says what to do. *kind* and *group* name the kind of plugin
    and its entry-point group (a host plugin of ``pi.plugins`` by default)."""

    entry_point: str
    distribution: str
    cause: str
    kind: str = "plugin"
    group: str = hookspecs.ENTRY_POINT_GROUP

    def __str__(self) -> str:
        remedy = (
            f"fix it, or remove it: pip uninstall {self.distribution.split()[0]}"
            if self.distribution != UNKNOWN_DISTRIBUTION
            else f"remove the package that declares the {self.group} entry point"
        )
        return (
            f"{self.kind} {self.entry_point!r} ({self.distribution}) was skipped: {self.cause}; "
            f"{remedy}"
        )


UNKNOWN_DISTRIBUTION = "unknown distribution"


def distribution_of(point: Any) -> str:
    """The distribution that declares entry point *point*: ``name version``."""
    dist = getattr(point, "dist", None)
    if dist is None:
        return UNKNOWN_DISTRIBUTION
    return f"{dist.metadata['Name']} {dist.version}"


def skipped_plugins(pm: pluggy.PluginManager) -> tuple[SkippedPlugin, ...]:
    """The entry-point plugins *pm* skipped because they could not be loaded or registered."""
    return getattr(pm, "pi_skipped_plugins", ())


def _load_entry_points(pm: pluggy.PluginManager) -> list[SkippedPlugin]:
    """Register every ``pi.plugins`` entry point (as pluggy's loader does) and skip, rather
    than raise on, one that cannot be imported (or whose import has not finished within
    :func:`~pi_hostspec.loading.import_timeout`) or registered: one broken plugin never takes
    the host and the other plugins down."""
    from importlib.metadata import entry_points

    from .loading import LoadTimeout, load_within

    skipped = []
    for point in entry_points(group=hookspecs.ENTRY_POINT_GROUP):
        if pm.has_plugin(point.name) or pm.is_blocked(point.name):
            continue
        try:
            pm.register(load_within(point.load), name=point.name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the host
            skipped.append(
                SkippedPlugin(
                    entry_point=point.name,
                    distribution=distribution_of(point),
                    cause=str(exc)
                    if isinstance(exc, LoadTimeout)
                    else f"{type(exc).__name__}: {_one_line(exc)}",
                )
            )
    return skipped


def _collect(hook: Any, kind: type[Any], duplicate: type, check: Any) -> dict[str, Any]:
    """Call every implementation of a ``register_*`` *hook* with a ``register`` function that
    accepts *kind* objects, runs *check(item, plugin)*, refuses a name registered twice (raising
    *duplicate*, naming both plugins) and records the registering plugin's name."""
    found: dict[str, Any] = {}
    for impl in hook.get_hookimpls():

        def register(item: Any, _plugin: str = impl.plugin_name) -> None:
            if not isinstance(item, kind):
                raise TypeError(
                    f"plugin {_plugin} registered {type(item).__name__}, not a {kind.__name__}"
                )
            check(item, _plugin)
            if item.name in found:
                other = found[item.name].plugin_name
                raise duplicate(
                    f"{kind.__name__.lower()} {item.name!r} is registered by both {other} "
                    f"and {_plugin}"
                )
            found[item.name] = attrs.evolve(item, plugin_name=_plugin)

        impl.function(register=register)
    return found


def _check_tool(tool: Tool, plugin: str) -> None:
    try:
        check_schema(tool.parameters)
    except SchemaDefinitionError as exc:
        raise SchemaDefinitionError(
            f"plugin {plugin}: tool {tool.name!r} has a schema this host cannot check: {exc}"
        ) from None


def _check_command(command: Command, plugin: str) -> None:
    if command.name in CORE_COMMANDS:
        raise ValueError(f"plugin {plugin} cannot register the core command {command.name!r}")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _valid(value: Any) -> Any:
    """*value* (JSON-like) with every string, keys included, made valid Unicode."""
    from .sanitize import map_strings, valid_unicode

    return map_strings(valid_unicode, value, keys=True)


def _valid_result(result: ToolResult) -> ToolResult:
    """*result* with lone surrogates replaced in its text and details (a no-op copy-free pass
    when there are none)."""
    parts: Sequence[TextPart] = [
        attrs.evolve(part, text=_valid(part.text)) for part in result.content
    ]
    if all(new.text is old.text for new, old in zip(parts, result.content, strict=True)):
        parts = result.content
    return ToolResult(content=parts, details=_valid(result.details), is_error=result.is_error)


class Host:
    """Runs registered tools the way a pi host does, with pi's fallbacks for rendering."""

    def __init__(self, pm: pluggy.PluginManager | None = None):
        self.pm = pm if pm is not None else get_plugin_manager()
        #: Entry-point plugins that could not be loaded, each said once on stderr (never on
        #: stdout, which an MCP client reads).
        self.skipped_plugins = skipped_plugins(self.pm)
        for skipped in self.skipped_plugins:
            print(f"warning: {skipped}", file=sys.stderr)
        self._tools: dict[str, Tool] | None = None
        self._commands: dict[str, Command] | None = None

    @property
    def tools(self) -> dict[str, Tool]:
        """Every registered tool by name, collected once through ``register_tools``."""
        if self._tools is None:
            self._tools = _collect(
                self.pm.hook.register_tools, Tool, DuplicateToolError, _check_tool
            )
        return self._tools

    @property
    def commands(self) -> dict[str, Command]:
        """The ``pi-web`` subcommands plugins add through ``register_commands``, by name."""
        if self._commands is None:
            self._commands = _collect(
                self.pm.hook.register_commands, Command, ValueError, _check_command
            )
        return self._commands

    def get_tool(self, name: str) -> Tool:
        """The tool called *name*; raises :class:`UnknownToolError` listing the known names."""
        try:
            return self.tools[name]
        except KeyError:
            known = ", ".join(sorted(self.tools)) or "none"
            raise UnknownToolError(f"unknown tool {name!r} (available: {known})") from None

    def call(self, name: str, args: Any, ctx: ToolContext | None = None) -> ToolResult:
        """Validate *args*, run the tool, and always return a result (errors included).

        Raises only :class:`UnknownToolError`. A :class:`ToolError` becomes an error result
        with its message and details; any other exception becomes a one-line error result.
        Every string of the result is valid Unicode (no lone surrogate), so no host crashes
        writing it.
        """
        return _valid_result(self._call(name, args, ctx))

    def _call(self, name: str, args: Any, ctx: ToolContext | None) -> ToolResult:
        tool = self.get_tool(name)
        ctx = ctx or ToolContext()
        try:
            if tool.prepare_arguments is not None:
                args = tool.prepare_arguments(args)
            validate(args, tool.parameters)
        except (SchemaError, ToolError) as exc:
            return ToolResult(content=f"Invalid arguments for {name}: {exc}", is_error=True)
        except Exception as exc:  # a broken prepare_arguments must not crash the host
            return ToolResult(
                content=f"Invalid arguments for {name}: {_one_line(exc)}", is_error=True
            )
        try:
            result = tool.execute(args, ctx)
        except ToolError as exc:
            return ToolResult(content=exc.message, details=exc.details, is_error=True)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - no traceback may reach the model
            return ToolResult(
                content=f"{name} failed unexpectedly: {type(exc).__name__}: {_one_line(exc)}",
                is_error=True,
            )
        if not isinstance(result, ToolResult):
            return ToolResult(
                content=f"{name} returned {type(result).__name__} instead of a ToolResult",
                is_error=True,
            )
        return result

    def render_call(self, name: str, args: Any, theme: Theme | None = None) -> str:
        """The call line from the plugins' ``render_call``; the tool name when none answers."""
        theme = theme or PlainTheme()
        try:
            text = self.pm.hook.render_call(tool_name=name, args=args, theme=theme)
        except Exception:
            text = None
        return text if isinstance(text, str) else theme.fg("toolTitle", theme.bold(name))

    def render_result(
        self,
        name: str,
        result: ToolResult,
        options: RenderOptions | None = None,
        theme: Theme | None = None,
    ) -> str:
        """The result view from ``render_result``; the raw text when none answers or one fails."""
        theme = theme or PlainTheme()
        options = options or RenderOptions()
        try:
            text = self.pm.hook.render_result(
                tool_name=name, result=result, options=options, theme=theme
            )
        except Exception:
            text = None
        if isinstance(text, str):
            return text
        return theme.fg("error" if result.is_error else "toolOutput", result.text)
