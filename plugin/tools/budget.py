"""Sharing the seeds' output limits (50 KB / 2000 lines) fairly between the parts of an answer.

A part that needs less than an equal share gets all it needs; the others share what is left
equally (max-min fairness). Text is cut by characters, never by dropping a line whole.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clip_to", "fair_shares", "utf8_length"]


def utf8_length(text: str) -> int:
    """The UTF-8 size of *text* in bytes (a lone surrogate counts as 3)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def fair_shares(needs: Sequence[int], budget: int) -> list[int]:
    """Split *budget* among parts that need *needs*: max-min fair, never more than a need."""
    shares = [0] * len(needs)
    remaining = max(0, budget)
    left = len(needs)
    for index in sorted(range(len(needs)), key=lambda i: needs[i]):
        give = min(max(0, needs[index]), remaining // left)
        shares[index] = give
        remaining -= give
        left -= 1
    return shares


def clip_to(text: str, max_bytes: int, max_lines: int) -> str:
    """The longest prefix of *text* within *max_bytes* (UTF-8) and *max_lines* lines; a line that
    does not fit whole is cut by characters (never in the middle of a character)."""
    if max_bytes <= 0 or max_lines <= 0:
        return ""
    end = len(text)
    position = -1
    for _ in range(max_lines):
        position = text.find("\n", position + 1)
        if position == -1:
            break
    else:
        end = position  # the newline ending the last allowed line is not kept
    head = text[: min(end, max_bytes)]  # a character is at least one byte
    if utf8_length(head) <= max_bytes:
        return head
    return head.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore")


#: How far back from a cut :func:`on_boundary` looks for the end of a line or a word.
BOUNDARY_REACH = 200


def on_boundary(part: str, cut: bool) -> str:
    """*part*, a prefix that was *cut* from a longer text, ending after its last space or line
    break within :data:`BOUNDARY_REACH` characters of its end, so no word is split (the next
    window starts where this one ends). Unchanged when not cut or when no boundary is near."""
    if not cut or not part:
        return part
    floor = max(0, len(part) - BOUNDARY_REACH)
    position = max(part.rfind("\n", floor), part.rfind(" ", floor), part.rfind("\t", floor))
    return part[: position + 1] if position > 0 else part
