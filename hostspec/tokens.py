"""The bearer tokens ``pi-web mcp --http`` accepts, each with the name of who holds it.

A token file holds either one token alone (named :data:`DEFAULT_NAME`), or one ``name: token``
line per person; a line starting with ``#`` and what follows `` #`` are comments, blank lines
are ignored::

    alice: 3vQ1kX0cJ2m9yPz8RtLw4sBn7uHdEa6F
    bob:   b7Xo2LqN5sUvR1cTz9wKe4yG8hJm3PdA

A name is letters, digits, ``.``, ``_``, ``-`` and ``@`` (at most 64, starting with a letter or
digit); a token at least :data:`MIN_TOKEN_LENGTH` characters without spaces; no two lines share
a name or a token. The file is read again when it changes (looked at at most once per
:data:`RECHECK_SECONDS`): deleting a line revokes that person at once, without a restart. A file
that can no longer be read or parsed refuses every token until it is fixed. No message ever
holds a token: only names and line numbers.
"""

from __future__ import annotations

import hmac
import os
import re
import stat
import time
from collections.abc import Callable

__all__ = [
    "DEFAULT_NAME",
    "MAX_TOKEN_FILE_BYTES",
    "MIN_TOKEN_LENGTH",
    "TokenError",
    "Tokens",
    "parse_tokens",
    "read_token_file",
]

#: The name of a token given alone (``PI_WEB_MCP_TOKEN``, or a file with one token).
DEFAULT_NAME = "default"
MIN_TOKEN_LENGTH = 16
#: The most a token file may hold (room for about a hundred named tokens).
MAX_TOKEN_FILE_BYTES = 16384
#: How often a request may look whether the token file changed.
RECHECK_SECONDS = 1.0
_NAME = r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}"
_NAMED = re.compile(rf"({_NAME})\s*:\s+(\S+)")
_MAKE_ONE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


class TokenError(ValueError):
    """A token or token file that cannot be used (the message says why, in one line)."""


def read_token_file(path: str) -> str:
    """The text of the token file *path*: a regular UTF-8 file of at most
    :data:`MAX_TOKEN_FILE_BYTES`, opened without blocking, so a FIFO (or a device) is refused
    at once instead of hanging."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise TokenError(f"--token-file {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise TokenError(f"--token-file {path}: not a regular file")
            if info.st_size > MAX_TOKEN_FILE_BYTES:
                raise TokenError(
                    f"--token-file {path}: too large for a token file ({info.st_size} bytes; "
                    f"at most {MAX_TOKEN_FILE_BYTES})"
                )
            data = handle.read(MAX_TOKEN_FILE_BYTES + 1)  # bounded: it may grow after the stat
    except OSError as exc:
        raise TokenError(f"--token-file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise TokenError(
            f"--token-file {path}: too large for a token file (at most {MAX_TOKEN_FILE_BYTES} bytes)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenError(f"--token-file {path}: not UTF-8 text") from None


def check_token(token: str, where: str) -> str:
    """*token* when it is long enough and has no spaces, else a :class:`TokenError`."""
    if len(token) < MIN_TOKEN_LENGTH or any(ch.isspace() for ch in token):
        raise TokenError(
            f"{where}: a bearer token must be at least {MIN_TOKEN_LENGTH} characters without "
            f"spaces (got {len(token)}); make one with: {_MAKE_ONE}"
        )
    return token


def _uncommented(line: str) -> str:
    """*line* without a ``# comment`` after a space (a token may hold ``#`` itself)."""
    return re.sub(r"\s+#.*$", "", line)


def parse_tokens(text: str, where: str) -> dict[str, str]:
    """The tokens of a token file's *text*, by name (one token alone: :data:`DEFAULT_NAME`)."""
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)]
    lines = [(number, line) for number, line in lines if line and not line.startswith("#")]
    if not lines:
        raise TokenError(f"{where}: the file is empty")
    if len(lines) == 1 and not _NAMED.fullmatch(_uncommented(lines[0][1])):
        return {DEFAULT_NAME: check_token(lines[0][1], where)}  # one token alone, as before
    found: dict[str, str] = {}
    holders: dict[str, str] = {}
    for number, line in lines:
        match = _NAMED.fullmatch(_uncommented(line))
        if match is None:
            raise TokenError(
                f"{where}, line {number}: expected NAME: TOKEN (a name of letters, digits, "
                "'.', '_', '-' or '@', a colon, a space, then the token)"
            )
        name, token = match.groups()
        check_token(token, f"{where}, line {number} ({name})")
        if name in found:
            raise TokenError(f"{where}, line {number}: the name {name!r} is given twice")
        if token in holders:
            raise TokenError(
                f"{where}, line {number}: {name!r} has the same token as {holders[token]!r}; "
                "give each their own"
            )
        found[name] = token
        holders[token] = name
    return found


class Tokens:
    """The tokens accepted now: fixed (*tokens*), or those of the file *path*, read again when
    it changes. *log* hears (once per change) that the file became unusable or usable again."""

    def __init__(
        self,
        tokens: dict[str, str] | None = None,
        path: str | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.path = path
        self.log = log
        self._tokens = {name: token.encode() for name, token in (tokens or {}).items()}
        self._problem: str | None = None
        self._seen: tuple | None = None
        self._checked = 0.0
        if path is not None:
            self._load(self._identity())
            if self._problem is not None:
                raise TokenError(self._problem)

    @property
    def names(self) -> list[str]:
        """The names accepted now."""
        self._refresh()
        return list(self._tokens)

    def name_of(self, credential: bytes) -> str | None:
        """The name holding *credential*, or ``None`` (every token is compared, in constant
        time each, so which one matched cannot be timed)."""
        self._refresh()
        if self._problem is not None:
            return None
        found = None
        for name, token in self._tokens.items():
            if hmac.compare_digest(credential, token) and found is None:
                found = name
        return found

    def _identity(self) -> tuple | None:
        try:
            info = os.stat(self.path) if self.path else None
        except OSError as exc:
            return ("missing", exc.strerror or str(exc))
        if info is None:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    def _refresh(self) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if now - self._checked < RECHECK_SECONDS:
            return
        self._checked = now
        seen = self._identity()
        if seen != self._seen:
            self._load(seen)

    def _load(self, seen: tuple | None) -> None:
        assert self.path is not None
        self._seen = seen
        was = self._problem
        try:
            text = read_token_file(self.path)
            tokens = parse_tokens(text, f"--token-file {self.path}")
        except TokenError as exc:
            self._tokens, self._problem = {}, str(exc)
            if self.log is not None and was != self._problem and self._checked:
                self.log(f"{exc}; every request is refused until it is fixed")
            return
        if os.name == "posix" and self.log is not None:
            try:
                mode = os.stat(self.path).st_mode
            except OSError:
                mode = 0
            if mode & (stat.S_IRGRP | stat.S_IROTH):
                self.log(
                    f"warning: {self.path} is readable by other users; run: chmod 600 {self.path}"
                )
        before = set(self._tokens)
        self._tokens = {name: token.encode() for name, token in tokens.items()}
        self._problem = None
        if self.log is not None and self._checked:  # a change while serving: say who
            added, removed = sorted(set(tokens) - before), sorted(before - set(tokens))
            parts = [f"added {', '.join(added)}"] if added else []
            parts += [f"revoked {', '.join(removed)}"] if removed else []
            if was is not None:
                parts.insert(0, "usable again")
            if parts:
                self.log(f"--token-file {self.path} read again: {'; '.join(parts)}")
