"""Fixtures of the provider tests: the fake sites behind ``responses``."""

from __future__ import annotations

import pytest
import responses

from tests.support.sites import Sites


@pytest.fixture
def sites(monkeypatch):
    """The fake sites at their real URLs (``responses``); no GitHub token in the environment
    and no gh CLI to ask for one."""
    from pi_web_tools.runtime.reader_web import forget_command_tokens

    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    forget_command_tokens()
    fake = Sites()
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        fake.activate(rsps)
        yield fake
    forget_command_tokens()
