"""The example provider distribution (examples/acme-search), built and installed with pip, found
through its real entry point and used through `pi-web`, as a third party's plugin would be."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support import ROOT
from tests.support.fake_apis import JsonHandler
from tests.support.loopback import LoopbackServer

EXAMPLE = ROOT / "examples" / "acme-search"
KEY = "acme-e2e-key-9f8e7d6c5b4a"


class FakeAcme(LoopbackServer):
    """The Acme Search API of the example: GET /v1/search, Bearer auth."""

    path = "/v1"

    def __init__(self):
        fake = self
        self.queries: list[dict] = []

        class Handler(JsonHandler):
            def do_GET(self):
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._send(401, {"message": "invalid key"})
                query = parse_qs(urlsplit(self.path).query)
                fake.queries.append(query)
                results = [
                    {
                        "title": f"{query['q'][0]} #{i}",
                        "url": f"https://acme.test/{i}",
                        "summary": "s",
                    }
                    for i in range(1, int(query["n"][0]) + 1)
                ]
                return self._send(200, {"results": results})

        super().__init__(Handler)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example built into a wheel and installed into a private folder (real metadata)."""
    target = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert list(target.glob("acme_search-1.0.0.dist-info"))
    return target


def _run(installed: Path, agent_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(installed),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pi_hostspec.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_installed_example_serves_web_search_through_pi_web(installed, agent_dir, tmp_path):
    """Both example types work from the config file alone: the keyed API and the keyless one."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tasks.md").write_text("# Tasks in Rust\nasync tasks and futures\n")
    with FakeAcme() as fake:
        config = {
            "defaultProvider": "acme",
            "providers": [
                {
                    "name": "acme",
                    "type": "acme",
                    "apiKey": KEY,
                    "options": {"baseUrl": fake.base_url, "region": "eu"},
                },
                {"name": "docs", "type": "acme-docs", "options": {"root": str(docs)}},
            ],
        }
        (agent_dir / "web-search.json").write_text(json.dumps(config))
        (agent_dir / "web-search.json").chmod(0o600)
        searched = _run(installed, agent_dir, "search", "rust async", "--limit", "2")
        assert searched.returncode == 0, searched.stderr
        assert searched.stdout.startswith(
            "1. rust async #1\n   https://acme.test/1\n   s\n\n2. rust async #2"
        )
        assert fake.queries[0]["region"] == ["eu"]
    local = _run(installed, agent_dir, "search", "async tasks", "--provider", "docs")
    assert local.returncode == 0, local.stderr
    assert local.stdout.startswith("1. Tasks in Rust\n")
    report = _run(installed, agent_dir, "config")
    assert "- acme: type acme, can search" in report.stdout
    assert "- docs: type acme-docs, can search, key not needed" in report.stdout
    assert KEY not in searched.stdout + report.stdout


def test_the_examples_own_tests_pass_against_the_installed_package(installed):
    """The test file shipped with the example runs green (it uses pi_web_tools.testing)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(installed)},
        cwd=EXAMPLE,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b7 passed\b", result.stdout)


def test_the_provider_guide_shows_the_example_files_verbatim():
    """The provider guide (docs/writing-a-provider.md) quotes the example's files exactly, so it
    cannot drift."""
    guide = (ROOT / "docs" / "writing-a-provider.md").read_text(encoding="utf-8")
    for name in (
        "pyproject.toml",
        "acme_search.py",
        "tests/test_acme_search.py",
        "acme_reader.py",
        "tests/test_acme_reader.py",
    ):
        body = (EXAMPLE / name).read_text(encoding="utf-8")
        assert body in guide, (
            f"docs/writing-a-provider.md does not quote examples/acme-search/{name} verbatim"
        )


def test_the_installed_example_reader_reads_its_site_through_pi_web(installed, agent_dir):
    """A third party's site reader, found through its entry point, reads the URLs of its host on
    the default path (its baseUrl override pointing at a loopback fake of its API)."""

    class FakeDocsApi(LoopbackServer):
        def __init__(self):
            class Handler(JsonHandler):
                def do_GET(self):
                    if self.path == "/api.acme.example/v1/pages/guide/install":
                        return self._send(
                            200, {"title": "Install", "markdown": "# Install\n\nRun `acme init`."}
                        )
                    return self._send(404, {})

            super().__init__(Handler)

    with FakeDocsApi() as fake:
        config = {
            "providers": [{"name": "direct", "type": "direct"}],
            "readers": {"acme-docs-site": {"baseUrl": fake.base_url}},
        }
        (agent_dir / "web-search.json").write_text(json.dumps(config))
        (agent_dir / "web-search.json").chmod(0o600)
        read = _run(installed, agent_dir, "fetch", "https://docs.acme.example/guide/install")
        missing = _run(installed, agent_dir, "fetch", "https://docs.acme.example/guide/nope")
        report = _run(installed, agent_dir, "config")
    assert read.returncode == 0, read.stderr
    assert "Note: read via the Acme docs API" in read.stdout and "Run `acme init`." in read.stdout
    assert "HTTP 404: the Acme docs have no page guide/nope" in missing.stdout + missing.stderr
    assert "- acme-docs-site: Acme docs, guide pages as Markdown (on)" in report.stdout
