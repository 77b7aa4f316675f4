"""The config's readers setting: on, off, one off, baseUrl overrides, and what pi-web config says."""

from __future__ import annotations

from pi_web_tools.runtime import config as config_module
from pi_web_tools.runtime.reader_config import parse_readers
from pi_web_tools.runtime.registry import current_config
from pi_web_tools.views.config_report import config_report


def test_absent_or_true_leaves_every_reader_on():
    for raw in (None, True):
        readers, warnings = parse_readers(raw)
        assert readers.is_on("github") and warnings == []


def test_false_switches_every_reader_off_and_false_by_name_one():
    assert not parse_readers(False)[0].is_on("github")
    readers, _ = parse_readers({"github": False, "pypi": {"enabled": False}, "npm": True})
    assert not readers.is_on("github") and not readers.is_on("pypi") and readers.is_on("npm")


def test_a_base_url_override_and_values_that_cannot_be_read():
    readers, warnings = parse_readers(
        {
            "github": {"baseUrl": "http://127.0.0.1:9"},
            "pypi": {"baseUrl": "ftp://x"},
            "npm": "off",
            "arxiv": {"url": 1},
        }
    )
    assert readers.base_url("github") == "http://127.0.0.1:9" and readers.base_url("pypi") is None
    assert readers.is_on("npm")  # a value that cannot be read leaves the reader as it was
    assert len(warnings) == 3
    assert parse_readers("no")[1] and parse_readers("no")[0].is_on("github")


def test_pi_web_config_lists_the_readers_and_names_a_misspelt_one(write_config):
    write_config(
        {
            "providers": [{"name": "direct", "type": "direct"}],
            "readers": {"githb": False, "npm": False},
        }
    )
    text, _ = config_report()
    assert "- github: GitHub, files, folders" in text and "(on)" in text
    assert "- npm: npm, package pages" in text and "(off)" in text
    assert "no reader is called 'githb' (did you mean 'github'?" in text


def test_an_untrusted_config_loses_its_reader_base_urls(write_config):
    write_config(
        {
            "providers": [{"name": "direct", "type": "direct"}],
            "readers": {"github": {"baseUrl": "http://127.0.0.1:9"}},
        },
        mode=0o666,
    )
    config_module.clear_cache()
    config = current_config()
    assert config.readers.base_url("github") is None
    assert any("readers.github.baseUrl" in str(warning) for warning in config.warnings)
