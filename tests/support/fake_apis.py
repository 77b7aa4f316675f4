"""Loopback fakes of the Kagi, Exa, Brave, Tavily and SearXNG APIs for end-to-end tests (on the tests' one loopback server)."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse, urlsplit

from .loopback import LoopbackServer


class JsonHandler(BaseHTTPRequestHandler):
    """An HTTP/1.1 handler that answers JSON and logs nothing."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: dict) -> None:
        self._reply(status, json.dumps(body).encode(), "application/json")

    def _reply(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeKagi(LoopbackServer):
    """A faithful Kagi (contracts Part E.1): v1 ``POST /search`` and ``POST /extract`` with
    ``Authorization: Bearer`` (``Bot`` is refused), v0 ``GET /search`` and ``POST /summarize``
    with ``Authorization: Bot``.

    *versions* are the search APIs the key works on: a key issued today works on v1 only (v0
    answers 401), an old key on v0 only (v1 answers 401). v1 errors carry ``meta.trace`` and
    their list under *error_key* (``"error"`` as in the generated client, or ``"errors"``).
    Set ``fail`` to ``(status, code, message)`` to make every v1 call fail so.
    """

    path = "/api"
    trace = "trace-5f0e7c3a"

    def __init__(
        self, key: str, versions: tuple[str, ...] = ("v0", "v1"), error_key: str = "error"
    ):
        self.key = key
        self.versions = versions
        self.error_key = error_key
        self.fail: tuple[int, str, str] | None = None
        self.latency = 0.0  # seconds before every answer
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def _v0_refuse(self, status: int = 401, code: int = 2, msg: str = "Unauthorized"):
                self._send(
                    status,
                    {"meta": {}, "data": None, "error": [{"code": code, "msg": msg, "ref": None}]},
                )

            def _v1_error(self, status: int, code: str, message: str) -> None:
                self._send(
                    status,
                    {
                        "meta": {"trace": fake.trace, "node": "loopback", "ms": 0},
                        "data": [],
                        fake.error_key: [
                            {"code": code, "message": message, "url": None, "location": None}
                        ],
                    },
                )

            def _v0_ok(self) -> bool:
                if self.headers.get("Authorization") == f"Bot {fake.key}" and "v0" in fake.versions:
                    return True
                self._v0_refuse()
                return False

            def _v1_ok(self) -> bool:
                auth = self.headers.get("Authorization") or ""
                if auth.startswith("Bot "):
                    self._v1_error(401, "auth.scheme", "Use Authorization: Bearer <key>")
                    return False
                if auth != f"Bearer {fake.key}" or "v1" not in fake.versions:
                    self._v1_error(401, "general.unauthorized", "Invalid API key")
                    return False
                if fake.fail is not None:
                    self._v1_error(*fake.fail)
                    return False
                return True

            def _record(self, method: str, body=None) -> tuple[str, dict]:
                if fake.latency:
                    time.sleep(fake.latency)
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.requests.append(
                    {
                        "method": method,
                        "path": parts.path,
                        "query": query,
                        "json": body,
                        "headers": dict(self.headers),
                    }
                )
                return parts.path, query

            def do_GET(self):
                path, query = self._record("GET")
                if path != "/api/v0/search":
                    self._v0_refuse(404, 1, "Not found")
                    return
                if not self._v0_ok():
                    return
                if "q" not in query:
                    self._v0_refuse(400, 1, "Missing q parameter")
                    return
                q = query["q"]
                data = [
                    {"t": 0, **item, "published": item.pop("time")}
                    for item in _kagi_results(q, int(query.get("limit", 10)))
                ]
                data.append({"t": 1, "list": [f"{q} tutorial", f"{q} examples"]})
                self._send(
                    200,
                    {
                        "meta": {"id": "e2e", "node": "loopback", "ms": 1, "api_balance": 42.0},
                        "data": data,
                    },
                )

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path, _ = self._record("POST", body)
                if path == "/api/v0/summarize":
                    if self._v0_ok():
                        self._summarize(body)
                elif path == "/api/v1/search":
                    if self._v1_ok():
                        self._search(body)
                elif path == "/api/v1/extract":
                    if self._v1_ok():
                        self._extract(body)
                else:
                    self._v1_error(404, "general.not_found", "Not found")

            def _search(self, body):
                if not isinstance(body.get("query"), str) or not body["query"]:
                    self._v1_error(400, "search.query_required", "query is required")
                    return
                q = body["query"]
                sites = (body.get("lens") or {}).get("sites_included") or []
                results = _kagi_results(q, int(body.get("limit", 10)), sites[0] if sites else None)
                self._send(
                    200,
                    {
                        "meta": {"trace": fake.trace, "id": "e2e", "node": "loopback", "ms": 1},
                        "data": {
                            "search": results,
                            "related_search": [{"title": f"{q} tutorial"}, f"{q} examples"],
                        },
                    },
                )

            def _extract(self, body):
                pages = body.get("pages")
                if not isinstance(pages, list) or not 1 <= len(pages) <= 10:
                    self._v1_error(400, "extract.pages", "pages must hold 1 to 10 pages")
                    return
                data, errors = [], []
                for page in pages:
                    url = page.get("url", "")
                    if not url.startswith("https://"):
                        self._v1_error(400, "extract.https_only", f"{url} is not an https URL")
                        return
                    if "missing" in url:
                        errors.append(
                            {
                                "code": "extract.fetch_failed",
                                "url": url,
                                "message": "Page not reachable",
                            }
                        )
                    else:
                        data.append(
                            {
                                "url": url,
                                "markdown": f"# Page {url.rsplit('/', 1)[-1]}\n\nText of {url}",
                            }
                        )
                answer = {"meta": {"trace": fake.trace}, "data": data}
                if errors:
                    answer["errors"] = errors
                self._send(200, answer)

            def _summarize(self, body):
                kind = body.get("summary_type", "summary")
                output = (
                    "- First point\n- Second point"
                    if kind == "takeaway"
                    else f"A summary of {body.get('url')}."
                )
                self._send(
                    200,
                    {
                        "meta": {"id": "s", "node": "loopback", "ms": 2},
                        "data": {"output": output, "tokens": 321},
                    },
                )

        super().__init__(Handler)

    def searches(self) -> list[dict]:
        """The search requests received (both versions), in order."""
        return [r for r in self.requests if r["path"].endswith("/search")]


def _kagi_results(q: str, limit: int, site: str | None = None) -> list[dict]:
    host = site or "results.example"
    return [
        {
            "url": f"https://{host}/{q.replace(' ', '-')}/{i}",
            "title": f"{q} — page {i}",
            "snippet": f"All about <b>{q}</b> &amp; more ({i})",
            "time": "2026-03-01T00:00:00Z",
        }
        for i in range(1, min(limit, 3) + 1)
    ]


class FakeExa(LoopbackServer):
    """A faithful Exa (contracts Part B and E.2): POST /search and /contents with x-api-key
    checked; ``notices`` when a query carries a ``site:`` operator, ``warnings`` for fields with
    no effect, 400 for ``livecrawl`` with ``maxAgeHours``, ``summary: {query}`` answered."""

    def __init__(self, key: str):
        self.key = key
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "json": body})
                if self.headers.get("x-api-key") != fake.key:
                    self._send(
                        401,
                        {"requestId": "r1", "error": "Invalid API key", "tag": "INVALID_API_KEY"},
                    )
                    return
                if _livecrawl_conflict(body) or _livecrawl_conflict(body.get("contents") or {}):
                    self._send(
                        400,
                        {
                            "requestId": "r0",
                            "error": "livecrawl and maxAgeHours cannot be used together; use maxAgeHours",
                            "tag": "INVALID_REQUEST",
                        },
                    )
                    return
                if self.path == "/search":
                    if body.get("type", "auto") not in (
                        "auto",
                        "lite",
                        "deep",
                        "fast",
                        "instant",
                        "neural",
                    ):
                        self._send(
                            400,
                            {
                                "requestId": "r0",
                                "error": "Invalid type",
                                "tag": "INVALID_REQUEST_BODY",
                            },
                        )
                        return
                    contents = body.get("contents") or {}
                    results = [
                        {
                            "id": f"https://exa.example/{i}",
                            "url": f"https://exa.example/{i}",
                            "title": f"{body['query']} {i}",
                            "publishedDate": "2025-05-01T00:00:00.000Z",
                            "author": "A. Writer",
                            **(
                                {
                                    "highlights": [f"Highlight {i} of {body['query']}"],
                                    "highlightScores": [0.5],
                                }
                                if contents.get("highlights")
                                else {}
                            ),
                        }
                        for i in range(1, body.get("numResults", 10) + 1)
                    ]
                    answer = {
                        "requestId": "r2",
                        "resolvedSearchType": "neural",
                        "results": results,
                        "costDollars": {"total": 0.005},
                    }
                    if "site:" in body["query"]:
                        answer["notices"] = [
                            "The site: operator in the query matched no domain; use includeDomains to filter by domain."
                        ]
                    if "category" in body and body.get("type") == "lite":
                        answer["warnings"] = ["category has no effect with type lite"]
                    self._send(200, answer)
                elif self.path == "/contents":
                    results, statuses = [], []
                    summary = body.get("summary")
                    for url in body.get("urls", []):
                        if "missing" in url:
                            statuses.append(
                                {
                                    "id": url,
                                    "status": "error",
                                    "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404},
                                }
                            )
                            continue
                        item = {"id": url, "url": url, "title": f"Page {url.rsplit('/', 1)[-1]}"}
                        if "text" in body:
                            item["text"] = f"Text of {url}"
                        if isinstance(summary, dict):
                            item["summary"] = f"Summary of {url} for: {summary.get('query')}"
                        elif summary:
                            item["summary"] = f"Summary of {url}"
                        results.append(item)
                        statuses.append({"id": url, "status": "success", "source": "cached"})
                    answer = {"requestId": "r3", "results": results, "statuses": statuses}
                    if "maxAgeHours" in body and body["maxAgeHours"] == -1:
                        answer["warnings"] = ["maxAgeHours -1: only cached pages were returned"]
                    self._send(200, answer)
                else:
                    self._send(404, {"requestId": "r4", "error": "Not found", "tag": "NOT_FOUND"})

        super().__init__(Handler)


def _livecrawl_conflict(body: dict) -> bool:
    """Exa answers 400 when the legacy livecrawl comes with maxAgeHours (contracts E.2)."""
    return "livecrawl" in body and "maxAgeHours" in body


class FakeBrave(LoopbackServer):
    """A small, faithful Brave Search API: GET /res/v1/web/search with X-Subscription-Token."""

    path = "/res/v1"

    def __init__(self, key: str):
        self.key = key
        self.latency = 0.0  # seconds before every answer
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def do_GET(self):
                if fake.latency:
                    time.sleep(fake.latency)
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.requests.append({"path": parts.path, "query": query})
                if self.headers.get("X-Subscription-Token") != fake.key:
                    self._send(
                        401,
                        {
                            "type": "ErrorResponse",
                            "error": {
                                "id": "e1",
                                "status": 401,
                                "code": "SUBSCRIPTION_TOKEN_INVALID",
                                "detail": "The provided subscription token is invalid.",
                                "meta": {"component": "authentication"},
                            },
                            "time": 1764000000,
                        },
                    )
                    return
                if parts.path != "/res/v1/web/search":
                    self._send(404, {"type": "ErrorResponse", "error": {"detail": "Not found"}})
                    return
                q = query.get("q", "")
                results = [
                    {
                        "title": f"<strong>{q}</strong> — result {i}",
                        "url": f"https://brave.example/{i}",
                        "description": f"About <strong>{q}</strong> &amp; more ({i})",
                        "page_age": "2026-02-01T09:30:00",
                        "extra_snippets": [f"Extra {i}"],
                        "type": "search_result",
                    }
                    for i in range(1, min(int(query.get("count", 20)), 3) + 1)
                ]
                self._send(
                    200,
                    {"type": "search", "query": {"original": q}, "web": {"results": results}},
                )

        super().__init__(Handler)


class FakeTavily(LoopbackServer):
    """A small, faithful Tavily: POST /search and /extract with a Bearer key checked."""

    def __init__(self, key: str):
        self.key = key
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "json": body})
                if self.headers.get("Authorization") != f"Bearer {fake.key}":
                    self._send(
                        401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
                    )
                    return
                if self.path == "/search":
                    results = [
                        {
                            "title": f"{body['query']} {i}",
                            "url": f"https://tavily.example/{i}",
                            "content": f"Content about {body['query']} ({i})",
                            "score": round(0.9 - i / 10, 2),
                            "raw_content": None,
                        }
                        for i in range(1, body.get("max_results", 5) + 1)
                    ]
                    self._send(
                        200,
                        {
                            "query": body["query"],
                            "answer": None,
                            "images": [],
                            "results": results,
                            "response_time": 0.5,
                        },
                    )
                elif self.path == "/extract":
                    results, failed = [], []
                    for url in body.get("urls", []):
                        if "missing" in url:
                            failed.append({"url": url, "error": "Failed to fetch url"})
                        else:
                            results.append({"url": url, "raw_content": f"# Page\n\nText of {url}"})
                    self._send(
                        200, {"results": results, "failed_results": failed, "response_time": 0.1}
                    )
                else:
                    self._send(404, {"detail": "Not Found"})

        super().__init__(Handler)


#: Flask's page for ``abort(403)``: what SearXNG answers a format its settings.yml leaves out.
FLASK_403 = (
    "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
    "<p>You don&#39;t have the permission to access the requested resource. It is either "
    "read-protected or not readable by the server.</p>\n"
)


def searx_results(q: str) -> list[dict]:
    """Three results for *q*, as a SearXNG instance's engines would merge them."""
    slug = "-".join(q.split()) or "empty"
    return [
        {
            "url": f"https://searx.example/{slug}/{i}",
            "title": f"{q} {i}",
            "content": f"On {q} ({i})",
        }
        for i in range(1, 4)
    ]


class FakeSearxng(LoopbackServer):
    """SearXNG's ``GET /search`` as searx/webapp.py and webutils.get_json_response serve it
    (searxng/searxng @9fea412): ``format`` not in *formats* (its settings.yml ``search.formats``)
    is Flask's 403 page; no ``q`` is 400 ``{"error": "No query"}``; a bad ``pageno`` or
    ``time_range`` is 400 ``Invalid value … for parameter …``; the JSON body is ``{query,
    results, answers, corrections, infoboxes, suggestions, unresponsive_engines}``, each result
    with ``engines``, ``positions``, ``score``, ``category``, ``parsed_url`` and
    ``publishedDate``. With *limiter*, the bot detection's plain ``429 Too Many Requests``.

    *results* maps a query to its results (``url``, ``title``, ``content``, optional
    ``publishedDate``); *unresponsive* lists ``[engine, reason]`` pairs; *latency* delays every
    answer."""

    def __init__(
        self,
        formats: tuple[str, ...] = ("html", "json"),
        results=searx_results,
        *,
        limiter: bool = False,
        unresponsive: tuple = (),
        latency: float = 0.0,
        status: int | None = None,
    ):
        self.fail_for: dict[str, int] = {}  # a query -> the status it is answered with
        self.formats = formats
        self.results = results
        self.limiter = limiter
        self.unresponsive = unresponsive
        self.latency = latency
        self.status = status  # a status every /search answers with (5xx outages)
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def _html(self, status: int, text: str) -> None:
                self._reply(status, text.encode(), "text/html; charset=utf-8")

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.requests.append(
                    {"path": parts.path, "query": query, "headers": dict(self.headers)}
                )
                if fake.latency:
                    time.sleep(fake.latency)
                if parts.path == "/healthz":
                    return self._html(200, "OK")
                if parts.path != "/search":
                    return self._html(404, "<title>404 Not Found</title>")
                if fake.limiter:
                    return self._html(429, "Too Many Requests")
                status = fake.fail_for.get(query.get("q", ""), fake.status)
                if status is not None:
                    return self._send(status, {"error": "search error"})
                output = query.get("format", "html")
                if output not in ("html", "csv", "json", "rss"):
                    output = "html"
                if output not in fake.formats:
                    return self._html(403, FLASK_403)
                if output != "json":
                    return self._html(200, "<title>SearXNG</title>")
                q = query.get("q", "")
                if not q:
                    return self._send(400, {"error": "No query"})
                pageno = query.get("pageno", "1")
                if not pageno.isdigit() or int(pageno) < 1:
                    return self._send(
                        400, {"error": f"Invalid value {pageno} for parameter pageno"}
                    )
                span = query.get("time_range")
                if span not in (None, "", "None", "day", "week", "month", "year"):
                    return self._send(
                        400, {"error": f"Invalid value {span} for parameter time_range"}
                    )
                category = (query.get("categories") or "general").split(",")[0]
                results = []
                for position, item in enumerate(fake.results(q), 1):
                    url = urlparse(item["url"])
                    engines = item.get("engines", ["duckduckgo", "brave"])
                    results.append(
                        {
                            "template": "default.html",
                            "url": item["url"],
                            "title": item["title"],
                            "content": item.get("content", ""),
                            "engine": engines[0],
                            "parsed_url": list(url),
                            "img_src": "",
                            "thumbnail": "",
                            "priority": "",
                            "engines": engines,
                            "positions": [position] * len(engines),
                            "score": round(len(engines) * 1.0 / position, 3),
                            "category": category,
                            "publishedDate": item.get("publishedDate"),
                        }
                    )
                self._send(
                    200,
                    {
                        "query": q,
                        "results": results,
                        "answers": [],
                        "corrections": [],
                        "infoboxes": [],
                        "suggestions": [f"{q} tutorial"] if results else [],
                        "unresponsive_engines": [list(p) for p in fake.unresponsive],
                    },
                )

        super().__init__(Handler)


def serve_for_trying(agent: str | None = None, key: str = "fake-key-for-trying") -> int:
    """``python -m tests.support.fake_apis``: serve fake Kagi, Exa, Brave and Tavily on
    loopback until Ctrl-C, with a ``web-search.json`` that points pi-web at them, so the paid
    providers can be tried without a key; prints the one line that uses them."""
    import os
    import signal
    import tempfile
    import threading
    from pathlib import Path

    fakes = {
        "kagi": FakeKagi(key),
        "exa": FakeExa(key),
        "brave": FakeBrave(key),
        "tavily": FakeTavily(key),
    }
    for fake in fakes.values():
        fake.start()
    folder = Path(agent) if agent else Path(tempfile.mkdtemp(prefix="pi-web-fakes-"))
    folder.mkdir(parents=True, exist_ok=True)
    providers = [
        {"name": name, "type": name, "apiKey": key, "options": {"baseUrl": fake.base_url}}
        for name, fake in fakes.items()
    ]
    path = folder / "web-search.json"
    path.write_text(json.dumps({"defaultProvider": "kagi", "providers": providers}, indent=2))
    path.chmod(0o600)
    print(
        "Fake Kagi, Exa, Brave and Tavily APIs are serving on 127.0.0.1 (Ctrl-C stops them).\n"
        f"In another shell: export PI_CODING_AGENT_DIR={folder}\n"
        'then: pi-web search "rust async" (or --provider exa, brave, tavily), '
        "pi-web summarize https://example.com/a",
        flush=True,
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    for fake in fakes.values():
        fake.close()
    if not agent:
        path.unlink(missing_ok=True)
        os.rmdir(folder)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(serve_for_trying(sys.argv[1] if len(sys.argv) > 1 else None))
