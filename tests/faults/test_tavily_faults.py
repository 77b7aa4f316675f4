"""Tavily (search and extract) against every misbehaviour, through the public tool call."""

from __future__ import annotations

import pytest

from .cases import FAULTS, TAVILY_FETCH, TAVILY_SEARCH, check_cross_host_redirect, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_tavily_search_fault(fault, server, tools, write_config, debug_logs):
    """web_search through Tavily ends in time with an error naming the cause, and the key nowhere."""
    run_fault(TAVILY_SEARCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_tavily_fetch_fault(fault, server, tools, write_config, debug_logs):
    """web_fetch through Tavily ends in time with an error naming the cause, and the key nowhere."""
    run_fault(TAVILY_FETCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("target", [TAVILY_SEARCH, TAVILY_FETCH], ids=str)
def test_redirect_to_another_host_never_carries_the_key(target, server, tools, write_config):
    """A Tavily answer redirecting to another host is followed without the Authorization header."""
    check_cross_host_redirect(target, server, tools, write_config)
