"""Loading a plugin within a time bound: an import that hangs must not hang the host.

Hosts import every plugin on every start (``pi-web``, ``pi-web mcp``, ``llm``), so one plugin
whose import blocks (a network call, a lock, an endless loop at module level) would hang them
all. :func:`load_within` runs the load in a helper thread and gives up after
:func:`import_timeout` seconds: the caller skips that plugin and names it, and the stuck thread
(a daemon) is left behind without holding anything the host needs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["IMPORT_TIMEOUT_ENV", "LoadTimeout", "import_timeout", "load_within"]

T = TypeVar("T")

#: Overrides :data:`DEFAULT_IMPORT_TIMEOUT` (seconds; a slow machine, a very heavy plugin).
IMPORT_TIMEOUT_ENV = "PI_PLUGIN_IMPORT_TIMEOUT"
#: How long a plugin's import may take by default.
DEFAULT_IMPORT_TIMEOUT = 15.0


class LoadTimeout(TimeoutError):
    """A plugin's load did not finish in time; ``str()`` says so in words to show users."""


def import_timeout() -> float:
    """The import bound in seconds: ``$PI_PLUGIN_IMPORT_TIMEOUT`` when it is a positive
    number, else :data:`DEFAULT_IMPORT_TIMEOUT`."""
    try:
        seconds = float(os.environ.get(IMPORT_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_IMPORT_TIMEOUT
    return seconds if 0 < seconds < float("inf") else DEFAULT_IMPORT_TIMEOUT


def load_within(load: Callable[[], T], seconds: float | None = None) -> T:
    """``load()`` (an entry point's ``load``, say), or :class:`LoadTimeout` when it has not
    returned after *seconds* (default: :func:`import_timeout`). What ``load`` raises is
    raised here."""
    seconds = import_timeout() if seconds is None else seconds
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = load()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="pi plugin load", daemon=True).start()
    if not done.wait(seconds):
        raise LoadTimeout(f"its import did not finish within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
