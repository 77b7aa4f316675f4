"""What a team server holds its callers and providers to, in the shared state (:mod:`.state`):

- a caller's (a token's name) rate limits and daily quotas, counted per tool call
  (:func:`admit`, at the tools' edge);
- each provider's rate limits and quotas, its cooldown after a 429 or a ``Retry-After``, and the
  usage count of every call made to it (:func:`before_call` and :func:`after_failure`, around
  :meth:`Selection.call <pi_web_tools.runtime.registry.Selection.call>`, the one place every
  provider call passes).

A provider that is cooling down or over its limit is refused with a :class:`ProviderError` of
status 429 (a rate limit, as the provider's own would be): search failover moves the query to
the next provider at once, the fetch ladder to the next rung. Every replica sharing the state
sees the same windows and cooldowns; without one, this process keeps its own.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import ProviderError
from . import state
from .limits_config import LimitsConfig

__all__ = [
    "DEFAULT_COOLDOWN_SECONDS",
    "MAX_COOLDOWN_SECONDS",
    "LimitReached",
    "admit",
    "after_failure",
    "before_call",
]

#: How long a provider rests after a 429 that names no ``Retry-After``.
DEFAULT_COOLDOWN_SECONDS = 30.0
#: The longest cooldown a ``Retry-After`` may set (a daily quota spent: a day).
MAX_COOLDOWN_SECONDS = 86400.0


class LimitReached(Exception):
    """A caller's own limit is reached (or cannot be read): the call is refused, and ``str()``
    says why and when to try again."""


def _rules(rates: str) -> list[Any]:
    from limits import parse_many

    return parse_many(rates)


def _broken(limits: LimitsConfig, *settings: str) -> tuple[str, str] | None:
    """The first of *settings* whose rates could not be read, with the text given."""
    for where in settings:
        given = limits.unreadable_for(where)
        if given is not None:
            return where, given
    return None


def _take(rates: str, *ids: str) -> float | None:
    """One call counted against *rates* for *ids*: ``None``, or seconds to wait. Raises
    ``ImportError`` without the ``limits`` library."""
    return state.hit(_rules(rates), *ids)


def admit(limits: LimitsConfig, caller: str | None) -> None:
    """Count one tool call by *caller* against its limits; :class:`LimitReached` when they
    are reached, cannot be read, or cannot be enforced here."""
    if caller is None or not limits.configured:
        return
    broken = _broken(limits, "limits", "limits.tokens", f"limits.tokens.{caller}")
    held = limits.for_caller(caller)
    if broken is None and held is None:
        broken = _broken(limits, "limits.perToken")
    if broken is not None:
        where, given = broken
        raise LimitReached(
            f"Refused: {where} in web-search.json ({given}) cannot be read, so the calls it "
            "limits are refused until the server's operator fixes it."
        )
    if held is None:
        return
    where, rates = held
    try:
        wait = _take(rates, "caller", caller)
    except ImportError:
        raise LimitReached(
            f"Refused: {where} is set, but this server cannot enforce limits: the limits "
            f"library is not installed ({_install()})."
        ) from None
    if wait is not None:
        raise LimitReached(
            f"Rate limit: {caller} has used its calls ({where}: {rates}); try again in "
            f"{_seconds(wait)}."
        )


def before_call(selection: Any, caller: str | None) -> None:
    """Before a call to *selection*'s provider: refuse it while the provider cools down or is
    over its limits (a :class:`ProviderError`, status 429), else count it as *caller*'s."""
    name = selection.entry.name
    left = state.cooling(name)
    if left > 0:
        raise ProviderError(
            f"{name} is resting after a rate limit (HTTP 429) for {_seconds(left)} more; it is "
            "not called until then",
            provider=name,
            status=429,
        )
    limits = selection.config.limits
    if limits.configured:
        broken = _broken(limits, "limits", "limits.providers", f"limits.providers.{name}")
        if broken is not None:
            raise ProviderError(
                f"{name} is not called: {broken[0]} in web-search.json ({broken[1]}) cannot be "
                "read, so calls to it are refused until it is fixed",
                provider=name,
            )
        held = limits.for_provider(name)
        if held is not None:
            where, rates = held
            try:
                wait = _take(rates, "provider", name)
            except ImportError:
                raise ProviderError(
                    f"{name} is not called: {where} is set, but the limits library is not "
                    f"installed ({_install()})",
                    provider=name,
                ) from None
            if wait is not None:
                raise ProviderError(
                    f"{name}: the team's limit ({where}: {rates}) is reached; try again in "
                    f"{_seconds(wait)}",
                    provider=name,
                    status=429,
                )
    if caller is not None:
        state.count(caller, name)


def after_failure(selection: Any, exc: ProviderError) -> None:
    """After a failed call: a 429 (or a failure naming a ``Retry-After``) makes the provider
    rest that long, for every replica."""
    retry_after = getattr(exc, "retry_after", None)
    if exc.status != 429 and retry_after is None:
        return
    seconds = retry_after if retry_after is not None else DEFAULT_COOLDOWN_SECONDS
    state.cool(selection.entry.name, min(MAX_COOLDOWN_SECONDS, max(1.0, float(seconds))))


def _install() -> str:
    from pi_hostspec.install import install_command

    return install_command("team")


def _seconds(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3 h``: a wait as a person reads it (rounded up)."""
    import math

    if seconds < 120:
        return f"{max(1, math.ceil(seconds))} s"
    if seconds < 7200:
        return f"{math.ceil(seconds / 60)} min"
    return f"{math.ceil(seconds / 3600)} h"
