"""Loopback fakes of the Kagi, Exa, Brave and Tavily APIs for end-to-end tests (stdlib http.server in a thread)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class JsonHandler(BaseHTTPRequestHandler):
    """An HTTP/1.1 handler that answers JSON and logs nothing."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LoopbackServer:
    """Runs a handler class on 127.0.0.1 (any free port) in a thread, as a context manager."""

    path = ""

    def _start_server(self, handler: type) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The fake's base URL (what a provider's ``baseUrl`` option gets)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeKagi(LoopbackServer):
    """A small, faithful Kagi v0: /search (GET) and /summarize (POST), Bot auth checked."""

    path = "/api/v0"

    def __init__(self, key: str):
        self.key = key
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def _authorized(self) -> bool:
                if self.headers.get("Authorization") == f"Bot {fake.key}":
                    return True
                self._send(
                    401,
                    {
                        "meta": {},
                        "data": None,
                        "error": [{"code": 2, "msg": "Unauthorized", "ref": None}],
                    },
                )
                return False

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.requests.append(
                    {
                        "method": "GET",
                        "path": parts.path,
                        "query": query,
                        "headers": dict(self.headers),
                    }
                )
                if not self._authorized():
                    return
                if parts.path != "/api/v0/search" or "q" not in query:
                    self._send(
                        400,
                        {
                            "meta": {},
                            "data": None,
                            "error": [{"code": 1, "msg": "Missing q parameter", "ref": None}],
                        },
                    )
                    return
                q = query["q"]
                limit = int(query.get("limit", 10))
                data = [
                    {
                        "t": 0,
                        "url": f"https://results.example/{q.replace(' ', '-')}/{i}",
                        "title": f"{q} — page {i}",
                        "snippet": f"All about <b>{q}</b> &amp; more ({i})",
                        "published": "2026-03-01T00:00:00Z",
                    }
                    for i in range(1, min(limit, 3) + 1)
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
                fake.requests.append(
                    {
                        "method": "POST",
                        "path": self.path,
                        "json": body,
                        "headers": dict(self.headers),
                    }
                )
                if not self._authorized():
                    return
                if self.path != "/api/v0/summarize":
                    self._send(
                        404,
                        {
                            "meta": {},
                            "data": None,
                            "error": [{"code": 1, "msg": "Not found", "ref": None}],
                        },
                    )
                    return
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

        self._start_server(Handler)


class FakeExa(LoopbackServer):
    """A small, faithful Exa: POST /search and /contents with x-api-key checked."""

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
                if self.path == "/search":
                    results = [
                        {
                            "id": f"https://exa.example/{i}",
                            "url": f"https://exa.example/{i}",
                            "title": f"{body['query']} {i}",
                            "publishedDate": "2025-05-01T00:00:00.000Z",
                            "author": "A. Writer",
                        }
                        for i in range(1, body.get("numResults", 10) + 1)
                    ]
                    self._send(
                        200,
                        {
                            "requestId": "r2",
                            "resolvedSearchType": "neural",
                            "results": results,
                            "costDollars": {"total": 0.005},
                        },
                    )
                elif self.path == "/contents":
                    results, statuses = [], []
                    for url in body.get("urls", []):
                        if "missing" in url:
                            statuses.append(
                                {
                                    "id": url,
                                    "status": "error",
                                    "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404},
                                }
                            )
                        else:
                            results.append(
                                {
                                    "id": url,
                                    "url": url,
                                    "title": f"Page {url.rsplit('/', 1)[-1]}",
                                    "text": f"Text of {url}",
                                }
                            )
                            statuses.append({"id": url, "status": "success", "source": "cached"})
                    self._send(200, {"requestId": "r3", "results": results, "statuses": statuses})
                else:
                    self._send(404, {"requestId": "r4", "error": "Not found", "tag": "NOT_FOUND"})

        self._start_server(Handler)


class FakeBrave(LoopbackServer):
    """A small, faithful Brave Search API: GET /res/v1/web/search with X-Subscription-Token."""

    path = "/res/v1"

    def __init__(self, key: str):
        self.key = key
        self.requests: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def do_GET(self):
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

        self._start_server(Handler)


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

        self._start_server(Handler)
