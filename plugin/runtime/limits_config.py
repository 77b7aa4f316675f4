"""The config's ``limits`` setting: rate limits and daily quotas a team server holds its callers
and providers to, written in the ``limits`` library's notation (``"60/minute; 2000/day"``)::

    "limits": {
      "perToken": "60/minute; 2000/day",        every caller (a token's name), each on its own
      "tokens": {"ci-bot": "10/minute"},         one caller's own limits instead
      "providers": {"kagi": "30/minute; 1000/day"}   calls to one configured provider, all callers
    }

A rate that cannot be read is a warning and, since a limit meant to cap spending must never
let calls through by being misspelt, refuses what it was meant to limit until it is fixed
(:attr:`LimitsConfig.unreadable`). This module only reads the shape: :mod:`.team` enforces it
(with the ``limits`` library, the ``team`` extra, imported only then).
"""

from __future__ import annotations

import re
from typing import Any

from attrs import frozen
from pi_hostspec.schema import describe

from ..api.options import Finding, unknown_keys

__all__ = ["MAX_COUNT", "LimitsConfig", "parse_limits"]

_KEYS = ("perToken", "tokens", "providers")
#: The most calls one rate may count (a moving window keeps one entry per call it counts).
MAX_COUNT = 100_000
_RATE = re.compile(
    r"\s*([0-9]{1,9})\s*(?:/|per)\s*([0-9]{1,6}\s*)?(second|minute|hour|day|month|year)s?\s*",
    re.IGNORECASE,
)
_EXAMPLE = 'write it like "60/minute; 2000/day"'


@frozen(kw_only=True)
class LimitsConfig:
    """``limits``: the rates for every caller (*per_token*), each named caller's own
    (*tokens*: name to rates), each provider's (*providers*: name to rates); *unreadable* maps
    each setting (``limits.providers.kagi``) whose rates could not be read to the text given."""

    per_token: str | None = None
    tokens: tuple[tuple[str, str], ...] = ()
    providers: tuple[tuple[str, str], ...] = ()
    unreadable: tuple[tuple[str, str], ...] = ()

    @property
    def configured(self) -> bool:
        """Whether any limit is set (or meant to be)."""
        return bool(self.per_token or self.tokens or self.providers or self.unreadable)

    def for_caller(self, caller: str) -> tuple[str, str] | None:
        """(the setting's name, its rates) that hold *caller*, or ``None``."""
        own = dict(self.tokens).get(caller)
        if own is not None:
            return f"limits.tokens.{caller}", own
        if self.per_token is not None:
            return "limits.perToken", self.per_token
        return None

    def for_provider(self, name: str) -> tuple[str, str] | None:
        """(the setting's name, its rates) that hold provider *name*, or ``None``."""
        rates = dict(self.providers).get(name)
        return None if rates is None else (f"limits.providers.{name}", rates)

    def unreadable_for(self, where: str) -> str | None:
        """The text given for setting *where* when it could not be read, else ``None``."""
        return dict(self.unreadable).get(where)


def readable(rates: Any) -> bool:
    """Whether *rates* is a rate string the ``limits`` library reads, within :data:`MAX_COUNT`."""
    if not isinstance(rates, str) or not rates.strip():
        return False
    for part in re.split(r"[,;|]", rates):
        match = _RATE.fullmatch(part)
        if match is None or not 1 <= int(match.group(1)) <= MAX_COUNT:
            return False
    return True


def parse_limits(raw: Any) -> tuple[LimitsConfig, list[Finding]]:
    """``limits`` as a :class:`LimitsConfig`, and warnings for what could not be read."""
    if raw is None:
        return LimitsConfig(), []
    if not isinstance(raw, dict):
        return LimitsConfig(unreadable=(("limits", describe(raw, show=True)),)), [
            Finding(
                where="limits",
                what=f"expected an object (perToken, tokens, providers), got {describe(raw, show=True)}",
                suggestion="every call is refused until it is fixed",
            )
        ]
    warnings: list[Finding] = []
    unreadable: list[tuple[str, str]] = []

    def rates(where: str, value: Any) -> str | None:
        if readable(value):
            return str(value)
        unreadable.append((where, describe(value, show=True)))
        warnings.append(
            Finding(
                where=where,
                what=f"{describe(value, show=True)} cannot be read as rates ({_EXAMPLE}; at most "
                f"{MAX_COUNT:,} calls per rate)",
                suggestion="what it limits is refused until it is fixed",
            )
        )
        return None

    unknown = [key for key in raw if key not in _KEYS]
    if unknown:
        warnings.append(unknown_keys("limits", "unknown key(s)", unknown, _KEYS))
    per_token = rates("limits.perToken", raw["perToken"]) if "perToken" in raw else None
    named: dict[str, list[tuple[str, str]]] = {"tokens": [], "providers": []}
    for group in named:
        given = raw.get(group, {})
        if not isinstance(given, dict):
            unreadable.append((f"limits.{group}", describe(given, show=True)))
            warnings.append(
                Finding(
                    where=f"limits.{group}",
                    what=f"expected an object of names and rates, got {describe(given, show=True)}",
                    suggestion="every call is refused until it is fixed",
                )
            )
            continue
        for name, value in given.items():
            found = rates(f"limits.{group}.{name}", value)
            if found is not None:
                named[group].append((str(name), found))
    return (
        LimitsConfig(
            per_token=per_token,
            tokens=tuple(named["tokens"]),
            providers=tuple(named["providers"]),
            unreadable=tuple(unreadable),
        ),
        warnings,
    )
