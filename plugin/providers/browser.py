"""The ``browser`` fetcher: pages read in a local headless Chromium, keyless, so that pages drawn
by JavaScript (application shells) give their text.

One browser per process, started on the first call that needs it (Playwright for Python
driving a system Chromium or Chrome, or Playwright's own browser) and reused; a fresh browser
context per call, so no cookie or storage outlives it unless ``keepStorage`` asks. The pages of
a call load in parallel, at most ``maxPages`` at once.

Every request the page makes (the document, scripts, XHR and fetch, images, frames, redirects)
is answered by this process, not by the browser's own network stack: it goes through the same
guarded HTTP session as the direct fetcher (the host check before, the connected socket checked
after, the environment's proxies as ``requests`` honours them, ``maxBytes`` per response, the
call's deadline; redirects are followed here, every hop checked, since Playwright routes only
the first request of a redirect chain), so nothing reaches a private, loopback, link-local or
metadata address unless ``allowPrivateNetwork`` is set. The browser's own network stack leads
nowhere: its proxy is a loopback port this process holds without listening, and WebRTC may use
nothing but that proxy, so what no route answers (WebRTC's STUN and TURN, preconnects) reaches
no host. WebSockets are refused; downloads are refused; service workers are blocked. The
rendered DOM then goes through the same page pipeline as every other HTML body
(:func:`pi_web_tools.pages.read`): extraction, paging, cache and budget.

Nothing here is imported until a call needs it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from ..api import (
    CommonOptions,
    Fetch,
    FetchedPage,
    FetchRequest,
    FetchResponse,
    ProviderConfig,
    ProviderError,
    ProviderType,
    between,
    hookimpl,
    option,
)

__all__ = ["BROWSER", "BrowserOptions", "BrowserProvider", "find_browser", "shutdown"]

#: Executables looked for on the PATH, in order.
EXECUTABLES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
)
#: A switch Chromium ignores, given this process's id (``--pi-web-tools-browser=1234``), so its
#: browsers can be told apart from other processes' (tests look for them).
MARKER = "--pi-web-tools-browser"
LAUNCH_ARGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--js-flags=--max-old-space-size=512",
    # WebRTC only through the proxy, which leads nowhere (see _Engine.ensure_browser): no STUN
    # or TURN packet of a page's reaches any address, since none passes through the route.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
DEFAULT_MAX_BYTES = 5_000_000
#: Headers that describe the wire, not the content: requests has already undone them.
_HOP_HEADERS = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-encoding",
    "content-length",
    "proxy-connection",
    "upgrade",
}
_INSTALL_EXTRA = "browser"


@attrs.frozen(kw_only=True)
class BrowserOptions(CommonOptions):
    """Options of a ``browser`` fetcher."""

    executable_path: str | None = option(None, runs=True)
    allow_private_network: bool = option(False)
    max_bytes: int = option(DEFAULT_MAX_BYTES, validator=between(10_000, 100_000_000))
    max_pages: int = option(4, validator=between(1, 10))
    settle_seconds: float = option(2.0, validator=between(0, 30))
    keep_storage: bool = option(False)


def find_browser(executable: str | None = None) -> str | None:
    """The browser to drive: *executable* when given (and runnable), else the first of
    :data:`EXECUTABLES` on the PATH, else Playwright's own installed Chromium; ``None`` when
    there is none."""
    if executable:
        path = shutil.which(executable) or executable
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    for name in EXECUTABLES:
        path = shutil.which(name)
        if path:
            return path
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        return None
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or os.path.expanduser(
        "~/.cache/ms-playwright"
    )
    try:
        for folder in sorted(os.listdir(root), reverse=True):
            if folder.startswith("chromium"):
                for candidate in ("chrome-linux/chrome", "chrome-linux64/chrome"):
                    path = os.path.join(root, folder, candidate)
                    if os.access(path, os.X_OK):
                        return path
    except OSError:
        pass
    return None


def setup_problem(executable: str | None = None) -> str | None:
    """What is missing to render pages (the library or a browser) and the one command that
    fixes it, or ``None`` when a browser can be driven."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        from pi_hostspec.install import install_command

        return (
            "the browser fetcher needs Playwright; install it with: "
            f"{install_command(_INSTALL_EXTRA)}"
        )
    if find_browser(executable) is None:
        if executable:
            return f"no browser at executablePath {executable!r}; point it at Chromium or Chrome"
        return (
            f"no Chromium or Chrome found; install one with: {browser_install_command()} "
            '(or set "executablePath" to an installed Chrome or Edge)'
        )
    return None


def linux_family(os_release: str = "/etc/os-release") -> str | None:
    """``debian`` (Debian, Ubuntu and their kin) or ``fedora`` (Fedora, RHEL, CentOS) from
    *os_release*'s ``ID`` and ``ID_LIKE``; None for anything else or no file."""
    try:
        with open(os_release, encoding="utf-8") as handle:
            text = handle.read(16384)
    except OSError:
        return None
    words: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("ID", "ID_LIKE"):
            words.update(value.strip().strip("'\"").lower().split())
    if words & {"debian", "ubuntu"}:
        return "debian"
    if words & {"fedora", "rhel", "centos"}:
        return "fedora"
    return None


def browser_install_command() -> str:
    """The one command that gets this machine a browser to drive: the system's Chromium where
    a package manager can install it (apt-get, dnf, Homebrew), else Playwright's own Chromium
    for this interpreter."""
    import sys

    sudo = "" if not hasattr(os, "geteuid") or os.geteuid() == 0 else "sudo "
    if sys.platform.startswith("linux"):
        # The system says what it is (an MCP client may start us with a PATH lacking apt-get).
        family = linux_family()
        if family == "debian" or (family is None and shutil.which("apt-get")):
            return f"{sudo}apt-get install chromium"
        if family == "fedora" or (family is None and shutil.which("dnf")):
            return f"{sudo}dnf install chromium"
    if sys.platform == "darwin" and shutil.which("brew"):
        return "brew install --cask chromium"
    python = sys.executable or "python"
    if " " in python:
        python = f'"{python}"'
    return f"{python} -m playwright install chromium"


# --------------------------------------------------------------------------- the engine


class _Engine:
    """One browser for the process, on an event loop of its own thread."""

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="pi-web-browser", daemon=True
        )
        self.thread.start()
        self.playwright: Any = None
        self.browser: Any = None
        self.executable: str | None = None
        self.sandboxed = False
        self.network = ThreadPoolExecutor(max_workers=16, thread_name_prefix="browser-net")
        self.storage: dict[str, Any] = {}
        # The browser's proxy: a loopback port this process holds without listening, so every
        # connection the browser would open by itself (what no route answers: WebRTC's TURN,
        # preconnects, a WebSocket) is refused at once, and none reaches another host.
        self.nowhere = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.nowhere.bind(("127.0.0.1", 0))

    def run(self, coroutine: Any) -> Any:
        """A concurrent future of *coroutine* run on the engine's loop."""
        import asyncio

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    async def ensure_browser(self, executable: str) -> Any:
        """The running browser (started, or started again after a crash)."""
        if (
            self.browser is not None
            and self.browser.is_connected()
            and self.executable == executable
        ):
            return self.browser
        await self.close_browser()
        if self.playwright is None:
            from playwright.async_api import async_playwright

            self.playwright = await async_playwright().start()
        options = {
            "executable_path": executable,
            "headless": True,
            "args": [*LAUNCH_ARGS, f"{MARKER}={os.getpid()}"],
            "handle_sigint": False,
            # Loopback too (Playwright adds <-loopback> to the bypass list).
            "proxy": {"server": f"http://127.0.0.1:{self.nowhere.getsockname()[1]}"},
        }
        # Playwright turns Chromium's sandbox off unless asked. Chromium refuses it as root (a
        # container, typically), and cannot have it where the kernel allows it no namespaces
        # (a container's default seccomp profile): there it runs without.
        self.sandboxed = not (hasattr(os, "geteuid") and os.geteuid() == 0)
        try:
            self.browser = await self.playwright.chromium.launch(
                chromium_sandbox=self.sandboxed, **options
            )
        except Exception as exc:
            if not self.sandboxed or "sandbox" not in str(exc).lower():
                raise
            self.sandboxed = False
            self.browser = await self.playwright.chromium.launch(chromium_sandbox=False, **options)
        self.executable = executable
        return self.browser

    async def close_browser(self) -> None:
        browser, self.browser = self.browser, None
        if browser is not None:
            try:
                await browser.close()
            except Exception:  # noqa: BLE001 - it may be gone already
                pass

    async def stop(self) -> None:
        await self.close_browser()
        playwright, self.playwright = self.playwright, None
        if playwright is not None:
            try:
                await playwright.stop()
            except Exception:  # noqa: BLE001
                pass


_engine_lock = threading.Lock()
_engine: _Engine | None = None


def _get_engine() -> _Engine:
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _Engine()
            atexit.register(shutdown)
        return _engine


def shutdown() -> None:
    """Close the browser and its driver (also run at exit): no browser outlives the process."""
    global _engine
    with _engine_lock:
        engine, _engine = _engine, None
    if engine is None:
        return
    try:
        engine.run(engine.stop()).result(5)
    except Exception:  # noqa: BLE001 - exiting regardless
        pass
    engine.loop.call_soon_threadsafe(engine.loop.stop)
    engine.network.shutdown(wait=False, cancel_futures=True)
    engine.nowhere.close()


# --------------------------------------------------------------------------- the provider


class _Blocked(Exception):
    """A request the page made that the network guard refused."""


class _Redirect(Exception):
    """A redirect of a page's own document, to :attr:`target`."""

    def __init__(self, target: str):
        super().__init__(target)
        self.target = target


class BrowserProvider:
    """Renders pages in the process's browser; see the module docstring."""

    def __init__(self, name: str, options: BrowserOptions):
        self.name = name
        self.options = options
        self.timeout = options.timeout_seconds or 30.0
        from ..api._http_client import LazySession

        self._session = LazySession(self._new_session)

    def _http(self) -> Any:
        """The guarded session every request of the page goes through (no cookies of its own:
        the browser context keeps those)."""
        return self._session.get()

    def _new_session(self) -> Any:
        from ..api._http_client import new_session
        from ..api._netguard import guarded_adapter

        adapter = None if self.options.allow_private_network else guarded_adapter()
        return new_session(adapter=adapter, keep_cookies=False)

    def close(self) -> None:
        """Release the HTTP session (the browser stays for the process)."""
        self._session.close()

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Render every URL (at most ``maxPages`` at once) and read each through the page
        pipeline; a URL that fails is a page with its error."""
        urls = list(request.urls)
        if not urls:
            return FetchResponse(pages=())
        problem = setup_problem(self.options.executable_path)
        if problem is not None:
            raise ProviderError(f"{self.name}: {problem}", provider=self.name)
        from .. import pages

        pages.prewarm()
        deadline = time.monotonic() + self.timeout
        cancel = getattr(ctx, "cancel", None)
        engine = _get_engine()
        future = engine.run(self._render_all(engine, urls, deadline, cancel))
        while True:
            try:
                rendered = future.result(0.05)
                break
            except TimeoutError:
                pass
            if cancel is not None and cancel.is_set():
                future.cancel()
                return FetchResponse(
                    pages=tuple(FetchedPage(url=url, ok=False, error="cancelled") for url in urls)
                )
            if time.monotonic() > deadline + 2.0:  # the loop did not answer: restart the browser
                future.cancel()
                engine.run(engine.close_browser())
                message = f"timed out after {self.timeout:g} s while rendering"
                return FetchResponse(
                    pages=tuple(FetchedPage(url=url, ok=False, error=message) for url in urls)
                )
        return FetchResponse(pages=tuple(rendered))

    # -- in the engine's loop --------------------------------------------------------------

    async def _render_all(
        self, engine: _Engine, urls: list[str], deadline: float, cancel: Any
    ) -> list[FetchedPage]:
        """Every URL rendered (at most ``maxPages`` at once) and read into a page, each read
        through the page pipeline as soon as it is rendered, while the others still render."""
        import asyncio

        try:
            browser = await engine.ensure_browser(find_browser(self.options.executable_path))
        except Exception as exc:  # noqa: BLE001 - a browser that will not start
            message = f"the browser did not start ({_one_line(exc)})"
            return [FetchedPage(url=url, ok=False, error=message) for url in urls]
        context = await browser.new_context(
            service_workers="block",
            accept_downloads=False,
            storage_state=engine.storage.get(self.name) if self.options.keep_storage else None,
        )
        # A page's own document redirected: where to (a new navigation, which the route sees;
        # a redirect the browser followed by itself would reach the network unrouted).
        redirects: dict[Any, str] = {}
        try:
            await context.route(
                "**/*",
                lambda route, request: self._answer(engine, route, request, deadline, redirects),
            )
            await context.route_web_socket("**/*", self._socket)
            limit = asyncio.Semaphore(self.options.max_pages)

            async def one(url: str) -> FetchedPage:
                async with limit:
                    found = await self._render(context, url, deadline, redirects)
                return await asyncio.get_running_loop().run_in_executor(
                    engine.network, self._page, url, found, deadline, cancel
                )

            found = await asyncio.gather(*(one(url) for url in urls))
            if self.options.keep_storage:
                engine.storage[self.name] = await context.storage_state()
            return list(found)
        finally:
            try:
                await asyncio.wait_for(context.close(), 5)
            except Exception:  # noqa: BLE001 - a stuck context: the browser starts again
                await engine.close_browser()

    async def _render(
        self, context: Any, url: str, deadline: float, redirects: dict[Any, str]
    ) -> dict:
        from ..api._http_client import MAX_REDIRECTS

        page = await context.new_page()
        found: dict = {}
        in_flight = _InFlight()
        page.on("request", in_flight.started)
        page.on("requestfinished", in_flight.ended)
        page.on("requestfailed", in_flight.ended)
        try:
            target, hops = url, 0
            while True:
                remaining = max(0.1, deadline - time.monotonic())
                failed: Exception | None = None
                try:
                    response = await page.goto(
                        target, wait_until="domcontentloaded", timeout=remaining * 1000
                    )
                except Exception as exc:  # noqa: BLE001 - navigation errors are the page's
                    failed = exc
                following = redirects.pop(page, None)
                if following is None:
                    break
                hops += 1
                if hops > MAX_REDIRECTS:
                    return {"error": f"too many redirects (more than {MAX_REDIRECTS})"}
                target = following
            if failed is not None:
                return {"error": _navigation_error(failed, self.timeout)}
            if response is None:
                return {"error": "the browser loaded nothing"}
            found["status"] = response.status
            found["final_url"] = page.url
            found["content_type"] = (await response.all_headers()).get("content-type", "")
            if response.status >= 400:
                return found
            settle = min(self.options.settle_seconds, max(0.0, deadline - time.monotonic() - 0.5))
            await _settle(page, in_flight, settle)
            if "html" in found["content_type"] or not found["content_type"]:
                found["html"] = await page.content()
            else:
                found["body"] = await response.body()
            return found
        finally:
            try:
                await page.close()
            except Exception:  # noqa: BLE001
                pass

    async def _answer(
        self,
        engine: _Engine,
        route: Any,
        request: Any,
        deadline: float,
        redirects: dict[Any, str],
    ) -> None:
        """Answer one request of the page through the guarded session, or refuse it. Redirects
        are followed here, each hop checked; a redirect of a page's own document is aborted and
        recorded in *redirects*, and the page navigates to its target (so its URL is right)."""
        import asyncio

        url = request.url
        scheme = url.split(":", 1)[0].lower()
        if scheme in ("data", "blob", "about"):
            await route.continue_()
            return
        try:
            document = request.is_navigation_request() and request.frame.parent_frame is None
        except Exception:  # noqa: BLE001 - a request with no frame (a worker's)
            document = False
        try:
            headers = await request.all_headers()
            body = request.post_data_buffer
            loop = asyncio.get_running_loop()
            status, reply_headers, content = await loop.run_in_executor(
                engine.network,
                self._forward,
                request.method,
                url,
                headers,
                body,
                deadline,
                not document,
            )
        except _Blocked:
            await route.abort("blockedbyclient")
            return
        except _Redirect as redirect:
            redirects[request.frame.page] = redirect.target
            await route.abort("aborted")
            return
        except Exception:  # noqa: BLE001 - a failed subresource fails as in a browser
            await route.abort("failed")
            return
        await route.fulfill(status=status, headers=reply_headers, body=content)

    def _forward(
        self,
        method: str,
        url: str,
        headers: dict,
        body: bytes | None,
        deadline: float,
        follow: bool = True,
    ) -> tuple[int, dict, bytes]:
        """One request of the page, sent by this process (blocking; in a network thread), its
        redirects followed by hand with every hop checked (or, unless *follow*, raised as
        :class:`_Redirect`)."""
        from urllib.parse import urljoin

        import requests

        from ..api._http_client import MAX_REDIRECTS, read_body, socket_timeouts

        sent = {
            k: v
            for k, v in headers.items()
            if k.lower() not in _HOP_HEADERS and not k.startswith(":")
        }
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            host = self._check(current)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Blocked(current)
            session = self._http()
            response = session.request(
                method,
                current,
                headers=sent,
                data=body,
                allow_redirects=False,
                stream=True,
                timeout=socket_timeouts(remaining),
            )
            try:
                target = session.get_redirect_target(response)
                if getattr(response, "invalid_location", False):
                    raise ValueError("the server redirected to an invalid URL")
                if not target:
                    content, _too_big = read_body(
                        response, max_bytes=self.options.max_bytes, deadline=deadline
                    )
                    reply = {
                        k: v for k, v in response.headers.items() if k.lower() not in _HOP_HEADERS
                    }
                    return response.status_code, reply, content
                status = response.status_code
            finally:
                response.close()
            following = requests.utils.requote_uri(urljoin(current, target))
            if not follow:
                raise _Redirect(following)
            if status == 303 or (status in (301, 302) and method == "POST"):
                method, body = ("HEAD" if method == "HEAD" else "GET"), None
                sent = {k: v for k, v in sent.items() if not k.lower().startswith("content-")}
            if self._check(following) != host:  # another host: the first one's credentials stay
                sent = {
                    k: v for k, v in sent.items() if k.lower() not in ("cookie", "authorization")
                }
            current = following
        raise ValueError(f"too many redirects (more than {MAX_REDIRECTS})")

    def _check(self, url: str) -> str:
        """The host *url* goes to, when the network guard lets it; else :class:`_Blocked`."""
        from ..api._netguard import describe_host, is_proxied, request_target

        try:
            scheme, host, port = request_target(url)
        except ValueError:
            raise _Blocked(url) from None
        if scheme not in ("http", "https"):
            raise _Blocked(url)
        if not self.options.allow_private_network:
            try:
                if describe_host(host, port, resolve=not is_proxied(url)):
                    raise _Blocked(url)
            except OSError:
                raise _Blocked(url) from None
        return host

    async def _socket(self, websocket: Any) -> None:
        """A WebSocket of the page: refused. This process cannot answer it through the guarded
        session, and the browser's own connection would go to its proxy, which leads nowhere."""
        await websocket.close()

    # -- back in the calling thread ----------------------------------------------------------

    def _page(self, url: str, found: dict, deadline: float, cancel: Any) -> FetchedPage:
        from .. import pages

        if "error" in found:
            return FetchedPage(url=url, ok=False, error=found["error"])
        status = found.get("status")
        facts = {
            "final_url": found.get("final_url"),
            "status": status,
            "content_type": (found.get("content_type") or "").split(";")[0].strip() or None,
        }
        if status is not None and status >= 400:
            from http import HTTPStatus

            try:
                reason = HTTPStatus(status).phrase
            except ValueError:
                reason = ""
            return FetchedPage(url=url, ok=False, error=f"HTTP {status} {reason}".rstrip(), **facts)
        notes: list[str] = []
        if "html" in found:
            body = found["html"].encode("utf-8", "surrogatepass")
            kind, content_type = "html", "text/html; charset=utf-8"
        else:
            body = found.get("body") or b""
            content_type = found.get("content_type") or ""
            kind = pages.content_kind(content_type.split(";")[0].strip().lower())
            if kind is None:
                return FetchedPage(
                    url=url,
                    ok=False,
                    error=f"unsupported content type {facts['content_type']}",
                    **facts,
                )
        if len(body) > self.options.max_bytes:
            body = body[: self.options.max_bytes]
            notes.append(f"Stopped reading after {self.options.max_bytes:,} bytes (maxBytes)")
        try:
            read = pages.read(
                body,
                kind=kind,
                content_type=content_type,
                url=found.get("final_url") or url,
                deadline=deadline,
                cancel=cancel,
            )
        except pages.Unreadable as exc:
            return FetchedPage(url=url, ok=False, error=str(exc), **facts)
        except InterruptedError:
            return FetchedPage(url=url, ok=False, error="cancelled", **facts)
        notes += [n for n in read.notes if "the direct fetcher does not run" not in n]
        return FetchedPage(
            url=url,
            ok=True,
            title=read.title,
            text=read.text,
            notes=tuple(notes),
            links=read.links,
            degraded=read.degraded,
            **facts,
        )


class _InFlight:
    """The requests a page has open, and when that last changed."""

    def __init__(self) -> None:
        self.open = 0
        self.changed = time.monotonic()

    def started(self, _request: Any) -> None:
        self.open += 1
        self.changed = time.monotonic()

    def ended(self, _request: Any) -> None:
        self.open = max(0, self.open - 1)
        self.changed = time.monotonic()


#: A page has settled when no request of it was open for this long.
QUIET_SECONDS = 0.15


async def _settle(page: Any, in_flight: _InFlight, seconds: float) -> None:
    """Wait until the page's network has been quiet for :data:`QUIET_SECONDS` (its scripts
    fetched what they draw), at most *seconds*."""
    import asyncio

    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if in_flight.open == 0 and time.monotonic() - in_flight.changed >= QUIET_SECONDS:
            return
        await asyncio.sleep(0.03)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _navigation_error(exc: BaseException, timeout: float) -> str:
    text = str(exc)
    if "Timeout" in type(exc).__name__ or "Timeout" in text.split("\n", 1)[0]:
        return f"timed out after {timeout:g} s while rendering"
    if "Download is starting" in text:
        return "the URL is a download, which the browser fetcher refuses"
    if "ERR_BLOCKED_BY_CLIENT" in text:
        return "refused: the page's host is private or could not be checked; set \"allowPrivateNetwork\": true in the browser provider's options to allow it"
    if "ERR_FAILED" in text or "net::" in text:
        code = text.split("net::", 1)[1].split()[0] if "net::" in text else "ERR_FAILED"
        return f"the page could not be loaded ({code})"
    return f"the page could not be rendered ({_one_line(exc)})"


def _create(config: ProviderConfig) -> BrowserProvider:
    return BrowserProvider(config.name, config.options or BrowserOptions())


BROWSER = ProviderType(
    name="browser",
    label="Local browser",
    factory=_create,
    options_class=BrowserOptions,
    fetch=Fetch(modes={"text"}, local=True, javascript=True),
    setup_check=lambda options: setup_problem(getattr(options, "executable_path", None)),
)


@hookimpl
def register_provider_types(register):
    """Register the ``browser`` provider type (keyless; serves ``web_fetch`` when configured)."""
    register(BROWSER)
