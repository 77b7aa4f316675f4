"""The ``llm`` plugin: every tool our host discovers becomes an ``llm.Tool``.

Registered in the ``llm`` entry-point group (``pi_tools = "pi_hostspec.llm_bridge"``), so only
``llm`` itself imports this module; ``pi_hostspec`` never does. ``llm`` loads its plugins on
every command, so the import stays light: the :class:`~pi_hostspec.host.Host` (and with it the
``pi.plugins`` entry points) is built the first time ``llm`` asks for tools.

Each call goes through :meth:`Host.call`, so argument validation, truncation and error mapping
are the host's. An error result raises :class:`PiToolError`, which ``llm`` turns into the tool
result ``Error: <message>`` for the model.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import llm

if TYPE_CHECKING:
    from .host import Host
    from .types import Tool

__all__ = ["PREFIX_ENV", "PiToolError", "get_host", "llm_tool", "register_tools", "tool_prefix"]

_lock = threading.Lock()
_host: Host | None = None
_warned = False

_JSON_TYPES = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


class PiToolError(Exception):
    """A tool returned an error result; ``llm`` shows ``Error: <message>`` to the model."""


def get_host() -> Host:
    """The process-wide host, built on first use with the ``pi.plugins`` entry points."""
    global _host
    with _lock:
        if _host is None:
            from .host import Host

            host = Host()
            _ = host.tools  # collect now, so a broken plugin fails here and not mid-chain
            _host = host
        return _host


def _signature(parameters: dict) -> inspect.Signature | None:
    """A display-only signature from the JSON Schema, for ``llm tools list``."""
    try:
        properties = parameters.get("properties") or {}
        required = set(parameters.get("required") or ())
        params = []
        for name in sorted(properties, key=lambda n: n not in required):  # required first
            spec = properties[name] if isinstance(properties[name], dict) else {}
            annotation = _JSON_TYPES.get(str(spec.get("type")), inspect.Parameter.empty)
            default = inspect.Parameter.empty if name in required else None
            params.append(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
                )
            )
        return inspect.Signature(params)
    except (AttributeError, TypeError, ValueError):  # a name that is not an identifier, ...
        return None


def _implementation(host: Host, name: str, parameters: dict) -> Callable[..., Any]:
    """An async implementation: llm runs it on its event loop in async chains (the call waits
    in a worker thread, so the loop and the other tools go on), and with ``asyncio.run`` in
    sync ones. When llm cancels it (an async chain cancelled, Ctrl-C) the call is told to stop
    through its :class:`~pi_hostspec.types.ToolContext`."""

    async def implementation(**kwargs: Any) -> str:
        import asyncio

        from .types import ToolContext

        ctx = ToolContext()
        try:
            result = await asyncio.to_thread(host.call, name, kwargs, ctx)
        except asyncio.CancelledError:
            ctx.cancel.set()
            raise
        if result.is_error:
            raise PiToolError(result.text)
        return result.text

    implementation.__name__ = name
    implementation.__qualname__ = name
    signature = _signature(parameters)
    if signature is not None:
        implementation.__signature__ = signature  # type: ignore[attr-defined]
    return implementation


#: A prefix for our tools' names in llm (``pi_`` makes ``pi_web_search``), to pick ours when
#: another llm plugin registers a tool of the same name.
PREFIX_ENV = "PI_WEB_LLM_PREFIX"


def tool_prefix() -> str:
    """``$PI_WEB_LLM_PREFIX`` when it makes valid tool names (letters, digits, ``_``), else
    nothing."""
    import re

    prefix = os.environ.get(PREFIX_ENV, "").strip()
    return prefix if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", prefix) else ""


def llm_tool(host: Host, tool: Tool, prefix: str = "") -> llm.Tool:
    """The ``llm.Tool`` running *tool* through *host*, named *prefix* + its name."""
    return llm.Tool(
        name=prefix + tool.name,
        description=tool.description,
        input_schema=tool.parameters,
        implementation=_implementation(host, tool.name, tool.parameters),
    )


def other_plugins_tools() -> dict[str, str]:
    """The tool names other llm plugins register, each with the plugin's name (their
    ``register_tools`` hooks are asked once more, with a register that only notes names)."""
    from llm.plugins import pm

    names: dict[str, str] = {}
    for impl in pm.hook.register_tools.get_hookimpls():
        if impl.function is register_tools:
            continue

        def note(tool: Any, name: str | None = None, _plugin: str = impl.plugin_name) -> None:
            found = name or getattr(tool, "name", None) or getattr(tool, "__name__", None)
            if isinstance(found, str):
                names.setdefault(found, _plugin)

        try:
            impl.function(register=note)
        except Exception:  # noqa: BLE001 - their problem, reported by llm itself
            continue
    return names


def _say_clashes(names: list[str]) -> None:
    """Say once per process which of *names* another llm plugin registers too, and how to
    pick ours."""
    global _clash_checked
    if _clash_checked:
        return
    _clash_checked = True
    try:
        others = other_plugins_tools()
    except Exception:  # noqa: BLE001 - never a reason to fail llm
        return
    clashes = [(name, others[name]) for name in names if name in others]
    if not clashes:
        return
    listed = ", ".join(f"{name} (also from plugin {plugin})" for name, plugin in clashes)
    first = clashes[0][0]
    print(
        f"pi-web-tools: another llm plugin registers tools named like ours: {listed}; "
        f"-T {first} may run theirs. To pick ours, run: export {PREFIX_ENV}=pi_ (our tools "
        f"become pi_{first.removeprefix(tool_prefix())}, ...), then use "
        f"-T pi_{first.removeprefix(tool_prefix())} (see docs/hosts.md)",
        file=sys.stderr,
    )


_clash_checked = False


@llm.hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Register every tool the host discovers; register nothing if the host cannot be built.
    A name another llm plugin registers too is said once, with the way to pick ours."""
    try:
        host = get_host()
        prefix = tool_prefix()
        tools = [llm_tool(host, tool, prefix) for tool in host.tools.values()]
    except Exception as exc:  # noqa: BLE001 - a broken pi plugin must not break llm
        global _warned
        if not _warned:  # llm may ask for tools several times per command
            _warned = True
            lines = str(exc).strip().splitlines()
            message = lines[0] if lines else type(exc).__name__
            print(f"pi-web-tools: no pi tools registered with llm: {message}", file=sys.stderr)
        return
    for tool in tools:
        register(tool)
    _say_clashes([tool.name for tool in tools])
