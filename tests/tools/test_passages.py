"""Passages of a page's text: how a page is cut, which passages answer a question, literal finds.

Every span must be a span of the very text ``web_fetch`` pages through, so offsets read true.
"""

from __future__ import annotations

from pi_web_tools.tools import passages

FILLER = (
    "The harbour town keeps its old stone walls, and visitors walk along them in the evening "
    "to watch the fishing boats come back with the tide. "
)


def _page(*sections: str) -> str:
    return "\n\n".join(sections)


def test_passages_are_spans_of_the_text_in_page_order():
    text = _page("# Title", FILLER * 3, "## Second", FILLER * 8, FILLER)
    cut = passages.split(text)
    assert cut and all(0 <= p.start < p.end <= len(text) for p in cut)
    assert [p.start for p in cut] == sorted(p.start for p in cut)
    assert all(a.end <= b.start for a, b in zip(cut, cut[1:], strict=False))
    # nothing of the text is left out but the white space between passages
    covered = "".join(text[p.start : p.end] for p in cut)
    assert covered.replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")


def test_a_code_block_is_a_passage_of_its_own_and_never_split():
    code = "```python\n" + "\n\n".join(f"value_{n} = compute({n})" for n in range(200)) + "\n```"
    text = _page(FILLER * 2, code, FILLER * 2)
    cut = passages.split(text)
    blocks = [p for p in cut if p.code]
    assert len(blocks) == 1
    assert text[blocks[0].start : blocks[0].end].endswith(code)
    assert text[blocks[0].start : blocks[0].end].count("```") == 2


def test_a_passage_never_crosses_a_heading_or_a_pdf_page_marker():
    text = _page("[Page 1 of 2]", "A short first page.", "[Page 2 of 2]", "The second page.")
    cut = [text[p.start : p.end] for p in passages.split(text)]
    assert cut == ["[Page 1 of 2]\n\nA short first page.", "[Page 2 of 2]\n\nThe second page."]
    text = _page("Intro words here.", "## Install", "pip install it.")
    assert [text[p.start : p.end] for p in passages.split(text)][
        -1
    ] == "## Install\n\npip install it."


def test_a_long_block_without_blank_lines_is_cut_at_line_breaks():
    """Forum threads and re-indented JSON come as one block of many lines."""
    text = "\n".join(f"line {n}: " + "word " * 20 for n in range(100))
    cut = passages.split(text)
    assert len(cut) > 10
    assert all(text[p.start : p.end].startswith("line ") for p in cut)


def test_the_passage_that_answers_is_returned_with_its_offset():
    answer_text = (
        "To reload the configuration, send the reload signal: nginx -s reload. The master "
        "process checks the new configuration and starts new workers."
    )
    text = _page("# Guide", FILLER * 6, "## Reloading", answer_text, "## Logs", FILLER * 6)
    found = passages.answer(text, "How do I make nginx reload its configuration?")
    assert found.best is not None
    shown = [text[p.start : p.end] for p in found.passages]
    assert any("nginx -s reload" in part for part in shown)
    assert text[found.best.start :].startswith(text[found.best.start : found.best.end])
    assert "nginx -s reload" in text[found.best.start : found.best.end]


def test_answers_come_in_page_order_whatever_their_rank():
    text = _page(
        "## Timeouts",
        "Set a timeout on every request. " * 3,
        FILLER * 8,
        "## Retries",
        "A timeout can be retried, and a retried timeout needs a timeout value. " * 3,
    )
    found = passages.answer(text, "timeout")
    starts = [p.start for p in found.passages]
    assert len(starts) >= 2 and starts == sorted(starts)
    assert found.best.start == starts[-1]  # the later passage says "timeout" more


def test_an_unrelated_question_gets_no_passages():
    text = _page("# Harbour", FILLER * 20)
    found = passages.answer(text, "How do I configure Kubernetes ingress TLS certificates?")
    assert found.best is None and found.passages == ()
    assert passages.answer(text, "what is it?").best is None  # nothing to look for


def test_identifiers_match_their_parts():
    """A question about "refresh task" finds ``self._refresh_task`` and ``refreshTask``."""
    text = _page(FILLER * 6, "self._refresh_task = hass.async_create_task(loop)", FILLER * 6)
    found = passages.answer(text, "where is the refresh task created")
    assert any("_refresh_task" in text[p.start : p.end] for p in found.passages)


def test_the_answer_keeps_within_a_character_limit_but_always_shows_the_best():
    text = _page(*(f"## Part {n}\n\nThe cache stores pages. " + FILLER * 4 for n in range(8)))
    found = passages.answer(text, "cache stores pages", max_characters=10)
    assert len(found.passages) == 1 and found.passages[0] == found.best


def test_find_is_case_insensitive_with_a_line_either_side_and_counts():
    text = "alpha\n\n\nBeta gamma\n\ndelta\nepsilon beta\n" + "x\n" * 20 + "last BETA"
    places, counts = passages.find(text, ["beta", "ALPHA", "zeta"])
    assert counts == {"beta": 3, "ALPHA": 1, "zeta": 0}
    hits = [hit for place in places for hit in place.hits]
    assert [text[at : at + 4].lower() for at, _ in hits] == ["alph", "beta", "beta", "beta"]
    first = text[places[0].start : places[0].end]
    assert first.startswith("alpha") and "delta" in first  # merged: the contexts overlap
    last = text[places[-1].start : places[-1].end]
    assert last == "x\nlast BETA"


def test_find_counts_overlapping_terms_once_each_and_ignores_blank_terms():
    places, counts = passages.find("aaaa", ["aa", ""])
    assert counts == {"aa": 2} and len(places) == 1
