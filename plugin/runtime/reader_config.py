"""The config's ``readers`` setting: which site readers are on, and their ``baseUrl`` overrides.

::

    "readers": false                                   all readers off
    "readers": {"github": false}                       one off, the others on
    "readers": {"pypi": {"baseUrl": "http://127.0.0.1:8080"}}   requests go to {baseUrl}/{host}/...

Absent, every registered reader is on. Reader names are checked against the registered readers
where they are known (``pi-web config``, a tool's warnings); this module only reads the shape.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen
from pi_hostspec.schema import describe

from ..api.options import Finding, _is_http_url, unknown_keys

__all__ = ["ReadersConfig", "parse_readers"]

_READER_KEYS = ("enabled", "baseUrl")


@frozen(kw_only=True)
class ReadersConfig:
    """``readers``: *enabled* (all off when false), the names switched *off*, each named
    reader's ``baseUrl`` override (*base_urls*, name to URL), and the names the file mentions
    (*named*, checked against the registered readers later)."""

    enabled: bool = True
    off: frozenset[str] = frozenset()
    base_urls: tuple[tuple[str, str], ...] = ()
    named: tuple[str, ...] = ()

    def is_on(self, name: str) -> bool:
        """Whether the reader *name* may read."""
        return self.enabled and name not in self.off

    def base_url(self, name: str) -> str | None:
        """The reader's ``baseUrl`` override, or ``None``."""
        return dict(self.base_urls).get(name)


def parse_readers(raw: Any) -> tuple[ReadersConfig, list[Finding]]:
    """``readers`` as a :class:`ReadersConfig`, and warnings for what could not be read (a
    value that cannot be read leaves that reader as it was: on, with no override)."""
    if raw is None or raw is True:
        return ReadersConfig(), []
    if raw is False:
        return ReadersConfig(enabled=False), []
    if not isinstance(raw, dict):
        return ReadersConfig(), [
            Finding(
                where="readers",
                what=f"expected true, false or an object of readers by name, got {describe(raw, show=True)}",
                suggestion="every reader stays on",
            )
        ]
    warnings: list[Finding] = []
    off: set[str] = set()
    base_urls: list[tuple[str, str]] = []
    for name, value in raw.items():
        where = f"readers.{name}"
        if isinstance(value, bool):
            if not value:
                off.add(name)
            continue
        if not isinstance(value, dict):
            warnings.append(
                Finding(
                    where=where,
                    what="expected true, false or an object (enabled, baseUrl), got "
                    f"{describe(value, show=True)}",
                    suggestion="ignored",
                )
            )
            continue
        unknown = [key for key in value if key not in _READER_KEYS]
        if unknown:
            warnings.append(unknown_keys(where, "unknown key(s)", unknown, _READER_KEYS))
        enabled = value.get("enabled", True)
        if not isinstance(enabled, bool):
            warnings.append(
                Finding(
                    where=f"{where}.enabled",
                    what=f"expected true or false, got {describe(enabled, show=True)}",
                    suggestion="ignored",
                )
            )
        elif not enabled:
            off.add(name)
        base_url = value.get("baseUrl")
        if base_url is not None:
            if isinstance(base_url, str) and _is_http_url(base_url):
                base_urls.append((name, base_url))
            else:
                warnings.append(
                    Finding(
                        where=f"{where}.baseUrl",
                        what=f"must be an absolute http or https URL, got {describe(base_url, show=True)}",
                        suggestion="ignored",
                    )
                )
    return (
        ReadersConfig(off=frozenset(off), base_urls=tuple(base_urls), named=tuple(raw)),
        warnings,
    )
