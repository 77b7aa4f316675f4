"""The learned filter: the rules' lines the block model scores low are dropped."""

from __future__ import annotations

import lxml.html
from pi_web_tools.pages import block_filter, blocks

PAGE = """<html><body>
<nav><a href="/">Home</a> <a href="/news">News and more</a></nav>
<article><h1>Rust async</h1><p>Futures are lazy and need an executor to run them.</p>
<ul><li>Share this article on social media</li><li>Tasks run concurrently with their spawner</li></ul>
<pre>let x = spawn(work);</pre>
<table><tr><td>name</td><td>value</td></tr><tr><td>alpha</td><td>one</td></tr></table>
</article></body></html>"""
FACTS = {"type": "article", "profile": "article", "url_depth": 1, "article_markup": True}


class LowOnLinksAndShare:
    """A stand-in model: low scores for link blocks and the share line, high for the rest."""

    meta = {"threshold": 0.5}

    def predict(self, row):
        named = dict(zip(blocks.FEATURE_NAMES, row))
        if named["link_density"] > 0.5 or named["log_words"] == 0:
            return 0.1
        return 0.2 if named["tag_li"] and named["log_chars"] < 3.6 else 0.9


def _tree():
    return lxml.html.fromstring(PAGE).getroottree()


def test_units_keep_code_blocks_and_tables_whole_and_split_other_lines():
    text = "# Head\n\nline one\n- a\n- b\n\n```\ncode 1\ncode 2\n```\n\n| a | b |\n| --- | --- |\n| c | d |"
    found = [(u.first, u.last) for u in block_filter.units(text)]
    assert found == [(0, 0), (2, 2), (3, 3), (4, 4), (6, 9), (11, 13)]


def test_lines_the_model_scores_low_are_dropped_and_the_rest_kept_in_order():
    text = (
        "Home News and more\n\n# Rust async\n\nFutures are lazy and need an executor to run them.\n\n"
        "- Share this article on social media\n- Tasks run concurrently with their spawner\n\n"
        "```\nlet x = spawn(work);\n```\n\n| name | value |\n| --- | --- |\n| alpha | one |\n\n"
        "A line that is nowhere on the page stays"
    )
    out = block_filter.filter_text(text, "", _tree(), FACTS, model=LowOnLinksAndShare())
    assert out == (
        "# Rust async\n\nFutures are lazy and need an executor to run them.\n\n"
        "- Tasks run concurrently with their spawner\n\n"
        "```\nlet x = spawn(work);\n```\n\n| name | value |\n| --- | --- |\n| alpha | one |\n\n"
        "A line that is nowhere on the page stays"
    )


def test_without_resiliparse_or_text_the_filter_does_not_run():
    model = LowOnLinksAndShare()
    assert block_filter.filter_text("Home", None, _tree(), FACTS, model=model) is None
    assert block_filter.filter_text("  ", "", _tree(), FACTS, model=model) is None


def test_a_missing_model_leaves_the_text_to_the_rules(monkeypatch, tmp_path):
    from pi_web_tools.pages import block_model

    monkeypatch.setattr(block_model, "MODEL_FILE", tmp_path / "absent.json")
    monkeypatch.setattr(block_model, "_loaded", {})
    assert block_filter.filter_text("Home News and more", "", _tree(), FACTS) is None


def test_extraction_with_a_broken_model_file_gives_the_rules_text(monkeypatch, tmp_path):
    from pi_web_tools.pages import block_model, extraction

    html = PAGE.replace("<p>", "<p>" + "More words of the article to read here. " * 10, 1)
    trace: dict = {}
    extraction._extract(html, "https://example.org/a", trace)
    broken = tmp_path / "broken.json"
    broken.write_text('{"feature_names": ')
    monkeypatch.setattr(block_model, "MODEL_FILE", broken)
    monkeypatch.setattr(block_model, "_loaded", {})
    found = extraction.extract(html, "https://example.org/a")
    assert found.text == trace["rules_text"] and "model" not in found.kind


class HighOnTheArticle:
    """A stand-in model: high scores for every block of the article, low elsewhere."""

    meta = {"threshold": 0.5, "add_threshold": 0.6}

    def predict(self, row):
        return 0.9 if dict(zip(blocks.FEATURE_NAMES, row))["in_article"] else 0.1


def test_blocks_the_text_missed_are_added_where_they_stand_in_the_page():
    text = "# Rust async\n\n| name | value |\n| --- | --- |\n| alpha | one |"
    out = block_filter.filter_text(text, "", _tree(), FACTS, model=HighOnTheArticle())
    assert out == (
        "# Rust async\n\nFutures are lazy and need an executor to run them.\n\n"
        "- Share this article on social media\n- Tasks run concurrently with their spawner\n\n"
        "let x = spawn(work);\n\n| name | value |\n| --- | --- |\n| alpha | one |"
    )


def test_the_gate_leaves_out_short_blocks_no_candidate_kept():
    tree = _tree()
    seg = blocks.segment(tree)
    kept = {"ours": [0.0] * len(seg.blocks), "resiliparse": [0.0] * len(seg.blocks)}
    scored = block_filter.scored_blocks(seg, kept)
    assert [seg.blocks[i].text for i in range(len(seg.blocks)) if i not in scored] == [
        "Rust async", "name", "value", "alpha", "one"
    ]
    kept["resiliparse"][1] = 1.0
    assert 1 in block_filter.scored_blocks(seg, kept)
