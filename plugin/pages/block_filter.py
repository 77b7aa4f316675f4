"""The learned filter: drop the lines of the rules' text that the block model scores as not
main content, and add the blocks it scores as main content that the text missed.

The rules of :mod:`.extraction` choose a text (trafilatura's, resiliparse's, posts, cards); this
stage finds where each of its lines sits in the page (:func:`.blocks.align`), scores every
block of the page with the block model (:mod:`.block_model`), drops each line, list item or
paragraph whose words' blocks score below the model's ``threshold``, and adds each block the
text does not touch that scores at least ``add_threshold`` (``add_threshold_article`` on a page
whose markup says it is an article: the rules read those well, and what the model would add
there is mostly captions, bylines and teasers), in page order. A line the model has
no block for is kept; the text is left as the rules made it when the model is missing or
broken, and when the model would leave no word.

Units: a fenced code block and a table are kept or dropped whole (so no fence or table header
is left alone); every other line (a paragraph, a heading, a list item) is its own unit.
"""

from __future__ import annotations

import re

from . import block_model, blocks

__all__ = ["DEFAULT_THRESHOLD", "GATE_WORDS", "Unit", "filter_text", "score_units", "scored_blocks", "units"]

#: The score below which a unit is dropped, when the model file names none.
DEFAULT_THRESHOLD = 0.35
#: The score from which a block the text misses is added, when the model file names none.
DEFAULT_ADD_THRESHOLD = 0.4
#: Blocks of at most this many words that no candidate kept are not scored (:func:`scored_blocks`).
GATE_WORDS = 2
_WORD = re.compile(r"\w+")


class Unit:
    """A piece of a text kept or dropped whole: its lines (indices into ``text.split("\\n")``)."""

    __slots__ = ("first", "last", "glue")

    def __init__(self, first: int, last: int, glue: bool):
        self.first, self.last, self.glue = first, last, glue  # glue: "\n" before it, not "\n\n"


def units(text: str) -> list[Unit]:
    """The units of *text* in order: code blocks and tables whole, every other line alone."""
    lines = text.split("\n")
    found: list[Unit] = []
    i, n = 0, len(lines)
    glue = False
    while i < n:
        line = lines[i]
        if not line.strip():
            glue = False
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            while j < n and not lines[j].startswith("```"):
                j += 1
            last = min(j, n - 1)
        elif line.startswith("|"):
            j = i
            while j + 1 < n and lines[j + 1].startswith("|"):
                j += 1
            last = j
        else:
            last = i
        found.append(Unit(i, last, glue))
        glue = True
        i = last + 1
    return found


def score_units(
    seg: blocks.Segmentation, spans: list[list[tuple[int, int]]], found: list[Unit], scores: dict
) -> list[float | None]:
    """Each unit's score: the mean of its words' block scores (``None``: no word placed)."""
    block_of = seg.block_of
    out: list[float | None] = []
    for unit in found:
        total, count = 0.0, 0
        for line in range(unit.first, unit.last + 1):
            for start, end in spans[line]:
                for pos in range(start, end):
                    score = scores.get(block_of[pos])
                    if score is not None:
                        total += score
                        count += 1
        out.append(total / count if count else None)
    return out


def scored_blocks(seg: blocks.Segmentation, kept: dict[str, list[float]]) -> list[int]:
    """The gate: the blocks worth scoring. A block of at most :data:`GATE_WORDS` words that
    neither the text nor resiliparse kept is left out (a third of a typical page's blocks:
    menu entries, buttons, labels); on the dev split, adding such blocks moved F1 by 0.001."""
    ours, resili = kept["ours"], kept["resiliparse"]
    return [
        i for i, block in enumerate(seg.blocks)
        if ours[i] > 0 or resili[i] > 0 or block.words > GATE_WORDS
    ]


def filter_text(text: str, resiliparse: str | None, tree, facts: dict, model=None) -> str | None:
    """*text* with the units the block model scores below its threshold dropped, and the
    page's blocks it scores as main content that *text* misses added where they stand in the
    page; ``None`` when the model cannot run (no model file, no resiliparse, no blocks)."""
    if resiliparse is None or not text.strip():
        return None
    if model is None:
        model = block_model.load(feature_names=blocks.FEATURE_NAMES)
        if model is None:
            return None
    seg = blocks.segment(tree)
    if not seg.blocks:
        return None
    spans = blocks.align(seg, text)
    kept = {
        "ours": blocks.coverage(seg, spans),
        "resiliparse": blocks.coverage(seg, blocks.align(seg, resiliparse)),
    }
    needed = scored_blocks(seg, kept)
    rows = blocks.features(seg, kept, facts, rows=needed)
    scores = dict.fromkeys(range(len(seg.blocks)), 0.0)
    scores.update((i, model.predict(row)) for i, row in zip(needed, rows))
    threshold = float(model.meta.get("threshold", DEFAULT_THRESHOLD))
    add_threshold = float(model.meta.get("add_threshold", DEFAULT_ADD_THRESHOLD))
    if facts.get("article_markup"):  # the rules read marked-up articles well: add less there
        add_threshold = float(model.meta.get("add_threshold_article", add_threshold))
    additions = [
        i for i, share in enumerate(kept["ours"]) if share == 0 and scores[i] >= add_threshold
    ]
    found = units(text)
    lines = text.split("\n")
    pieces: list[tuple[str, bool]] = []  # (text, glued to the piece before with one newline)
    pending = 0
    previous_kept = False
    for unit, score in zip(found, score_units(seg, spans, found, scores)):
        where = min((start for line in range(unit.first, unit.last + 1)
                     for start, _ in spans[line]), default=None)
        while where is not None and pending < len(additions) and (
            seg.blocks[additions[pending]].start < where
        ):
            pieces.append(_added(seg, additions[pending], pieces))
            pending += 1
            previous_kept = False
        if score is not None and score < threshold:
            previous_kept = False
            continue
        pieces.append(("\n".join(lines[unit.first : unit.last + 1]), unit.glue and previous_kept))
        previous_kept = True
    while pending < len(additions):
        pieces.append(_added(seg, additions[pending], pieces))
        pending += 1
    out = []
    for piece, glued in pieces:
        if out:
            out.append("\n" if glued else "\n\n")
        out.append(piece)
    result = "".join(out)
    return result if _WORD.search(result) else None  # never nothing where the rules found text


_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def _added(seg: blocks.Segmentation, index: int, pieces: list) -> tuple[str, bool]:
    """An added block as Markdown: a heading, a list item (glued to a list item before it) or a
    paragraph."""
    block = seg.blocks[index]
    tag = block.element.tag if isinstance(block.element.tag, str) else ""
    if tag in _HEADINGS:
        return "#" * _HEADINGS[tag] + " " + block.text, False
    if tag in ("li", "dd", "dt"):
        glued = bool(pieces) and pieces[-1][0].startswith("- ") and "\n" not in pieces[-1][0]
        return "- " + block.text, glued
    return block.text, False
