"""The direct fetcher against every misbehaviour, through web_fetch, with the key in the URL."""

from __future__ import annotations

import pytest

from .cases import DIRECT_FETCH, FAULTS, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_direct_fetch_fault(fault, server, tools, write_config, debug_logs):
    """web_fetch of a misbehaving page ends in time with its cause (or the page), the key nowhere."""
    run_fault(DIRECT_FETCH, fault, server, tools, write_config, debug_logs)
