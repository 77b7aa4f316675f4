"""Package names loaded on first access (PEP 562): importing the package pays for none of them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, home: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of *package*: each name of *home* is imported from
    the module of *package* it maps to (``{"Host": "host"}``: ``package.host.Host``) the first
    time it is asked for, then kept in the package's namespace. Use::

        __getattr__, __dir__ = lazy_names(__name__, {"Host": "host"})
    """

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        namespace = sys.modules[package]
        return sorted(set(vars(namespace)) | set(getattr(namespace, "__all__", ())))

    return __getattr__, __dir__
