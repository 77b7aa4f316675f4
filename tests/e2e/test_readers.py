"""Site readers end to end, through the hosts a user runs (``pi-web``, MCP over stdio, the
``llm`` CLI): against the fake sites on loopback through each reader's ``baseUrl`` override, and
at the real host names through an HTTPS proxy (``HTTPS_PROXY`` + ``REQUESTS_CA_BUNDLE``)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.hosts import PI_WEB, TIMEOUT
from tests.support.hosts import echo_tool_results as _echo_tool_results
from tests.support.hosts import mcp_stdio_session as _session
from tests.support.hosts import result_text as _text
from tests.support.hosts import run_async as _run
from tests.support.hosts import run_llm as _llm
from tests.support.site_proxy import SiteProxy
from tests.support.sites import GITHUB_TOKEN, OWNER, REPO, SHA, Sites, app_source

HELLO = f"https://github.com/{OWNER}/{REPO}"
READERS = ("github", "pypi", "npm", "stackexchange", "hackernews", "arxiv", "wikipedia")


@pytest.fixture
def sites():
    """The fake sites on a loopback server."""
    fake = Sites()
    with fake.serve():
        yield fake


def loopback_config(sites: Sites, **extra) -> dict:
    """The direct fetcher and every reader pointed at the loopback fake."""
    base = sites.server.base_url
    return {
        "providers": [{"name": "direct", "type": "direct", "options": {"timeoutSeconds": 20}}],
        "readers": {name: {"baseUrl": base} for name in READERS},
        **extra,
    }


def pi_web(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PI_WEB, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


# --- pi-web ------------------------------------------------------------------------------------


def test_pi_web_fetch_gives_a_github_files_exact_text(sites, write_config):
    write_config(loopback_config(sites))
    done = pi_web("fetch", f"{HELLO}/blob/main/src/hello/app.py")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert app_source().strip() in text
    assert "Note: read via raw.githubusercontent.com" in text
    assert "Skip to content" not in text  # none of github.com's page
    assert [entry["host"] for entry in sites.log] == ["raw.githubusercontent.com"]


def test_pi_web_config_lists_the_readers(sites, write_config):
    write_config(loopback_config(sites, readers={"npm": False}))
    done = pi_web("config")
    assert "- github: GitHub, files, folders" in done.stdout
    assert "- npm: npm, package pages" in done.stdout and "(off)" in done.stdout


def test_a_reader_switched_off_leaves_the_page_to_the_direct_fetch(sites, write_config):
    """With the Stack Exchange reader off, the question page meets its bot wall (403) again."""
    config = loopback_config(sites)
    config["readers"]["stackexchange"] = False
    config["providers"][0]["options"]["allowPrivateNetwork"] = True
    write_config(config)
    url = f"{sites.server.base_url}/stackoverflow.com/questions/11227809/why"
    done = pi_web("fetch", url)
    assert done.returncode != 0 and "HTTP 403" in done.stderr + done.stdout


# --- MCP over stdio ----------------------------------------------------------------------------


def test_mcp_reads_a_130_comment_issue_to_its_end_in_pages(
    sites, agent_dir, write_config, tmp_path
):
    write_config(loopback_config(sites))
    url = f"{HELLO}/issues/7"

    async def test():
        async with _session(agent_dir, tmp_path / "mcp.log") as session:
            first = await session.call_tool("web_fetch", {"urls": [url]})
            text = _text(first)
            assert not first.is_error, text
            assert "# Crash when the config is empty (#7)" in text
            assert "Note: read via the GitHub API" in text
            next_call = json.loads(text.rsplit("Next: web_fetch ", 1)[1].rstrip("]"))
            rest = ""
            while True:
                page = _text(await session.call_tool("web_fetch", next_call))
                rest += page
                if "Next: web_fetch " not in page:
                    break
                next_call = json.loads(page.rsplit("Next: web_fetch ", 1)[1].rstrip("]"))
            assert "Comment number 130:" in text + rest

    _run(test)
    api = sites.requests_to("api.github.com")
    assert len(api) == 3  # the issue and two pages of comments: reading on came from the cache


def test_mcp_names_the_pages_that_exist_when_a_github_file_is_missing(
    sites, agent_dir, write_config, tmp_path
):
    write_config(loopback_config(sites))
    url = f"{HELLO}/blob/master/src/hello/app.py"

    async def test():
        async with _session(agent_dir, tmp_path / "mcp.log") as session:
            first = await session.call_tool("web_fetch", {"urls": [url]})
            asked = len(sites.log)
            again = await session.call_tool("web_fetch", {"urls": [url]})
            assert len(sites.log) == asked  # remembered: no new request
            for result in (first, again):
                assert result.is_error
                text = _text(result)
                assert "default branch is main" in text
                assert f"- {HELLO}/blob/main/src/hello/app.py" in text
            assert "remembered for 10 minutes" in _text(again)

    _run(test)


# --- llm -------------------------------------------------------------------------------------


def test_llm_reads_a_pypi_project_and_a_stack_overflow_question(sites, write_config, tmp_path):
    write_config(loopback_config(sites))
    home = tmp_path / "llm-home"
    home.mkdir()
    call = {
        "tool_calls": [
            {
                "name": "web_fetch",
                "arguments": {
                    "urls": [
                        "https://pypi.org/project/pi-demo/",
                        "https://stackoverflow.com/questions/11227809/why",
                    ]
                },
            }
        ]
    }
    done = _llm(home, "-m", "echo", "-T", "web_fetch", json.dumps(call))
    assert done.returncode == 0, done.stderr
    [result] = _echo_tool_results(done.stdout)
    output = result["output"]
    assert "# pi-demo 2.1.0" in output and "Requires Python: >=3.9" in output
    assert "Note: read via PyPI's JSON API" in output
    assert "### Answer 1 · accepted · score 34000" in output
    assert "stackoverflow.com" not in {entry["host"] for entry in sites.log}


# --- at the real host names, through an HTTPS proxy --------------------------------------------


@pytest.fixture
def proxied(tmp_path, write_config):
    """The fake sites behind an HTTPS proxy on loopback; the config has only the direct
    fetcher, so every reader uses its real default URLs."""
    pytest.importorskip("trustme")  # the test CA (in the test extra)
    fake = Sites()
    with SiteProxy(fake, tmp_path) as proxy:
        write_config({"providers": [{"name": "direct", "type": "direct"}]})
        yield fake, proxy


def test_through_a_proxy_the_readers_use_the_real_urls_and_the_token_only_goes_to_github(proxied):
    sites, proxy = proxied
    env = {**proxy.environment(), "GITHUB_TOKEN": GITHUB_TOKEN}
    done = pi_web(
        "fetch",
        f"https://github.com/{OWNER}/secret",  # a private repository: visible with the token
        "https://www.npmjs.com/package/tiny-lib",
        "https://news.ycombinator.com/item?id=8863",
        f"{HELLO}/blob/{SHA}/README.md",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert f"# {OWNER}/secret" in done.stdout
    assert "# tiny-lib 1.4.2" in done.stdout and "# My YC app: Dropbox" in done.stdout
    assert "pip install hello" in done.stdout
    assert GITHUB_TOKEN not in done.stdout + done.stderr
    for entry in sites.log:
        github = entry["host"].endswith(("github.com", "githubusercontent.com"))
        assert (entry["headers"].get("authorization") == f"Bearer {GITHUB_TOKEN}") == github, entry
    assert set(proxy.tunnels) >= {"api.github.com", "registry.npmjs.org", "hn.algolia.com"}
    assert "www.npmjs.com" not in proxy.tunnels


def test_through_a_proxy_a_spent_github_limit_falls_back_to_the_page_with_a_clear_note(proxied):
    sites, proxy = proxied
    sites.github_budget = 0
    done = pi_web("fetch", f"{HELLO}/issues/7", env=proxy.environment())
    assert done.returncode == 0, done.stderr
    assert "the GitHub API rate limit is spent (60 requests an hour without a token)" in done.stdout
    assert "GITHUB_TOKEN" in done.stdout
    assert "github.com" in proxy.tunnels  # the page itself, fetched instead


def test_through_a_proxy_a_call_naming_its_provider_is_not_read_by_a_reader(proxied):
    sites, proxy = proxied
    done = pi_web(
        "fetch",
        f"{HELLO}/blob/main/src/hello/app.py",
        "--provider",
        "direct",
        env=proxy.environment(),
    )
    assert "read via" not in done.stdout
    assert proxy.tunnels == ["github.com"]


def test_through_a_proxy_the_readers_page_comes_back_after_other_fetches_of_its_url(proxied):
    """Neither a call naming its provider nor a spent GitHub limit leaves GitHub's page chrome
    in the cache for the calls after it: once the token is set, the file is read again."""
    sites, proxy = proxied
    url = f"{HELLO}/blob/main/src/hello/app.py"
    named = pi_web("fetch", url, "--provider", "direct", env=proxy.environment())
    assert "read via" not in named.stdout
    sites.github_budget = 0
    spent = pi_web("fetch", f"{HELLO}/issues/7", env=proxy.environment())
    assert "rate limit is spent" in spent.stdout
    with_token = {**proxy.environment(), "GITHUB_TOKEN": GITHUB_TOKEN}
    for target, text in ((url, "value_40 = 40"), (f"{HELLO}/issues/7", "Comment number 130")):
        done = pi_web("fetch", target, "--max-chars", "50000", env=with_token)
        assert done.returncode == 0, done.stderr
        assert text in done.stdout and "rate limit is spent" not in done.stdout


def test_reddit_is_said_to_be_closed_without_a_request(proxied):
    sites, proxy = proxied
    done = pi_web(
        "fetch", "https://www.reddit.com/r/python/comments/abc/x/", env=proxy.environment()
    )
    assert done.returncode != 0
    assert "Reddit closed anonymous access" in done.stdout + done.stderr
    assert proxy.tunnels == []


def test_an_oversized_registry_answer_is_bounded(proxied):
    sites, proxy = proxied
    done = pi_web("fetch", "https://www.npmjs.com/package/huge-lib", env=proxy.environment())
    assert done.returncode == 0, done.stderr
    assert "# huge-lib 1.4.2" in done.stdout and "larger than 16 MB" in done.stdout


def test_a_malformed_api_answer_is_named_and_the_page_fetched_instead(proxied):
    sites, proxy = proxied
    from tests.support.sites import json_answer

    sites.routes.append(("hn.algolia.com", lambda path, query, headers: json_answer(["odd"])))
    done = pi_web("fetch", "https://news.ycombinator.com/item?id=8863", env=proxy.environment())
    assert done.returncode == 0, done.stderr
    assert "answered an unexpected shape for item 8863" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


# --- Markdown, llms.txt and 404 help on any site, through pi-web ------------------------------


def test_pi_web_names_a_sites_pages_on_a_404_and_a_roots_llms_txt(httpserver, write_config):
    base = httpserver.url_for("").rstrip("/")
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{base}/docs/install-guide</loc></url><url><loc>{base}/blog/news</loc></url>"
        "</urlset>"
    )
    httpserver.expect_request("/sitemap.xml").respond_with_data(
        sitemap, content_type="application/xml"
    )
    httpserver.expect_request("/llms.txt").respond_with_data(
        "# Docs\n\n- [Install](/docs/install-guide)\n", content_type="text/plain"
    )
    httpserver.expect_request("/").respond_with_data(
        "<html><head><title>Home</title></head><body><article><h1>Home</h1><p>"
        + "Welcome to the documentation of this project. " * 10
        + "</p></article></body></html>",
        content_type="text/html",
    )
    httpserver.expect_request("/guide").respond_with_data(
        "# Guide\n\nUse it.\n", content_type="text/markdown"
    )
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    missing = pi_web("fetch", f"{base}/docs/install")
    assert missing.returncode != 0
    said = missing.stdout + missing.stderr
    assert "HTTP 404" in said and f"- {base}/docs/install-guide" in said
    root = pi_web("fetch", f"{base}/")
    assert f"this site offers {base}/llms.txt" in root.stdout
    guide = pi_web("fetch", f"{base}/guide")
    assert "# Guide\n\nUse it." in guide.stdout and "served this page as Markdown" in guide.stdout
