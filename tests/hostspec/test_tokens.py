"""hostspec/tokens.py: a token file of one token or of named tokens, read again when it changes
(a line deleted revokes one person at once), and no message that ever holds a token."""

from __future__ import annotations

import os

import pytest
from pi_hostspec import tokens
from pi_hostspec.tokens import DEFAULT_NAME, TokenError, Tokens, parse_tokens

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


def _write(path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o600)
    stamp = path.stat().st_mtime_ns + 1_000_000_000  # a new mtime, whatever the clock's grain
    os.utime(path, ns=(stamp, stamp))
    return str(path)


def test_a_file_of_one_token_keeps_working_under_the_default_name():
    assert parse_tokens(f"\n{ALICE}\n", "f") == {DEFAULT_NAME: ALICE}
    assert parse_tokens(f"# the team's token\n{ALICE}\n", "f") == {DEFAULT_NAME: ALICE}
    assert parse_tokens("abc:defghijklmnopqrstuvw", "f") == {
        DEFAULT_NAME: "abc:defghijklmnopqrstuvw"
    }


def test_named_lines_comments_and_blank_lines():
    text = f"# team\nalice: {ALICE}\n\nbob:\t{BOB}   # added in May\nci.bot@x-1 : c{ALICE}\n"
    assert parse_tokens(text, "f") == {"alice": ALICE, "bob": BOB, "ci.bot@x-1": "c" + ALICE}
    assert parse_tokens(f"alice: {ALICE}", "f") == {"alice": ALICE}  # one named line


@pytest.mark.parametrize(
    "text, said",
    [
        ("", "the file is empty"),
        ("# only a comment\n", "the file is empty"),
        ("short", "at least 16 characters"),
        (f"alice: {ALICE}\nbob {BOB}\n", "line 2: expected NAME: TOKEN"),
        (f"alice: {ALICE}\nalice: {BOB}\n", "line 2: the name 'alice' is given twice"),
        (f"alice: {ALICE}\nbob: {ALICE}\n", "line 2: 'bob' has the same token as 'alice'"),
        (f"alice: {ALICE}\nbob: short\n", "line 2 (bob): a bearer token must be at least 16"),
        (f"al ice: {ALICE}\nbob: {BOB}\n", "line 1: expected NAME: TOKEN"),
    ],
)
def test_a_file_that_cannot_be_used_says_why_without_a_token(text, said):
    with pytest.raises(TokenError) as caught:
        parse_tokens(text, "--token-file f")
    assert said in str(caught.value)
    assert ALICE not in str(caught.value) and BOB not in str(caught.value)


def test_each_token_gives_its_holders_name(tmp_path):
    held = Tokens(path=_write(tmp_path / "tokens", f"alice: {ALICE}\nbob: {BOB}\n"))
    assert held.name_of(ALICE.encode()) == "alice"
    assert held.name_of(BOB.encode()) == "bob"
    assert held.name_of(b"bob") is None and held.name_of(b"") is None
    assert Tokens({DEFAULT_NAME: ALICE}).name_of(ALICE.encode()) == DEFAULT_NAME


def test_deleting_a_line_revokes_one_person_without_a_restart(tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "RECHECK_SECONDS", 0.0)
    said: list[str] = []
    path = _write(tmp_path / "tokens", f"alice: {ALICE}\nbob: {BOB}\n")
    held = Tokens(path=path, log=said.append)
    assert held.name_of(BOB.encode()) == "bob"
    _write(tmp_path / "tokens", f"alice: {ALICE}\n")
    assert held.name_of(BOB.encode()) is None
    assert held.name_of(ALICE.encode()) == "alice"
    assert said[-1] == f"--token-file {path} read again: revoked bob"
    _write(tmp_path / "tokens", f"alice: {ALICE}\ncarol: c{BOB}\n")
    assert held.name_of(f"c{BOB}".encode()) == "carol"
    assert said[-1].endswith("read again: added carol")
    assert not any(ALICE in line or BOB in line for line in said)


def test_a_file_that_breaks_refuses_everyone_until_it_is_fixed(tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "RECHECK_SECONDS", 0.0)
    said: list[str] = []
    path = _write(tmp_path / "tokens", f"alice: {ALICE}\n")
    held = Tokens(path=path, log=said.append)
    _write(tmp_path / "tokens", f"alice {ALICE}\nbob: {BOB}\n")  # a half-edited file
    assert held.name_of(ALICE.encode()) is None
    assert "every request is refused until it is fixed" in said[-1]
    os.unlink(path)
    assert held.name_of(ALICE.encode()) is None
    _write(tmp_path / "tokens", f"alice: {ALICE}\n")
    assert held.name_of(ALICE.encode()) == "alice"
    assert said[-1].endswith("read again: usable again; added alice")


def test_the_file_is_looked_at_at_most_once_a_second(tmp_path):
    path = _write(tmp_path / "tokens", f"alice: {ALICE}\n")
    held = Tokens(path=path)
    held.name_of(ALICE.encode())
    _write(tmp_path / "tokens", f"bob: {BOB}\n")
    assert held.name_of(ALICE.encode()) == "alice"  # within the second: as it was


def test_a_file_readable_by_others_is_said(tmp_path):
    said: list[str] = []
    path = tmp_path / "tokens"
    _write(path, f"alice: {ALICE}\n")
    path.chmod(0o644)
    Tokens(path=str(path), log=said.append)
    assert said == [f"warning: {path} is readable by other users; run: chmod 600 {path}"]
