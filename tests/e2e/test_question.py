"""web_fetch's question and find in every host, as users run them: `pi-web fetch --question /
--find`, MCP over stdio and streamable HTTP, and the `llm` CLI; one download per page whatever
the host and however many questions."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from tests.support import hits, serve
from tests.support.hosts import (
    PI_WEB,
    echo_tool_results,
    mcp_http_serving,
    mcp_http_session,
    mcp_stdio_session,
    result_text,
    run_async,
    run_llm,
)

FILLER = (
    "The harbour town keeps its old stone walls, and visitors walk along them in the evening "
    "to watch the fishing boats come back with the tide. "
)
GUIDE = "\n\n".join(
    [
        "# Beginner's guide",
        FILLER * 12,
        "## Reloading",
        "To reload the configuration, run nginx -s reload; the master process checks it and "
        "starts new worker processes.",
        FILLER * 12,
    ]
)
QUESTION = "How do I reload the nginx configuration?"


@pytest.fixture
def guide(httpserver, write_config):
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    return serve(httpserver, {"/guide": (200, "text/markdown", GUIDE)}) + "/guide"


def _pi_web(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, timeout=60)


def test_pi_web_fetch_question_and_find(guide, httpserver):
    asked = _pi_web("fetch", guide, "--question", QUESTION)
    assert asked.returncode == 0, asked.stderr
    assert "nginx -s reload" in asked.stdout
    assert re.search(r"^\[offset \d+\]$", asked.stdout, re.M)
    # the last line is the pi-web command that reads around the best passage, and it runs
    command = re.search(r"Read around it: (pi-web fetch .*)\]$", asked.stdout, re.M).group(1)
    words = shlex.split(command)
    offset = int(words[words.index("--offset") + 1])
    around = _pi_web(*shlex.split(command)[1:])
    assert around.returncode == 0 and GUIDE[offset : offset + 30] in around.stdout
    found = _pi_web("fetch", guide, "--find", "reload", "--find", "WORKER")
    assert found.returncode == 0, found.stderr
    assert '"reload" 3, "WORKER" 1' in found.stdout
    unanswered = _pi_web("fetch", guide, "--question", "How do I rotate TLS certificates?")
    assert "this page may not answer the question" in unanswered.stdout
    assert f"Read it in windows: pi-web fetch {guide}, or look for exact words with --find" in (
        unanswered.stdout
    )
    assert hits(httpserver, "/guide") == 1  # one download, four processes, the disk cache


def test_mcp_stdio_and_http_answer_questions_from_one_download(
    agent_dir, tmp_path, guide, httpserver
):
    results = {}

    async def over_stdio():
        async with mcp_stdio_session(agent_dir, tmp_path / "stdio.log") as session:
            results["question"] = await session.call_tool(
                "web_fetch", {"urls": [guide], "question": QUESTION}
            )
            results["find"] = await session.call_tool(
                "web_fetch", {"urls": [guide], "find": ["worker"]}
            )
            results["bad"] = await session.call_tool(
                "web_fetch", {"urls": [guide], "question": "   "}
            )

    run_async(over_stdio)
    with mcp_http_serving(agent_dir) as server:

        async def over_http():
            async with mcp_http_session(server.url) as session:
                results["http"] = await session.call_tool(
                    "web_fetch", {"urls": [guide], "question": QUESTION}
                )

        run_async(over_http)
    assert "nginx -s reload" in result_text(results["question"])
    assert "offset" in result_text(results["find"]) and '"worker" 1' in result_text(results["find"])
    assert results["bad"].is_error and "question: give the question in words" in result_text(
        results["bad"]
    )
    assert result_text(results["http"]) == result_text(results["question"])
    assert hits(httpserver, "/guide") == 1


def test_llm_calls_web_fetch_with_a_question(tmp_path, guide):
    home = tmp_path / "llm-home"
    home.mkdir()
    call = {
        "tool_calls": [{"name": "web_fetch", "arguments": {"urls": [guide], "question": QUESTION}}]
    }
    proc = run_llm(home, "-m", "echo", "-T", "web_fetch", json.dumps(call))
    assert proc.returncode == 0, proc.stderr
    (result,) = echo_tool_results(proc.stdout)
    assert "nginx -s reload" in result["output"]
    assert re.search(r"Read around it: web_fetch \{.*\}\]$", result["output"], re.M)


def _no_browser() -> str | None:
    from pi_web_tools.providers.browser import setup_problem

    return setup_problem()


@pytest.mark.browser
def test_a_page_the_browser_rendered_answers_questions_from_its_cached_copy(
    httpserver, write_config
):
    """An application shell rendered by the browser rung is asked twice: one render."""
    problem = _no_browser()
    if problem:
        pytest.skip(f"no browser here: {problem}")
    paragraph = (
        "<p>The lighthouse keeper lights the lamp at dusk and the ferry to the island "
        "leaves from the north pier every hour in summer.</p>"
    )
    shell = (
        "<html><head><title>App</title></head><body><div id='root'></div><script>"
        "document.getElementById('root').innerHTML = '<article><h1>Harbour guide</h1>"
        f"{paragraph * 6}<h2>Fees</h2><p>Mooring costs 14 euros a night for small "
        "boats.</p></article>';</script></body></html>"
    )
    url = serve(httpserver, {"/app": (200, "text/html; charset=utf-8", shell)}) + "/app"
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
                {"name": "chrome", "type": "browser", "options": {"allowPrivateNetwork": True}},
            ]
        }
    )
    first = _pi_web("fetch", url, "--question", "How much does mooring cost per night?")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "rendered in a local browser" in first.stdout
    assert "14 euros a night" in first.stdout
    served = hits(httpserver, "/app")
    again = _pi_web("fetch", url, "--find", "ferry")
    assert "north pier" in again.stdout
    assert hits(httpserver, "/app") == served
