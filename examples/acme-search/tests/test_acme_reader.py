"""Tests of the example site reader, with the pi-web-tools testing kit and `responses`."""

import pytest
import responses
from acme_reader import ACME_DOCS_SITE
from pi_web_tools import ReaderError, testing


@responses.activate
def test_a_guide_page_is_read_through_the_api():
    responses.get(
        "https://api.acme.example/v1/pages/guide/install",
        json={"title": "Install", "markdown": "# Install\n\nRun `acme init`."},
    )
    reading = testing.read_url(ACME_DOCS_SITE, "https://docs.acme.example/guide/install")
    assert reading.title == "Install"
    assert reading.text == "# Install\n\nRun `acme init`."
    assert responses.calls[0].request.headers["Accept"] == "application/json"


def test_other_pages_are_left_to_the_usual_fetch():
    assert testing.read_url(ACME_DOCS_SITE, "https://docs.acme.example/blog/") is None


@responses.activate
def test_a_missing_page_is_a_clean_404():
    responses.get("https://api.acme.example/v1/pages/guide/nope", status=404, json={})
    with pytest.raises(ReaderError) as info:
        testing.read_url(ACME_DOCS_SITE, "https://docs.acme.example/guide/nope")
    assert info.value.status == 404
    assert str(info.value) == "HTTP 404: the Acme docs have no page guide/nope"
