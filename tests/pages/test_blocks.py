"""Blocks of a parsed page, alignment of a text on them, and their features."""

from __future__ import annotations

import lxml.html
import pytest
from pi_web_tools.pages import blocks

PAGE = """<html><head><title>T</title><style>p {color: red}</style></head><body>
<nav class="main-nav"><ul><li><a href="/">Home</a></li><li><a href="/blog">Blog posts</a></li></ul></nav>
<article class="post-content"><h1>Async in Rust</h1>
<p>Futures are <em>lazy</em>: nothing happens until an executor polls them.<script>var x = 1;</script></p>
<div>Tasks run concurrently<br>with the code that spawned them.<!-- a comment --> And more.</div>
<p>Read <a href="/docs">the docs</a> for details.</p></article>
<footer id="site-footer">Copyright 2026 example.org</footer></body></html>"""


def _segment(html=PAGE):
    return blocks.segment(lxml.html.fromstring(html).getroottree())


def test_a_page_is_cut_into_blocks_in_document_order_without_hidden_text():
    seg = _segment()
    texts = [b.text for b in seg.blocks]
    assert texts == [
        "Home",
        "Blog posts",
        "Async in Rust",
        "Futures are lazy: nothing happens until an executor polls them.",
        "Tasks run concurrently",
        "with the code that spawned them. And more.",
        "Read the docs for details.",
        "Copyright 2026 example.org",
    ]
    assert [b.element.tag for b in seg.blocks] == ["li", "li", "h1", "p", "div", "div", "p", "footer"]
    assert "var" not in seg.words and "color" not in seg.words
    assert seg.words[:3] == ["home", "blog", "posts"]
    assert all(seg.block_of[b.start] == i for i, b in enumerate(seg.blocks))


def test_link_words_are_counted_per_block():
    seg = _segment()
    by_text = {b.text: b for b in seg.blocks}
    assert by_text["Blog posts"].link_words == 2
    assert by_text["Read the docs for details."].link_words == 2
    assert by_text["Async in Rust"].link_words == 0


def test_a_tree_nested_thousands_deep_is_segmented_without_recursion():
    """(The HTML parser stops at 256 levels; a tree built another way may not.)"""
    root = lxml.html.fromstring("<html><body></body></html>")
    node = root.find("body")
    for _ in range(20000):
        node = lxml.html.etree.SubElement(node, "div")
    node.text = "deep words here"
    seg = blocks.segment(root.getroottree())
    assert seg.words == ["deep", "words", "here"]
    kept = {"ours": [1.0], "resiliparse": [0.0]}
    assert len(blocks.features(seg, kept, {})[0]) == len(blocks.FEATURE_NAMES)


def test_segmentation_stops_at_its_block_limit(monkeypatch):
    monkeypatch.setattr(blocks, "MAX_BLOCKS", 3)
    assert len(_segment().blocks) == 3


def test_an_empty_page_has_no_blocks():
    assert _segment("<html><body></body></html>").blocks == []


def test_each_line_of_a_text_is_aligned_on_the_pages_words_whatever_its_markup():
    seg = _segment()
    text = "# Async in Rust\n\nFutures are *lazy*: nothing happens\n- Tasks run concurrently\nNot on the page at all"
    spans = blocks.align(seg, text)
    assert [[(seg.words[s], seg.words[e - 1]) for s, e in line] for line in spans] == [
        [("async", "rust")],
        [],
        [("futures", "happens")],
        [("tasks", "concurrently")],
        [],
    ]


def test_a_repeated_line_is_placed_after_the_previous_one():
    seg = _segment("<body><p>one two three</p><p>middle words</p><p>one two three</p></body>")
    spans = blocks.align(seg, "middle words\none two three")
    assert spans[1] == [(5, 8)]


def test_coverage_is_each_blocks_share_of_aligned_words():
    seg = _segment()
    cover = blocks.coverage(seg, blocks.align(seg, "Async in Rust\nTasks run"))
    assert cover[2] == 1.0 and cover[4] == pytest.approx(2 / 3) and cover[0] == 0.0


def test_features_give_one_row_of_every_named_feature_per_block():
    seg = _segment()
    n = len(seg.blocks)
    kept = {"ours": [0.0, 0.0] + [1.0] * 5 + [0.0], "resiliparse": [1.0] * n}
    facts = {"type": "article", "profile": "article", "url_depth": 2, "article_markup": True}
    rows = blocks.features(seg, kept, facts)
    assert len(rows) == n and all(len(r) == len(blocks.FEATURE_NAMES) for r in rows)
    named = [dict(zip(blocks.FEATURE_NAMES, r)) for r in rows]
    assert named[1]["link_density"] == 1.0 and named[3]["link_density"] == 0.0
    assert named[0]["in_nav"] == 1.0 and named[3]["in_nav"] == 0.0
    assert named[3]["in_article"] == 1.0 and named[3]["class_content"] == 1.0
    assert named[0]["class_nav"] == 1.0 and named[7]["class_footer"] == 1.0
    assert named[7]["in_footer"] == 0.0 and named[7]["tag_p"] == 0.0
    assert named[3]["ours_kept"] == 1.0 and named[0]["ours_kept"] == 0.0
    assert named[3]["type_article"] == 1.0 and named[3]["url_depth"] == 2.0
    assert rows[3] == blocks.features(seg, kept, facts, rows=[3])[0]


def test_class_words_are_a_fixed_list_never_a_sites_own_names():
    names = [n for n in blocks.FEATURE_NAMES if "class_" in n]
    assert names and all(n.split("class_", 1)[1] in blocks._CLASS_WORDS for n in names)
