"""summarize keeps the same wall as web_fetch (issue 28, Low): a loopback, private, metadata or
single-label URL is refused before it reaches the summarizer's service, unless that provider
allows private networks."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import SECRET, kagi_config
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import PI_WEB


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:9/admin", "127.0.0.1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
        ("http://10.1.2.3/wiki", "10.1.2.3 is a private address"),
        ("http://intranet/secret", "intranet is a single-label name (an intranet host)"),
    ],
)
def test_summarize_never_sends_a_private_url_to_the_service(write_config, url, why):
    with FakeKagi(SECRET) as kagi:
        write_config(kagi_config(kagi.base_url))
        proc = subprocess.run(
            [PI_WEB, "summarize", url], capture_output=True, text=True, timeout=60
        )
    assert [r for r in kagi.requests if r["path"].endswith("/summarize")] == []
    assert proc.returncode == 1, proc.stdout
    assert f"refused: {why}, not sent to kagi (kagi)" in proc.stdout
    assert '"allowPrivateNetwork": true' in proc.stdout


def test_a_summarizer_allowed_private_networks_gets_the_url(write_config):
    with FakeKagi(SECRET) as kagi:
        write_config(kagi_config(kagi.base_url, allowPrivateNetwork=True))
        proc = subprocess.run(
            [PI_WEB, "summarize", "http://10.1.2.3/wiki"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r for r in kagi.requests if r["path"].endswith("/summarize")] != []
