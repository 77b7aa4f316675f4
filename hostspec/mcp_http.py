"""``pi-web mcp --http``: every tool over MCP's streamable HTTP transport, for a shared server.

Built on the official SDK's ``StreamableHTTPSessionManager`` in stateless mode with JSON
responses: every POST to ``/mcp`` is served on its own, so any number of replicas can run
behind any load balancer with no session affinity. Uvicorn (installed with the SDK) serves it.

- Bound to loopback by default. Any other address needs a bearer token, read from
  ``PI_WEB_MCP_TOKEN`` or ``--token-file`` (never a command-line value, which ``ps`` shows);
  a request without it gets 401. A token given on loopback is required too. The file may
  hold one ``name: token`` line per person (:mod:`.tokens`, read again when it changes); the
  name of a request's token is its caller (``ToolContext.caller``, the log line), never the
  token.
- Host and Origin headers are checked against an allowlist (the SDK's DNS-rebinding
  protection): loopback names, the bound address and ``--allow-host`` / ``--allow-origin``.
- ``GET /healthz`` answers 200 once the server accepts calls (no token needed; it tells nothing).
- Tool calls run in worker threads, at most ``max_calls`` at once; a slow call holds one slot
  and nothing else. Keys stay in the server's config; clients only ever see results.
- A connection must send its whole request head within ``HEAD_TIMEOUT_SECONDS`` of opening (or
  of its previous answer), however it trickles it, or it is closed; connections waiting for a
  head cost nothing else: the 503 limit (``request_limit``) counts requests in progress only,
  so idle sockets opened without the token cannot starve ``/healthz`` or authenticated calls.
- A call ends when its client stops waiting for it: a disconnect (the 2026-07-28 rule, applied
  to every client), or a ``notifications/cancelled`` naming it from the same session (the
  ``Mcp-Session-Id`` minted at ``initialize``: request ids are unique only within a session).
  The tool is told to stop, its slot is freed and the log says ``cancelled``. ``GET`` and
  ``DELETE`` on ``/mcp`` get 405: there is no event stream to hold open and no session to end.
- Stderr gets one line per call (tool, outcome, duration) and per refused request, never
  arguments, headers or keys.
- SIGINT / SIGTERM stop accepting, let running calls finish for up to 5 s, then stop them, each
  answered with a JSON-RPC error (503) saying the server is stopping, and exit (130 / 0); a
  second signal stops them at once.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import re
import secrets
import socket
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .mcp_server import CALLER, check_sdk, finish, load_server, run_until_signal
from .tokens import DEFAULT_NAME, TokenError, Tokens, check_token

if TYPE_CHECKING:
    from .host import Host

__all__ = ["TOKEN_ENV", "HttpOptions", "UsageError", "serve_http"]

TOKEN_ENV = "PI_WEB_MCP_TOKEN"
#: pi's agent directory, where hosts and plugins keep their settings.
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
#: The shared state's URL a plugin reads (``pi-web mcp --state`` sets it); shown without its
#: password in the start lines.
STATE_ENV = "PI_WEB_STATE"
MCP_PATH = "/mcp"
HEALTH_PATH = "/healthz"
GRACEFUL_SECONDS = 5
#: Seconds a connection has to send its request head (from opening, or from its last answer).
HEAD_TIMEOUT_SECONDS = 5.0
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_REASONS = {
    400: "bad request",
    401: "missing or wrong bearer token",
    403: "Origin not allowed",
    404: "no such path",
    405: "method not allowed",
    406: "not acceptable",
    413: "body too large",
    503: "too many requests in progress",
    415: "unsupported content type",
    421: "Host not allowed",
    500: "server error",
}


class UsageError(ValueError):
    """The options cannot be served as given (the message says why, in one line)."""


@attrs.frozen(kw_only=True)
class HttpOptions:
    """How ``pi-web mcp --http`` listens; see the module docstring for what each one means."""

    host: str = "127.0.0.1"
    port: int = 8080
    token_file: str | None = None
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    max_calls: int = 32


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1); any other name or
    address, the wildcards ``0.0.0.0`` and ``::`` included, can be reached from elsewhere."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_tokens(options: HttpOptions, environ: Mapping[str, str] | None = None) -> Tokens | None:
    """The bearer tokens, by name: ``PI_WEB_MCP_TOKEN`` (one, named ``default``) or the
    ``--token-file`` (one token, or ``name: token`` lines, read again when it changes: see
    :mod:`.tokens`); None when neither is set and the address is loopback. Raises
    :class:`UsageError` otherwise."""
    environ = os.environ if environ is None else environ
    from_env = environ.get(TOKEN_ENV, "").strip() or None
    if from_env and options.token_file:
        raise UsageError(f"give the token either in {TOKEN_ENV} or with --token-file, not both")
    try:
        if options.token_file:
            return Tokens(path=options.token_file, log=_log)
        if from_env:
            return Tokens({DEFAULT_NAME: check_token(from_env, TOKEN_ENV)})
    except TokenError as exc:
        raise UsageError(str(exc)) from None
    if not is_loopback(options.host):
        raise UsageError(
            f"listening on {options.host} (not loopback) needs a bearer token: set "
            f"{TOKEN_ENV} or pass --token-file PATH (for example a file holding the output "
            "of: python -c 'import secrets; print(secrets.token_urlsafe(32))', or one "
            "'name: token' line per person)"
        )
    return None


def security_settings(options: HttpOptions, port: int) -> Any:
    """The SDK's DNS-rebinding protection: the Host and Origin values this server accepts."""
    from mcp.server.transport_security import TransportSecuritySettings

    if "*" in options.allow_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [f"{name}:{port}" for name in _LOOPBACK_NAMES]
    bound = options.host if ":" not in options.host else f"[{options.host.strip('[]')}]"
    if not is_loopback(options.host) and bound not in ("0.0.0.0", "[::]"):
        hosts.append(f"{bound}:{port}")
    elif bound in ("0.0.0.0", "[::]"):
        # Bound to every interface: clients connecting by this machine's own addresses or name
        # are accepted (DNS rebinding arrives under an attacker's name, never these).
        # 0.0.0.0 listens on IPv4 only: its IPv6 addresses would be listed and never reached.
        hosts += [
            f"{name}:{port}" for name in own_names() if bound == "[::]" or not name.startswith("[")
        ]
    for name in options.allow_hosts:
        if _has_port(name):
            hosts.append(name)
        else:  # any port: a proxy in front may listen on another one
            hosts += [name, f"{name}:*"]
    origins = [f"http://{name}:*" for name in _LOOPBACK_NAMES] + list(options.allow_origins)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def own_names() -> list[str]:
    """This machine's host name and its addresses (IPv6 in brackets, loopback and link-local
    left out): the ones the name resolves to, those of its interfaces (Linux: /proc/net), and
    the source address of its default routes. The name often resolves to 127.0.1.1 only (as
    Debian's /etc/hosts has it), so a client that connects by the machine's IP needs the rest."""
    names: list[str] = []

    def add(ip: str) -> None:
        ip = ip.split("%", 1)[0]
        try:
            parsed = ipaddress.ip_address(ip)
        except ValueError:
            return
        if parsed.is_loopback or parsed.is_link_local or parsed.is_unspecified:
            return
        name = f"[{parsed}]" if parsed.version == 6 else str(parsed)
        if name not in names:
            names.append(name)

    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = ""
    if hostname:
        names.append(hostname)
        try:
            for *_, address in socket.getaddrinfo(hostname, None):
                add(str(address[0]))
        except OSError:
            pass
    for ip in _interface_addresses():
        add(ip)
    # The address a packet to a documentation network would leave from: a connected UDP
    # socket picks the route and sends nothing.
    for family, target in ((socket.AF_INET, "198.51.100.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                add(probe.getsockname()[0])
        except OSError:
            pass
    return names


def _interface_addresses() -> list[str]:
    """The local addresses of this machine's interfaces, from Linux's /proc/net (nothing
    elsewhere): IPv4 host routes of type LOCAL in fib_trie, and if_inet6."""
    found: list[str] = []
    try:
        with open("/proc/net/fib_trie", encoding="ascii") as trie:
            last = ""
            for line in trie:
                text = line.strip()
                if text.startswith("|--"):
                    last = text[3:].strip()
                elif text.startswith("/32 host LOCAL") and last and last not in found:
                    found.append(last)
    except OSError:
        pass
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as inet6:
            for line in inet6:
                digits = line.split()[0] if line.split() else ""
                if len(digits) == 32:
                    found.append(str(ipaddress.IPv6Address(bytes.fromhex(digits))))
    except (OSError, ValueError):
        pass
    return found


def accepted_hosts(options: HttpOptions, port: int) -> str:
    """The Host values the server accepts, for its start line."""
    settings = security_settings(options, port)
    if not settings.enable_dns_rebinding_protection:
        return "any Host (--allow-host '*')"
    return ", ".join(settings.allowed_hosts)


def _has_port(name: str) -> bool:
    """True for ``example.com:443`` and ``[::1]:8080``, False for ``example.com`` and ``[::1]``."""
    head, colon, port = name.rpartition(":")
    return bool(colon) and (port.isdigit() or port == "*") and not head.endswith(":")


def hide_local_paths(text: str, environ: Mapping[str, str] | None = None) -> str:
    """*text* as a client on another machine may see it: the server's agent directory reads
    ``$PI_CODING_AGENT_DIR`` and its home directory ``~``, so no absolute path (with the home
    directory and user name in it) leaves the server. A local user sees the paths as they
    are (``pi-web``, ``pi-web mcp`` over stdio, llm)."""
    agent = (os.environ if environ is None else environ).get(AGENT_DIR_ENV, "").strip()
    prefixes: dict[str, str] = {}
    home = os.path.expanduser("~")
    for path, shown in ((agent, f"${AGENT_DIR_ENV}"), (home, "~")):
        if not path:
            continue
        path = os.path.expanduser(path)
        for variant in (path.rstrip(os.sep), os.path.realpath(path).rstrip(os.sep)):
            if variant.count(os.sep) >= 1 and len(variant) > 1:  # never "/" itself
                prefixes.setdefault(variant, shown)
    for prefix in sorted(prefixes, key=len, reverse=True):
        shown_as = prefixes[prefix]
        text = re.sub(re.escape(prefix) + r"(?![\w.-])", lambda _match: shown_as, text)  # noqa: B023
    return text


def shown_url(url: str) -> str:
    """*url* with the password of a ``user:password@`` part shown as ``***``."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:
        return "(a URL that cannot be read)"
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _log(message: str) -> None:
    print(f"pi-web mcp: {message}", file=sys.stderr, flush=True)


def log_call(tool: str, outcome: str, seconds: float) -> None:
    """One stderr line for a finished call: tool, its caller's name (never the token),
    outcome and duration (never arguments)."""
    caller = CALLER.get()
    who = f" caller={caller}" if caller else ""
    _log(f"call tool={tool}{who} outcome={outcome} duration_ms={seconds * 1000:.0f}")


def _client(scope: dict) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "-"


async def _send_json(send: Callable, status: int, body: dict, headers: list | None = None) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def request_limit(max_calls: int) -> int:
    """Requests in progress past which ``/mcp`` answers 503 (a call waiting for a slot counts)."""
    return max(64, max_calls * 4)


#: Where OAuth clients look for metadata (RFC 9728, RFC 8414, OpenID Connect discovery).
OAUTH_DISCOVERY_PREFIXES = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)
#: What a client without the token is told: there is no OAuth to start.
NO_OAUTH = (
    "this server takes a static bearer token, not OAuth: send the header "
    "Authorization: Bearer <token> (its operator set the token with PI_WEB_MCP_TOKEN or "
    "--token-file)"
)
#: The largest request body ``/mcp`` reads (the SDK's own limit): larger ones get 413.
MAX_BODY_BYTES = 4 * 1024 * 1024
#: The JSON-RPC error a request stopped by the client's ``notifications/cancelled`` gets (the
#: SDK's "request cancelled" code of the handshake era, after LSP's).
REQUEST_CANCELLED = -32800
#: The JSON-RPC error of a request the server stopped because it is shutting down.
SERVER_STOPPING = -32000
#: The header naming a client's session: minted at ``initialize``, echoed by the client on
#: every later request; it scopes ``notifications/cancelled`` to the client that sent it.
SESSION_HEADER = b"mcp-session-id"


def wants_progress_stream(scope: dict, message: dict) -> bool:
    """True for a ``tools/call`` that asks for progress (a ``progressToken``) from a client
    that accepts ``text/event-stream``: its answer is an event stream carrying the progress
    notifications, then the result. Every other request is answered with one JSON body."""
    if message.get("method") != "tools/call":
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or meta.get("progressToken") is None:
        return False
    accept = (_header(scope, b"accept") or b"").decode("latin-1").lower()
    types = {part.split(";")[0].strip() for part in accept.split(",")}
    return bool(types & {"text/event-stream", "text/*", "*/*"})


class _Disconnected(Exception):
    """The client closed its connection while sending the request body."""


@attrs.define(eq=False)
class Exchange:
    """One ``POST /mcp`` in progress: the scope its handling runs in, and why it was stopped.

    *stopped* is None while it runs normally, else ``disconnected`` (the client went away),
    ``cancelled`` (the client's ``notifications/cancelled`` named it) or ``shutdown``."""

    scope: Any
    request_id: Any = None
    key: tuple[str, str] | None = None
    stopped: str | None = None
    answered: bool = False
    complete: bool = False
    gone: Any = None  # an anyio.Event set when the client disconnects

    def stop(self, why: str) -> None:
        """Stop the request's handling (its tool call is cancelled), once, for *why*."""
        if self.stopped is None and not self.complete:
            self.stopped = why
            self.scope.cancel()


def _message(body: bytes) -> dict:
    """The JSON-RPC message of a request body ({} when it is not one JSON object)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return message if isinstance(message, dict) else {}


def _header(scope: dict, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value
    return None


async def _read_body(receive: Callable, limit: int) -> bytes | None:
    """The whole request body (None when it is larger than *limit*)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


class Gate:
    """The ASGI app in front of the SDK: ``/healthz``, the bearer token, the limit of requests
    in progress (*limit*: 503 past it; connections that sent no request are not counted), and a
    log line for every refused request; ``/mcp`` requests that pass go to *handler* (the SDK).

    It also owns the life of every ``POST /mcp`` (an :class:`Exchange`): a client that
    disconnects, a ``notifications/cancelled`` from the same session and a shutdown all stop
    the request the same way, by cancelling its scope (the SDK then cancels the tool call,
    which frees its ``--max-calls`` slot and is logged ``cancelled``). ``GET`` (an event stream
    this stateless server never uses) and ``DELETE`` on ``/mcp`` get 405 at once."""

    def __init__(
        self,
        handler: Callable,
        tokens: Tokens | None,
        tools: int,
        limit: int = 128,
        streaming: Callable | None = None,
    ):
        self.handler = handler
        self.streaming = streaming
        self.tokens = tokens
        self.tools = tools
        self.limit = limit
        self.active = 0
        self.exchanges: set[Exchange] = set()
        self.calls: dict[tuple[str, str], Exchange] = {}

    def caller(self, scope: dict) -> str | None:
        """The name of the token the request carries as ``Authorization: Bearer`` (``""``
        when no token is set: anyone on loopback), or ``None``: unauthorized."""
        if self.tokens is None:
            return ""
        value = _header(scope, b"authorization")
        if value is None:
            return None
        scheme, _, credential = value.partition(b" ")
        if scheme.lower() != b"bearer":
            return None
        return self.tokens.name_of(credential.strip())

    def challenge(self, scope: dict) -> bytes:
        """The ``WWW-Authenticate`` value of a 401 (RFC 6750): a Bearer challenge with no
        ``resource_metadata``, since this server offers no OAuth; ``error="invalid_token"``
        when a token was sent and is not this server's (nothing more for a request with
        none, as RFC 6750 section 3.1 asks)."""
        challenge = b'Bearer realm="pi-web mcp"'
        if _header(scope, b"authorization") is not None:
            challenge += (
                b', error="invalid_token", error_description="not this server\'s bearer token; '
                b'it takes a static token, not OAuth"'
            )
        return challenge

    def stop_all(self, why: str = "shutdown") -> int:
        """Stop every request in progress (a shutdown); returns how many there were."""
        running = [exchange for exchange in self.exchanges if not exchange.complete]
        for exchange in running:
            exchange.stop(why)
        return len(running)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            await _send_json(send, 200, {"status": "ok", "tools": self.tools})
            return
        status: dict[str, Any] = {}

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            if path.startswith(OAUTH_DISCOVERY_PREFIXES):
                # OAuth discovery finds nothing here (RFC 9728 and the MCP authorization
                # spec: no metadata means no OAuth, so a client uses the token it was given).
                status["quiet"] = True
                await _send_json(watch, 404, {"error": NO_OAUTH})
            elif path.rstrip("/") != MCP_PATH:
                await _send_json(watch, 404, {"error": f"not found; MCP is at {MCP_PATH}"})
            elif (caller := self.caller(scope)) is None:
                await _send_json(
                    watch,
                    401,
                    {"error": f"unauthorized: {NO_OAUTH}"},
                    [(b"www-authenticate", self.challenge(scope))],
                )
            elif method in ("GET", "DELETE"):
                # No event stream and no session to end: the spec's answer is 405, at once
                # (an open GET stream used to count toward the 503 limit, for ever).
                status["quiet"] = True
                await _send_json(
                    watch,
                    405,
                    {"error": f"{method} is not served here: this server answers POST only"},
                    [(b"allow", b"POST")],
                )
            elif self.active >= self.limit:
                await _send_json(
                    watch,
                    503,
                    {"error": "too many requests in progress; retry shortly"},
                    [(b"retry-after", b"1")],
                )
            else:
                self.active += 1
                CALLER.set(caller or None)  # this request's task: its tool call and log line
                try:
                    if method == "POST":
                        await self._post(scope, receive, watch, status)
                    else:
                        await self.handler(scope, receive, watch)
                finally:
                    self.active -= 1
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback
            _log(
                f"request failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            )
            if "code" not in status:
                await _send_json(watch, 500, {"error": "internal error"})
        code = status.get("code", 0)
        if code >= 400 and not status.get("quiet"):
            reason = status.get("reason") or _REASONS.get(code, "refused")
            _log(
                f"refused {method} {path[:100]!r} status={code} ({reason}) client={_client(scope)}"
            )

    async def _post(self, scope: dict, receive: Callable, send: Callable, status: dict) -> None:
        """Serve one ``POST /mcp`` as an :class:`Exchange` (see the class docstring)."""
        import anyio

        try:
            body = await _read_body(receive, MAX_BODY_BYTES)
        except _Disconnected:
            return
        if body is None:
            await _send_json(send, 413, {"error": f"body over {MAX_BODY_BYTES} bytes"})
            return
        message = _message(body)
        session = _header(scope, SESSION_HEADER)
        if message.get("method") == "notifications/cancelled" and session is not None:
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            key = (session.decode("latin-1"), json.dumps(params.get("requestId")))
            target = self.calls.get(key)
            if target is not None:
                target.stop("cancelled")
        exchange = Exchange(scope=anyio.CancelScope(), request_id=message.get("id"))
        exchange.gone = anyio.Event()
        if session is not None and "id" in message:
            exchange.key = (session.decode("latin-1"), json.dumps(message["id"]))
            self.calls.setdefault(exchange.key, exchange)
        minted = None
        if message.get("method") == "initialize":
            minted = secrets.token_hex(16).encode()
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            await exchange.gone.wait()
            return {"type": "http.disconnect"}

        async def answer(reply: dict) -> None:
            if reply["type"] == "http.response.start":
                exchange.answered = True
                headers = list(reply.get("headers", ()))
                if minted and reply["status"] < 400 and SESSION_HEADER not in dict(headers):
                    reply = {**reply, "headers": [*headers, (SESSION_HEADER, minted)]}
            elif reply["type"] == "http.response.body" and not reply.get("more_body", False):
                exchange.complete = True
            await send(reply)

        async def watch_client() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not exchange.complete:  # uvicorn also says "disconnect" once the answer is sent
                exchange.gone.set()
                exchange.stop("disconnected")

        handler = self.handler
        if self.streaming is not None and wants_progress_stream(scope, message):
            handler = self.streaming
        self.exchanges.add(exchange)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch_client)
                with exchange.scope:
                    await handler(scope, replay, answer)
                group.cancel_scope.cancel()
        finally:
            self.exchanges.discard(exchange)
            if exchange.key is not None and self.calls.get(exchange.key) is exchange:
                del self.calls[exchange.key]
        if exchange.stopped in ("cancelled", "shutdown"):
            if not exchange.answered:
                await self._answer_stopped(exchange, send, status)
            elif not exchange.complete:
                await self._end_stream(exchange, send)

    async def _end_stream(self, exchange: Exchange, send: Callable) -> None:
        """End the event stream of a call stopped after its answer began (progress was on its
        way): a cancelled call's stream just ends (no answer, as the protocol asks), a stopped
        one's carries the shutdown error first. Never an unfinished response."""
        data = b""
        if exchange.stopped == "shutdown":
            error = {
                "jsonrpc": "2.0",
                "id": exchange.request_id,
                "error": {
                    "code": SERVER_STOPPING,
                    "message": "the server is shutting down: the call was stopped; retry it",
                },
            }
            data = b"event: message\r\ndata: " + json.dumps(error).encode() + b"\r\n\r\n"
        with contextlib.suppress(OSError, RuntimeError):
            await send({"type": "http.response.body", "body": data, "more_body": False})

    async def _answer_stopped(self, exchange: Exchange, send: Callable, status: dict) -> None:
        """The answer to a request stopped before it answered: the JSON-RPC error that says why
        (nothing for a client that is gone)."""
        if exchange.stopped == "cancelled":
            code, message, http_status = REQUEST_CANCELLED, "Request cancelled", 200
            headers: list = []
        else:
            code, http_status = SERVER_STOPPING, 503
            message = "the server is shutting down: the call was stopped; retry it"
            headers = [(b"retry-after", b"5")]
            status["reason"] = "server shutting down"
        body = {
            "jsonrpc": "2.0",
            "id": exchange.request_id,
            "error": {"code": code, "message": message},
        }
        with contextlib.suppress(OSError, RuntimeError):
            await _send_json(send, http_status, body, headers)


#: Connections the kernel queues for the server to accept.
LISTEN_BACKLOG = 1024
#: Connections accepted in one turn of the event loop (asyncio accepts as many as the backlog
#: it is given): a burst of 1,000 silent sockets accepted at once used up the open-file limit
#: before the oldest waiting ones could be closed.
ACCEPT_BATCH = 64
#: Linux only (TCP_DEFER_ACCEPT): a connection reaches the server when its first bytes arrive,
#: or after this long; one that never sends anything costs the server no descriptor and no
#: work until then, and the head timeout runs from there.
DEFER_ACCEPT_SECONDS = 1


class _Listener(socket.socket):
    """The listening socket: it keeps its queue of :data:`LISTEN_BACKLOG` when the event loop
    calls ``listen(ACCEPT_BATCH)`` (asyncio uses one number for both)."""

    def listen(self, backlog: int = LISTEN_BACKLOG) -> None:
        super().listen(max(backlog, LISTEN_BACKLOG))


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on *host*:*port* (port 0: any free one)."""
    try:
        infos = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise UsageError(f"cannot resolve --host {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = _Listener(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "TCP_DEFER_ACCEPT"):  # Linux: silent connections stay in the kernel
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, DEFER_ACCEPT_SECONDS)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def _url(host: str, port: int) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


class Waiting:
    """The connections waiting for a request head (new ones, and kept-alive ones between
    requests), oldest first. Past *limit* the oldest is closed as a new one arrives, so silent
    sockets never use up the open-file limit: at that point the server could accept nothing,
    and every client, authenticated or not, waited for the head timeout to free a descriptor."""

    def __init__(self, limit: int):
        self.limit = limit
        self.connections: dict[Any, None] = {}  # insertion-ordered: oldest first
        self.closed = 0
        self._said_at: float | None = None

    def add(self, connection: Any) -> None:
        """*connection* starts waiting for a head (as the newest)."""
        self.connections.pop(connection, None)
        self.connections[connection] = None
        while len(self.connections) > self.limit:
            oldest = next(iter(self.connections))
            del self.connections[oldest]
            oldest.transport.close()
            self.closed += 1
            self._say()

    def discard(self, connection: Any) -> None:
        """*connection* sent a head, or is gone."""
        self.connections.pop(connection, None)

    def _say(self) -> None:
        import time

        now = time.monotonic()
        if self._said_at is None or now - self._said_at > 60:
            self._said_at = now
            _log(
                f"more than {self.limit} connections are waiting to send a request: closing "
                f"the oldest as new ones arrive ({self.closed} so far)"
            )


def raise_open_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (at most 65,536), as
    servers do: each connection is a descriptor. Returns the soft limit in effect (0 where
    there is none to read)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = 1 << 16
    target = ceiling if hard == resource.RLIM_INFINITY else min(hard, ceiling)
    if soft != resource.RLIM_INFINITY and target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return ceiling if soft == resource.RLIM_INFINITY else soft


def idle_limit(open_files: int) -> int:
    """How many connections may wait for a request head: half the open-file limit, leaving
    the rest to calls in progress (their outbound sockets, worker pipes, the cache)."""
    return max(16, open_files // 2) if open_files else 1 << 15


def _head_timeout_protocol(waiting: Waiting) -> type:
    """uvicorn's h11 protocol, closing a connection that has not sent its whole request head
    within :data:`HEAD_TIMEOUT_SECONDS` of opening or of its last answer. Data trickling in
    does not restart the clock (uvicorn's keep-alive timeout is restarted by any byte, and a
    new connection has none at all). Connections waiting for a head are kept in *waiting*,
    which closes the oldest past its limit."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeoutProtocol(H11Protocol):
        _head_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._await_head()

        def _await_head(self) -> None:
            self._stop_head_clock()
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT_SECONDS, self._head_overdue)
            waiting.add(self)

        def _stop_head_clock(self) -> None:
            waiting.discard(self)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_overdue(self) -> None:
            self._head_timer = None
            waiting.discard(self)
            waiting_for_head = self.cycle is None or self.cycle.response_complete
            if waiting_for_head and not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request head arrived: its answer is on its way
                self._stop_head_clock()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (
                self.cycle is None or self.cycle.response_complete
            ):
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_head_clock()
            super().connection_lost(exc)

    return HeadTimeoutProtocol


async def _serve(
    gate: Gate, managers: list, sock: socket.socket, options: HttpOptions, waiting: Waiting
) -> int:
    import anyio
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):  # run_until_signal handles them
            yield

    config = uvicorn.Config(
        gate,
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        # A backstop only: the Gate stops the requests still running after GRACEFUL_SECONDS
        # itself, and answers each with a clean error (uvicorn's own cancel printed a traceback
        # and answered a bare 500).
        timeout_graceful_shutdown=GRACEFUL_SECONDS + 5,
        http=_head_timeout_protocol(waiting),
        backlog=ACCEPT_BATCH,
        # uvicorn's limit counts every open connection, idle ones included: 130 sockets that
        # send nothing made every request 503. The Gate counts requests in progress instead.
        limit_concurrency=None,
    )
    server = Server(config)

    def on_signal(signum: int) -> bool:
        import asyncio

        if server.should_exit:  # a second signal: stop what still runs, now
            gate.stop_all()
            server.force_exit = True
        else:  # stop accepting; running calls get GRACEFUL_SECONDS to finish
            server.should_exit = True
            asyncio.get_running_loop().call_later(GRACEFUL_SECONDS, gate.stop_all)
        return False  # uvicorn drains and returns by itself

    async def announce() -> None:
        while not server.started and not server.should_exit:
            await anyio.sleep(0.01)
        if server.started:
            port = sock.getsockname()[1]
            auth = "no token: loopback only"
            if gate.tokens is not None:
                names = gate.tokens.names
                auth = (
                    "bearer token required"
                    if names == [DEFAULT_NAME]
                    else f"bearer tokens required: {len(names)} named"
                )
            _log(
                f"serving {gate.tools} tools at {_url(options.host, port)} (stateless; {auth}; "
                f"readiness at {HEALTH_PATH}; up to {options.max_calls} calls at once)"
            )
            _log(
                f"accepting Host: {accepted_hosts(options, port)}; clients that connect by "
                "another name get 421: add it with --allow-host NAME"
            )
            state = os.environ.get(STATE_ENV, "").strip()
            if state:
                _log(f"shared state: {shown_url(state)} ({STATE_ENV})")

    async def main() -> None:
        async with contextlib.AsyncExitStack() as stack:
            for manager in managers:
                await stack.enter_async_context(manager.run())
            async with anyio.create_task_group() as group:
                group.start_soon(announce)
                await server.serve(sockets=[sock])

    status = await run_until_signal(main, on_signal)
    _log("stopped")
    return status


def serve_http(host: Host | None, options: HttpOptions, environ: dict | None = None) -> int:
    """Serve every tool of *host* over streamable HTTP until SIGINT / SIGTERM.

    Returns 0 after SIGTERM, 130 after SIGINT, 1 when the tools cannot be loaded or the
    address cannot be bound, 2 for a missing SDK or unusable options (no token off loopback).
    """
    problem = check_sdk()
    if problem is not None:
        return problem
    if options.max_calls < 1:
        _log("--max-calls must be at least 1")
        return 2
    try:
        tokens = read_tokens(options, environ)
    except UsageError as exc:
        _log(str(exc))
        return 2
    import anyio

    logging.getLogger("mcp.server.transport_security").setLevel(logging.ERROR)  # we log refusals
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.WARNING)

    limiter = anyio.CapacityLimiter(options.max_calls)
    loaded = load_server(host, limiter=limiter, on_call=log_call, present=hide_local_paths)
    if loaded is None:
        return 1
    host, server = loaded
    waiting = Waiting(idle_limit(raise_open_file_limit()))
    try:
        sock = _listen(options.host, options.port)
    except UsageError as exc:
        _log(str(exc))
        return 1
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    settings = security_settings(options, sock.getsockname()[1])
    managers = [  # one JSON body per request; an event stream for a call with progress
        StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=json_response, security_settings=settings
        )
        for json_response in (True, False)
    ]
    gate = Gate(
        managers[0].handle_request,
        tokens,
        len(host.tools),
        request_limit(options.max_calls),
        streaming=managers[1].handle_request,
    )
    try:
        status = anyio.run(_serve, gate, managers, sock, options, waiting, backend="asyncio")
    finally:
        sock.close()
    return finish(status)
