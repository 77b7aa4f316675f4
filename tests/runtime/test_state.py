"""The shared state: the same behaviour in this process and on a real Redis server, and what
happens when the server is down, frozen, restarted or holds values that are not ours."""

from __future__ import annotations

import threading
import time
import zlib

import pytest
from pi_web_tools.runtime import cache, state
from pi_web_tools.runtime.state_redis import TAG, decode_value, encode_value

pytestmark = pytest.mark.redis

SETTINGS = cache.CacheSettings()


@pytest.fixture(params=["local", "redis"])
def where(request):
    """Each test runs on this process's own state and on a real Redis server."""
    if request.param == "redis":
        request.getfixturevalue("shared_state")
    return request.param


def test_an_answer_stored_is_read_back(where):
    cache.put(SETTINGS, "web_fetch", "k1", {"text": "hello"})
    hit = cache.get(SETTINGS, "web_fetch", "k1")
    assert hit is not None and hit.value == {"text": "hello"}


def test_answers_on_redis_are_compressed_json_with_the_disk_caches_ttl(shared_state):
    cache.put(SETTINGS, "web_fetch", "k2", {"text": "a" * 10_000})
    client = shared_state.client()
    blob = client.get("pi-web:cache:k2")
    assert blob.startswith(TAG) and len(blob) < 1000  # 10,000 characters compressed
    assert 890_000 < client.pttl("pi-web:cache:k2") <= 900_000  # web_fetch's 15 minutes
    assert not (cache.cache_directory() / "cache.db").exists()  # nothing went to the disk


@pytest.mark.parametrize(
    "planted",
    [
        b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93.",
        TAG + b"not zlib",
        TAG + zlib.compress(b"\xff\xfe not utf-8"),
        TAG + zlib.compress(b"{not json"),
        TAG + zlib.compress(b"\x00" * (65 * 1024 * 1024)),  # inflates past the bound
    ],
    ids=["pickle", "not-zlib", "not-utf8", "not-json", "bomb"],
)
def test_a_value_that_does_not_decode_is_a_miss(shared_state, planted):
    shared_state.client().set("pi-web:cache:planted", planted)
    assert cache.get(SETTINGS, "web_fetch", "planted") is None


def test_the_codec_round_trips_text():
    assert decode_value(encode_value("héllo \U0001f600")) == "héllo \U0001f600"
    assert decode_value("text") is None


def test_one_leader_per_key_and_followers_wait_for_it(where):
    lease = state.lead("page", 5)
    assert lease is not None
    assert state.lead("page", 5) is None  # someone is already making it
    released = []

    def finish():
        time.sleep(0.2)
        released.append(time.monotonic())
        lease.release()

    threading.Thread(target=finish).start()
    state.wait_for("page", time.monotonic() + 5)
    assert released and time.monotonic() - released[0] < 0.5
    again = state.lead("page", 5)
    assert again is not None
    again.release()


def test_a_leader_that_never_releases_holds_others_only_until_its_lease_ends(shared_state):
    assert state.lead("stuck", 0.3) is not None  # its process died: never released
    start = time.monotonic()
    state.wait_for("stuck", start + 5)
    assert time.monotonic() - start < 1.0


def test_rate_limits_count_across_callers_of_one_id(where):
    from limits import parse_many

    rules = parse_many("3/minute")
    assert [state.hit(rules, "alice") for _ in range(3)] == [None, None, None]
    wait = state.hit(rules, "alice")
    assert wait is not None and 0 < wait <= 60
    assert state.hit(rules, "bob") is None  # another id has its own window


def test_rate_limits_are_shared_by_every_process_on_redis(shared_state):
    from limits import parse_many

    rules = parse_many("2/minute")
    assert state.hit(rules, "team") is None
    state.reset()  # another replica: no memory of this process's counts
    assert state.hit(rules, "team") is None
    assert state.hit(rules, "team") is not None


def test_a_cooldown_is_seen_by_another_replica(shared_state):
    state.cool("kagi", 30)
    state.reset()
    assert 29 < state.cooling("kagi") <= 30
    state.cool("kagi", 5)  # a shorter one never shortens it
    assert state.cooling("kagi") > 29
    assert state.cooling("exa") == 0


def test_usage_counts_per_day_caller_and_provider(where):
    state.count("alice", "kagi")
    state.count("alice", "kagi")
    state.count("bob", "exa", 3)
    assert state.usage([state.today()]) == {
        state.today(): {"alice": {"kagi": 2}, "bob": {"exa": 3}}
    }


def test_a_server_that_is_down_leaves_calls_on_local_state_with_one_warning(shared_state, capsys):
    shared_state.stop()
    cache.put(SETTINGS, "web_fetch", "k3", {"text": "kept on disk"})
    assert cache.get(SETTINGS, "web_fetch", "k3").value == {"text": "kept on disk"}
    state.count("alice", "kagi")
    lease = state.lead("page", 5)
    assert lease is not None and state.lead("page", 5) is None  # local flights still hold
    lease.release()
    err = capsys.readouterr().err
    assert err.count("unavailable") == 1, err
    assert "trying it again every 5 s" in err
    assert state.notices() and "unavailable" in state.notices()[0]


def test_a_limit_on_a_server_that_is_down_names_the_clients_error(shared_state, capsys):
    """The warning names what the Redis client met (ConnectionError: ... refused), not the
    limits library's wrapper around it (StorageError)."""
    from limits import parse_many

    shared_state.stop()
    assert state.hit(parse_many("5/minute"), "alice") is None  # local limits hold meanwhile
    err = capsys.readouterr().err
    assert "unavailable (ConnectionError: " in err and "StorageError" not in err, err


def test_recovery_by_itself_when_the_server_returns(shared_state, capsys, monkeypatch):
    monkeypatch.setattr(state, "RETRY_SECONDS", 0.2)
    shared_state.stop()
    state.count("alice", "kagi")  # counted here while the server is away
    shared_state.start()
    time.sleep(0.3)
    cache.put(SETTINGS, "web_fetch", "k4", {"text": "back"})
    assert shared_state.client().exists("pi-web:cache:k4")
    assert "answers again" in capsys.readouterr().err
    # what was counted meanwhile reached the server
    counted = shared_state.client().hgetall(f"pi-web:usage:{state.today()}:alice")
    assert counted == {b"kagi": b"1"}
    assert state.notices() == []


def test_a_hand_over_cut_short_keeps_only_what_did_not_reach_the_server(shared_state, monkeypatch):
    """The server fails again while this process hands over its counts: those it took are not
    counted a second time at the next hand-over (they were all put back, and billed twice)."""
    monkeypatch.setattr(state, "RETRY_SECONDS", 0.2)
    shared_state.stop()
    state.count("alice", "kagi", 2)
    state.count("bob", "exa", 3)
    shared_state.start()
    time.sleep(0.3)
    backend = state._current().backend
    real, calls = backend.count, []

    def count_once_then_fail(*args):
        calls.append(args)
        if len(calls) > 1:
            raise state.Unavailable("cut") from ConnectionError("cut")
        real(*args)

    monkeypatch.setattr(backend, "count", count_once_then_fail)
    state.cooling("kagi")  # an operation that answers: the hand-over starts, and is cut
    monkeypatch.setattr(backend, "count", real)
    time.sleep(0.3)
    state.cooling("kagi")  # answers again: the rest is handed over
    assert state.usage([state.today()]) == {
        state.today(): {"alice": {"kagi": 2}, "bob": {"exa": 3}}
    }


def test_a_frozen_server_costs_one_timeout_then_local_state(shared_state):
    cache.put(SETTINGS, "web_fetch", "warm", {"x": 1})  # the connection is open
    shared_state.pause()
    try:
        start = time.monotonic()
        assert cache.get(SETTINGS, "web_fetch", "warm") is None  # not on the disk
        first = time.monotonic() - start
        start = time.monotonic()
        for _ in range(5):
            cache.get(SETTINGS, "web_fetch", "warm")
        rest = time.monotonic() - start
    finally:
        shared_state.resume()
    assert first < state.OP_TIMEOUT_SECONDS + 0.5
    assert rest < 0.2  # the server is not asked again until the retry time


def test_a_restarted_server_is_used_again_at_once(shared_state):
    cache.put(SETTINGS, "web_fetch", "k5", {"x": 1})
    shared_state.stop()
    shared_state.start()  # same port, empty
    cache.put(SETTINGS, "web_fetch", "k6", {"x": 2})  # the pooled connection is stale
    assert shared_state.client().exists("pi-web:cache:k6")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:hunter2-very-secret@127.0.0.1:1/0", "redis://:***@127.0.0.1:1/0"),
        # redis-py reads a password from the query too; it was shown in clear everywhere
        (
            "redis://127.0.0.1:1/0?password=hunter2-very-secret",
            "redis://127.0.0.1:1/0?password=***",
        ),
        (
            "unix:///run/valkey.sock?db=1&password=hunter2-very-secret",
            "unix:///run/valkey.sock?db=1&password=***",
        ),
    ],
)
def test_the_password_in_the_url_is_never_shown(monkeypatch, capsys, url, shown):
    monkeypatch.setenv("PI_WEB_STATE", url)
    state.reset()
    assert state.describe() == shown
    assert state.check() is not None
    state.count("alice", "kagi")  # fails over to local state, with a warning line
    err = capsys.readouterr().err
    assert "unavailable" in err and "hunter2" not in err
    from pi_web_tools.api.redaction import redact_secrets

    assert "hunter2-very-secret" not in redact_secrets("auth hunter2-very-secret")


def test_a_url_that_names_no_redis_server_is_said_once_and_local_state_serves(monkeypatch, capsys):
    monkeypatch.setenv("PI_WEB_STATE", "memcached://127.0.0.1:11211")
    state.reset()
    cache.put(SETTINGS, "web_fetch", "k7", {"x": 1})
    assert cache.get(SETTINGS, "web_fetch", "k7").value == {"x": 1}
    err = capsys.readouterr().err
    assert err.count("is not a Redis or Valkey URL") == 1
    assert state.check() is not None and "not a Redis" in state.check()


def test_nothing_of_redis_or_limits_is_imported_without_a_shared_state():
    import subprocess
    import sys

    code = (
        "import sys; from pi_web_tools.runtime import cache, state;"
        "cache.put(cache.CacheSettings(), 'web_fetch', 'k', {'x': 1});"
        "cache.get(cache.CacheSettings(), 'web_fetch', 'k');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('redis', 'limits')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_key_written_is_one_security_md_lists(shared_state):
    """docs/security.md's table of what is kept in Redis names every key prefix the shared
    state writes (it said `pi-web:limits/…` where the keys are `pi-web:limits:LIMITER/…`)."""
    import re
    from pathlib import Path

    from limits import parse_many

    cache.put(SETTINGS, "web_fetch", "k9", {"text": "an answer"})
    lease = state.lead("page9", 5)
    state.hit(parse_many("5/minute"), "alice")
    state.cool("kagi", 30)
    state.count("alice", "kagi")
    written = {key.decode() for key in shared_state.client().keys("*")}
    assert lease is not None and len(written) == 5, written
    doc = (Path(__file__).parents[2] / "docs" / "security.md").read_text(encoding="utf-8")
    section = doc.split("## The shared state (Redis or Valkey)")[1].split("\n## ")[0]
    prefixes = [
        re.split(r"<|…", name)[0] for name in re.findall(r"^\| `(pi-web:[^`]+)` \|", section, re.M)
    ]
    assert len(prefixes) == 5, prefixes
    assert [key for key in written if not key.startswith(tuple(prefixes))] == []
    lease.release()
