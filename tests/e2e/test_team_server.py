"""`pi-web mcp --http` for a team, as its operator runs it: named tokens (logs and limits by
name, never the token; a line deleted revokes one person without a restart), `--state` with a
real Redis shared by two replicas (one limit, usage counted per caller and shown by
`pi-web usage`), and a password never on the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from tests.support import SECRET, kagi_config
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import PI_WEB, post_mcp
from tests.support.hosts import mcp_http_serving as serving

ALICE = "alice-" + "a" * 26
BOB = "bob-" + "b" * 28


def _search(port: int, token: str, query: str) -> tuple[int, dict]:
    status, body = post_mcp(
        port,
        {"Authorization": f"Bearer {token}"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "web_search", "arguments": {"queries": [query], "fresh": True}},
        },
    )
    return status, (json.loads(body).get("result", {}) if status == 200 else {})


@pytest.fixture
def kagi(write_config):
    def configure(limits=None):
        with_limits = kagi_config(fake.base_url)
        if limits:
            with_limits["limits"] = limits
        write_config(with_limits)

    with FakeKagi(SECRET) as fake:
        fake.configure = configure
        configure()
        yield fake


@pytest.fixture
def tokens(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(f"# the team\nalice: {ALICE}\nbob: {BOB}\n")
    path.chmod(0o600)
    return path


def test_named_tokens_are_logged_and_limited_by_name_and_one_is_revoked_live(
    agent_dir, kagi, tokens
):
    kagi.configure({"perToken": "2/minute"})
    with serving(agent_dir, "--host", "0.0.0.0", "--token-file", str(tokens)) as server:
        assert "bearer tokens required: 2 named" in server.log
        assert _search(server.port, ALICE, "one")[1]["isError"] is False
        assert _search(server.port, ALICE, "two")[1]["isError"] is False
        status, third = _search(server.port, ALICE, "three")
        assert status == 200 and third["isError"] is True
        assert (
            "Rate limit: alice has used its calls (limits.perToken: 2/minute)"
            in (third["content"][0]["text"])
        )
        assert _search(server.port, BOB, "bob's")[1]["isError"] is False  # bob's own window
        tokens.write_text(f"alice: {ALICE}\n")  # bob leaves the team
        time.sleep(1.1)
        assert post_mcp(server.port, {"Authorization": f"Bearer {BOB}"})[0] == 401
        assert post_mcp(server.port, {"Authorization": f"Bearer {ALICE}"})[0] == 200
        log = server.log
    assert re.search(r"call tool=web_search caller=alice outcome=ok duration_ms=\d+", log)
    assert re.search(r"call tool=web_search caller=alice outcome=error", log)
    assert re.search(r"call tool=web_search caller=bob outcome=ok", log)
    assert f"--token-file {tokens} read again: revoked bob" in log
    assert ALICE not in log and BOB not in log
    assert sum(1 for r in kagi.requests if r["path"].endswith("/search")) == 3


@pytest.mark.redis
def test_two_replicas_share_one_limit_and_the_usage_counts(agent_dir, kagi, tokens, shared_state):
    kagi.configure({"providers": {"kagi": "3/minute"}})
    env = {"PI_WEB_STATE": shared_state.url}
    with (
        serving(agent_dir, "--token-file", str(tokens), env=env) as one,
        serving(agent_dir, "--token-file", str(tokens), env=env) as two,
    ):
        assert f"shared state: {shared_state.url} (PI_WEB_STATE)" in one.log
        outcomes = [
            _search(server.port, token, f"q{i}")[1]["isError"]
            for i, (server, token) in enumerate(
                [(one, ALICE), (two, BOB), (one, BOB), (two, ALICE), (one, ALICE)]
            )
        ]
    assert outcomes == [False, False, False, True, True]  # 3 across both replicas, not 3 each
    assert sum(1 for r in kagi.requests if r["path"].endswith("/search")) == 3
    usage = subprocess.run(
        [PI_WEB, "usage", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PI_WEB_STATE": shared_state.url},
    )
    counts = json.loads(usage.stdout)["days"]
    (day,) = counts
    assert counts[day] == {"alice": {"kagi": 1}, "bob": {"kagi": 2}}


def test_state_with_a_password_on_the_command_line_is_refused(agent_dir):
    proc = subprocess.run(
        [PI_WEB, "mcp", "--http", "--state", "redis://:hunter2-secret-pw@127.0.0.1:6379/0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
    )
    assert proc.returncode == 2
    assert "--state holds a password" in proc.stderr and "PI_WEB_STATE" in proc.stderr


@pytest.mark.redis
def test_state_names_the_shared_state_for_the_server_without_its_password(
    agent_dir, kagi, shared_state
):
    with serving(agent_dir, "--state", shared_state.url) as server:
        line = f"shared state: {shared_state.url} (PI_WEB_STATE)"
        end = time.monotonic() + 10  # the start lines after the first come a moment later
        while line not in server.log and time.monotonic() < end:
            time.sleep(0.05)
        assert line in server.log, server.log
        assert _search(server.port, "", "cached")[1]["isError"] is False
    assert shared_state.client().keys("pi-web:cache:*")
