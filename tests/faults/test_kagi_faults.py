"""Kagi (search and the summarizer) against every misbehaviour, through the public tool call."""

from __future__ import annotations

import pytest

from .cases import FAULTS, KAGI_SEARCH, KAGI_SUMMARIZE, check_cross_host_redirect, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_kagi_search_fault(fault, server, tools, write_config, debug_logs):
    """web_search through Kagi ends in time with an error naming the cause, and the key nowhere."""
    run_fault(KAGI_SEARCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_kagi_summarize_fault(fault, server, tools, write_config, debug_logs):
    """summarize through Kagi ends in time with an error naming the cause, and the key nowhere."""
    run_fault(KAGI_SUMMARIZE, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("target", [KAGI_SEARCH, KAGI_SUMMARIZE], ids=str)
def test_redirect_to_another_host_never_carries_the_key(target, server, tools, write_config):
    """A Kagi answer redirecting to another host is followed without the Authorization header."""
    check_cross_host_redirect(target, server, tools, write_config)


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_string_where_a_nested_list_belongs(version, server, tools, write_config):
    """A string where Kagi's related-searches list belongs is ignored, not split into letters."""
    from tests.support.fault_server import json_reply

    from .cases import kagi_config

    hit = {"url": "https://a.example/", "title": "A", "snippet": "s"}
    if version == "v0":
        body = {"meta": {}, "data": [{"t": 0, **hit}, {"t": 1, "list": "abc"}]}
    else:
        body = {"meta": {}, "data": {"search": [hit], "related_search": "abc"}}
    server.script(json_reply(body))
    write_config(kagi_config(server, apiVersion=version))
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert not outcome.result.is_error and "https://a.example/" in outcome.text
    assert "a; b; c" not in outcome.text and "Related searches" not in outcome.text


@pytest.mark.parametrize(
    "data", [{"search": "abc"}, {"search": [1, None, "x", {"url": 5}]}, "abc", []]
)
def test_kagi_v1_wrong_shapes(data, server, tools, write_config):
    """Kagi v1 bodies of the wrong shape are errors naming the field, or empty results: never a crash."""
    from tests.support.fault_server import json_reply

    from .cases import kagi_config

    server.script(json_reply({"meta": {}, "data": data}))
    write_config(kagi_config(server, apiVersion="v1"))
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert "failed unexpectedly" not in outcome.text and "Traceback" not in outcome.text
    if outcome.result.is_error:
        assert "'data" in outcome.text
