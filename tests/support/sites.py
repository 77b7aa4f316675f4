"""Faithful fakes of the sites the readers read, at their real URL shapes.

GitHub (api.github.com: repositories, contents, trees, issues and their comments, pulls and
their files and review comments, commits, releases, gists, with rate-limit headers and
``Link`` paging; raw.githubusercontent.com; github.com's web pages and diffs), PyPI's JSON API,
the npm registry, the Stack Exchange API (``backoff``, ``quota_remaining``), Hacker News's
Algolia API, arXiv's export API and its HTML and PDF, Wikipedia's REST API, and Reddit as it
answers anonymous clients since May 2026 (403). The web pages of npm and Stack Overflow answer
403, as they do to bots; the others are pages shaped like the real ones (menus, scripts, the
content in the middle).

One fake (:meth:`Sites.answer`), three ways to reach it:

- :meth:`Sites.activate`: registered with ``responses`` for the real URLs (unit tests);
- :meth:`Sites.serve`: a loopback server answering ``{base}/{host}{path}`` (a reader's
  ``baseUrl`` override);
- :meth:`Sites.proxy` (in ``site_proxy``): an HTTPS proxy on loopback that answers for the real
  host names with a test CA (``HTTPS_PROXY`` and ``REQUESTS_CA_BUNDLE``).

Every request is logged (:attr:`Sites.log`: host, path, query, headers) so tests can count
requests and check which headers went where.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from attrs import define, field

#: The token the fake GitHub accepts (a private repository is visible with it).
GITHUB_TOKEN = "ghp_fakeTokenFor0Tests0000000000000000"
SHA = "3f5e0b9c2d1a4e6f8b7c9d0e1f2a3b4c5d6e7f80"
REPO_ID = 4242
OWNER, REPO = "octo-org", "hello"


@define
class Answer:
    """One answer: status, headers, body."""

    status: int
    headers: dict = field(factory=dict)
    body: bytes = b""


def json_answer(data, status: int = 200, **headers) -> Answer:
    return Answer(
        status,
        {"Content-Type": "application/json; charset=utf-8", **headers},
        json.dumps(data).encode(),
    )


def text_answer(
    text: str | bytes, status: int = 200, kind: str = "text/plain; charset=utf-8", **headers
) -> Answer:
    body = text.encode() if isinstance(text, str) else text
    return Answer(status, {"Content-Type": kind, **headers}, body)


def _github_404() -> Answer:
    return json_answer(
        {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        },
        404,
    )


# --- content of the fake GitHub ----------------------------------------------------------------


def app_source(lines: int = 120) -> str:
    """The text of src/hello/app.py: numbered, recognisable lines."""
    out = ['"""The hello application."""', ""]
    for n in range(3, lines + 1):
        out.append(f"value_{n} = {n}  # line {n}")
    return "\n".join(out) + "\n"


README = """# Hello

A tiny project used by the tests of pi-web-tools.

## Install

```sh
pip install hello
```
"""

FILES = {
    "README.md": README.encode(),
    "src/hello/__init__.py": b"from .app import *  # noqa\n",
    "src/hello/app.py": app_source().encode(),
    "docs/guide.md": b"# Guide\n\nRead me first.\n",
    "docs/api/reference.md": b"# API reference\n\n`hello()` says hello.\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200),
    "src/hello/big.py": app_source(1500).encode(),
}


def _tree_entries(files: dict) -> list[dict]:
    folders = sorted(
        {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}
    )
    entries = [{"path": d, "mode": "040000", "type": "tree", "sha": "d" * 40} for d in folders]
    entries += [
        {"path": p, "mode": "100644", "type": "blob", "sha": "b" * 40, "size": len(body)}
        for p, body in files.items()
    ]
    return sorted(entries, key=lambda e: e["path"])


def _comment(n: int, base: str = "issuecomment") -> dict:
    return {
        "id": 1000 + n,
        "html_url": f"https://github.com/{OWNER}/{REPO}/issues/7#{base}-{1000 + n}",
        "user": {"login": f"user{n % 7}", "id": n},
        "created_at": f"2026-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z",
        "updated_at": f"2026-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z",
        "author_association": "MEMBER" if n % 10 == 0 else "NONE",
        "body": f"Comment number {n}: the fix in step {n} works for me.",
    }


ISSUE_COMMENTS = 130
PULL_DIFF = """diff --git a/src/hello/app.py b/src/hello/app.py
--- a/src/hello/app.py
+++ b/src/hello/app.py
@@ -1 +1 @@
-a
+b
"""


@define
class Sites:
    """The fake sites, their data and their log."""

    latency: float = 0.0  # seconds each answer waits (a site far away)
    github_budget: int | None = None  # keyless GitHub API requests left (None: unlimited)
    github_reset: int = field(factory=lambda: int(time.time()) + 1800)
    se_backoff: int | None = None  # a backoff value the Stack Exchange API adds to answers
    se_quota: int = 300
    log: list = field(factory=list)
    lock: threading.Lock = field(factory=threading.Lock)
    routes: list = field(factory=list)
    server: FakeSiteServer | None = None  # set by serve()

    # --- dispatch ------------------------------------------------------------------------------

    def answer(self, url: str, headers: dict) -> Answer:
        """The answer for a GET of *url* (an absolute URL at the real host) with *headers*."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        lowered = {k.lower(): v for k, v in headers.items()}
        with self.lock:
            self.log.append({"host": host, "path": parts.path, "query": query, "headers": lowered})
        if self.latency:
            time.sleep(self.latency)
        for pattern, handler in self.routes:
            if re.fullmatch(pattern, host):
                return handler(parts.path, query, lowered)
        handler = {
            "api.github.com": self._github_api,
            "raw.githubusercontent.com": self._github_raw,
            "github.com": self._github_web,
            "patch-diff.githubusercontent.com": self._github_diff,
            "pypi.org": self._pypi,
            "registry.npmjs.org": self._npm_registry,
            "www.npmjs.com": self._bot_wall,
            "api.stackexchange.com": self._stackexchange,
            "stackoverflow.com": self._bot_wall,
            "unix.stackexchange.com": self._bot_wall,
            "hn.algolia.com": self._hn,
            "news.ycombinator.com": self._hn_page,
            "export.arxiv.org": self._arxiv_api,
            "arxiv.org": self._arxiv,
            "en.wikipedia.org": self._wikipedia,
            "www.reddit.com": self._reddit,
        }.get(host)
        if handler is None:
            return text_answer(f"no fake for {host}", 502)
        return handler(parts.path, query, lowered)

    def requests_to(self, host: str) -> list[dict]:
        """The logged requests to *host*."""
        return [entry for entry in self.log if entry["host"] == host]

    # --- GitHub --------------------------------------------------------------------------------

    def _authorized(self, headers: dict) -> bool:
        return headers.get("authorization") == f"Bearer {GITHUB_TOKEN}"

    def _rate(self, headers: dict) -> tuple[dict, bool]:
        """The rate-limit headers of one API request, and whether the quota is spent."""
        if self._authorized(headers) or self.github_budget is None:
            return {
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": "4999",
                "x-ratelimit-reset": str(self.github_reset),
                "x-ratelimit-used": "1",
                "x-ratelimit-resource": "core",
            }, False
        with self.lock:
            spent = self.github_budget <= 0
            if not spent:
                self.github_budget -= 1
            left = self.github_budget
        return {
            "x-ratelimit-limit": "60",
            "x-ratelimit-remaining": str(left),
            "x-ratelimit-reset": str(self.github_reset),
            "x-ratelimit-used": str(60 - left),
            "x-ratelimit-resource": "core",
        }, spent

    def _github_api(self, path: str, query: dict, headers: dict) -> Answer:
        rate, spent = self._rate(headers)
        if spent:
            answer = json_answer(
                {
                    "message": "API rate limit exceeded for 203.0.113.9. (But here's the good news: "
                    "Authenticated requests get a higher rate limit. Check out the documentation "
                    "for more details.)",
                    "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
                },
                403,
            )
        else:
            answer = self._github_api_route(path, query, headers)
        answer.headers.update(rate)
        return answer

    def _visible(self, owner: str, repo: str, headers: dict) -> bool:
        if (owner, repo) == (OWNER, REPO):
            return True
        return (owner, repo) == (OWNER, "secret") and self._authorized(headers)

    def _github_api_route(self, path: str, query: dict, headers: dict) -> Answer:
        if headers.get("accept") != "application/vnd.github+json":
            return json_answer({"message": "Unsupported 'Accept' header"}, 415)
        found = re.fullmatch(r"/repositories/(\d+)(/.*)?", path)
        if found and found.group(1) == str(REPO_ID):
            path = f"/repos/{OWNER}/{REPO}{found.group(2) or ''}"
        if path.startswith("/gists/"):
            return self._gist(path.split("/")[2:])
        found = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not found:
            return _github_404()
        owner, repo, rest = found.group(1), found.group(2), found.group(3) or ""
        if owner == "old-org" and repo == "hello":  # a renamed repository: GitHub redirects
            return Answer(301, {"Location": f"https://api.github.com/repositories/{REPO_ID}{rest}"})
        if not self._visible(owner, repo, headers):
            return _github_404()
        if rest == "":
            return json_answer(self._repo(owner, repo))
        if rest == "/contents" or rest.startswith("/contents/"):
            ref = query.get("ref", "main")
            return self._contents(unquote(rest[len("/contents/") :]), ref)
        found = re.fullmatch(r"/git/trees/([^/]+)", rest)
        if found:
            if unquote(found.group(1)) not in ("main", SHA):
                return _github_404()
            return json_answer(
                {"sha": SHA, "url": "", "tree": _tree_entries(FILES), "truncated": False}
            )
        found = re.fullmatch(r"/issues/(\d+)(/comments)?", rest)
        if found:
            return self._issue(int(found.group(1)), bool(found.group(2)), query)
        found = re.fullmatch(r"/pulls/(\d+)(/files|/comments|/reviews)?", rest)
        if found:
            return self._pull(int(found.group(1)), found.group(2), query)
        found = re.fullmatch(r"/commits/([0-9a-f]{7,40})", rest)
        if found:
            if not SHA.startswith(found.group(1)):
                return json_answer({"message": f"No commit found for SHA: {found.group(1)}"}, 422)
            return json_answer(self._commit())
        if rest == "/releases":
            return json_answer(self._releases()[: int(query.get("per_page", 30))])
        if rest == "/releases/latest":
            return json_answer(self._releases()[0])
        found = re.fullmatch(r"/releases/tags/(.+)", rest)
        if found:
            tag = unquote(found.group(1))
            match = [r for r in self._releases() if r["tag_name"] == tag]
            return json_answer(match[0]) if match else _github_404()
        return _github_404()

    def _repo(self, owner: str, repo: str) -> dict:
        return {
            "id": REPO_ID,
            "name": repo,
            "full_name": f"{owner}/{repo}",
            "private": repo == "secret",
            "description": "A tiny project used by the tests",
            "default_branch": "main",
            "stargazers_count": 1234,
            "forks_count": 56,
            "language": "Python",
            "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT"},
            "topics": ["testing", "example"],
            "homepage": "https://hello.example",
            "archived": False,
            "fork": False,
            "html_url": f"https://github.com/{owner}/{repo}",
        }

    def _contents(self, path: str, ref: str) -> Answer:
        if ref not in ("main", SHA):
            return json_answer({"message": f"No commit found for the ref {ref}"}, 404)
        path = path.strip("/")
        if path in FILES:
            body = FILES[path]
            return json_answer(
                {
                    "type": "file",
                    "name": path.rsplit("/", 1)[-1],
                    "path": path,
                    "size": len(body),
                    "encoding": "base64",
                    "content": base64.encodebytes(body).decode(),
                    "download_url": f"https://raw.githubusercontent.com/{OWNER}/{REPO}/{ref}/{path}",
                }
            )
        prefix = f"{path}/" if path else ""
        names: dict[str, dict] = {}
        for file, body in FILES.items():
            if not file.startswith(prefix):
                continue
            head, _, tail = file[len(prefix) :].partition("/")
            kind = "dir" if tail else "file"
            names[head] = {
                "type": kind,
                "name": head,
                "path": prefix + head,
                "size": 0 if tail else len(body),
                "download_url": None
                if tail
                else f"https://raw.githubusercontent.com/{OWNER}/{REPO}/{ref}/{prefix}{head}",
            }
        if not names:
            return _github_404()
        return json_answer(sorted(names.values(), key=lambda e: e["name"]))

    def _issue_json(self, number: int) -> dict | None:
        if number == 7:
            return {
                "number": 7,
                "title": "Crash when the config is empty",
                "state": "closed",
                "state_reason": "completed",
                "user": {"login": "reporter"},
                "labels": [{"name": "bug"}, {"name": "config"}],
                "comments": ISSUE_COMMENTS,
                "created_at": "2026-01-01T09:00:00Z",
                "closed_at": "2026-02-01T09:00:00Z",
                "body": "Steps:\n\n1. empty the config\n2. run `hello`\n\nIt crashes.",
                "html_url": f"https://github.com/{OWNER}/{REPO}/issues/7",
            }
        if number == 8:
            return {
                "number": 8,
                "title": "Read the config lazily",
                "state": "open",
                "user": {"login": "author"},
                "labels": [],
                "comments": 2,
                "created_at": "2026-02-02T09:00:00Z",
                "body": "Fixes #7.",
                "pull_request": {
                    "url": f"https://api.github.com/repos/{OWNER}/{REPO}/pulls/8",
                    "diff_url": f"https://github.com/{OWNER}/{REPO}/pull/8.diff",
                },
            }
        return None

    def _paged(self, items: list, path: str, query: dict) -> Answer:
        per_page = min(100, int(query.get("per_page", 30)))
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"https://api.github.com/repositories/{REPO_ID}{path}"
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}>; rel="last"')
        headers = {"Link": ", ".join(links)} if links else {}
        return json_answer(chunk, **headers)

    def _issue(self, number: int, comments: bool, query: dict) -> Answer:
        issue = self._issue_json(number)
        if issue is None:
            return (
                _github_404()
                if number != 9
                else json_answer({"message": "This issue was deleted"}, 410)
            )
        if not comments:
            return json_answer(issue)
        items = [_comment(n) for n in range(1, issue["comments"] + 1)]
        return self._paged(items, f"/issues/{number}/comments", query)

    def _pull(self, number: int, part: str | None, query: dict) -> Answer:
        if number != 8:
            return _github_404()
        if part == "/files":
            files = [
                {
                    "filename": "src/hello/app.py",
                    "status": "modified",
                    "additions": 10,
                    "deletions": 2,
                    "changes": 12,
                    "patch": "@@ -1 +1 @@\n-a\n+b",
                },
                {
                    "filename": "docs/lazy.md",
                    "status": "added",
                    "additions": 40,
                    "deletions": 0,
                    "changes": 40,
                },
                {
                    "filename": "src/hello/config.py",
                    "previous_filename": "src/hello/conf.py",
                    "status": "renamed",
                    "additions": 0,
                    "deletions": 0,
                    "changes": 0,
                },
            ]
            return self._paged(files, f"/pulls/{number}/files", query)
        if part == "/reviews":  # a review: its verdict and summary (inline comments apart)
            verdicts = [
                {
                    "id": 80,
                    "user": {"login": "reviewer"},
                    "body": "Please read it in one place.",
                    "state": "CHANGES_REQUESTED",
                    "author_association": "MEMBER",
                    "submitted_at": "2026-02-03T09:00:00Z",
                    "commit_id": SHA,
                },
                {  # the container of inline comments: no summary of its own
                    "id": 81,
                    "user": {"login": "reviewer"},
                    "body": "",
                    "state": "COMMENTED",
                    "author_association": "MEMBER",
                    "submitted_at": "2026-02-03T09:05:00Z",
                    "commit_id": SHA,
                },
                {
                    "id": 82,
                    "user": {"login": "maintainer"},
                    "body": "",
                    "state": "APPROVED",
                    "author_association": "OWNER",
                    "submitted_at": "2026-02-04T09:00:00Z",
                    "commit_id": SHA,
                },
            ]
            return self._paged(verdicts, f"/pulls/{number}/reviews", query)
        if part == "/comments":
            reviews = [
                {
                    "id": 1,
                    "path": "src/hello/app.py",
                    "line": 12,
                    "user": {"login": "reviewer"},
                    "created_at": "2026-02-03T09:00:00Z",
                    "body": "Why here?",
                    "diff_hunk": "@@ -1 +1 @@",
                },
                {
                    "id": 2,
                    "path": "src/hello/app.py",
                    "line": 12,
                    "user": {"login": "author"},
                    "created_at": "2026-02-03T10:00:00Z",
                    "body": "It is read once.",
                    "in_reply_to_id": 1,
                },
            ]
            return self._paged(reviews, f"/pulls/{number}/comments", query)
        return json_answer(
            {
                "number": 8,
                "state": "open",
                "draft": False,
                "merged": False,
                "merged_at": None,
                "head": {"label": "author:lazy-config", "ref": "lazy-config", "sha": SHA},
                "base": {"label": f"{OWNER}:main", "ref": "main"},
                "additions": 50,
                "deletions": 2,
                "changed_files": 3,
                "commits": 2,
                "review_comments": 2,
                "diff_url": f"https://github.com/{OWNER}/{REPO}/pull/8.diff",
            }
        )

    def _commit(self) -> dict:
        return {
            "sha": SHA,
            "commit": {
                "message": "Read the config lazily\n\nThe config is read on first use.",
                "author": {
                    "name": "Ada Author",
                    "email": "ada@example.com",
                    "date": "2026-02-02T09:00:00Z",
                },
            },
            "author": {"login": "author"},
            "parents": [{"sha": "1" * 40}],
            "stats": {"total": 12, "additions": 10, "deletions": 2},
            "files": [
                {
                    "filename": "src/hello/app.py",
                    "status": "modified",
                    "additions": 10,
                    "deletions": 2,
                    "patch": "@@ -1,2 +1,2 @@\n-old\n+new",
                }
            ],
        }

    def _releases(self) -> list[dict]:
        return [
            {
                "tag_name": "v1.1",
                "name": "Hello 1.1",
                "body": "Reads the config lazily.",
                "draft": False,
                "prerelease": False,
                "published_at": "2026-03-01T00:00:00Z",
                "assets": [{"name": "hello-1.1.tar.gz", "size": 20480}],
            },
            {
                "tag_name": "v1.0",
                "name": "Hello 1.0",
                "body": "First release.",
                "draft": False,
                "prerelease": False,
                "published_at": "2026-01-01T00:00:00Z",
                "assets": [],
            },
        ]

    def _gist(self, parts: list[str]) -> Answer:
        if not parts or parts[0] != "aa5a315d61ae9438b18d":
            return _github_404()
        return json_answer(
            {
                "id": parts[0],
                "description": "Two small files",
                "owner": {"login": "gister"},
                "updated_at": "2026-01-05T00:00:00Z",
                "files": {
                    "hello.py": {
                        "filename": "hello.py",
                        "language": "Python",
                        "content": "print('hello')\n",
                        "truncated": False,
                    },
                    "notes.md": {
                        "filename": "notes.md",
                        "language": "Markdown",
                        "content": "# Notes\n\nShort.",
                        "truncated": False,
                    },
                },
            }
        )

    def _github_raw(self, path: str, query: dict, headers: dict) -> Answer:
        found = re.fullmatch(r"/([^/]+)/([^/]+)/(.+)", path)
        if not found or not self._visible(found.group(1), found.group(2), headers):
            return text_answer("404: Not Found", 404)
        rest = unquote(found.group(3))
        for ref in ("main", SHA, "refs/heads/main"):
            if rest.startswith(ref + "/") and rest[len(ref) + 1 :] in FILES:
                body = FILES[rest[len(ref) + 1 :]]
                kind = "image/png" if rest.endswith(".png") else "text/plain; charset=utf-8"
                return text_answer(body, kind=kind, **{"Cache-Control": "max-age=300"})
        return text_answer("404: Not Found", 404)

    def _github_web(self, path: str, query: dict, headers: dict) -> Answer:
        if path == f"/{OWNER}/{REPO}/pull/8.diff":
            return Answer(
                302,
                {
                    "Location": f"https://patch-diff.githubusercontent.com/raw/{OWNER}/{REPO}/pull/8.diff"
                },
            )
        return text_answer(github_page(path), kind="text/html; charset=utf-8")

    def _github_diff(self, path: str, query: dict, headers: dict) -> Answer:
        if path == f"/raw/{OWNER}/{REPO}/pull/8.diff":
            return text_answer(PULL_DIFF, kind="text/plain; charset=utf-8")
        return text_answer("404: Not Found", 404)

    # --- package registries --------------------------------------------------------------------

    def _pypi(self, path: str, query: dict, headers: dict) -> Answer:
        found = re.fullmatch(r"/pypi/([^/]+)(?:/([^/]+))?/json", path)
        if found:
            name, version = unquote(found.group(1)), found.group(2)
            normal = re.sub(r"[-_.]+", "-", name).lower()
            if normal != "pi-demo":
                return json_answer({"message": "Not Found"}, 404)
            if name != normal:  # PyPI redirects to the normalized name
                tail = f"/{version}" if version else ""
                return Answer(301, {"Location": f"https://pypi.org/pypi/{normal}{tail}/json"})
            if version not in (None, "2.1.0", "2.0.0"):
                return json_answer({"message": "Not Found"}, 404)
            document = pypi_document(version or "2.1.0")
            if version:  # a version's JSON has no "releases" (PyPI dropped it there in 2022)
                del document["releases"]
            return json_answer(document)
        if path.startswith("/project/"):
            return text_answer(pypi_page(), kind="text/html; charset=utf-8")
        return text_answer("Not Found", 404)

    def _npm_registry(self, path: str, query: dict, headers: dict) -> Answer:
        name = unquote(path.lstrip("/"))
        if name in ("tiny-lib", "@scope/widget"):
            return json_answer(npm_document(name))
        if name == "huge-lib":
            return json_answer({**npm_document(name), "padding": "x" * (17 * 1024 * 1024)})
        if name == "huge-lib/latest":
            return json_answer(npm_document("huge-lib")["versions"]["1.4.2"])
        return json_answer({"error": "Not found"}, 404)

    def _bot_wall(self, path: str, query: dict, headers: dict) -> Answer:
        """How npmjs.com and Stack Overflow's pages answer a bot: a Cloudflare 403."""
        return text_answer(
            "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
            "<h1>Checking your browser</h1><p>Enable JavaScript and cookies to continue</p>"
            "</body></html>",
            403,
            kind="text/html; charset=UTF-8",
            **{"cf-mitigated": "challenge", "Server": "cloudflare"},
        )

    # --- Stack Exchange ------------------------------------------------------------------------

    def _stackexchange(self, path: str, query: dict, headers: dict) -> Answer:
        with self.lock:
            self.se_quota -= 1
            quota = self.se_quota
        wrapper = {"quota_max": 300, "quota_remaining": quota}
        if self.se_backoff:
            wrapper["backoff"] = self.se_backoff
        if quota < 0:
            return json_answer(
                {
                    "error_id": 502,
                    "error_message": "too many requests from this IP, more requests available in 76327 seconds",
                    "error_name": "throttle_violation",
                },
                400,
                **{"X-Gzip": "1"},
            )
        site = query.get("site", "")
        if site not in ("stackoverflow.com", "stackoverflow", "unix.stackexchange.com"):
            return json_answer(
                {
                    "error_id": 400,
                    "error_message": f"No site found for name `{site}`",
                    "error_name": "bad_parameter",
                },
                400,
            )
        if query.get("filter") not in (None, "withbody") and path.startswith("/2.3/questions"):
            return json_answer(
                {"error_id": 404, "error_message": "no filter", "error_name": "bad_parameter"}, 400
            )
        found = re.fullmatch(r"/2\.3/questions/(\d+)(/answers)?", path)
        if found:
            question = se_question() if found.group(1) == "11227809" else None
            if found.group(2):
                answers = se_answers() if question else []
                size = int(query.get("pagesize", 30))
                page = int(query.get("page", 1))
                order = {  # the API's sorts (the default is activity), descending
                    "votes": "score",
                    "activity": "last_activity_date",
                    "creation": "creation_date",
                }[query.get("sort", "activity")]
                ordered = sorted(
                    answers, key=lambda a: a[order], reverse=query.get("order") != "asc"
                )
                chunk = ordered[(page - 1) * size : page * size]
                return json_answer(
                    {"items": chunk, "has_more": page * size < len(ordered), **wrapper},
                    **{"X-Gzip": "1"},
                )
            return json_answer(
                {"items": [question] if question else [], "has_more": False, **wrapper},
                **{"X-Gzip": "1"},
            )
        found = re.fullmatch(r"/2\.3/answers/(\d+)", path)
        if found:
            items = (
                [{"answer_id": int(found.group(1)), "question_id": 11227809}]
                if found.group(1) == "11227832"
                else []
            )
            return json_answer({"items": items, "has_more": False, **wrapper})
        return json_answer(
            {
                "error_id": 404,
                "error_message": "no method found with this name",
                "error_name": "no_method",
            },
            404,
        )

    # --- Hacker News, arXiv, Wikipedia, Reddit -------------------------------------------------

    def _hn(self, path: str, query: dict, headers: dict) -> Answer:
        found = re.fullmatch(r"/api/v1/items/(\d+)", path)
        if found and found.group(1) == "8863":
            return json_answer(hn_item())
        return json_answer({"status": 404, "error": "Not Found"}, 404)

    def _hn_page(self, path: str, query: dict, headers: dict) -> Answer:
        return text_answer(
            "<html><head><title>My YC app | Hacker News</title></head><body><center><table>"
            + "".join(f"<tr><td><a href='news?p={n}'>link {n}</a></td></tr>" for n in range(40))
            + "</table></center></body></html>",
            kind="text/html; charset=utf-8",
        )

    def _arxiv_api(self, path: str, query: dict, headers: dict) -> Answer:
        if path != "/api/query":
            return text_answer("Not Found", 404)
        return text_answer(
            arxiv_feed(query.get("id_list", "")), kind="application/atom+xml; charset=utf-8"
        )

    def _arxiv(self, path: str, query: dict, headers: dict) -> Answer:
        if path == "/html/2401.00001v2":
            return text_answer(ARXIV_HTML, kind="text/html; charset=utf-8")
        if path == "/pdf/2402.00002":
            from tests.support.pdfs import make_pdf

            return text_answer(
                make_pdf(["Deep results on page one", "More on page two"]), kind="application/pdf"
            )
        return text_answer(
            "<html><body>No HTML for this paper</body></html>", 404, kind="text/html"
        )

    def _wikipedia(self, path: str, query: dict, headers: dict) -> Answer:
        path = unquote(path)
        if path == "/api/rest_v1/page/html/Python_(programming_language)":
            return text_answer(
                WIKIPEDIA_HTML,
                kind='text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.8.0"',
            )
        if path == "/api/rest_v1/page/html/Python_language":
            return Answer(302, {"Location": "Python_(programming_language)"})
        if path.startswith("/api/rest_v1/page/html/"):
            return json_answer(
                {
                    "type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found",
                    "title": "Not found.",
                    "method": "get",
                    "detail": "Page or revision not found.",
                    "uri": path,
                },
                404,
            )
        return text_answer("<html><body>menus</body></html>", kind="text/html")

    def _reddit(self, path: str, query: dict, headers: dict) -> Answer:
        return text_answer("<html><body>Blocked</body></html>", 403, kind="text/html")

    # --- transports ----------------------------------------------------------------------------

    def activate(self, rsps) -> None:
        """Answer every GET of ``responses`` *rsps* from this fake (real URLs)."""

        def callback(request):
            answer = self.answer(request.url, dict(request.headers))
            headers = {k: v for k, v in answer.headers.items() if k != "X-Gzip"}
            return answer.status, headers, answer.body

        rsps.add_callback("GET", re.compile(r"https?://.*"), callback=callback)

    def serve(self) -> FakeSiteServer:
        """A started loopback server answering ``{base}/{host}{path}``."""
        self.server = FakeSiteServer(self).start()
        return self.server


def read_with(reader, url: str, seconds: float = 10.0):
    """*url* read by *reader* through a fresh ``SiteWeb`` with the network guard off (the
    test's transport answers): (its reading, the web)."""
    from pi_web_tools.runtime.reader_web import SiteWeb

    web = SiteWeb(reader, deadline=time.monotonic() + seconds, allow_private=True)
    return reader.read(url, web), web


def pypi_document(version: str) -> dict:
    """PyPI's JSON for the project pi-demo at *version*."""
    return {
        "info": {
            "name": "pi-demo",
            "version": version,
            "summary": "A demo package for the readers' tests",
            "requires_python": ">=3.9",
            "requires_dist": ["idna>=3.4", "rich>=13; extra == 'cli'"],
            "license_expression": "MIT",
            "license": None,
            "project_urls": {
                "Homepage": "https://demo.example",
                "Source": "https://github.com/octo-org/hello",
            },
            "home_page": None,
            "description": "# pi-demo\n\nInstall with `pip install pi-demo`.\n\n```python\nimport pi_demo\n```\n",
            "description_content_type": "text/markdown",
            "yanked": False,
        },
        "urls": [
            {
                "filename": f"pi_demo-{version}-py3-none-any.whl",
                "packagetype": "bdist_wheel",
                "upload_time_iso_8601": "2026-04-01T10:00:00.000000Z",
                "size": 12345,
            },
            {
                "filename": f"pi_demo-{version}.tar.gz",
                "packagetype": "sdist",
                "upload_time_iso_8601": "2026-04-01T10:00:01.000000Z",
                "size": 23456,
            },
        ],
        "releases": {"2.0.0": [], "2.1.0": []},
        "vulnerabilities": [],
        "last_serial": 1,
    }


def pypi_page() -> str:
    """pypi.org's project page as it is served: navigation, sidebar, the README in the middle."""
    nav = "".join(f'<li><a href="/help/#{n}">Help topic {n}</a></li>' for n in range(60))
    return (
        "<!DOCTYPE html><html><head><title>pi-demo · PyPI</title></head><body>"
        f"<header><nav><ul>{nav}</ul></nav></header><main><h1>pi-demo 2.1.0</h1>"
        "<p>pip install pi-demo</p><aside><h3>Navigation</h3><ul><li>Project description</li>"
        "<li>Release history</li><li>Download files</li></ul></aside>"
        "<div class='project-description'><h1>pi-demo</h1><p>Install with <code>pip install pi-demo</code>.</p></div>"
        f"</main><footer><ul>{nav}</ul></footer></body></html>"
    )


def npm_document(name: str) -> dict:
    """The registry's document of the npm package *name*."""
    return {
        "_id": name,
        "name": name,
        "description": "A tiny library for the readers' tests",
        "dist-tags": {"latest": "1.4.2", "next": "2.0.0-beta.1"},
        "versions": {
            "1.4.2": {
                "name": name,
                "version": "1.4.2",
                "description": "A tiny library for the readers' tests",
                "license": "MIT",
                "engines": {"node": ">=18"},
                "dependencies": {"left-pad": "^1.3.0"},
                "peerDependencies": {"react": ">=18"},
                "repository": {
                    "type": "git",
                    "url": "git+https://github.com/octo-org/tiny-lib.git",
                },
                "homepage": "https://tiny.example",
            },
            "2.0.0-beta.1": {"name": name, "version": "2.0.0-beta.1"},
        },
        "time": {"created": "2025-01-01T00:00:00.000Z", "1.4.2": "2026-03-03T00:00:00.000Z"},
        "readme": "# tiny-lib\n\n```js\nimport tiny from 'tiny-lib'\n```\n",
        "readmeFilename": "README.md",
        "license": "MIT",
    }


def se_question() -> dict:
    return {
        "question_id": 11227809,
        "title": "Why is processing a sorted array faster than processing an unsorted array?",
        "body": '<p>Here is a piece of <strong>C++</strong> code:</p>\n<pre class="lang-cpp"><code>for (unsigned c = 0; c &lt; arraySize; ++c)\n    data[c] = std::rand() % 256;\n</code></pre>\n<p>Why?</p>',
        "score": 27000,
        "answer_count": 3,
        "accepted_answer_id": 11227902,
        "tags": ["java", "c++", "performance"],
        "owner": {"display_name": "GManNickG"},
        "creation_date": 1340805096,
        "link": "https://stackoverflow.com/questions/11227809/why-is-processing-a-sorted-array-faster",
        "is_answered": True,
    }


def se_answers() -> list[dict]:
    return [
        {
            "answer_id": 11227902,
            "score": 34000,
            "is_accepted": True,
            "owner": {"display_name": "Mysticial"},
            "creation_date": 1340805300,
            "last_activity_date": 1700000000,
            "body": '<p>You are a victim of <a href="https://en.wikipedia.org/wiki/Branch_predictor">branch prediction</a> fail.</p>\n<pre><code>if (data[c] &gt;= 128)\n    sum += data[c];\n</code></pre>',
        },
        {
            "answer_id": 11227832,
            "score": 4500,
            "is_accepted": False,
            "owner": {"display_name": "Daniel Fischer"},
            "creation_date": 1340805200,
            "last_activity_date": 1500000000,
            "body": "<p>Branch prediction.</p>",
        },
        {
            "answer_id": 11303693,
            "score": 3000,
            "is_accepted": False,
            "owner": {"display_name": "WiSaGaN"},
            "creation_date": 1341200000,
            "last_activity_date": 1800000000,
            "body": "<p>Use a <code>cmov</code>.</p>",
        },
    ]


def hn_item() -> dict:
    def node(n: int, author: str, text: str | None, children: list) -> dict:
        return {
            "id": n,
            "type": "comment",
            "author": author,
            "text": text,
            "created_at": "2026-01-02T03:04:05.000Z",
            "children": children,
            "parent_id": 8863,
        }

    return {
        "id": 8863,
        "type": "story",
        "title": "My YC app: Dropbox - Throw away your USB drive",
        "url": "http://www.getdropbox.com/u/2/screencast.html",
        "author": "dhouston",
        "points": 111,
        "created_at": "2007-04-04T19:16:40.000Z",
        "text": None,
        "parent_id": None,
        "children": [
            node(
                9224,
                "BrandonM",
                "<p>I have a few qualms with this app:</p><p>1. For a Linux user, you can already build such a system yourself quite trivially</p>",
                [
                    node(
                        9272,
                        "dhouston",
                        "<p>1. re: the first part, many people want something simple.</p>",
                        [
                            node(
                                9479,
                                "BrandonM",
                                "<p>You are correct that this presents a very good, easy-to-use solution.</p>",
                                [],
                            ),
                        ],
                    ),
                ],
            ),
            node(8952, None, None, []),
            node(
                8917,
                "bay",
                '<p>Looks great. <a href="http://example.com/a/very/long/link" rel="nofollow">http://example.com/a/very/...</a></p>',
                [],
            ),
        ],
    }


def arxiv_feed(ids: str) -> str:
    """arXiv's export API answer for ``id_list=ids``."""
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        '<title type="html">ArXiv Query: search_query=&amp;id_list=' + ids + "</title>"
        '<opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{n}</opensearch:totalResults>'
    )
    papers = {
        "2401.00001v2": (
            "Attention Is Still All You Need",
            ["Ada Lovelace", "Alan Turing"],
            "cs.CL",
        ),
        "2402.00002": ("Deep Results Without HTML", ["Grace Hopper"], "cs.LG"),
    }
    if ids not in papers:
        return head.format(n=0) + "</feed>"
    title, authors, category = papers[ids]
    entry = (
        f"<entry><id>http://arxiv.org/abs/{ids}</id><updated>2024-01-05T00:00:00Z</updated>"
        f"<published>2024-01-01T00:00:00Z</published><title>{title}</title>"
        "<summary>  We show that attention, once more,\n  is all you need.\n</summary>"
        + "".join(f"<author><name>{a}</name></author>" for a in authors)
        + '<arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">12 pages, 3 figures</arxiv:comment>'
        f'<link href="http://arxiv.org/abs/{ids}" rel="alternate" type="text/html"/>'
        f'<link title="pdf" href="http://arxiv.org/pdf/{ids}" rel="related" type="application/pdf"/>'
        f'<arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="{category}" scheme="http://arxiv.org/schemas/atom"/>'
        f'<category term="{category}" scheme="http://arxiv.org/schemas/atom"/><category term="cs.AI" scheme="http://arxiv.org/schemas/atom"/>'
        "</entry>"
    )
    return head.format(n=1) + entry + "</feed>"


ARXIV_HTML = (
    "<!DOCTYPE html><html><head><title>Attention Is Still All You Need</title></head><body>"
    "<article class='ltx_document'><h1 class='ltx_title'>Attention Is Still All You Need</h1>"
    "<section><h2>1 Introduction</h2><p>Transformers remain the workhorse of sequence modelling. "
    "We revisit the original architecture and measure it again on modern benchmarks, finding "
    "that the attention mechanism alone still explains most of the gains reported since.</p>"
    "<p>Our contributions are threefold: a re-implementation, a careful evaluation, and a "
    "discussion of what changed in the data rather than in the models.</p></section>"
    "<section><h2>2 Method</h2><p>We train the base model for 100k steps with the published "
    "hyper-parameters and report the mean of five seeds on each benchmark considered here.</p>"
    "</section></article></body></html>"
)

WIKIPEDIA_HTML = (
    "<!DOCTYPE html><html prefix='dc: http://purl.org/dc/terms/'><head><meta charset='utf-8'/>"
    "<title>Python (programming language)</title></head><body>"
    "<section data-mw-section-id='0'><p><b>Python</b> is a high-level, general-purpose "
    "programming language. Its design philosophy emphasizes code readability with the use of "
    "significant indentation. Python is dynamically type-checked and garbage-collected.</p>"
    "<p>Guido van Rossum began working on Python in the late 1980s as a successor to the ABC "
    "programming language and first released it in 1991 as Python 0.9.0.</p></section>"
    "<section data-mw-section-id='1'><h2 id='History'>History</h2><p>Python was conceived in "
    "the late 1980s by Guido van Rossum at Centrum Wiskunde &amp; Informatica in the "
    "Netherlands. Python 3.0 was released on 3 December 2008.</p></section></body></html>"
)


def github_page(path: str) -> str:
    """A github.com page as a client without JavaScript gets it: the site's menus, scripts and
    footer around the content as GitHub serves it. A file's text sits in a JSON payload for the
    code viewer; a repository root has its README rendered; an issue its first 30 comments,
    the others behind "Load more"."""
    menu = "".join(f'<li><a href="/features/{n}">Feature {n}</a></li>' for n in range(80))
    head = (
        "<!DOCTYPE html><html><head><title>GitHub</title>"
        + "".join(f'<script src="/assets/{n}.js"></script>' for n in range(30))
        + f"</head><body><header><div>Skip to content</div><nav><ul>{menu}</ul></nav></header><main>"
    )
    tail = f"</main><footer><ul>{menu}</ul><p>© 2026 GitHub, Inc.</p></footer></body></html>"
    if path == f"/{OWNER}/{REPO}":
        readme = (
            "<article class='markdown-body'><h1>Hello</h1><p>A tiny project used by the tests "
            "of pi-web-tools.</p><h2>Install</h2><pre><code>pip install hello</code></pre></article>"
        )
        files = "".join(f"<div role='row'><a href='/x/{name}'>{name}</a></div>" for name in FILES)
        return head + f"<div>{files}</div>{readme}" + tail
    if path == f"/{OWNER}/{REPO}/issues/7":
        comments = "".join(
            f"<div class='timeline-comment'><h3>user{n % 7} commented</h3>"
            f"<p>Comment number {n}: the fix in step {n} works for me.</p></div>"
            for n in range(1, 31)
        )
        return (
            head
            + "<h1>Crash when the config is empty #7</h1><p>Steps: empty the config, run hello.</p>"
            + comments
            + "<div>100 hidden items <button>Load more…</button></div>"
            + tail
        )
    name = path.rsplit("/", 1)[-1]
    body = FILES.get(name) or FILES.get("src/hello/" + name) or app_source().encode()
    payload = json.dumps(
        {"payload": {"path": path, "blob": {"rawLines": body.decode().splitlines()}}}
    )
    return (
        head
        + '<react-app app-name="react-code-view"><script type="application/json" '
        + f'data-target="react-app.embeddedData">{payload}</script>'
        + "<div>Navigation Menu. Toggle navigation. Sign in.</div></react-app>"
        + tail
    )


class FakeSiteServer:
    """A loopback server for a :class:`Sites`: ``/{host}{path}`` is answered as a GET of
    ``https://{host}{path}``. Redirects to a real host are left as they are (the reader's
    ``baseUrl`` override routes them back here)."""

    def __init__(self, sites: Sites):
        self.sites = sites
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no delayed-ACK stalls skewing a timed baseline

            def log_message(self, *args):
                pass

            def do_GET(self):
                host, _, rest = self.path.lstrip("/").partition("/")
                answer = fake.sites.answer(f"https://{host}/{rest}", dict(self.headers))
                body = answer.body
                headers = dict(answer.headers)
                if "gzip" in self.headers.get("Accept-Encoding", "") and headers.pop(
                    "X-Gzip", None
                ):
                    body = gzip.compress(body)
                    headers["Content-Encoding"] = "gzip"
                self.send_response(answer.status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """What a reader's ``baseUrl`` gets."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeSiteServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeSiteServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = [
    "FILES",
    "Answer",
    "FakeSiteServer",
    "GITHUB_TOKEN",
    "OWNER",
    "REPO",
    "SHA",
    "Sites",
    "app_source",
    "json_answer",
    "read_with",
    "text_answer",
    "github_page",
]
