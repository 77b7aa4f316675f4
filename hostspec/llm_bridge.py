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
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import llm

if TYPE_CHECKING:
    from .host import Host
    from .types import Tool

__all__ = ["PiToolError", "get_host", "llm_tool", "register_tools"]

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


def _implementation(host: Host, name: str, parameters: dict) -> Callable[..., str]:
    def implementation(**kwargs: Any) -> str:
        result = host.call(name, kwargs)
        if result.is_error:
            raise PiToolError(result.text)
        return result.text

    implementation.__name__ = name
    implementation.__qualname__ = name
    signature = _signature(parameters)
    if signature is not None:
        implementation.__signature__ = signature  # type: ignore[attr-defined]
    return implementation


def llm_tool(host: Host, tool: Tool) -> llm.Tool:
    """The ``llm.Tool`` running *tool* through *host*."""
    return llm.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.parameters,
        implementation=_implementation(host, tool.name, tool.parameters),
    )


@llm.hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Register every tool the host discovers; register nothing if the host cannot be built."""
    try:
        host = get_host()
        tools = [llm_tool(host, tool) for tool in host.tools.values()]
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
