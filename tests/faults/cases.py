"""The misbehaviours every provider is put through, the configs that point a provider at the
fault server, and what each provider's error bodies look like."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support import SECRET, TIMEOUT
from tests.support import kagi_config as one_kagi_config
from tests.support.fault_server import (
    FaultServer,
    Hang,
    Huge,
    Partial,
    Redirect,
    Reply,
    Reset,
    json_reply,
    unused_port,
)

# --------------------------------------------------------------------------- configs


def kagi_config(server: FaultServer, timeout: float = TIMEOUT, **options) -> dict:
    """Kagi pointed at the fault server, on v0 unless *options* say otherwise (a forced
    version: the fault server answers every path alike, so "auto" would try v0 after a 401)."""
    return one_kagi_config(
        server.url("/api"), timeoutSeconds=timeout, **{"apiVersion": "v0", **options}
    )


def api_config(kind: str, path: str = "") -> Callable[..., dict]:
    """A config builder: one provider of type *kind* whose ``baseUrl`` is the fault server
    (plus *path*), holding the sentinel key."""

    def config(server: FaultServer, timeout: float = TIMEOUT, **options) -> dict:
        options = {"baseUrl": server.url(path), "timeoutSeconds": timeout, **options}
        return {
            "defaultProvider": kind,
            "providers": [{"name": kind, "type": kind, "apiKey": SECRET, "options": options}],
        }

    config.__doc__ = f"{kind} pointed at the fault server."
    return config


exa_config = api_config("exa")


def direct_config(server: FaultServer, timeout: float = TIMEOUT, **options) -> dict:
    """The direct fetcher allowed onto loopback, next to a Kagi entry holding the key."""
    return {
        "defaultProvider": "kagi",
        "providers": [
            {
                "name": "kagi",
                "type": "kagi",
                "apiKey": SECRET,
                "options": {
                    "baseUrl": f"http://127.0.0.1:{unused_port()}/api/v0",
                    "timeoutSeconds": timeout,
                },
            },
            {
                "name": "direct",
                "type": "direct",
                "options": {"allowPrivateNetwork": True, "timeoutSeconds": timeout, **options},
            },
        ],
    }


def secret_url(server: FaultServer, path: str = "/page") -> str:
    """A page URL on the fault server that carries the key in its query string."""
    return server.url(f"{path}?key={SECRET}&q=1")


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """One provider endpoint reached through one public tool call."""

    id: str
    family: str  # a key of API_FAKES, or direct: decides error bodies and expectations
    tool: str
    config: Callable[..., dict]
    args: Callable[[FaultServer], dict]

    def __str__(self) -> str:
        return self.id


KAGI_SEARCH = Target(
    "kagi-search", "kagi", "web_search", kagi_config, lambda s: {"queries": ["fault test"]}
)
KAGI_SUMMARIZE = Target(
    "kagi-summarize", "kagi", "summarize", kagi_config, lambda s: {"url": "https://example.com/a"}
)
EXA_SEARCH = Target(
    "exa-search", "exa", "web_search", exa_config, lambda s: {"queries": ["fault test"]}
)
EXA_FETCH = Target(
    "exa-fetch", "exa", "web_fetch", exa_config, lambda s: {"urls": ["https://example.com/a"]}
)
DIRECT_FETCH = Target(
    "direct-fetch", "direct", "web_fetch", direct_config, lambda s: {"urls": [secret_url(s)]}
)
BRAVE_SEARCH = Target(
    "brave-search",
    "brave",
    "web_search",
    api_config("brave", "/res/v1"),
    lambda s: {"queries": ["fault test"]},
)
TAVILY_SEARCH = Target(
    "tavily-search",
    "tavily",
    "web_search",
    api_config("tavily"),
    lambda s: {"queries": ["fault test"]},
)
TAVILY_FETCH = Target(
    "tavily-fetch",
    "tavily",
    "web_fetch",
    api_config("tavily"),
    lambda s: {"urls": ["https://example.com/a"]},
)


# --------------------------------------------------------------------------- API fakes


@dataclass(frozen=True)
class ApiFake:
    """How one provider's API answers, for the fault matrix: its JSON error body for a status
    (``None``: a web server's HTML page), a 200 of the right shape with *value* (``None`` or a
    string) where a list belongs, the field a wrong-shape error must name, and a good answer."""

    error_body: Callable[[int], Any]
    wrong_types: Callable[[Any], Any]
    shape_field: str
    ok: Any


def _table(build: Callable[..., Any], table: dict) -> Callable[[int], Any]:
    return lambda status: build(*table[status]) if status in table else None


#: Each provider family's fake; registering one here is all a new provider needs.
API_FAKES: dict[str, ApiFake] = {
    "kagi": ApiFake(
        _table(
            lambda code, msg: {
                "meta": {"id": "x"},
                "data": None,
                "error": [{"code": code, "msg": msg, "ref": None}],
            },
            {
                401: (2, "Unauthorized"),
                402: (101, "Insufficient credit to perform this request"),
                403: (3, f"Key {SECRET} is disabled"),  # the API echoes the key back
                429: (7, "Rate limit exceeded"),
                500: (4, "Internal error"),
            },
        ),
        lambda value: {"meta": {"id": "x"}, "data": value},
        "'data'",
        {
            "meta": {"id": "ok", "api_balance": 1.0},
            "data": [{"t": 0, "url": "https://a.example/", "title": "A"}],
        },
    ),
    "exa": ApiFake(
        _table(
            lambda tag, msg: {"requestId": "req-1", "error": msg, "tag": tag},
            {
                401: ("INVALID_API_KEY", "Invalid API key"),
                402: ("NO_MORE_CREDITS", "You have run out of credits"),
                403: ("ACCESS_DENIED", f"Key {SECRET} may not use this endpoint"),
                429: ("RATE_LIMIT_EXCEEDED", "Too many requests"),
                500: ("INTERNAL_ERROR", "Something went wrong"),
            },
        ),
        lambda value: {"requestId": "r", "results": value, "statuses": []},
        "'results'",
        {"requestId": "ok", "results": [{"url": "https://a.example/", "title": "A"}]},
    ),
    "brave": ApiFake(
        _table(
            lambda code, detail, status: {
                "type": "ErrorResponse",
                "error": {"id": "e", "status": status, "code": code, "detail": detail},
                "time": 1764000000,
            },
            {
                401: (
                    "SUBSCRIPTION_TOKEN_INVALID",
                    "The provided subscription token is invalid.",
                    401,
                ),
                402: ("PAYMENT_REQUIRED", "A payment method is required.", 402),
                403: ("RESOURCE_NOT_ALLOWED", f"Token {SECRET} may not use this resource.", 403),
                429: ("RATE_LIMITED", "Request rate limit exceeded for plan.", 429),
                500: ("INTERNAL_ERROR", "Unexpected error.", 500),
            },
        ),
        lambda value: {"type": "search", "query": {"original": "q"}, "web": {"results": value}},
        "'web.results'",
        {"type": "search", "web": {"results": [{"url": "https://a.example/", "title": "A"}]}},
    ),
    "tavily": ApiFake(
        _table(
            lambda error: {"detail": {"error": error}},
            {
                401: ("Unauthorized: missing or invalid API key.",),
                402: ("Payment required.",),
                403: (f"Key {SECRET} is not allowed here.",),
                429: ("Your request has been blocked due to excessive requests.",),
                500: ("Internal server error.",),
            },
        ),
        lambda value: {"query": "q", "results": value, "failed_results": []},
        "'results'",
        {
            "query": "q",
            "results": [  # the URL web_fetch asks for; search shows the content
                {
                    "url": "https://example.com/a",
                    "title": "A",
                    "content": "See https://a.example/",
                    "raw_content": "See https://a.example/",
                }
            ],
            "failed_results": [],
        },
    ),
}
HTML_503 = (
    "<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title>"
    "<style>body{color:red}</style></head><body><h1>Service Temporarily Unavailable</h1>"
    "<p>The server is down for maintenance.</p></body></html>"
)
HTML_502 = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"


def error_reply(family: str, status: int, headers: dict | None = None) -> Reply:
    """How each provider's API (or a web server) answers *status*."""
    fake = API_FAKES.get(family)
    body = fake.error_body(status) if fake is not None else None
    if body is not None:
        return json_reply(body, status, headers)
    page = (
        HTML_502
        if status == 502
        else HTML_503
        if status == 503
        else (
            f"<html><head><title>Error {status}</title></head><body>You asked for ?key={SECRET}</body></html>"
        )
    )
    return Reply(status, page, headers, content_type="text/html; charset=utf-8")


def wrong_types(family: str, which: str) -> Reply:
    """A 200 with the right top-level shape and a wrong type inside (``null`` or a string)."""
    value = None if which == "null" else "not a list"
    fake = API_FAKES.get(family)
    return json_reply(fake.wrong_types(value) if fake else {"results": value})  # direct: any JSON


def ok_reply(family: str) -> Reply:
    """A good answer from *family*'s API."""
    return json_reply(API_FAKES[family].ok)


def redirect_loop(handler) -> Redirect:
    """Bounce between /loop-a and /loop-b for ever."""
    return Redirect("/loop-b" if handler.path.startswith("/loop-a") else "/loop-a")


@dataclass(frozen=True)
class Fault:
    """A misbehaviour: how to script it, and what each provider family must answer."""

    id: str
    script: Callable[[str], list]  # family -> actions
    api: tuple  # needles in the error of an API provider (Kagi, Exa)
    direct: tuple  # ("error", needles) or ("ok", needles) for the direct fetcher
    refused: bool = False  # point the provider at an unused port instead of the server

    def __str__(self) -> str:
        return self.id


FAULTS = [
    Fault(
        "401",
        lambda f: [error_reply(f, 401)],
        ("HTTP 401", "Unauthorized"),
        ("error", ("HTTP 401 Unauthorized",)),
    ),
    Fault(
        "402",
        lambda f: [error_reply(f, 402)],
        ("HTTP 402",),
        ("error", ("HTTP 402 Payment Required",)),
    ),
    Fault(
        "403",
        lambda f: [error_reply(f, 403)],
        ("HTTP 403", "***"),
        ("error", ("HTTP 403 Forbidden",)),
    ),
    Fault(
        "429-retry-after",
        lambda f: [error_reply(f, 429, {"Retry-After": "0"})],
        ("HTTP 429", "rate limited"),
        ("error", ("HTTP 429 Too Many Requests",)),
    ),
    Fault(
        "429",
        lambda f: [error_reply(f, 429)],
        ("HTTP 429", "rate limited"),
        ("error", ("HTTP 429",)),
    ),
    Fault(
        "500",
        lambda f: [error_reply(f, 500)],
        ("HTTP 500",),
        ("error", ("HTTP 500 Internal Server Error",)),
    ),
    Fault(
        "502",
        lambda f: [error_reply(f, 502)],
        ("HTTP 502", "502 Bad Gateway"),
        ("error", ("HTTP 502 Bad Gateway",)),
    ),
    Fault(
        "503-html",
        lambda f: [error_reply(f, 503)],
        ("HTTP 503", "Service Temporarily Unavailable"),
        ("error", ("HTTP 503 Service Unavailable",)),
    ),
    Fault(
        "invalid-json",
        lambda f: [Reply(200, "<html>not json at all</html>", content_type="text/html")],
        ("not valid JSON", "HTTP 200"),
        ("ok", ("not json at all",)),
    ),
    Fault(
        "truncated-json",
        lambda f: [Reply(200, '{"data": [{"t": 0, "url": "https://a.example/", "ti')],
        ("not valid JSON",),
        ("ok", ('"data"',)),
    ),
    Fault(
        "empty-body", lambda f: [Reply(200, b"")], ("empty body",), ("ok", ("(no text content)",))
    ),
    Fault(
        "data-null",
        lambda f: [wrong_types(f, "null")],
        ("unexpected response shape",),
        ("ok", ("null",)),
    ),
    Fault(
        "string-for-list",
        lambda f: [wrong_types(f, "string")],
        ("unexpected response shape",),
        ("ok", ("not a list",)),
    ),
    Fault(
        "connection-reset",
        lambda f: [Reset()],
        ("connection was reset",),
        ("error", ("connection was reset",)),
    ),
    Fault(
        "connection-refused",
        lambda f: [],
        ("connection refused",),
        ("error", ("connection refused",)),
        refused=True,
    ),
    Fault("headers-never-come", lambda f: [Hang()], ("timed out",), ("error", ("timed out",))),
    Fault(
        "body-stops-half-way",
        lambda f: [Partial()],
        ("connection broke",),
        ("error", ("connection broke",)),
    ),
    Fault(
        "huge-body",
        lambda f: [Huge(content_type="text/plain" if f == "direct" else "application/json")],
        ("larger than 16.0MB",),
        ("ok", ("Stopped reading after 5.0MB",)),
    ),
    Fault("redirect-loop", lambda f: [redirect_loop], ("redirect",), ("error", ("redirect loop",))),
]

#: Faults after which an API provider retries (429, 502, 503 and broken or refused connections).
RETRIED = {
    "429-retry-after",
    "429",
    "502",
    "503-html",
    "connection-reset",
    "connection-refused",
    "body-stops-half-way",
}


def shape_needles(target: Target, fault: Fault) -> tuple:
    """The field a wrong-shape error must name, per target."""
    if fault.id not in ("data-null", "string-for-list"):
        return ()
    return (API_FAKES[target.family].shape_field,)


def as_json(value: Any) -> str:
    return json.dumps(value)


class _Nowhere:
    """Stands in for a server on a port nothing listens on (a refused connection)."""

    def __init__(self):
        self.port = unused_port()
        self.count = 0

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def run_fault(target: Target, fault: Fault, server: FaultServer, tools, write_config, caplog):
    """Script *fault*, make *target*'s tool call, and check everything the suite promises."""
    from tests.support import assert_clean_error, assert_in_time, assert_no_secret

    where = _Nowhere() if fault.refused else server
    if not fault.refused:
        server.script(*fault.script(target.family))
    write_config(target.config(where))
    outcome = tools.call(target.tool, target.args(where))
    assert_in_time(outcome)
    assert_no_secret(outcome, caplog)
    if target.family == "direct":
        kind, needles = fault.direct
        if kind == "ok":
            assert not outcome.result.is_error, outcome.text
            for needle in needles:
                assert needle in outcome.text
        else:
            assert_clean_error(outcome, *needles)
        assert where.count <= 3 + (2 if fault.id == "redirect-loop" else 0)
        return outcome
    assert_clean_error(outcome, *fault.api, *shape_needles(target, fault))
    if fault.refused:
        pass  # nothing listens, so there are no requests to count (retries: test_retries.py)
    elif fault.id in RETRIED:
        assert 1 <= where.count <= 3
    elif fault.id != "redirect-loop":
        assert where.count == 1, f"{where.count} requests for a fault that is not retried"
    return outcome


def check_cross_host_redirect(target: Target, server: FaultServer, tools, write_config) -> None:
    """Redirect (307, so a POST stays a POST) to a second server under another host name; the key
    must not travel with it."""
    other = FaultServer().start()
    try:
        other.script(Reply(200, "{}"))
        server.script(Redirect(f"http://localhost:{other.port}/elsewhere", status=307))
        write_config(target.config(server))
        tools.call(target.tool, target.args(server))
        assert other.count == 1, "the redirect was not followed"
        assert SECRET not in str(other.requests[0]["headers"])
    finally:
        other.close()
