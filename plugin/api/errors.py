"""The plugin's small error hierarchy; every message is fit to show a model or a user."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InputError",
    "ProviderContractError",
    "ProviderError",
    "WebToolsError",
]


class WebToolsError(Exception):
    """Root of the plugin's errors; ``str(exc)`` is a clean, one-paragraph message."""


class ConfigError(WebToolsError):
    """The config file is missing, unreadable or invalid, or names something unknown."""


class InputError(WebToolsError, ValueError):
    """Tool arguments that cannot be served (bad URL, unknown language, ...)."""


class ProviderError(WebToolsError):
    """A provider call failed: HTTP status, API error, bad body, network failure, timeout.
    ``retry_after`` is the seconds its ``Retry-After`` asked for, when it named any."""

    #: Seconds the provider's ``Retry-After`` asked for (set by the HTTP client), else ``None``.
    retry_after: float | None = None

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        code: str | None = None,
        retryable: bool = False,
    ):
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.code = code
        self.retryable = retryable

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, str | int]:
        """The error's facts for ``details`` (never a key: messages are redacted at source)."""
        facts: dict[str, str | int] = {"message": self.message}
        if self.status is not None:
            facts["status"] = self.status
        if self.code is not None:
            facts["code"] = self.code
        return facts


class ProviderContractError(ProviderError, TypeError):
    """A provider returned something its capability does not (a plugin bug): the message names
    the provider, what it returned and what was expected. A ``TypeError`` too, as the check
    that raises it always was."""
