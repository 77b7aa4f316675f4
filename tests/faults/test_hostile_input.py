"""Hostile input, property-based: any JSON for any tool argument, and any JSON as the config file.
Nothing reaches the network (``responses`` answers every request); every call ends in a
ToolResult, a clean error or a valid result, never an unhandled exception."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pi_hostspec import PlainTheme, RenderOptions, ToolResult
from pi_web_tools.api.errors import ConfigError
from pi_web_tools.providers.kagi import SUMMARY_LANGUAGES
from pi_web_tools.runtime import config as config_mod
from pi_web_tools.views import human_view as render

from tests.support import SECRET

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# --------------------------------------------------------------------------- strategies

ODD = [
    "",
    " ",
    "\n",
    "\t",
    "\x00",
    "\x1b[2J",
    "\x1b]52;c;AAAA\x07",
    "\u202e",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "\U0010ffff",
    "\U0001f4a9",
    "e\u0301",
    "\u0130",
    "\u00df",
    "\ud7ff",
    "\ue000",
    "𝕏",
    "ﷺ",
    "\u2028",
    "\u2029",
    "%00",
    "%",
    "http://",
    "https://",
    "http://[::1",
    "http://a:99999/",
    "http://xn--/",
    "http://ex ample.com/",
    "http://\u0000/",
    "http://127.0.0.1:0/",
    "https://example.com/a?key=" + SECRET,
    "file:///etc/passwd",
    "javascript:alert(1)",
    "//example.com",
    "http://user:pass@example.com/",
    "http://%zz/",
    "http://.../",
    "http://" + "a" * 300 + ".com/",
    "http://例え.テスト/パス",
    "HTTP://EXAMPLE.COM",
    "http://[fe80::1%25eth0]/",
]
odd_strings = st.one_of(
    st.sampled_from(ODD),
    st.text(max_size=40),  # any code point but surrogates
    st.builds(
        lambda piece, n: piece * n,
        st.sampled_from(["a", "é", "\U0001f4a9", " ", "\x1b", "<p>"]),
        st.integers(0, 100_000),
    ),
    st.builds(
        lambda a, b: a + b,
        st.sampled_from(["http://h.test/", "https://kagi.test/"]),
        st.text(max_size=30),
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    odd_strings,
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def deep(depth: int):
    """A list nested *depth* levels deep."""
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def field(valid):
    """A field's value: usually a plausible one, often any JSON at all."""
    return st.one_of(valid, valid, json_values, odd_strings)


providers = st.sampled_from(["kagi", "exa", "direct", "nope", ""]) | odd_strings
urls = st.one_of(
    st.builds(lambda tail: "http://h.test/" + tail, st.text(max_size=30)),
    st.sampled_from(["https://example.com/a", "http://127.0.0.1:1/x", "https://kagi.test/p"]),
    odd_strings,
)
FIELDS = {
    "web_search": {
        "queries": st.lists(odd_strings, min_size=0, max_size=11),
        "query": odd_strings,
        "limit": st.integers(-5, 60),
        "include_domains": st.lists(odd_strings, max_size=3),
        "exclude_domains": st.lists(odd_strings, max_size=3),
        "start_published_date": st.sampled_from(["2025-01-01", "2025-13-45T99", "0000-00-00"])
        | odd_strings,
        "end_published_date": st.sampled_from(["2026-12-31", "9999-99-99"]) | odd_strings,
        "category": st.sampled_from(["news", "pdf", "people"]) | odd_strings,
        "provider": providers,
    },
    "web_fetch": {
        "urls": st.lists(urls, max_size=21),
        "url": urls,
        "text": st.booleans(),
        "highlights": st.booleans(),
        "summary": st.booleans(),
        "text_max_characters": st.integers(-1, 2_000_000),
        "provider": providers,
    },
    "summarize": {
        "url": urls,
        "summary_type": st.sampled_from(["summary", "takeaway"]),
        "engine": st.sampled_from(["cecil", "agnes"]),
        "target_language": st.sampled_from(SUMMARY_LANGUAGES) | odd_strings,
        "provider": providers,
    },
}


@st.composite
def arguments(draw, tool: str):
    """Arguments for *tool*: any subset of its fields (and strangers), each plausible or hostile."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)  # not even an object
    specs = FIELDS[tool]
    chosen = draw(st.lists(st.sampled_from(sorted(specs)), unique=True, max_size=len(specs)))
    args = {name: draw(field(specs[name])) for name in chosen}
    if draw(st.integers(0, 5)) == 0:
        args[draw(st.text(max_size=8))] = draw(json_values)
    return args


# --------------------------------------------------------------------------- a network that always answers


def _answer(request):
    """A valid answer from whichever API the URL names, echoing what was asked."""
    parts = urlsplit(request.url)
    body = json.loads(request.body) if request.body else {}
    if parts.hostname == "kagi.test" and parts.path.endswith("/search"):
        query = parse_qs(parts.query).get("q", [""])[0]
        data = [
            {"t": 0, "url": f"https://r.example/{i}", "title": query, "snippet": query}
            for i in range(3)
        ]
        return (
            200,
            {},
            json.dumps({"meta": {"api_balance": 1.5}, "data": data + [{"t": 1, "list": [query]}]}),
        )
    if parts.hostname == "kagi.test":
        return (
            200,
            {},
            json.dumps({"data": {"output": f"Summary of {body.get('url')}", "tokens": 3}}),
        )
    if parts.hostname == "exa.test" and parts.path == "/search":
        query = body.get("query", "")
        return (
            200,
            {},
            json.dumps({"results": [{"url": "https://r.example/", "title": query, "text": query}]}),
        )
    if parts.hostname == "exa.test":
        results = [
            {"id": url, "url": url, "title": url, "text": f"text of {url}"}
            for url in body.get("urls", [])
        ]
        return (
            200,
            {},
            json.dumps(
                {
                    "results": results[::2],
                    "statuses": [
                        {
                            "id": url,
                            "status": "error",
                            "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404},
                        }
                        for url in body.get("urls", [])[1::2]
                    ],
                }
            ),
        )
    page = (
        f"<html><head><title>{request.url}</title></head><body><p>{request.url}</p></body></html>"
    )
    return 200, {"Content-Type": "text/html; charset=utf-8"}, page


@pytest.fixture
def network():
    """Every request answered by _answer; nothing leaves the machine."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for method in (responses.GET, responses.POST):
            mock.add_callback(method, re.compile(r".*"), callback=_answer)
        yield mock


@pytest.fixture
def all_providers(write_config, network):
    """Kagi, Exa and a loopback-allowed direct fetcher, all served by the fake network."""
    write_config(
        {
            "defaultProvider": "kagi",
            "providers": [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": SECRET,
                    "options": {
                        "baseUrl": "https://kagi.test/api/v0",
                        "apiVersion": "v0",
                        "timeoutSeconds": 2,
                    },
                },
                {
                    "name": "exa",
                    "type": "exa",
                    "apiKey": SECRET,
                    "options": {"baseUrl": "https://exa.test", "timeoutSeconds": 2},
                },
                {
                    "name": "direct",
                    "type": "direct",
                    "options": {"allowPrivateNetwork": True, "timeoutSeconds": 2},
                },
            ],
        }
    )


def check_call(host, name, args) -> ToolResult:
    """Call and render; whatever happens must be a clean ToolResult."""
    start = time.monotonic()
    result = host.call(name, args)
    assert time.monotonic() - start < 10
    assert isinstance(result, ToolResult)
    text = result.text
    assert "failed unexpectedly" not in text and "unexpected error" not in text, text[:500]
    assert "Traceback" not in text
    json.dumps(result.to_json())  # the wire form is plain JSON
    theme = PlainTheme()
    render.render_call(name, args, theme)
    for expanded in (False, True):
        render.render_result(name, result, RenderOptions(expanded=expanded), theme)
    if not text.startswith(
        f"Invalid arguments for {name}:"
    ):  # the host's own schema errors quote the value
        assert SECRET not in text and SECRET not in json.dumps(result.details)
    return result


@pytest.mark.parametrize("tool", sorted(FIELDS))
def test_any_arguments_give_a_clean_result(tool, host, all_providers):
    """Any JSON for any argument of any tool gives a ToolResult: a clean error or a valid result."""

    @SETTINGS
    @given(args=arguments(tool))
    def run(args):
        check_call(host, tool, args)

    run()


@pytest.mark.parametrize("tool", sorted(FIELDS))
def test_deep_nesting_and_huge_values_give_a_clean_result(tool, host, all_providers):
    """Arguments nested 100,000 deep or 10 MB long are refused cleanly, and rendered without raising."""
    for name in FIELDS[tool]:
        for value in (deep(100_000), "x" * 10_000_000, ["y" * 1_000_000] * 3, {"a": deep(50_000)}):
            check_call(host, tool, {name: value})
    check_call(host, tool, deep(100_000))


def test_valid_results_really_happen(host, all_providers):
    """The fake network answers, so the properties above see valid results as well as errors."""
    for name, args in [
        ("web_search", {"queries": ["q"]}),
        ("web_fetch", {"urls": ["http://h.test/a"]}),
        ("summarize", {"url": "https://example.com/a"}),
        ("web_fetch", {"urls": ["http://h.test/b"], "provider": "direct"}),
    ]:
        result = check_call(host, name, args)
        assert not result.is_error, result.text


# --------------------------------------------------------------------------- config files

options = st.dictionaries(
    st.sampled_from(
        [
            "baseUrl",
            "timeoutSeconds",
            "apiVersion",
            "defaultSearchLimit",
            "maxBytes",
            "allowPrivateNetwork",
            "defaultFetchTextMaxCharacters",
            "other",
        ]
    ),
    json_values
    | st.floats()
    | st.sampled_from(["v0", "v1", "http://127.0.0.1:1/", "https://x.test"]),
    max_size=4,
)
entries = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["kagi", "exa", "direct", "", " "]) | json_values,
        "type": st.sampled_from(["kagi", "exa", "direct", "nope"]) | json_values,
        "apiKey": st.sampled_from([SECRET, "", "   "]) | json_values,
        "options": options | json_values,
    },
)
config_shaped = st.fixed_dictionaries(
    {},
    optional={
        "defaultProvider": st.sampled_from(["kagi", "exa", "direct", "nope"]) | json_values,
        "providers": st.lists(entries | json_values, max_size=4) | json_values,
        "extra": json_values,
    },
)
config_texts = st.one_of(
    st.builds(json.dumps, config_shaped),
    st.builds(json.dumps, json_values),
    st.builds(lambda d: json.dumps(d)[: len(json.dumps(d)) // 2], config_shaped),  # cut short
    st.text(max_size=200),
)


@SETTINGS
@given(text=config_texts)
def test_any_config_file_loads_or_is_a_config_error(text):
    """Any JSON (or text) as the config: load_config raises only ConfigError, config_report never raises."""
    from pi_web_tools.runtime.registry import (
        current_config,
        get_provider,
        provider_types,
        resolve_provider,
    )

    path = config_mod.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    config_mod.clear_cache()
    try:
        config = current_config()
    except ConfigError as exc:
        assert str(exc).startswith("Invalid web search config")
        config = None
    report, ok = config_report_safely()
    assert report.startswith("Config file:")
    if config is None:
        assert "Status: invalid" in report
        return
    types = provider_types()
    for provider in config.providers:
        if provider.api_key is not None or not types[provider.type].needs_api_key:
            get_provider(
                provider, types[provider.type]
            )  # constructing any valid entry's provider never raises
    for capability in ("search", "fetch", "summarize"):
        try:
            resolve_provider(capability, None, config=config)
        except ConfigError:
            pass
    assert SECRET not in report


def config_report_safely():
    from pi_web_tools.views.config_report import config_report

    return config_report()


@pytest.mark.parametrize(
    "tool,args",
    [
        ("summarize", {"url": "x" * 5_000_000}),
        ("summarize", {"url": "https://example.com/", "target_language": "Q" * 5_000_000}),
        ("web_fetch", {"urls": ["a" * 8000] * 20}),
        ("web_search", {"queries": ["q"], "provider": "p" * 5_000_000}),
        ("web_fetch", {"urls": ["https://example.com/"], "provider": "p" * 5_000_000}),
    ],
)
def test_huge_values_are_not_echoed_back(tool, args, host, all_providers):
    """An error about a megabyte-long argument quotes only its start, so the answer stays small."""
    result = check_call(host, tool, args)
    assert result.is_error and len(result.text) < 5000
