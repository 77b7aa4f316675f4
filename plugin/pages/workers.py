"""Bounded extraction: :func:`pi_web_tools.pages.content.extract_html` run in worker processes that a
deadline, a cancellation and a memory limit can stop, whatever extractor sits inside.

:func:`extract_html` here takes the same arguments and returns the same tuple as the content
module's (``(title, text, notes, ...)``), plus a deadline and a cancellation event.

A hostile page (megabytes of unclosed ``<p>``) once took an in-process extractor minutes and
gigabytes. Here each extraction runs in a warm worker process (started on first use, kept for
the next pages) with an address-space limit of :data:`WORKER_MEMORY_BYTES`; at most
:data:`MAX_WORKERS` run at once per process, so extraction never holds more than
``MAX_WORKERS * WORKER_MEMORY_BYTES``. A worker still busy at the call's deadline (less the time
the fallback needs), or when the call is cancelled, is killed (SIGKILL) and replaced on next use;
the page then falls back to its whole-page text (:func:`pi_web_tools.pages.content.html_to_text`,
linear time, of its first :data:`FALLBACK_CHARS` characters).

A worker also bounds itself: its CPU-time limit is raised to each task's time budget (plus a
margin) so that even an orphaned worker dies, and it exits when its parent closes the pipe.
Where processes cannot be bounded this way (no ``resource`` module: Windows) or a worker cannot
start, extraction runs in the calling thread as before.
"""

from __future__ import annotations

import atexit
import json
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "FALLBACK_CHARS",
    "IN_PROCESS",
    "MAX_WORKERS",
    "TASKS_PER_WORKER",
    "WORKER_MEMORY_BYTES",
    "RESULT_EXTRAS",
    "extract_html",
    "prewarm",
    "shutdown",
    "worker_main",
]

#: Address-space limit of one worker (its Python, the extractor's libraries and one page's parse).
WORKER_MEMORY_BYTES = 512 * 1024 * 1024
#: Workers that may run at once in one process (more pages wait for a free one, within their deadline).
MAX_WORKERS = 2
#: Extract in the calling thread instead (unbounded; for tests that patch the extractor).
IN_PROCESS = False
#: A worker is retired after this many pages (whatever its libraries keep stays bounded).
TASKS_PER_WORKER = 200
_POLL = 0.05
_HEADER = struct.Struct(">I")
_PATH_ENV = "PI_WEB_WORKER_PATH"
_MEMORY_ENV = "PI_WEB_WORKER_MEMORY"
_BOOTSTRAP = (
    "import os, sys; sys.path[:0] = [p for p in os.environ.get("
    f"{_PATH_ENV!r}, '').split(os.pathsep) if p]; "
    "from pi_web_tools.pages.workers import worker_main; worker_main()"
)


#: What a fallback result carries after ``(title, text, notes)``, to have the shape of
#: ``content.extract_html``'s result (an extractor that also returns links: ``([],)``).
RESULT_EXTRAS: tuple = ([],)


class _WorkerGone(Exception):
    """The worker died, was killed, or answered nonsense."""


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self) -> None:
        import subprocess

        env = dict(os.environ)
        env[_PATH_ENV] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        env[_MEMORY_ENV] = str(WORKER_MEMORY_BYTES)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=env,
            close_fds=True,
        )
        self.tasks = 0
        self.served = False
        os.set_blocking(self.process.stdin.fileno(), False)
        os.set_blocking(self.process.stdout.fileno(), False)

    def kill(self) -> None:
        """Kill the process and close its pipes (never raises)."""
        try:
            self.process.kill()
        except OSError:
            pass
        self._reap()

    def retire(self) -> None:
        """Let an idle worker exit on its own (its pipe closes), then make sure it is gone."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(0.5)
        except Exception:  # noqa: BLE001 - still running: kill it
            self.kill()
        self._reap()

    def _reap(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.process.wait(2)
        except Exception:  # noqa: BLE001 - unkillable: nothing more to do
            pass

    def run(
        self, request: dict, deadline: Callable[[], float], cancel: threading.Event | None
    ) -> dict:
        """Send *request*, wait for the answer until ``deadline()``; raises ``TimeoutError``,
        ``InterruptedError`` or :class:`_WorkerGone`."""
        import select

        payload = json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")
        out = memoryview(_HEADER.pack(len(payload)) + payload)
        stdin, stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        received = bytearray()
        needed: int | None = None
        while True:
            if cancel is not None and cancel.is_set():
                raise InterruptedError("cancelled")
            wait = deadline() - time.monotonic()
            if wait <= 0:
                raise TimeoutError("extraction took too long")
            writers = [stdin] if out else []
            readable, writable, _ = select.select([stdout], writers, [], min(wait, _POLL))
            if writable:
                try:
                    sent = os.write(stdin, out[: 1 << 16])
                except BlockingIOError:
                    sent = 0
                except OSError:
                    raise _WorkerGone("the worker closed its input") from None
                out = out[sent:]
            if readable:
                try:
                    chunk = os.read(stdout, 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _WorkerGone("the worker exited")
                received += chunk
                if needed is None and len(received) >= _HEADER.size:
                    needed = _HEADER.unpack_from(received)[0] + _HEADER.size
                if needed is not None and len(received) >= needed:
                    try:
                        return json.loads(bytes(received[_HEADER.size : needed]))
                    except ValueError:
                        raise _WorkerGone("the worker answered nonsense") from None


class _Pool:
    """At most :data:`MAX_WORKERS` workers; idle ones kept warm for the next page."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.idle: list[_Worker] = []
        self.busy = 0
        self.broken = False
        self.closed = False

    def acquire(self, deadline: Callable[[], float], cancel: threading.Event | None) -> _Worker:
        """An idle worker, a new one, or the first one freed before ``deadline()``."""
        with self.lock:
            while True:
                if cancel is not None and cancel.is_set():
                    raise InterruptedError("cancelled")
                if self.idle:
                    self.busy += 1
                    return self.idle.pop()
                if self.busy < MAX_WORKERS:
                    self.busy += 1
                    break
                wait = deadline() - time.monotonic()
                if wait <= 0:
                    raise TimeoutError("no worker was free in time")
                self.lock.wait(min(wait, _POLL))
        try:
            return _Worker()
        except BaseException:
            self.release(None)
            raise

    def release(self, worker: _Worker | None) -> None:
        """Give back a healthy *worker* (``None``: it was killed or retired)."""
        retire = None
        with self.lock:
            self.busy -= 1
            if worker is not None:
                if self.closed or worker.tasks >= TASKS_PER_WORKER:
                    retire = worker
                else:
                    self.idle.append(worker)
            self.lock.notify()
        if retire is not None:
            retire.retire()

    def prewarm(self) -> None:
        """Start one worker now (if none is idle or running), so its start-up overlaps the
        download."""
        with self.lock:
            if self.broken or self.closed or self.idle or self.busy:
                return
            self.busy += 1
        try:
            worker = _Worker()
        except Exception:  # noqa: BLE001 - reported when a page needs it
            self.release(None)
            return
        self.release(worker)

    def shutdown(self) -> None:
        """Kill every idle worker (busy ones are killed by their callers)."""
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.kill()


_pool_lock = threading.Lock()
_pool: _Pool | None = None


def _get_pool() -> _Pool | None:
    """The process's pool, or ``None`` where workers cannot be bounded (no ``resource``)."""
    global _pool
    try:
        import resource  # noqa: F401 - POSIX only
        import select  # noqa: F401
    except ImportError:
        return None
    with _pool_lock:
        if _pool is None or _pool.closed:
            _pool = _Pool()
            atexit.register(_pool.shutdown)
        return _pool if not _pool.broken else None


def prewarm() -> None:
    """Start a worker in the background if none is up (cheap when one is)."""
    pool = _get_pool()
    if pool is not None:
        pool.prewarm()


def shutdown() -> None:
    """Stop every idle worker now (they also stop when the process exits)."""
    with _pool_lock:
        pool = _pool
    if pool is not None:
        pool.shutdown()


#: The whole-page text a page falls back to covers at most this many characters of its HTML.
FALLBACK_CHARS = 1_000_000
_fallback_lock = threading.Lock()


def _fallback(page: str, reason: str) -> tuple:
    """The page's whole text instead of its main content: linear, one page at a time (threads
    converting pages at once only slow each other down), and only its first
    :data:`FALLBACK_CHARS` characters of HTML, so the fallback's cost is bounded too."""
    from .content import html_to_text, page_title

    part = page[:FALLBACK_CHARS]
    cut = f" of its first {FALLBACK_CHARS:,} characters" if len(page) > len(part) else ""
    with _fallback_lock:
        text = html_to_text(part)
    notes = [f"{reason}; showing the whole page text{cut}"]
    return (page_title(part), text, notes, *RESULT_EXTRAS)


def extract_html(
    page: str,
    url: str | None = None,
    *,
    deadline: float | None = None,
    cancel: threading.Event | None = None,
    on_fallback: Callable[[str], Any] | None = None,
) -> tuple:
    """``content.extract_html(page, url)`` in a bounded worker; raises ``InterruptedError`` when
    *cancel* is set. Past the monotonic *deadline* (less the time the fallback needs), or when
    the worker runs out of memory or dies, the page's whole text is returned with a note (and
    ``on_fallback(reason)`` is called)."""

    def fallback(reason: str) -> tuple:
        reason = f"main-content extraction {reason}"
        if on_fallback is not None:
            on_fallback(reason)
        return _fallback(page, reason)

    return convert_bounded(
        {"kind": "html", "text": page, "url": url},
        fallback=fallback,
        deadline=deadline,
        cancel=cancel,
        pending=min(len(page), FALLBACK_CHARS),
    )


def convert_bounded(
    request: dict,
    *,
    fallback: Callable[[str], tuple],
    deadline: float | None = None,
    cancel: threading.Event | None = None,
    pending: int = 0,
) -> tuple:
    """:func:`pi_web_tools.pages.convert.convert` of *request* in a bounded worker: the result
    tuple ``(title, text, notes, links)``. Raises ``InterruptedError`` when *cancel* is set.
    Past the monotonic *deadline*, or when the worker runs out of memory or dies,
    ``fallback(reason)`` is the result (*reason* reads after the work's name: "stopped after
    2.0 s (timeoutSeconds)"); *pending* is how many characters that fallback must still
    convert, kept free of the deadline."""
    from .convert import convert

    pool = None if IN_PROCESS else _get_pool()
    if pool is None:
        return tuple(convert(request))
    if deadline is None:
        deadline = time.monotonic() + 30.0
    global _pending
    with _pending_lock:
        _pending += pending
    try:
        return _run(pool, request, deadline, cancel, fallback)
    finally:
        with _pending_lock:
            _pending -= pending


_pending_lock = threading.Lock()
_pending = 0  # characters the pages being converted now would fall back to, in this process


def _run(
    pool: _Pool,
    request: dict,
    deadline: float,
    cancel: threading.Event | None,
    fallback: Callable[[str], tuple],
) -> tuple:
    from .convert import convert

    def limit() -> float:
        # The fallback text of every page being converted now (linear, about 0.1 s per MB, one
        # at a time) must still fit before the deadline: re-read as pages come and go.
        return deadline - 0.05 - _pending / 10_000_000

    started = time.monotonic()
    try:
        worker = pool.acquire(limit, cancel)
    except TimeoutError:
        return fallback("had no time left (timeoutSeconds)")
    except OSError:  # the worker could not start at all: convert here, unbounded, as before
        pool.broken = True
        return tuple(convert(request))
    budget = max(0.0, limit() - time.monotonic())
    try:
        answer = worker.run({**request, "seconds": budget}, limit, cancel)
    except InterruptedError:
        worker.kill()
        pool.release(None)
        raise
    except TimeoutError:
        worker.kill()
        pool.release(None)
        spent = time.monotonic() - started
        return fallback(f"stopped after {spent:.1f} s (timeoutSeconds)")
    except _WorkerGone:
        worker.kill()
        pool.release(None)
        code = worker.process.returncode
        if not worker.served and code is not None and code > 0:
            # It exited on its own before serving anything (not killed by a signal, as a
            # document that crashes its parser is): this interpreter cannot run workers.
            pool.broken = True
            return tuple(convert(request))
        return fallback("failed (the worker stopped)")
    worker.tasks += 1
    worker.served = True
    if "error" in answer:
        if answer["error"] == "memory":
            worker.kill()
            pool.release(None)
            size = WORKER_MEMORY_BYTES // (1024 * 1024)
            return fallback(f"ran out of memory ({size} MB)")
        pool.release(worker)
        return fallback("failed")
    pool.release(worker)
    result = answer.get("result")
    if not isinstance(result, list) or len(result) < 3:
        return fallback("failed")
    return tuple(_valid(item) for item in result)


def _valid(value: Any) -> Any:
    """A value of the worker's answer with valid Unicode in every string (lists stay lists)."""
    from pi_hostspec.sanitize import valid_unicode

    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, list):
        return [_valid(item) for item in value]
    return value


# --------------------------------------------------------------------------- the worker side


def _read_exact(stream: Any, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def worker_main() -> None:
    """The worker process: limit its own memory, warm the extractor, then answer requests
    (length-prefixed JSON on stdin and stdout) until stdin closes."""
    import logging
    import resource

    limit = int(os.environ.get(_MEMORY_ENV) or WORKER_MEMORY_BYTES)
    for which, value in ((resource.RLIMIT_AS, limit), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass
    requests_in = sys.stdin.buffer
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints never reach the protocol
    logging.disable(logging.CRITICAL)
    from pi_web_tools.pages.convert import convert

    try:
        convert({"kind": "html", "text": "<html><body><p>warm</p></body></html>"})  # imports
    except Exception:  # noqa: BLE001 - a real page will say what is wrong
        pass
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    while True:
        header = _read_exact(requests_in, _HEADER.size)
        if header is None:
            return
        body = _read_exact(requests_in, _HEADER.unpack(header)[0])
        if body is None:
            return
        exit_after = False
        try:
            request = json.loads(body)
            del body
            used = resource.getrusage(resource.RUSAGE_SELF)
            spent = used.ru_utime + used.ru_stime
            cpu = int(spent + float(request.get("seconds") or 0) + 2)
            if hard == resource.RLIM_INFINITY or cpu < hard:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
            answer = {"result": convert(request)}
        except MemoryError:
            answer, exit_after = {"error": "memory"}, True
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which falls back
            answer = {"error": type(exc).__name__}
        request = None
        try:
            payload = json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass")
            answers.write(_HEADER.pack(len(payload)) + payload)
            answers.flush()
        except (MemoryError, OSError):
            return
        if exit_after:
            return
