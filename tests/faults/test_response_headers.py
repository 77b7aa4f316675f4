"""A response with broken headers blames the server, not the user's API key (issue 28, Low):
two conflicting Content-Length headers used to read 'a request header is invalid (check the
API key for stray characters)'."""

from __future__ import annotations

import subprocess

from tests.support import kagi_config
from tests.support.hosts import PI_WEB


class ConflictingLengths:
    """A 200 whose headers say two different Content-Lengths."""

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "5")
        handler.send_header("Content-Length", "70")
        handler.end_headers()
        handler.wfile.write(b'{"data": []}')


def test_conflicting_content_lengths_blame_the_server_not_the_key(server, write_config):
    server.script(ConflictingLengths())
    write_config(kagi_config(server.url("/api")))
    proc = subprocess.run([PI_WEB, "search", "rust"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout
    assert "API key" not in proc.stdout
    assert "the server's response headers are invalid" in proc.stdout, proc.stdout
