"""The API keys this process knows, and redaction of them from any text.

Keys are remembered when a config is read, and the environment variables that provider types
may take keys from are watched; output (results, details, views, logs, temp files) is redacted
against all of them, whichever provider served the call: a key can come back in a URL's query
string or a page that echoes it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import warnings
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from pi_hostspec.sanitize import map_strings, url_password, without_password

__all__ = [
    "MIN_SECRET_LENGTH",
    "known_secrets",
    "redact",
    "redact_bytes",
    "redact_secrets",
    "redact_value",
    "remember",
    "spellings",
    "url_password",
    "watch_env",
    "without_password",
]

#: Keys shorter than this are not redacted from output (they would mangle ordinary words).
MIN_SECRET_LENGTH = 8

_lock = threading.Lock()
_secrets: set[str] = set()
_env_names: set[str] = set()


def remember(keys: Iterable[str | None]) -> None:
    """Add *keys* (those of :data:`MIN_SECRET_LENGTH` characters or more) to the known keys."""
    with _lock:
        for key in keys:
            if isinstance(key, str) and len(key.strip()) >= MIN_SECRET_LENGTH:
                _secrets.add(key.strip())


def watch_env(names: Iterable[str | None]) -> None:
    """Treat the values of these environment variables as keys, whenever they are set."""
    with _lock:
        _env_names.update(name for name in names if name)


@functools.lru_cache(maxsize=256)
def spellings(secret: str) -> frozenset[str]:
    """*secret* and the ways a URL spells it (``quote`` with and without ``/`` safe,
    ``quote_plus``; upper- and lower-case escapes): a key sent as a query parameter comes back
    percent-encoded in an error that quotes the URL (``403 Client Error: ... for url:
    https://api/?key=AbC%2Bd...``)."""
    found = {secret}
    for form in (quote(secret, safe=""), quote(secret), quote_plus(secret), quote_plus(secret, safe="/")):
        found.add(form)
        found.add(re.sub(r"%[0-9A-F]{2}", lambda escape: escape.group().lower(), form))
    return frozenset(found)


def known_secrets() -> tuple[str, ...]:
    """Every known key, in every spelling of :func:`spellings`, longest first (so a key that
    contains another is replaced whole)."""
    with _lock:
        keys = set(_secrets)
        names = tuple(_env_names)
    for name in names:
        value = os.environ.get(name, "").strip()
        if len(value) >= MIN_SECRET_LENGTH:
            keys.add(value)
    found: set[str] = set()
    for key in keys:
        found |= spellings(key)
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (4 characters or longer) in *text* with ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, "***")
    return text


def redact_secrets(text: str) -> str:
    """*text* with every known key replaced by ``***``."""
    if not text:
        return text
    return redact(text, known_secrets())


def redact_bytes(data: bytes, secrets: Iterable[str] | None = None) -> bytes:
    """*data* with every known key (or each of *secrets*), as UTF-8, replaced by ``***``: a
    body is redacted as it arrives, before anything can cut it (a cut through a key would
    leave a piece no later redaction recognises)."""
    for secret in known_secrets() if secrets is None else secrets:
        if secret and len(secret) >= 4:
            encoded = secret.encode("utf-8")
            if encoded in data:
                data = data.replace(encoded, b"***")
    return data


def redact_value(value: Any, extra: Iterable[str | None] = ()) -> Any:
    """*value* (a string, JSON-like data or an attrs instance) with every known key, and every
    one of *extra*, replaced by ``***`` in each of its strings (dict keys included)."""
    secrets = tuple(extra) + known_secrets()
    if not any(secrets):
        return value
    return map_strings(lambda text: redact(text, secrets), value, keys=True)


def _redacted_record(record: logging.LogRecord) -> logging.LogRecord:
    """*record* with every known key gone from its message, exception and stack text."""
    try:
        secrets = known_secrets()
        if not secrets:
            return record
        message = record.getMessage()
        if any(secret in message for secret in secrets):
            record.msg, record.args = redact(message, secrets), ()
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            if any(secret in text for secret in secrets):
                record.exc_text = redact(text, secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
    except Exception:  # noqa: BLE001 - logging must never break the call that logs
        pass
    return record


def _install_process_guards() -> None:
    """Redact known keys from every log record made in this process, whichever logger made it
    (a third-party provider's own included; records are made only for enabled levels), and from
    every warning's text: each handler and ``warnings.showwarning`` then sees only redacted
    words. Installed once, on import."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "_pi_web_redacting", False):

        def redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return _redacted_record(factory(*args, **kwargs))

        redacting_factory._pi_web_redacting = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(redacting_factory)
    formatter = warnings.formatwarning
    if not getattr(formatter, "_pi_web_redacting", False):

        def redacting_formatwarning(*args: Any, **kwargs: Any) -> str:
            return redact_secrets(formatter(*args, **kwargs))

        redacting_formatwarning._pi_web_redacting = True  # type: ignore[attr-defined]
        warnings.formatwarning = redacting_formatwarning


_install_process_guards()
