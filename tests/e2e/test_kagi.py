"""End to end: the installed `pi-web` CLI against a loopback Kagi (v1 search and Extract, v0
search and the summarizer), configured through baseUrl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET, kagi_config
from tests.support.fake_apis import FakeKagi

PI_WEB = str(Path(sys.executable).parent / "pi-web")


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KAGI_API_KEY"}
    env["NO_COLOR"] = "1"
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def test_pi_web_call_json(kagi):
    """`pi-web call web_search ... --json` prints exactly one JSON result object."""
    proc = _run("call", "web_search", '{"queries": ["rust async", "tokio"]}', "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) == {"content", "details", "isError"} and result["isError"] is False
    text = result["content"][0]["text"]
    assert text.startswith(
        'Query: "rust async"\n1. rust async — page 1\n   https://results.example/rust-async/1\n   All about rust async & more (1)\n   Published: 2026-03-01'
    )
    assert "4. tokio — page 1" in text
    assert SECRET not in proc.stdout + proc.stderr
    assert sorted(r["json"]["query"] for r in kagi.requests) == ["rust async", "tokio"]
    assert {(r["method"], r["path"]) for r in kagi.requests} == {("POST", "/api/v1/search")}
    assert {r["headers"]["Authorization"] for r in kagi.requests} == {f"Bearer {SECRET}"}


def test_pi_web_call_rendered(kagi):
    """Without --json the call line then the collapsed (or expanded) view are printed."""
    proc = _run("call", "web_search", '{"queries": ["rust async"]}')
    assert proc.returncode == 0
    assert proc.stdout == 'web_search "rust async"\n3 results\n'
    expanded = _run("call", "web_search", '{"queries": ["rust async"]}', "--expanded").stdout
    assert expanded.startswith('web_search "rust async"\n3 results\n1. rust async — page 1')


def test_pi_web_search_shortcut(kagi):
    """`pi-web search x` prints the text the model sees."""
    proc = _run("search", "x")
    assert proc.returncode == 0
    assert proc.stdout.startswith("1. x — page 1\n   https://results.example/x/1\n")
    assert 'Related searches for "x": x tutorial; x examples' in proc.stdout


def test_pi_web_summarize_shortcut(kagi):
    """`pi-web summarize URL --type takeaway --engine agnes --lang de` sends those and prints the output."""
    proc = _run(
        "summarize",
        "https://example.com/a",
        "--type",
        "takeaway",
        "--engine",
        "agnes",
        "--lang",
        "de",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "- First point\n- Second point\n"
    assert kagi.requests[-1]["json"] == {
        "url": "https://example.com/a",
        "summary_type": "takeaway",
        "engine": "agnes",
        "target_language": "DE",
    }


def test_a_key_refused_by_both_versions_says_what_each_answered(kagi, write_config):
    """A wrong key gives exit 1 and one message with v1's status, code, message and trace and
    v0's answer; the key appears nowhere."""
    config = kagi_config(kagi.base_url)
    config["providers"][0]["apiKey"] = "wrong-key-123456"
    write_config(config)
    proc = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["content"][0]["text"] == (
        "web_search failed: Kagi: both search APIs failed: v1 answered HTTP 401 Unauthorized: "
        "Invalid API key (code general.unauthorized); trace trace-5f0e7c3a; v0 answered HTTP 401 "
        "Unauthorized: Unauthorized (code 2). Check the key at https://kagi.com/settings/api."
    )
    assert "wrong-key-123456" not in proc.stdout + proc.stderr


def test_pi_web_config_redacts_keys(kagi):
    """`pi-web config` names the file and provider, showing at most the key's last 4 characters."""
    proc = _run("config")
    assert proc.returncode == 0
    assert "web-search.json" in proc.stdout and "- kagi: type kagi" in proc.stdout
    assert "from providers[0]" in proc.stdout
    assert SECRET not in proc.stdout and f"…{SECRET[-4:]}" in proc.stdout


def _search_once(write_config, fake, **options) -> subprocess.CompletedProcess:
    write_config(kagi_config(fake.base_url, **options))
    return _run("search", "x")


def _error_text(proc: subprocess.CompletedProcess) -> str:
    return json.loads(proc.stdout)["content"][0]["text"]


def test_a_v1_only_key_works_with_no_api_version_in_the_file(write_config):
    """A key issued today (v1 only, v0 answers 401) searches through v1 with Bearer auth."""
    with FakeKagi(SECRET, versions=("v1",)) as fake:
        proc = _search_once(write_config, fake)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("1. x — page 1\n   https://results.example/x/1\n")
    assert 'Related searches for "x": x tutorial; x examples' in proc.stdout
    assert [(r["method"], r["path"]) for r in fake.requests] == [("POST", "/api/v1/search")]


def test_an_old_v0_key_still_works_through_one_v0_try(write_config):
    """An old key (v1 answers 401) is tried once on v0 with Bot auth, and the results are the
    seeds' numbered list."""
    with FakeKagi(SECRET, versions=("v0",)) as fake:
        proc = _search_once(write_config, fake)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("1. x — page 1\n   https://results.example/x/1\n")
    assert [(r["method"], r["path"], r["headers"]["Authorization"]) for r in fake.requests] == [
        ("POST", "/api/v1/search", f"Bearer {SECRET}"),
        ("GET", "/api/v0/search", f"Bot {SECRET}"),
    ]


def test_the_version_that_worked_is_remembered_for_the_provider(host, write_config):
    """In one process, after v0 worked for a key, the next query goes straight to v0."""
    with FakeKagi(SECRET, versions=("v0",)) as fake:
        write_config(kagi_config(fake.base_url))
        first = host.call("web_search", {"queries": ["a"]})
        second = host.call("web_search", {"queries": ["b"]})
    assert not first.is_error and not second.is_error
    assert [r["path"] for r in fake.requests] == [
        "/api/v1/search",
        "/api/v0/search",
        "/api/v0/search",
    ]


@pytest.mark.parametrize("version, path", [("v0", "/api/v0/search"), ("v1", "/api/v1/search")])
def test_an_explicit_api_version_forces_it(write_config, version, path):
    """ "apiVersion": "v0" or "v1" sends only that version, even when it fails."""
    with FakeKagi(SECRET, versions=("v0", "v1")) as fake:
        proc = _search_once(write_config, fake, apiVersion=version)
    assert proc.returncode == 0
    assert [r["path"] for r in fake.requests] == [path]


def test_a_forced_v0_with_a_v1_only_key_suggests_auto(write_config):
    """A v1 key on a forced v0 gets the 401 and the advice to drop apiVersion."""
    with FakeKagi(SECRET, versions=("v1",)) as fake:
        write_config(kagi_config(fake.base_url, apiVersion="v0"))
        proc = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert proc.returncode == 1
    text = _error_text(proc)
    assert "HTTP 401 Unauthorized: Unauthorized (code 2)" in text
    assert 'remove "apiVersion"' in text
    assert [r["path"] for r in fake.requests] == ["/api/v0/search"]


@pytest.mark.parametrize("error_key", ["error", "errors"])
def test_v1_errors_carry_status_code_message_and_trace(write_config, error_key):
    """A v1 403 in either envelope ({error} or {errors}) names the status, Kagi's code and
    message and meta.trace, and is not retried on v0."""
    with FakeKagi(SECRET, versions=("v1",), error_key=error_key) as fake:
        fake.fail = (403, "auth.ip_not_allowed", "IP address not authorized")
        write_config(kagi_config(fake.base_url))
        proc = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert proc.returncode == 1
    assert _error_text(proc) == (
        "web_search failed: Kagi: HTTP 403 Forbidden: IP address not authorized "
        "(code auth.ip_not_allowed); trace trace-5f0e7c3a"
    )
    assert [r["path"] for r in fake.requests] == ["/api/v1/search"]


def test_domain_and_date_filters_go_to_lens_and_filters(kagi):
    """include/exclude_domains become lens.sites_included/excluded; the published-date filters
    become filters.after/before; the query itself stays as written."""
    args = {
        "queries": ["rust"],
        "include_domains": ["docs.rs"],
        "exclude_domains": ["spam.example"],
        "start_published_date": "2026-01-01",
        "end_published_date": "2026-06-30T00:00:00Z",
    }
    proc = _run("call", "web_search", json.dumps(args), "--expanded")
    assert proc.returncode == 0, proc.stdout
    assert "https://docs.rs/rust/1" in proc.stdout
    body = kagi.requests[-1]["json"]
    assert body["query"] == "rust"
    assert body["lens"] == {"sites_included": ["docs.rs"], "sites_excluded": ["spam.example"]}
    assert body["filters"] == {"after": "2026-01-01", "before": "2026-06-30"}


def test_the_summarizer_stays_on_v0_with_bot_auth(kagi):
    """summarize posts to /api/v0/summarize with Bot, whatever the search version."""
    proc = _run("summarize", "https://example.com/a")
    assert proc.returncode == 0
    assert (kagi.requests[-1]["path"], kagi.requests[-1]["headers"]["Authorization"]) == (
        "/api/v0/summarize",
        f"Bot {SECRET}",
    )


def test_kagi_extract_fetches_when_named_in_batches_of_ten(kagi):
    """provider="kagi" reads pages through Kagi Extract: at most 10 pages a request, https
    only, per-URL sections and failures like the other fetchers."""
    urls = [f"https://site.example/{i}" for i in range(11)]
    urls += ["https://site.example/missing", "http://plain.example/x"]
    proc = _run("call", "web_fetch", json.dumps({"urls": urls, "provider": "kagi"}), "--json")
    assert proc.returncode == 0, proc.stdout
    result = json.loads(proc.stdout)
    text = result["content"][0]["text"]
    assert "Text of https://site.example/10" in text and "# Page 0" in text
    facts = {f["url"]: f for f in result["details"]["urls"]}
    assert facts["https://site.example/missing"]["error"] == (
        "Page not reachable (code extract.fetch_failed)"
    )
    assert facts["http://plain.example/x"]["error"] == (
        'Kagi Extract reads https URLs only; fetch it with another fetcher: pass provider "direct"'
    )
    extracts = [r for r in kagi.requests if r["path"] == "/api/v1/extract"]
    assert [len(r["json"]["pages"]) for r in extracts] == [10, 2]
    assert {r["headers"]["Authorization"] for r in extracts} == {f"Bearer {SECRET}"}
    assert result["details"]["fetched"] == 11 and result["details"]["failed"] == 2


def test_a_kagi_only_config_keeps_the_direct_fetcher_by_default(kagi, write_config):
    """Kagi Extract costs credit and reads https only: web_fetch uses the keyless direct
    fetcher unless the call names kagi or the file sets defaultFetchProvider."""
    from pi_web_tools.runtime.registry import resolve_provider

    assert resolve_provider("fetch").entry.name == "direct"
    assert resolve_provider("fetch", "kagi").entry.name == "kagi"
    config = kagi_config(kagi.base_url)
    config["defaultFetchProvider"] = "kagi"
    write_config(config)
    assert resolve_provider("fetch").entry.name == "kagi"
    report = _run("config").stdout
    assert "Default for web_fetch: kagi" in report


def test_the_https_only_hint_names_the_users_own_fetcher(kagi, write_config):
    """With a keyless fetcher the user named `local`, Kagi's https-only refusal names it."""
    config = kagi_config(kagi.base_url)
    config["providers"].append({"name": "local", "type": "direct"})
    write_config(config)
    args = {"urls": ["http://plain.example/x"], "provider": "kagi"}
    proc = _run("call", "web_fetch", json.dumps(args), "--json")
    error = json.loads(proc.stdout)["details"]["urls"][0]["error"]
    assert (
        error
        == 'Kagi Extract reads https URLs only; fetch it with another fetcher: pass provider "local"'
    )


def test_the_https_only_hint_in_pi_web_fetch_is_the_option_to_pass(kagi, write_config):
    """On the command line the same hint is the --provider option, not a tool argument."""
    config = kagi_config(kagi.base_url)
    config["providers"].append({"name": "local", "type": "direct"})
    write_config(config)
    proc = _run("fetch", "http://plain.example/x", "--provider", "kagi")
    assert "fetch it with another fetcher: pass --provider local" in proc.stdout
    assert 'pass provider "local"' not in proc.stdout
