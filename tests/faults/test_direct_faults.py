"""The direct fetcher against every misbehaviour, through web_fetch, with the key in the URL."""

from __future__ import annotations

import pytest

from .cases import DIRECT_FETCH, FAULTS, run_fault


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_direct_fetch_fault(fault, server, tools, write_config, debug_logs):
    """web_fetch of a misbehaving page ends in time with its cause (or the page), the key nowhere."""
    run_fault(DIRECT_FETCH, fault, server, tools, write_config, debug_logs)


def test_partial_results_never_carry_the_key(server, tools, write_config):
    """The progress updates sent while fetching name the URL with its key redacted."""
    import json

    from pi_hostspec import ToolContext

    from tests.support import SECRET
    from tests.support.fault_server import Reply

    from .cases import secret_url

    server.script(Reply(200, "hello", content_type="text/plain"))
    write_config(DIRECT_FETCH.config(server))
    partials = []
    outcome = tools.call(
        "web_fetch", {"urls": [secret_url(server)]}, ToolContext(on_update=partials.append)
    )
    assert not outcome.result.is_error and partials
    for partial in partials:
        assert SECRET not in partial.text + json.dumps(partial.details)
    assert "key=***" in json.dumps(partials[0].details)


def test_key_in_the_url_still_reaches_the_server(server, tools, write_config):
    """Redaction is for output only: the page is fetched with its query string intact."""
    from tests.support import SECRET
    from tests.support.fault_server import Reply

    from .cases import secret_url

    server.script(Reply(200, "hello", content_type="text/plain"))
    write_config(DIRECT_FETCH.config(server))
    outcome = tools.call("web_fetch", {"urls": [secret_url(server)]})
    assert not outcome.result.is_error
    assert server.requests[0]["path"] == f"/page?key={SECRET}&q=1"
