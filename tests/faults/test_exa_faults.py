"""Exa (search and contents) against every misbehaviour, through the public tool call."""

from __future__ import annotations

import pytest

from .cases import EXA_FETCH, EXA_SEARCH, FAULTS, check_cross_host_redirect, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_exa_search_fault(fault, server, tools, write_config, debug_logs):
    """web_search through Exa ends in time with an error naming the cause, and the key nowhere."""
    run_fault(EXA_SEARCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_exa_fetch_fault(fault, server, tools, write_config, debug_logs):
    """web_fetch through Exa ends in time with an error naming the cause, and the key nowhere."""
    run_fault(EXA_FETCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("target", [EXA_SEARCH, EXA_FETCH], ids=str)
def test_redirect_to_another_host_never_carries_the_key(target, server, tools, write_config):
    """An Exa answer redirecting to another host is followed without the x-api-key header."""
    check_cross_host_redirect(target, server, tools, write_config)
