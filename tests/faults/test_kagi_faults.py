"""Kagi (search and the summarizer) against every misbehaviour, through the public tool call."""

from __future__ import annotations

import pytest

from .cases import FAULTS, KAGI_SEARCH, KAGI_SUMMARIZE, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_kagi_search_fault(fault, server, tools, write_config, debug_logs):
    """web_search through Kagi ends in time with an error naming the cause, and the key nowhere."""
    run_fault(KAGI_SEARCH, fault, server, tools, write_config, debug_logs)


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_kagi_summarize_fault(fault, server, tools, write_config, debug_logs):
    """summarize through Kagi ends in time with an error naming the cause, and the key nowhere."""
    run_fault(KAGI_SUMMARIZE, fault, server, tools, write_config, debug_logs)
