"""Content that never changes (a file at a full commit SHA) is cached long."""

from __future__ import annotations

import time

from pi_web_tools.runtime import cache
from pi_web_tools.runtime.cache import CacheSettings

SETTINGS = CacheSettings(ttl_seconds={"web_search": 60, "web_fetch": 60, "summarize": 60})


def test_immutable_content_outlives_the_tools_time_to_live(monkeypatch):
    key = cache.make_key("web_fetch", "direct", None, {"url": "at-a-sha"})
    other = cache.make_key("web_fetch", "direct", None, {"url": "on-a-branch"})
    cache.put(SETTINGS, "web_fetch", key, "file", immutable=True)
    cache.put(SETTINGS, "web_fetch", other, "file")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 6 * 24 * 3600)
    assert cache.get(SETTINGS, "web_fetch", key).value == "file"
    assert cache.get(SETTINGS, "web_fetch", other) is None
    monkeypatch.setattr(time, "time", lambda: real() + 8 * 24 * 3600)
    assert cache.get(SETTINGS, "web_fetch", key) is None


def test_an_off_cache_keeps_nothing_however_immutable():
    off = CacheSettings(enabled=False)
    key = cache.make_key("web_fetch", "direct", None, {"url": "u"})
    cache.put(off, "web_fetch", key, "file", immutable=True)
    assert cache.get(off, "web_fetch", key) is None
