"""The one redaction point's spellings of a key and its reach into every log record."""

from __future__ import annotations

import logging

from pi_web_tools.api import redaction

KEY = "AbC+dEf/GhI=jKl9876543"


def test_a_key_is_redacted_in_every_url_spelling():
    redaction.remember([KEY])
    for text in (
        "?key=AbC%2BdEf%2FGhI%3DjKl9876543",
        "?key=AbC%2bdEf%2fGhI%3djKl9876543",
        "?key=AbC%2BdEf/GhI%3DjKl9876543",
        "AbC+dEf/GhI=jKl9876543",
    ):
        assert redaction.redact_secrets(text).endswith("***"), text
    assert redaction.redact_bytes(b"k=AbC%2BdEf%2FGhI%3DjKl9876543") == b"k=***"


def test_a_log_record_of_any_logger_is_redacted(caplog):
    redaction.remember([KEY])
    with caplog.at_level(logging.WARNING):
        logging.getLogger("some.third.party").warning("key %s", KEY)
        try:
            raise RuntimeError(f"boom {KEY}")
        except RuntimeError:
            logging.getLogger("other").exception("failed")
    assert KEY not in caplog.text
    assert "key ***" in caplog.text
    assert "boom ***" in caplog.text
