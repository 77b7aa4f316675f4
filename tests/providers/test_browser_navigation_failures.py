"""Why a rendered page failed, whatever order the browser reports its navigations in (no browser
needed: the page's watch and the call's proxy are stood in for)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from pi_web_tools.providers.browser import BrowserProvider

REFUSAL = (
    "refused: 10.0.0.7 is a private address; "
    'set "allowPrivateNetwork": true in the chrome provider\'s options to allow it'
)


class Proxy:
    """The call's guarded proxy: it refused 10.0.0.7 and nothing else."""

    def refusal(self, url: str) -> str | None:
        return REFUSAL if url.startswith("http://10.0.0.7/") else None

    def reason(self, url: str) -> str | None:
        return self.refusal(url)


def failure_of(failed: list, late: list | None = None) -> str:
    """What the provider says of a page whose navigations failed as *failed*, with *late*
    failures reported 0.1 s after it started looking."""
    watch = SimpleNamespace(failed_navigations=list(failed))
    provider = SimpleNamespace(timeout=30.0)

    async def run() -> str:
        async def report_late() -> None:
            await asyncio.sleep(0.1)
            watch.failed_navigations.extend(late or [])

        reporter = asyncio.ensure_future(report_late())
        said = await BrowserProvider._navigation_failure(provider, Proxy(), watch, None)
        await reporter
        return said

    return asyncio.run(run())


def test_a_refusal_is_the_reason_when_the_replaced_document_reports_its_abort_after_it():
    """A script sent the page to 10.0.0.7 while its own document was still loading: the
    refusal came first, then the first document's abort (before: the abort was said, and
    the guard's refusal lost; seen in CI under load)."""
    said = failure_of(
        [
            ("http://10.0.0.7/admin", "net::ERR_EMPTY_RESPONSE"),
            ("http://shell.example/script", "net::ERR_ABORTED"),
        ]
    )
    assert said == REFUSAL


def test_a_refusal_reported_after_the_page_failed_is_still_the_reason():
    said = failure_of(
        [("http://shell.example/script", "net::ERR_ABORTED")],
        late=[("http://10.0.0.7/admin", "net::ERR_EMPTY_RESPONSE")],
    )
    assert said == REFUSAL


def test_a_real_failure_is_said_rather_than_the_abort_it_caused():
    said = failure_of(
        [
            ("http://down.example/", "net::ERR_CONNECTION_REFUSED"),
            ("http://shell.example/script", "net::ERR_ABORTED"),
        ]
    )
    assert said == "the page could not be loaded (net::ERR_CONNECTION_REFUSED)"


def test_an_abort_alone_is_said_as_it_is():
    said = failure_of([("http://shell.example/script", "net::ERR_ABORTED")])
    assert said == "the page could not be loaded (net::ERR_ABORTED)"
