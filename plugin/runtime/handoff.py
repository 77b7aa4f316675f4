"""The hand-off policy: which fetcher may be given which URL, and whether a self-hosted
provider may be asked at its own address.

Before a URL is handed to any fetcher (the chosen one or a rung of the fetch ladder),
:func:`handoff_refusal` decides whether it may be: a private, loopback, link-local, metadata or
single-label host goes only to a fetcher whose options allow private networks. A refusal is a
:class:`Refusal` value (what is wrong, and the option that allows it); its text is made only
where it is shown. A URL that carries credentials (:func:`credential_reason`) is never handed to
a rung of the ladder.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl, urlsplit

from attrs import frozen
from pi_hostspec import clip, strip_control

from ..api._http_client import run_interruptible
from ..api._netguard import allow_hint, host_problem, is_proxied, literal_address, request_target
from .registry import Selection

__all__ = [
    "CREDENTIAL_NAMES",
    "CREDENTIAL_PARTS",
    "Refusal",
    "base_url_refusal",
    "credential_reason",
    "handoff_refusal",
    "label",
    "refusals",
]

#: The longest the host check waits for a DNS answer.
DNS_SECONDS = 5.0

#: Query and fragment parameter names (lower case, ``-`` read as ``_``) that carry credentials.
CREDENTIAL_NAMES = frozenset(
    {
        "auth",
        "authorization",
        "bearer",
        "code",  # OAuth authorization codes
        "googleaccessid",
        "hmac",
        "jwt",
        "key",
        "key_pair_id",  # CloudFront signed URLs
        "otp",
        "pass",
        "pwd",
        "sid",
        "sig",  # Azure SAS, many signed links
        "ticket",
        "st",  # CAS service tickets
    }
)
#: Name parts that make any parameter credential-like (``access_token``, ``X-Amz-Signature``,
#: ``X-Amz-Credential``, ``X-Goog-Signature``, ``PHPSESSID``, ``client_secret``, ``api_key``...).
CREDENTIAL_PARTS = (
    "token",
    "secret",
    "passw",
    "signature",
    "session",
    "sessid",
    "credential",
    "apikey",
    "api_key",
    "accesskey",
    "access_key",
    "auth_key",
    "authkey",
    "private_key",
)
#: A JSON Web Token, whatever the parameter is called.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.")


def _credential_name(name: str) -> bool:
    name = name.strip().lower().replace("-", "_")
    return name in CREDENTIAL_NAMES or any(part in name for part in CREDENTIAL_PARTS)


def credential_reason(url: str) -> str | None:
    """Why *url* carries credentials (a user name or password, a credential-like query or
    fragment parameter, a JSON Web Token), or ``None``. Such a URL is never escalated: it goes
    to no fetcher but the one the call used."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the URL cannot be parsed"
    if "@" in parts.netloc:
        return "the URL carries a user name or password"
    for text in (parts.query, parts.fragment):
        for name, value in parse_qsl(text, keep_blank_values=True):
            if _credential_name(name):
                shown = clip(strip_control(name), 40)
                return f"the URL carries a credential-like parameter ({shown})"
            if _JWT.search(value):
                return "the URL carries a token"
    if _JWT.search(parts.path):
        return "the URL carries a token"
    return None


@frozen
class Refusal:
    """Why a URL is not handed to a fetcher: the *reason* (what the host is, and which service
    it was kept from) and the *hint* (how the user allows it). ``str()`` is the one line a
    page's error shows."""

    reason: str
    hint: str

    def __str__(self) -> str:
        return f"refused: {self.reason}; {self.hint}"

    @property
    def said(self) -> str:
        """The refusal without its ``refused:`` head (where a sentence already says so)."""
        return f"{self.reason}; {self.hint}"


def label(selection: Selection) -> str:
    """A provider as a page names it: ``name (type)``."""
    return f"{selection.entry.name} ({selection.entry.type})"


def _allow_hint(selection: Selection) -> str:
    config = selection.config
    entry = selection.entry
    withheld = config.withheld_reach(entry.name)
    if withheld is not None:  # the user did allow it, in a file others can change
        return f"{withheld.what}; {withheld.suggestion}"
    if config.shape == "shared":  # implicit providers: options by type
        hint = (
            f'set "providerOptions": {{"{entry.type}": {{"allowPrivateNetwork": '
            "true}} in the config to allow it"
        )
    elif config.get(entry.name) is None:  # the built-in fallback, no entry
        hint = (
            f'add {{"name": "{entry.name}", "type": "{entry.type}", "options": '
            f'{{"allowPrivateNetwork": true}}}} to the "providers" list of '
            f"{config.path} to allow it"
        )
    else:
        hint = allow_hint(entry.name)
    # The user may believe it set already: a misspelt key was ignored (a warning said so).
    for where, written in config.misspellings("allowPrivateNetwork", entry.name):
        return (
            f"{hint} ({where} has {written!r}, which is ignored: did you mean "
            "'allowPrivateNetwork'?)"
        )
    return hint


def _host_problem(url: str, selection: Selection, deadline: float) -> str | None:
    """Why the host of *url* is not public, as *selection* would reach it; ``None`` when it is
    public, or when it cannot be known here (a name that does not resolve)."""
    try:
        _, host, port = request_target(url)
    except ValueError:
        return None  # the fetcher says what is wrong with the URL
    host = host.lower().rstrip(".")
    # The one host rule, as written: literal addresses, localhost, single-label names.
    reason = host_problem(host, port, resolve=False)
    if reason or literal_address(host) is not None:
        return reason
    # Through a proxy, a local fetcher's names are the proxy's to resolve (as the network guard
    # does); a service fetches from elsewhere, so its names are resolved here.
    if selection.type.fetches_locally and is_proxied(url):
        return None
    wait = max(0.1, min(DNS_SECONDS, deadline - time.monotonic()))
    try:
        return run_interruptible(lambda: host_problem(host, port), deadline=time.monotonic() + wait)
    except TimeoutError:
        return f"where {host} points could not be checked within {wait:g} s (DNS)"
    except OSError:
        return None  # it does not resolve here: nothing private to protect


def _allows_private(selection: Selection) -> bool:
    return bool(getattr(selection.entry.options, "allow_private_network", False))


def handoff_refusal(url: str, selection: Selection, deadline: float) -> Refusal | None:
    """Why *url* may not be handed to the fetcher *selection*, or ``None``.

    A host that is private, loopback, link-local, CGNAT, a cloud metadata address or a
    single-label name is refused unless the fetcher's options set ``allowPrivateNetwork``.
    """
    if _allows_private(selection):
        return None
    problem = _host_problem(url, selection, deadline)
    if problem is None:
        return None
    where = "" if selection.type.fetches_locally else f", not sent to {label(selection)}"
    return Refusal(f"{problem}{where}", _allow_hint(selection))


def base_url_refusal(selection: Selection, deadline: float) -> Refusal | None:
    """Why the self-hosted provider *selection* (SearXNG) may not be asked at its ``baseUrl``,
    or ``None``. Its address is judged as a page's URL is: a private, loopback, link-local,
    CGNAT, metadata or single-label host needs ``allowPrivateNetwork`` in the entry's options,
    which allows that address only (the provider follows no redirect)."""
    base_url = getattr(selection.entry.options, "base_url", None)
    if not base_url or _allows_private(selection):
        return None
    problem = _host_problem(base_url, selection, deadline)
    if problem is None:
        return None
    hint = _allow_hint(selection)
    if selection.config.withheld_reach(selection.entry.name) is None:
        hint += " (that address only)"
    return Refusal(problem, hint)


def refusals(selection: Selection, urls: list[str], deadline: float) -> dict[str, Refusal]:
    """Each URL of *urls* that *selection* may not get, with the refusal (hosts checked at
    once)."""
    if not urls or _allows_private(selection):
        return {}
    if len(urls) == 1:
        refusal = handoff_refusal(urls[0], selection, deadline)
        return {urls[0]: refusal} if refusal else {}
    with ThreadPoolExecutor(max_workers=min(8, len(urls)), thread_name_prefix="host-check") as pool:
        found = list(pool.map(lambda url: handoff_refusal(url, selection, deadline), urls))
    return {url: refusal for url, refusal in zip(urls, found, strict=True) if refusal}
