"""Brave (search) against every misbehaviour, through the public tool call."""

from __future__ import annotations

import pytest

from .cases import BRAVE_SEARCH, FAULTS, check_cross_host_redirect, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_brave_search_fault(fault, server, tools, write_config, debug_logs):
    """web_search through Brave ends in time with an error naming the cause, and the key nowhere."""
    run_fault(BRAVE_SEARCH, fault, server, tools, write_config, debug_logs)


def test_redirect_to_another_host_never_carries_the_key(server, tools, write_config):
    """A Brave answer redirecting to another host is followed without X-Subscription-Token."""
    check_cross_host_redirect(BRAVE_SEARCH, server, tools, write_config)
