"""The on-disk answer cache: time to live, off switch, privacy of the directory."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pi_web_tools.runtime import cache
from pi_web_tools.runtime.cache import CacheSettings
from pi_web_tools.runtime.config_shapes import parse_cache

from tests.support import SECRET


@pytest.fixture
def settings() -> CacheSettings:
    return CacheSettings(ttl_seconds={"web_search": 60, "web_fetch": 60, "summarize": 60})


def test_a_stored_answer_is_found_with_its_age(settings):
    key = cache.make_key("web_search", "kagi", None, {"query": "q"})
    cache.put(settings, "web_search", key, {"hits": [1, 2]})
    hit = cache.get(settings, "web_search", key)
    assert hit.value == {"hits": [1, 2]} and 0 <= hit.age_seconds < 5


def test_an_answer_older_than_its_ttl_is_not_served(settings, monkeypatch):
    key = cache.make_key("summarize", "kagi", None, {"url": "u"})
    cache.put(settings, "summarize", key, "summary")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 61)
    assert cache.get(settings, "summarize", key) is None


def test_an_off_cache_stores_and_serves_nothing():
    off = CacheSettings(enabled=False)
    key = cache.make_key("web_fetch", "direct", None, {"url": "u"})
    cache.put(off, "web_fetch", key, "page")
    assert cache.get(off, "web_fetch", key) is None
    assert not cache.cache_directory().exists()


def test_keys_are_hashes_and_values_are_redacted(settings):
    """Neither the request nor a known key is readable in the directory."""
    from pi_web_tools.api import redaction as secrets

    secrets.remember([SECRET])
    key = cache.make_key("web_fetch", "direct", None, {"url": f"https://a/?k={SECRET}"})
    assert SECRET not in key and len(key) == 64
    cache.put(settings, "web_fetch", key, {"text": f"echo {SECRET}"})
    assert cache.get(settings, "web_fetch", key).value == {"text": "echo ***"}
    for path in Path(cache.cache_directory()).rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()


def test_the_directory_is_private_even_under_a_loose_umask(settings):
    old = os.umask(0o002)
    try:
        cache.put(settings, "web_search", cache.make_key("web_search", "k", None, 1), "x")
    finally:
        os.umask(old)
    directory = cache.cache_directory()
    assert directory.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in directory.iterdir() if p.is_file())


def test_usage_and_clear(settings):
    for i in range(3):
        cache.put(settings, "web_search", cache.make_key("web_search", "k", None, i), "x" * 100)
    directory, size, count = cache.usage(settings)
    assert directory == cache.cache_directory() and count == 3 and size > 0
    assert cache.clear(settings) == 3
    assert cache.usage(settings)[2] == 0


@pytest.mark.parametrize(
    "raw, enabled, warned",
    [
        (None, True, False),
        (False, False, False),
        ({"ttlSeconds": {"web_fetch": 60}, "maxMegabytes": 10}, True, False),
        ({"ttlSeconds": {"web_fetch": -1}}, True, True),
        ({"ttlSeconds": {"bing": 5}}, True, True),
        ("yes", True, True),
    ],
)
def test_the_cache_setting_of_the_config_file(raw, enabled, warned):
    """A bad cache setting is a warning with the default kept, never a broken config."""
    parsed, warnings = parse_cache(raw)
    assert parsed.enabled is enabled and bool(warnings) is warned
