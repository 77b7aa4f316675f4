"""A call answers at its deadline whatever the provider does, and the stray work it leaves
behind stays bounded (issue 28, item 11)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.support.plugins import declare, pi_web_with, plugin_module

STUBBORN = """
import time

from pi_web_tools import Fetch, FetchedPage, FetchResponse, ProviderType, Search, hookimpl
from pi_web_tools import SearchResponse

class Stubborn:
    '''Ignores ctx.cancelled and every deadline: it sleeps 20 s, then answers.'''

    def __init__(self, config):
        self.name = config.name

    def fetch(self, request, ctx):
        time.sleep(20)
        return FetchResponse(pages=tuple(FetchedPage(url=u, ok=True, text="late") for u in request.urls))

    def search(self, request, ctx):
        time.sleep(20)
        return SearchResponse(hits=())

STUBBORN = ProviderType(name="stubborn", factory=Stubborn, fetch=Fetch(), search=Search())

@hookimpl
def register_provider_types(register):
    register(STUBBORN)
"""


@pytest.fixture
def stubborn(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    plugin_module(root, "stubborn_provider", STUBBORN)
    declare(
        root, "stubborn_provider-1.0", "pi_web_tools.providers", "stubborn", "stubborn_provider"
    )
    return root


@pytest.mark.parametrize(
    ("tool", "args"),
    [("web_fetch", {"urls": ["https://93.184.216.34/a"]}), ("web_search", {"queries": ["q"]})],
)
def test_a_provider_that_ignores_cancellation_cannot_hold_a_call_past_its_timeout(
    stubborn, write_config, tool, args
):
    """timeoutSeconds 1: the call answers within about a second and a half with a clean
    error naming the provider and its timeout (it used to wait the provider's 20 s out)."""
    write_config(
        {"providers": [{"name": "slow", "type": "stubborn", "options": {"timeoutSeconds": 1}}]}
    )
    start = time.monotonic()
    proc = pi_web_with(stubborn, "call", tool, json.dumps(args), "--json")
    elapsed = time.monotonic() - start
    text = json.loads(proc.stdout)["content"][0]["text"]
    assert elapsed < 8, f"took {elapsed:.1f} s"
    assert "slow did not answer within 1 s (timeoutSeconds)" in text, text
    assert "Traceback" not in proc.stderr


def test_the_stray_work_of_calls_past_their_deadline_is_bounded(host, write_config):
    """In one long-running host (an MCP server), calls to a provider that never returns leave
    at most a few threads behind; beyond that the provider is not called again until they end,
    and the call says so at once."""
    from pi_web_tools import testing

    release = threading.Event()

    class Never:
        def __init__(self, config):
            self.name = config.name

        def search(self, request, ctx):
            release.wait(30)
            from pi_web_tools import SearchResponse

            return SearchResponse(hits=())

    from pi_web_tools import ProviderType, Search

    kind = ProviderType(name="never", factory=Never, search=Search())
    write_config(
        {"providers": [{"name": "never", "type": "never", "options": {"timeoutSeconds": 0.2}}]}
    )
    before = threading.active_count()
    try:
        with testing.provider_types(kind):
            texts = [host.call("web_search", {"queries": ["q"]}).text for _ in range(8)]
            grown = threading.active_count() - before
    finally:
        release.set()
    from pi_web_tools.runtime.registry import MAX_STRAY_CALLS

    assert grown <= MAX_STRAY_CALLS + 1
    assert "never did not answer within 0.2 s (timeoutSeconds)" in texts[0]
    assert (
        f"never is still running {MAX_STRAY_CALLS} calls past their deadline; it is not called "
        "again until one of them ends"
    ) in texts[-1]


def test_a_provider_whose_construction_hangs_answers_at_the_deadline_and_holds_up_no_other(
    host, write_config
):
    """The provider object was made outside the call's deadline, under the registry's lock: a
    third-party provider whose __init__ never returned held its call forever, and every other
    provider's call in the same host behind it. Now its call answers at its deadline and a
    call to another provider meanwhile answers at once."""
    from pi_web_tools import ProviderType, Search, SearchHit, SearchResponse, testing

    release = threading.Event()

    class Stuck:
        def __init__(self, config):
            release.wait(30)

        def search(self, request, ctx):
            return SearchResponse(hits=())

    class Quick:
        def __init__(self, config):
            pass

        def search(self, request, ctx):
            return SearchResponse(hits=(SearchHit(title="Quick", url="https://q.test/"),))

    write_config(
        {
            "providers": [
                {"name": "stuck", "type": "stuck", "options": {"timeoutSeconds": 0.5}},
                {"name": "quick", "type": "quick"},
            ],
            "searchFallback": False,
        }
    )
    stuck = ProviderType(name="stuck", factory=Stuck, search=Search())
    quick = ProviderType(name="quick", factory=Quick, search=Search())
    try:
        with testing.provider_types(stuck, quick):
            answers: dict = {}
            first = threading.Thread(
                target=lambda: answers.update(
                    stuck=host.call("web_search", {"queries": ["q"], "provider": "stuck"})
                )
            )
            started = time.monotonic()
            first.start()
            time.sleep(0.2)  # the stuck factory is running now
            other = host.call("web_search", {"queries": ["q"], "provider": "quick"})
            other_elapsed = time.monotonic() - started
            first.join(10)
            elapsed = time.monotonic() - started
    finally:
        release.set()
    assert not first.is_alive() and elapsed < 5, f"took {elapsed:.1f} s"
    assert "stuck did not answer within 0.5 s (timeoutSeconds)" in answers["stuck"].text
    assert "Quick" in other.text and other_elapsed < 2, (other_elapsed, other.text)
