"""Nothing a model asked for is lost, in every host: long pages read to the end in windows, many
pages sharing the output limit, and the answer cache (one download, one summary request)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET, hits, kagi_config, serve
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import echo_tool_results as _echo_tool_results
from tests.support.hosts import mcp_stdio_session as _session
from tests.support.hosts import result_text as _text
from tests.support.hosts import run_async as _run
from tests.support.hosts import run_llm as _llm

BIN = Path(sys.executable).parent
#: 1 MiB of text whose every line says where it is, so a lost or repeated part shows.
BIG = "".join(f"line {i:06d}: {'abcdefghij' * 5}\n" for i in range(1024 * 1024 // 62 + 1))[
    : 1024 * 1024
]


def _page(i: int) -> str:
    """12,000 characters of page i, every line numbered."""
    return "".join(f"page {i} row {n:04d} {'x' * 40}\n" for n in range(400))[:12000]


@pytest.fixture
def server_log(tmp_path) -> Path:
    """Where the MCP server's stderr goes."""
    return tmp_path / "mcp-stderr.log"


class Pages:
    """The plain-text pages, served by the tests' loopback server (pytest-httpserver)."""

    def __init__(self, httpserver):
        self.server = httpserver
        routes = {f"/p{i}.txt": (200, "text/plain; charset=utf-8", _page(i)) for i in range(1, 7)}
        routes["/big.txt"] = (200, "text/plain; charset=utf-8", BIG)
        routes["/echo.txt"] = (
            200,
            "text/plain; charset=utf-8",
            f"this page echoes the key {SECRET} back",
        )
        self.url = serve(httpserver, routes)

    def hits(self, path: str) -> int:
        """How many requests *path* received."""
        return hits(self.server, path)


@pytest.fixture
def pages(write_config, httpserver):
    """The page server, and a config whose direct fetcher may reach loopback."""
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    return Pages(httpserver)


def _window(text: str) -> tuple[str, int | None]:
    """The page text of a one-URL answer and the next offset (``None`` at the end)."""
    head_end = text.index("\n\n") + 2  # "## [1/1] ...\nURL: ...\n\n"
    tail = re.search(
        r"\n\n\[Showing characters (\d+)–(\d+) of (\d+)(?:\. Next: web_fetch (.*)\]|: the end of the page\.\])$",
        text,
    )
    assert tail, text[-300:]
    body = text[head_end : tail.start()]
    if tail.group(4) is None:
        return body, None
    call = json.loads(tail.group(4))
    assert int(tail.group(2)) == call["offset"]
    return body, call["offset"]


def test_a_1mb_page_is_read_to_its_end_over_mcp_and_downloaded_once(agent_dir, server_log, pages):
    """Successive offset calls over MCP return every character exactly once, in order, and the
    page itself is downloaded a single time (the rest comes from the cache)."""
    url = f"{pages.url}/big.txt"
    parts: list[str] = []

    async def test():
        async with _session(agent_dir, server_log) as session:
            offset: int | None = 0
            while offset is not None:
                args = {"urls": [url], "text_max_characters": 50000}
                if offset:
                    args["offset"] = offset
                result = await session.call_tool("web_fetch", args)
                assert not result.is_error, _text(result)
                body, offset = _window(_text(result))
                parts.append(body)

    _run(test)
    assert "".join(parts) == BIG
    assert len(parts) == 21  # 1 MiB in windows of 50,000 characters
    assert pages.hits("/big.txt") == 1


def _six(pages: Pages) -> list[str]:
    return [f"{pages.url}/p{i}.txt" for i in range(1, 7)]


def _check_six(text: str, pages: Pages, cli: bool = False) -> None:
    """All six sections are there, each with its heading, text and continuation line (in the
    CLI, the pi-web command that reads on; for a model, the tool call)."""
    assert len(text.encode()) <= 50 * 1024 + 2048
    sections = text.split("\n\n---\n\n")
    assert len(sections) == 6
    for i, (section, url) in enumerate(zip(sections, _six(pages), strict=True), 1):
        assert section.startswith(f"## [{i}/6] {url}\nURL: {url}\n\npage {i} row 0000 ")
        next_call = (
            rf"pi-web fetch {re.escape(url)} --offset \d+ --content-hash [0-9a-f]{{8}}"
            if cli
            else rf'web_fetch {{"urls": \["{re.escape(url)}"\], "offset": \d+, "content_hash": "[0-9a-f]{{8}}"}}'
        )
        assert re.search(rf"\[Showing characters 0–\d+ of 12000\. Next: {next_call}\]", section)
    assert "[Output truncated:" in text and "Shortened to fit:" in text


def test_six_long_pages_share_the_limit_in_pi_web(pages, agent_dir):
    """`pi-web fetch` with six 12,000-character pages shows every page, each with a way on."""
    proc = subprocess.run(
        [str(BIN / "pi-web"), "fetch", *_six(pages)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    _check_six(proc.stdout.rstrip("\n"), pages, cli=True)


def test_six_long_pages_share_the_limit_in_llm(pages, tmp_path):
    """The same call as a tool of the `llm` CLI gives the same fair answer."""
    home = tmp_path / "llm-home"
    home.mkdir()
    call = json.dumps({"tool_calls": [{"name": "web_fetch", "arguments": {"urls": _six(pages)}}]})
    proc = _llm(home, "-m", "echo", "-T", "web_fetch", call)
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    _check_six(result["output"], pages)


def test_six_long_pages_share_the_limit_over_mcp(pages, agent_dir, server_log):
    """And over MCP."""
    texts = []

    async def test():
        async with _session(agent_dir, server_log) as session:
            texts.append(_text(await session.call_tool("web_fetch", {"urls": _six(pages)})))

    _run(test)
    _check_six(texts[0], pages)


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


def _summaries(kagi: FakeKagi) -> int:
    return sum(1 for r in kagi.requests if r.get("path", "").endswith("/summarize"))


def test_a_repeated_summary_costs_one_request_across_pi_web_runs(kagi):
    """Two `pi-web summarize` processes within the TTL: one API request (the disk cache)."""
    outputs = []
    for _ in range(2):
        proc = subprocess.run(
            [str(BIN / "pi-web"), "summarize", "https://example.com/a"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert _summaries(kagi) == 1


def test_a_repeated_summary_costs_one_request_in_llm_and_over_mcp(
    kagi, agent_dir, server_log, tmp_path
):
    """The llm bridge and the MCP server share that cache: still one request in all."""
    home = tmp_path / "llm-home"
    home.mkdir()
    call = json.dumps(
        {"tool_calls": [{"name": "summarize", "arguments": {"url": "https://example.com/b"}}]}
    )
    assert _llm(home, "-m", "echo", "-T", "summarize", call).returncode == 0

    async def test():
        async with _session(agent_dir, server_log) as session:
            result = await session.call_tool("summarize", {"url": "https://example.com/b"})
            assert not result.is_error

    _run(test)
    assert _summaries(kagi) == 1


def test_fresh_skips_the_cache(kagi, host):
    """fresh: true asks the API again (and the new answer is cached)."""
    host.call("summarize", {"url": "https://example.com/c"})
    again = host.call("summarize", {"url": "https://example.com/c"})
    assert again.details["cache"]["hit"] is True
    fresh = host.call("summarize", {"url": "https://example.com/c", "fresh": True})
    assert "cache" not in fresh.details
    assert _summaries(kagi) == 2


def test_no_key_byte_reaches_the_cache_directory(kagi, host, pages, write_config):
    """After search, summary and a page echoing the key, the sentinel key is in no file."""
    write_config(
        {
            **kagi_config(kagi.base_url),
            "providers": [
                *kagi_config(kagi.base_url)["providers"],
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
            ],
        }
    )
    assert not host.call("web_search", {"queries": [f"q {SECRET}"]}).is_error
    assert not host.call("summarize", {"url": f"https://example.com/?key={SECRET}"}).is_error
    fetched = host.call(
        "web_fetch", {"urls": [f"{pages.url}/echo.txt?k={SECRET}"], "provider": "direct"}
    )
    assert not fetched.is_error and SECRET not in fetched.text
    directory = Path(os.environ["XDG_CACHE_HOME"]) / "pi-web-tools"
    files = [p for p in directory.rglob("*") if p.is_file()]
    assert files, "nothing was cached"
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert (directory.stat().st_mode & 0o777) == 0o700
    assert all((p.stat().st_mode & 0o777) == 0o600 for p in files)
