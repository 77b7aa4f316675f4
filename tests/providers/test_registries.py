"""The PyPI and npm readers against faithful fakes of PyPI's JSON API and the npm registry."""

from __future__ import annotations

import pytest
from pi_web_tools.api.readers import ReaderError
from pi_web_tools.providers.registries import NPM, PYPI

from tests.support.sites import read_with


def test_a_pypi_project_page_gives_its_facts_and_readme(sites):
    reading, web = read_with(PYPI, "https://pypi.org/project/pi-demo/")
    text = reading.text
    assert text.startswith("# pi-demo 2.1.0\n\nA demo package for the readers' tests")
    assert "Requires Python: >=3.9" in text and "License: MIT" in text
    assert "- idna>=3.4" in text and "- rich>=13; extra == 'cli'" in text
    assert "- Source: https://github.com/octo-org/hello" in text
    assert "## README\n\n# pi-demo" in text and "pip install pi-demo" in text
    assert web.requests == 1 and sites.log[0]["path"] == "/pypi/pi-demo/json"


def test_a_pypi_version_page_reads_that_version(sites):
    reading, _ = read_with(PYPI, "https://pypi.org/project/pi-demo/2.0.0/")
    assert reading.text.startswith("# pi-demo 2.0.0")


def test_a_pypi_name_in_another_spelling_follows_pypis_redirect(sites):
    reading, web = read_with(PYPI, "https://pypi.org/project/Pi_Demo/")
    assert reading.title == "pi-demo 2.1.0 · PyPI" and web.requests == 2


def test_a_missing_pypi_project_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(PYPI, "https://pypi.org/project/no-such-thing/")
    assert info.value.status == 404 and "PyPI has no project no-such-thing" in info.value.message


def test_other_pypi_pages_are_left_to_the_usual_fetch(sites):
    assert read_with(PYPI, "https://pypi.org/search/?q=demo")[0] is None
    assert read_with(PYPI, "https://pypi.org/")[0] is None


def test_an_npm_package_page_is_read_from_the_registry_not_the_walled_page(sites):
    reading, _ = read_with(NPM, "https://www.npmjs.com/package/tiny-lib")
    text = reading.text
    assert text.startswith("# tiny-lib 1.4.2")
    assert "Engines: node >=18" in text and "- left-pad ^1.3.0" in text
    assert "Peer dependencies:\n- react >=18" in text
    assert "## README\n\n# tiny-lib" in text
    assert {entry["host"] for entry in sites.log} == {"registry.npmjs.org"}


def test_a_scoped_npm_package_and_a_version(sites):
    reading, _ = read_with(NPM, "https://www.npmjs.com/package/@scope/widget")
    assert reading.text.startswith("# @scope/widget 1.4.2")
    assert sites.log[0]["path"] == "/@scope%2Fwidget"
    assert read_with(NPM, "https://www.npmjs.com/package/tiny-lib/v/2.0.0-beta.1")[
        0
    ].text.startswith("# tiny-lib 2.0.0-beta.1")


def test_an_oversized_npm_document_falls_back_to_the_latest_manifest(sites):
    reading, web = read_with(NPM, "https://www.npmjs.com/package/huge-lib")
    assert reading.text.startswith("# huge-lib 1.4.2")
    assert any("larger than 16 MB" in note for note in reading.notes)
    assert web.requests == 2


def test_a_missing_npm_package_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(NPM, "https://www.npmjs.com/package/no-such-thing")
    assert info.value.status == 404
