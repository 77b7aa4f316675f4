"""The plugin's small error hierarchy; every message is fit to show a model or a user."""

from __future__ import annotations

import enum

__all__ = [
    "ConfigError",
    "ErrorKind",
    "InputError",
    "ProviderContractError",
    "ProviderError",
    "WebToolsError",
]


class ErrorKind(str, enum.Enum):
    """Why a provider call failed, as a value the runtime decides on (search failover moves a
    query to the next provider for each of these); never read from a message's words.

    :class:`~pi_web_tools.api.http_client.HttpClient` sets it from the status or the network
    failure; a provider sets it for a failure of its own words (Kagi's "insufficient credit" in
    a 400, Tavily's 432/433 plan limits, an instance whose engines all failed)."""

    AUTHENTICATION = "authentication"  # 401, 403: the key (or the access) is refused
    QUOTA = "quota"  # 402 or a plan's limit: credit or payment
    RATE_LIMIT = "rate limit"  # 429, after the retries
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"  # refused, reset or unresolvable connections
    OUTAGE = "outage"  # 5xx, or a service with nothing to serve from


def kind_of_status(status: int | None) -> ErrorKind | None:
    """The :class:`ErrorKind` an HTTP status means, or ``None``."""
    if status in (401, 403):
        return ErrorKind.AUTHENTICATION
    if status == 402:
        return ErrorKind.QUOTA
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status is not None and 500 <= status < 600:
        return ErrorKind.OUTAGE
    return None


class WebToolsError(Exception):
    """Root of the plugin's errors; ``str(exc)`` is a clean, one-paragraph message."""


class ConfigError(WebToolsError):
    """The config file is missing, unreadable or invalid, or names something unknown."""


class InputError(WebToolsError, ValueError):
    """Tool arguments that cannot be served (bad URL, unknown language, ...)."""


class ProviderError(WebToolsError):
    """A provider call failed: HTTP status, API error, bad body, network failure, timeout.
    ``kind`` (an :class:`ErrorKind`) says why as a value; ``retry_after`` is the seconds its
    ``Retry-After`` asked for, when it named any."""

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
        kind: ErrorKind | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.code = code
        self.retryable = retryable
        #: Why it failed, as a value (:class:`ErrorKind`); by default what *status* means.
        self.kind = kind if kind is not None else kind_of_status(status)

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
