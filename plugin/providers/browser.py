"""The ``browser`` fetcher: pages read in a local headless Chromium, keyless, so that pages drawn
by JavaScript (application shells) give their text.

One browser per executable, started on the first call that needs it (Playwright for Python
driving a system Chromium or Chrome, or Playwright's own browser) and shared by every call; a
browser is started again only once it has died, never under a call still using it. Each call
gets a browser context of its own, so its pages render in renderer processes of their own (no
cookie or storage outlives the call unless ``keepStorage`` asks); its pages load in parallel, at
most ``maxPages`` at once, and each URL succeeds or fails on its own by the call's deadline (a
page whose scripts never stop is stopped and read; a renderer that crashed fails its URL only).

The network: each call's context has a proxy of its own, :class:`._browser_proxy.GuardedProxy`,
and the browser no other way out. Every request the page makes (the document, scripts, XHR and
fetch, images, frames, workers, every redirect hop, CORS preflights) goes through it and on
through the same guarded HTTP session as the direct fetcher (the one host rule of
:mod:`pi_web_tools.api._netguard` before it, the connected socket checked after it, the
environment's proxies and CA bundle as ``requests`` honours them, ``maxBytes`` per response, the
call's deadline). Answers come back exactly as the server sent them, so the browser's
same-origin policy holds. The browser's launch proxy is a loopback port this process holds
without listening, and WebRTC may use nothing but a proxy, so what no context proxy carries
reaches no host. WebSockets and downloads are refused; service workers are blocked; popups
are blocked (Chromium's popup blocker, which Playwright turns off, is on) and any window a page
opens anyway is closed at once.

Memory: on Linux each renderer's resident memory is watched (every :data:`WATCH_SECONDS`) and a
renderer past :data:`RENDERER_MEMORY_BYTES` is killed: its page fails, named, and the call's
other pages and every other call go on. The data segment of every renderer is also capped by
the kernel (``RLIMIT_DATA``, twice that) as a backstop between two looks.

The rendered DOM then goes through the same page pipeline as every other HTML body
(:func:`pi_web_tools.pages.read`): extraction, paging, cache and budget.

Nothing here is imported until a call needs it.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import signal
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
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

__all__ = [
    "BROWSER",
    "RENDERER_MEMORY_BYTES",
    "BrowserOptions",
    "BrowserProvider",
    "find_browser",
    "shutdown",
]

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
#: Another, naming each browser launched (this process's id and a number), to find its processes.
LAUNCH_MARKER = "--pi-web-tools-launch"


LAUNCH_ARGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--js-flags=--max-old-space-size=512",
    # WebRTC only through a proxy, which leads nowhere or to the call's guarded proxy (which
    # connects to nothing before a whole HTTP request): no STUN or TURN packet of a page's
    # reaches any address.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    # A page's frames of other sites render in the page's own process, so the per-renderer
    # memory limit bounds a page with all its frames: with site isolation each cross-site
    # frame had a renderer of its own (150 iframes: 153 renderers, over 30 GB in all, and the
    # call missed its deadline). Each call's context is fresh (no cookies or storage of the
    # user's), and the same-origin policy is still enforced (CORS and ORB in the browser
    # process; frame access in the renderer).
    "--disable-site-isolation-trials",
)
DEFAULT_MAX_BYTES = 5_000_000
#: The resident memory at which a renderer is stopped (its page fails; the rest goes on).
RENDERER_MEMORY_BYTES = 1024 * 1024 * 1024
#: How often the renderers' memory is looked at.
WATCH_SECONDS = 0.1
#: Chromium's process-singleton socket is ``$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket``
#: and a Unix socket path holds at most 107 bytes (103 on macOS): a longer TMPDIR and the
#: browser exits at start (``Socket path too long``). The socket's name takes 45 bytes.
SOCKET_NAME_BYTES = 45
SOCKET_PATH_BYTES = 103
#: How long the DOM of a settled page is waited for before its scripts are stopped.
DOM_SECONDS = 2.0
_INSTALL_EXTRA = "browser"


@attrs.frozen(kw_only=True)
class BrowserOptions(CommonOptions):
    """Options of a ``browser`` fetcher."""

    executable_path: str | None = option(None, runs=True)
    allow_private_network: bool = option(False, reaches=True)
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
    import importlib.util

    try:
        import playwright  # noqa: F401
    except ImportError:
        missing = "Playwright"
    else:  # the proxy's certificate is made with it (found, not imported, here)
        missing = None if importlib.util.find_spec("cryptography") else "cryptography"
    if missing is not None:
        from pi_hostspec.install import install_command

        return (
            f"the browser fetcher needs {missing}; install it with: "
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


# --------------------------------------------------------------------------- launching


def browser_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the browser starts with: this process's, with ``TMPDIR`` moved to the
    system's ``/tmp`` when the given one is too long for Chromium's socket path (see
    :data:`SOCKET_PATH_BYTES`). Chromium makes a private folder there (mode 0700) for its
    socket; nothing else of it changes place."""
    environ = dict(os.environ if environ is None else environ)
    tmp = environ.get("TMPDIR")
    if (
        tmp
        and len(os.fsencode(tmp.rstrip("/"))) + SOCKET_NAME_BYTES > SOCKET_PATH_BYTES
        and os.path.isdir("/tmp")
        and os.access("/tmp", os.W_OK | os.X_OK)
    ):
        environ["TMPDIR"] = "/tmp"
    return environ


def launch_problem(exc: BaseException, executable: str) -> str:
    """Why the browser did not start, and what to do, from Playwright's error (which carries
    the browser's own log) and this process's limits."""
    text = str(exc)
    limit = _address_space_limit()
    if "Socket path too long" in text:
        return (
            "the browser did not start: the temporary directory's path is too long for its "
            f"socket (TMPDIR is {len(os.environ.get('TMPDIR', ''))} characters); set TMPDIR to "
            "a shorter path"
        )
    if limit is not None:
        return (
            f"the browser did not start: this process may use at most {limit / 2**30:.1f} GB "
            "of address space (ulimit -v), and Chromium reserves far more address space than "
            "it uses (it needs about 56 GB of it to start); run the agent without that limit "
            "(ulimit -v unlimited)"
        )
    fatal = next(
        (line.split("] ", 1)[-1].strip() for line in text.splitlines() if ":FATAL:" in line),
        None,
    )
    cause = fatal or _one_line(exc)
    return (
        f"the browser did not start ({cause[:200]}); check that it runs: "
        f"{executable} --headless --no-sandbox --dump-dom about:blank"
    )


def _address_space_limit() -> int | None:
    """This process's address-space limit in bytes (``ulimit -v``), or ``None`` when there is
    none (or no way to tell)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def _children(pid: int) -> list[int]:
    """The child processes of *pid* (Linux), or ``[]``."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found.extend(int(child) for child in listing.read().split())
    except (OSError, ValueError):
        pass
    return found


def _command_line(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as source:
            return source.read()
    except OSError:
        return b""


def _launch_mark(launch: int) -> str:
    """The switch that names browser number *launch* of this process."""
    return f"{LAUNCH_MARKER}={os.getpid()}.{launch}"


def _find_launched(marker: bytes) -> int | None:
    """The process whose command line carries *marker* (Linux), or ``None``."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for pid in pids:
        if marker in _command_line(pid).split(b"\0"):
            return pid
    return None


def _resident_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as source:
        return int(source.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Browser:
    """One launched browser: the Playwright handle, its renderers' parent processes (Linux),
    and why each of its pages that crashed did (``Target.targetCrashed``)."""

    def __init__(self, handle: Any, executable: str, sandboxed: bool):
        self.handle = handle
        self.executable = executable
        self.sandboxed = sandboxed
        self.zygotes: list[int] = []
        self.crashes: dict[str, tuple[str, int]] = {}

    @property
    def alive(self) -> bool:
        return self.handle.is_connected()

    async def watch_crashes(self) -> None:
        """Learn the status of every target that crashes (``killed`` with code 9: SIGKILL, by
        the memory watch or the kernel's out-of-memory killer)."""
        session = await self.handle.new_browser_cdp_session()
        session.on(
            "Target.targetCrashed",
            lambda event: self.crashes.__setitem__(
                event.get("targetId", ""), (event.get("status", ""), event.get("errorCode", 0))
            ),
        )
        await session.send("Target.setDiscoverTargets", {"discover": True})

    def find_renderer_parents(self, launch: int) -> None:
        """The zygote processes the browser forks its renderers from (Linux), each given the
        data-segment backstop (``RLIMIT_DATA``, twice the memory limit) that its renderers
        inherit."""
        try:
            import resource

            prlimit = resource.prlimit
        except (ImportError, AttributeError):
            return
        pid = _find_launched(_launch_mark(launch).encode())
        if pid is None:
            return
        for _ in range(20):
            self.zygotes = [
                child
                for child in _children(pid)
                if b"--type=zygote" in _command_line(child)
                and b"--no-zygote-sandbox" not in _command_line(child)
            ]
            if self.zygotes:
                break
            time.sleep(0.05)
        backstop = 2 * RENDERER_MEMORY_BYTES
        for zygote in self.zygotes:
            try:
                prlimit(zygote, resource.RLIMIT_DATA, (backstop, backstop))
            except (OSError, ValueError):
                pass

    def renderers(self) -> list[int]:
        """The renderer processes now running (Linux)."""
        return [
            child
            for zygote in self.zygotes
            for child in _children(zygote)
            if b"--type=renderer" in _command_line(child)
        ]


class _MemoryWatch:
    """A thread that, while calls render, kills any renderer of the engine's browsers whose
    resident memory passed :data:`RENDERER_MEMORY_BYTES` (Linux; elsewhere it does nothing).
    Chromium then reports that page's target crashed, ``killed``; the page's URL says why."""

    def __init__(self, engine: _Engine):
        self.engine = engine
        self.busy = threading.Event()
        #: The most resident memory seen in one renderer (for measurements).
        self.peak = 0
        threading.Thread(target=self._run, name="pi-web-browser-memory", daemon=True).start()

    def _run(self) -> None:
        while True:
            self.busy.wait()
            try:
                browsers = list(self.engine.browsers.values())
            except RuntimeError:  # changed while copied: look again next time
                browsers = []
            for browser in browsers:
                for pid in browser.renderers():
                    try:
                        used = _resident_bytes(pid)
                    except (OSError, ValueError, IndexError):
                        continue
                    self.peak = max(self.peak, used)
                    if used > RENDERER_MEMORY_BYTES:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except OSError:
                            pass
            time.sleep(WATCH_SECONDS)


# --------------------------------------------------------------------------- the engine


class _Engine:
    """The browsers of this process, on an event loop of its own thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="pi-web-browser", daemon=True
        )
        self.thread.start()
        self.playwright: Any = None
        self.browsers: dict[str, _Browser] = {}
        self.launches = 0
        self.starting: asyncio.Lock | None = None
        self.network = ThreadPoolExecutor(max_workers=16, thread_name_prefix="browser-net")
        self.storage: dict[str, Any] = {}
        self.calls = 0
        self.counting = threading.Lock()
        self.memory = _MemoryWatch(self) if sys.platform.startswith("linux") else None
        # The browser's own proxy: a loopback port this process holds without listening, so
        # every connection the browser would open outside a call's context is refused at once.
        self.nowhere = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.nowhere.bind(("127.0.0.1", 0))

    def run(self, coroutine: Any) -> Any:
        """A concurrent future of *coroutine* run on the engine's loop."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def call_started(self) -> None:
        """A call renders now: the memory watch looks while any does."""
        with self.counting:
            self.calls += 1
            if self.memory is not None:
                self.memory.busy.set()

    def call_ended(self) -> None:
        with self.counting:
            self.calls -= 1
            if self.calls <= 0 and self.memory is not None:
                self.memory.busy.clear()

    async def browser(self, executable: str) -> _Browser:
        """The running browser for *executable*, started if there is none or it has died (a
        browser still running is never closed here: other calls may be using it)."""
        if self.starting is None:
            self.starting = asyncio.Lock()
        async with self.starting:
            running = self.browsers.get(executable)
            if running is not None and running.alive:
                return running
            self.browsers.pop(executable, None)
            if self.playwright is None:
                from playwright.async_api import async_playwright

                self.playwright = await async_playwright().start()
            self.launches += 1
            launched = await self._launch(executable, self.launches)
            self.browsers[executable] = launched
            return launched

    async def _launch(self, executable: str, launch: int) -> _Browser:
        from ._browser_proxy import tls_identity

        _context, pin = await asyncio.get_running_loop().run_in_executor(self.network, tls_identity)
        options = {
            "executable_path": executable,
            "headless": True,
            "args": [
                *LAUNCH_ARGS,
                # The certificate of the call's proxy, which answers every HTTPS tunnel.
                f"--ignore-certificate-errors-spki-list={pin}",
                f"{MARKER}={os.getpid()}",
                _launch_mark(launch),
            ],
            # Playwright switches Chromium's popup blocker off; on, a page's window.open,
            # target=_blank link or form (no user gesture in a headless page) opens nothing: a
            # page that opened hundreds of cross-site popups had a renderer each (123 renderers,
            # over 30 GB, past every per-renderer limit).
            "ignore_default_args": ["--disable-popup-blocking"],
            "handle_sigint": False,
            "env": browser_environment(),
            # Loopback too (Playwright adds <-loopback> to the bypass list).
            "proxy": {"server": f"http://127.0.0.1:{self.nowhere.getsockname()[1]}"},
        }
        # Playwright turns Chromium's sandbox off unless asked. Chromium refuses it as root (a
        # container, typically), and cannot have it where the kernel allows it no namespaces
        # (a container's default seccomp profile): there it runs without.
        sandboxed = not (hasattr(os, "geteuid") and os.geteuid() == 0)
        try:
            handle = await self.playwright.chromium.launch(chromium_sandbox=sandboxed, **options)
        except Exception as exc:
            if not sandboxed or "sandbox" not in str(exc).lower():
                raise
            sandboxed = False
            handle = await self.playwright.chromium.launch(chromium_sandbox=False, **options)
        launched = _Browser(handle, executable, sandboxed)
        try:
            await launched.watch_crashes()
        except Exception:  # noqa: BLE001 - crashes are then named without their cause
            pass
        if self.memory is not None:
            await asyncio.get_running_loop().run_in_executor(
                self.network, launched.find_renderer_parents, launch
            )
        return launched

    async def stop(self) -> None:
        browsers, self.browsers = list(self.browsers.values()), {}
        for browser in browsers:
            try:
                await asyncio.wait_for(browser.handle.close(), 5)
            except Exception:  # noqa: BLE001 - it may be gone already
                pass
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
    """Close the browsers and their driver (also run at exit): no browser outlives the process."""
    global _engine
    with _engine_lock:
        engine, _engine = _engine, None
    if engine is None:
        return
    try:
        engine.run(engine.stop()).result(10)
    except Exception:  # noqa: BLE001 - exiting regardless
        pass
    engine.loop.call_soon_threadsafe(engine.loop.stop)
    engine.network.shutdown(wait=False, cancel_futures=True)
    engine.nowhere.close()


# --------------------------------------------------------------------------- the provider


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
        from ..api._netguard import allow_hint, guarded_adapter

        adapter = (
            None
            if self.options.allow_private_network
            else guarded_adapter(hint=allow_hint(self.name), pool_maxsize=32, max_retries=0)
        )
        return new_session(adapter=adapter, keep_cookies=False)

    def close(self) -> None:
        """Release the HTTP session (the browser stays for the process)."""
        self._session.close()

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Render every URL (at most ``maxPages`` at once) and read each through the page
        pipeline; each URL is a page, or its own failure, by the call's deadline."""
        urls = list(request.urls)
        if not urls:
            return FetchResponse(pages=())
        problem = setup_problem(self.options.executable_path)
        if problem is not None:
            raise ProviderError(f"{self.name}: {problem}", provider=self.name)
        from .. import pages
        from ._browser_proxy import GuardedProxy

        pages.prewarm()
        deadline = time.monotonic() + self.timeout
        cancel = getattr(ctx, "cancel", None)
        engine = _get_engine()
        proxy = GuardedProxy(
            self._http, max_bytes=self.options.max_bytes, deadline=deadline, cancel=cancel
        )
        done: dict[int, FetchedPage] = {}
        engine.call_started()
        try:
            future = engine.run(self._render_all(engine, urls, deadline, cancel, proxy, done))
            while True:
                try:
                    future.result(0.05)
                    break
                except FutureTimeout:  # TimeoutError from Python 3.11 on; not on 3.10
                    pass
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    return self._answer(urls, done, "cancelled")
                if time.monotonic() > deadline + 2.0:  # a page that never answered: it alone fails
                    future.cancel()
                    break
            return self._answer(urls, done, f"timed out after {self.timeout:g} s while rendering")
        finally:
            engine.call_ended()
            proxy.close()

    @staticmethod
    def _answer(urls: list[str], done: dict[int, FetchedPage], missing: str) -> FetchResponse:
        return FetchResponse(
            pages=tuple(
                done.get(index) or FetchedPage(url=url, ok=False, error=missing)
                for index, url in enumerate(urls)
            )
        )

    # -- in the engine's loop --------------------------------------------------------------

    async def _render_all(
        self,
        engine: _Engine,
        urls: list[str],
        deadline: float,
        cancel: Any,
        proxy: Any,
        done: dict[int, FetchedPage],
    ) -> None:
        """Every URL rendered (at most ``maxPages`` at once) in a context of the call's own,
        and read into *done* as soon as it is rendered, while the others still render."""
        executable = find_browser(self.options.executable_path) or ""
        try:
            browser = await engine.browser(executable)
        except Exception as exc:  # noqa: BLE001 - a browser that will not start
            message = launch_problem(exc, executable)
            done.update(
                (index, FetchedPage(url=url, ok=False, error=message))
                for index, url in enumerate(urls)
            )
            return
        try:
            context = await browser.handle.new_context(
                service_workers="block",
                accept_downloads=False,
                proxy={"server": proxy.url},
                storage_state=engine.storage.get(self.name) if self.options.keep_storage else None,
            )
        except Exception as exc:  # noqa: BLE001 - the browser died as the call began
            message = f"the browser could not open a page ({_one_line(exc)})"
            done.update(
                (index, FetchedPage(url=url, ok=False, error=message))
                for index, url in enumerate(urls)
            )
            return
        try:
            limit = asyncio.Semaphore(self.options.max_pages)

            async def one(index: int, url: str) -> None:
                async with limit:
                    try:
                        found = await asyncio.wait_for(
                            self._render(browser, context, url, deadline, proxy),
                            max(0.1, deadline - time.monotonic()),
                        )
                    except asyncio.TimeoutError:
                        found = {"error": f"timed out after {self.timeout:g} s while rendering"}
                done[index] = await asyncio.get_running_loop().run_in_executor(
                    engine.network, self._page, url, found, deadline, cancel
                )

            await asyncio.gather(*(one(index, url) for index, url in enumerate(urls)))
            if self.options.keep_storage:
                try:
                    engine.storage[self.name] = await asyncio.wait_for(context.storage_state(), 5)
                except Exception:  # noqa: BLE001 - a context that died keeps nothing
                    pass
        finally:
            try:
                await asyncio.wait_for(context.close(), 5)
            except BaseException:  # noqa: BLE001 - a context that will not close: left to the
                pass  # browser (closing the browser would fail every other call)

    async def _render(
        self, browser: _Browser, context: Any, url: str, deadline: float, proxy: Any
    ) -> dict:
        """One URL rendered: its status, final URL, content type and DOM (or body), or
        ``{"error": ...}``."""
        from ..api._http_client import MAX_REDIRECTS

        page = await context.new_page()
        watch = _PageWatch(page)
        # The page's own protocol session and target id (to stop its scripts, to learn why it
        # crashed), opened beside the navigation rather than before it.
        protocol = _taken(asyncio.ensure_future(_page_protocol(context, page)))
        try:
            remaining = max(0.1, deadline - time.monotonic())
            try:
                response = await page.goto(
                    url, wait_until="domcontentloaded", timeout=remaining * 1000
                )
            except Exception as exc:  # noqa: BLE001 - navigation errors are the page's
                if "ERR_ABORTED" not in str(exc) or watch.crashed:
                    return {"error": await self._failure(exc, browser, protocol, proxy, watch)}
                # The page sent itself elsewhere before its document was in (a script's
                # location change): the page is where that navigation ends.
                try:
                    await page.wait_for_load_state(
                        "domcontentloaded",
                        timeout=max(0.1, deadline - time.monotonic()) * 1000,
                    )
                except Exception as later:  # noqa: BLE001
                    return {"error": await self._failure(later, browser, protocol, proxy, watch)}
                response = watch.document
            if page.url.startswith("chrome-error:"):  # the navigation failed
                return {"error": await self._navigation_failure(proxy, watch, None)}
            if response is None:
                return {"error": "the browser loaded nothing"}
            hops, earlier = 0, response.request.redirected_from
            while earlier is not None:
                hops, earlier = hops + 1, earlier.redirected_from
            if hops > MAX_REDIRECTS:
                return {"error": f"too many redirects (more than {MAX_REDIRECTS})"}
            found: dict = {
                "status": response.status,
                "final_url": page.url,
                "content_type": (await response.all_headers()).get("content-type", ""),
            }
            if response.status >= 400:
                return found
            settle = min(self.options.settle_seconds, max(0.0, deadline - time.monotonic() - 0.5))
            await _settle(page, watch, settle)
            if "html" in found["content_type"] or not found["content_type"]:
                found["html"], stopped = await _read_dom(page, protocol, watch, deadline)
                if stopped:
                    found["note"] = (
                        "The page's scripts were still running when it was read; they were stopped"
                    )
            else:
                found["body"] = await response.body()
            # A later navigation failed: the error page is in, or the guard refused the page's
            # next document and its error page is still on its way.
            refused = any(proxy.refusal(url) for url, _failure in watch.failed_navigations)
            if refused or page.url.startswith("chrome-error:"):
                return {"error": await self._navigation_failure(proxy, watch, None)}
            found["final_url"] = page.url
            return found
        except Exception as exc:  # noqa: BLE001 - the renderer crashed, or the page went away
            return {"error": await self._failure(exc, browser, protocol, proxy, watch)}
        finally:
            try:
                await asyncio.wait_for(page.close(), 2)
            except BaseException:  # noqa: BLE001 - the context's close ends it
                pass

    async def _failure(
        self, exc: BaseException, browser: _Browser, protocol: Any, proxy: Any, watch: Any
    ) -> str:
        """Why a page failed: its renderer crashed (over the memory limit, or otherwise), the
        guard refused its document, or the browser's own error."""
        if watch.crashed or "crash" in str(exc).lower():
            _session, target = await _protocol_of(protocol)
            for _ in range(20):  # the browser's crash report may follow the page's event
                if target in browser.crashes:
                    break
                await asyncio.sleep(0.05)
            status, code = browser.crashes.get(target or "", ("", 0))
            if status == "killed" and code == signal.SIGKILL:
                return (
                    "the page was stopped: it used more than "
                    f"{RENDERER_MEMORY_BYTES // 2**20:,} MB of memory (the browser fetcher's "
                    "limit per page)"
                )
            return "the page's renderer crashed"
        if "Timeout" in type(exc).__name__:
            return f"timed out after {self.timeout:g} s while rendering"
        return await self._navigation_failure(proxy, watch, exc)

    async def _navigation_failure(self, proxy: Any, watch: Any, exc: BaseException | None) -> str:
        """The failed navigation's reason: the guard's refusal or the request's failure as the
        proxy saw it, else the browser's error."""
        for _ in range(NAVIGATION_REPORT_WAITS):  # the failure's own report may come later
            if any(failure != ABORTED for _url, failure in watch.failed_navigations):
                break
            await asyncio.sleep(0.05)
        failed = watch.failed_navigations
        # The navigation that ended the page may fail before the one it replaced reports its
        # abort, so a refusal of any of them is the reason, then the latest real failure.
        for url, _failure in reversed(failed):
            refusal = proxy.refusal(url)
            if refusal is not None:
                return refusal
        reasons = [(url, failure, proxy.reason(url)) for url, failure in reversed(failed)]
        for _url, failure, reason in reasons:
            if reason is not None:
                return f"the page could not be loaded ({reason})"
        if failed and exc is None:
            real = [failure for _url, failure, _ in reasons if failure and failure != ABORTED]
            failure = (real or [reasons[0][1]])[0]
            return f"the page could not be loaded ({failure or 'a navigation failed'})"
        if exc is None:
            return "the page could not be loaded"
        return _navigation_error(exc, self.timeout)

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
        notes: list[str] = [found["note"]] if found.get("note") else []
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


#: A navigation that another one replaced fails with this error.
ABORTED = "net::ERR_ABORTED"
#: How many 50 ms waits a failed page's navigation failure may take to be reported.
NAVIGATION_REPORT_WAITS = 6


class _PageWatch:
    """What a page did: the requests it has open (and when that last changed), whether its
    renderer crashed, its main frame's last document response and its failed navigations
    (URL, error), in the order they were reported."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.open = 0
        self.changed = time.monotonic()
        self.crashed = False
        self.failed_navigations: list[tuple[str, str | None]] = []
        self.document: Any = None
        page.on("request", self._started)
        page.on("response", self._response)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._failed)
        page.on("crash", self._crash)
        page.on("popup", self._popup)

    @staticmethod
    def _popup(popup: Any) -> None:
        """A window the page opened anyway (Chromium's popup blocker lets one through after
        each of Playwright's own evaluations, which count as a user gesture): closed at once."""
        _taken(asyncio.ensure_future(popup.close()))

    def _started(self, _request: Any) -> None:
        self.open += 1
        self.changed = time.monotonic()

    def _ended(self, _request: Any) -> None:
        self.open = max(0, self.open - 1)
        self.changed = time.monotonic()

    def _response(self, response: Any) -> None:
        try:
            request = response.request
            if request.is_navigation_request() and request.frame == self.page.main_frame:
                self.document = response
        except Exception:  # noqa: BLE001 - a response of a frame that is gone
            pass

    def _failed(self, request: Any) -> None:
        self._ended(request)
        try:
            if request.is_navigation_request() and request.frame == self.page.main_frame:
                self.failed_navigations.append((request.url, request.failure))
        except Exception:  # noqa: BLE001 - a request of a frame that is gone
            pass

    def _crash(self, _page: Any) -> None:
        self.crashed = True


#: A page has settled when no request of it was open for this long.
QUIET_SECONDS = 0.15


async def _settle(page: Any, watch: _PageWatch, seconds: float) -> None:
    """Wait until the page's network has been quiet for :data:`QUIET_SECONDS` (its scripts
    fetched what they draw), at most *seconds*."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if watch.crashed:
            return
        if watch.open == 0 and time.monotonic() - watch.changed >= QUIET_SECONDS:
            return
        await asyncio.sleep(0.03)


async def _read_dom(
    page: Any, protocol: Any, watch: _PageWatch, deadline: float
) -> tuple[str, bool]:
    """The page's DOM as HTML, and whether its scripts had to be stopped for it. A page whose
    scripts hold its thread (a loop) does not answer: its running script is terminated
    (``Runtime.terminateExecution``, as often as it takes) and the DOM read through the
    protocol's DOM domain in between (no script world needed, which a termination can take
    down with it)."""
    reading = _taken(asyncio.ensure_future(page.content()))
    try:
        return await asyncio.wait_for(
            asyncio.shield(reading), min(DOM_SECONDS, max(0.1, deadline - time.monotonic()))
        ), False
    except asyncio.TimeoutError:
        reading.cancel()
        session, _target = await _protocol_of(protocol)
        if session is None:
            raise
    attempt: asyncio.Future | None = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if attempt is not None:
                attempt.cancel()
            raise asyncio.TimeoutError
        try:
            await asyncio.wait_for(session.send("Runtime.terminateExecution"), min(1, remaining))
        except asyncio.TimeoutError:
            continue
        except Exception:  # noqa: BLE001 - one still in progress, or the page is gone
            if watch.crashed:
                raise
        if attempt is None:  # one reading at a time, waited for across terminations
            attempt = _taken(asyncio.ensure_future(_outer_html(session)))
        try:
            return await asyncio.wait_for(asyncio.shield(attempt), min(0.5, remaining)), True
        except asyncio.TimeoutError:
            pass
        except Exception:
            if watch.crashed:
                raise
            attempt = None
            await asyncio.sleep(0.1)


def _taken(task: asyncio.Future) -> asyncio.Future:
    """*task*, whose outcome is taken whether or not anyone awaits it (never "exception was
    never retrieved")."""
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return task


async def _page_protocol(context: Any, page: Any) -> tuple[Any, str | None]:
    """A DevTools protocol session of *page*, and its target id."""
    session = await context.new_cdp_session(page)
    return session, (await session.send("Target.getTargetInfo"))["targetInfo"]["targetId"]


async def _protocol_of(protocol: asyncio.Future) -> tuple[Any, str | None]:
    """The page's session and target id, or ``(None, None)`` when they could not be had (a
    page that crashed at once)."""
    try:
        return await asyncio.wait_for(asyncio.shield(protocol), 2)
    except Exception:  # noqa: BLE001
        return None, None


async def _outer_html(session: Any) -> str:
    """The document's HTML, read through the DevTools protocol's DOM domain."""
    root = await session.send("DOM.getDocument", {"depth": 0})
    answer = await session.send("DOM.getOuterHTML", {"nodeId": root["root"]["nodeId"]})
    return answer["outerHTML"]


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _navigation_error(exc: BaseException, timeout: float) -> str:
    text = str(exc)
    if "Timeout" in type(exc).__name__ or "Timeout" in text.split("\n", 1)[0]:
        return f"timed out after {timeout:g} s while rendering"
    if "Download is starting" in text:
        return "the URL is a download, which the browser fetcher refuses"
    if "net::" in text:
        code = text.split("net::", 1)[1].split()[0]
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
