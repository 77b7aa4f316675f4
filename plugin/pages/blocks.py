"""Text blocks of a parsed page, where a candidate text came from in them, and their features.

The block model (:mod:`.block_model`) scores each block of a page: how likely its words belong
to the main content. This module gives it what it scores, from the tree the extractors already
parsed (no second parse):

- :func:`segment`: the page's text as a stream of words (``\\w+``, lower-cased, as the WCXB
  scorer counts them), cut into blocks at block-level elements; each block knows its element,
  its words' span in the stream and how many of them sit inside links.
- :func:`align`: where each line of a text (an extractor's output, or the ground truth when
  training) sits in that word stream, by anchoring its words on the page's word trigrams.
- :func:`features`: one row of numbers per block (:data:`FEATURE_NAMES`): its size, links,
  punctuation, tag, ancestors, position, neighbours, and how much of it each candidate text
  kept. No feature names a site: class and id words only count against a short fixed list of
  words many sites use (``nav``, ``comment``, ``content``...).

The training script (``bench/train_extraction.py``) calls the same functions on the same tree,
so the features at run time are the features the model was trained on.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass, field

__all__ = [
    "FEATURE_NAMES",
    "MAX_BLOCKS",
    "MAX_WORDS",
    "Block",
    "Segmentation",
    "align",
    "coverage",
    "features",
    "segment",
]

#: Pages with more blocks or words than this are not segmented past it (the rest is not scored).
MAX_BLOCKS = 6000
MAX_WORDS = 300_000

_WORD = re.compile(r"\w+")
#: Elements that start and end a block of text.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body dd details dialog div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul caption center".split()
)
#: Elements whose text is never shown as page text.
SKIP_TAGS = frozenset(
    "script style noscript template svg head iframe object embed canvas select option "
    "datalist math title meta link".split()
)
#: The block's own tag, one feature each (any other tag: none of them).
_OWN_TAGS = ("p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "dd", "dt",
             "blockquote", "span", "a", "section", "article", "figcaption", "body", "tr")
#: Ancestors by tag, one feature each: whether the block sits inside one.
_ANCESTOR_TAGS = ("nav", "header", "footer", "aside", "article", "main", "form", "li", "table",
                  "blockquote", "figure", "ul", "ol", "section", "dl", "a", "button", "label")
#: Words of class, id and role values many sites use, one feature each: how many of the block's
#: ancestors (itself included) carry the word, and whether the nearest one is within 3 levels.
_CLASS_WORDS = (
    "nav", "menu", "header", "footer", "sidebar", "side", "widget", "comment", "share", "social",
    "related", "breadcrumb", "cookie", "banner", "ad", "ads", "promo", "subscribe", "newsletter",
    "login", "search", "tag", "meta", "author", "date", "caption", "pagination", "hidden",
    "popup", "modal", "footnote", "toc", "content", "article", "post", "entry", "main", "body",
    "text", "story", "message", "thread", "product", "description", "item", "card", "list",
    "review", "answer", "question", "title", "summary", "price", "button", "icon", "skip",
)
_CLASS_SET = frozenset(_CLASS_WORDS)
_CLASS_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PAGE_TYPES = ("article", "documentation", "service", "forum", "collection", "listing", "product")


@dataclass(slots=True)
class Block:
    """A run of text between block-level boundaries: its element, its words' span
    ``[start, end)`` in the page's word stream, and how many of them are link words."""

    element: object
    start: int
    end: int
    link_words: int = 0
    chars: int = 0
    text: str = ""

    @property
    def words(self) -> int:
        return self.end - self.start


@dataclass
class Segmentation:
    """A page cut into blocks: the word stream, each word's block, the blocks."""

    words: list[str] = field(default_factory=list)
    block_of: list[int] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    _trigrams: dict | None = None
    _unigrams: dict | None = None

    def index(self) -> tuple[dict, dict]:
        """Positions of each word and of each word trigram in the stream (built once)."""
        if self._trigrams is None:
            words = self.words
            uni: dict[str, list[int]] = {}
            tri: dict[str, list[int]] = {}
            for i, w in enumerate(words):
                uni.setdefault(w, []).append(i)
            for i in range(len(words) - 2):
                tri.setdefault(f"{words[i]} {words[i + 1]} {words[i + 2]}", []).append(i)
            self._unigrams, self._trigrams = uni, tri
        return self._trigrams, self._unigrams


def segment(tree) -> Segmentation:
    """The blocks of the parsed page *tree* (an lxml tree or element), in document order.

    Walks the tree without recursion (hostile pages nest thousands deep); stops after
    :data:`MAX_BLOCKS` blocks or :data:`MAX_WORDS` words."""
    seg = Segmentation()
    root = tree.getroot() if hasattr(tree, "getroot") else tree
    if root is None:
        return seg
    body = root.find(".//body") if root.tag != "body" else root
    if body is None:
        body = root
    words, block_of, blocks = seg.words, seg.block_of, seg.blocks
    owners = [body]
    parts: list[str] = []
    link_parts: list[str] = []
    in_link = 0
    full = False

    def flush() -> None:
        nonlocal full
        if not parts or full:
            parts.clear()
            link_parts.clear()
            return
        text = " ".join("".join(parts).split())
        parts.clear()
        found = _WORD.findall(text.lower())
        links = sum(len(_WORD.findall(t)) for t in link_parts)
        link_parts.clear()
        if not found:
            return
        start = len(words)
        index = len(blocks)
        words.extend(found)
        block_of.extend([index] * len(found))
        blocks.append(Block(owners[-1], start, len(words), min(links, len(found)), len(text), text))
        if len(blocks) >= MAX_BLOCKS or len(words) >= MAX_WORDS:
            full = True

    def add(text: str | None) -> None:
        if text:
            parts.append(text)
            if in_link:
                link_parts.append(text)

    stack: list[tuple[object, bool]] = [(body, False)]
    while stack and not full:
        el, closing = stack.pop()
        tag = el.tag if isinstance(el.tag, str) else None
        if closing:
            if tag == "a":
                in_link -= 1
            if tag in BLOCK_TAGS or tag == "br":
                flush()
                if tag in BLOCK_TAGS and len(owners) > 1:
                    owners.pop()
            if el is not body:
                add(el.tail)
            continue
        if tag is None or tag in SKIP_TAGS:
            if el is not body:
                add(el.tail)
            continue
        if tag in BLOCK_TAGS and el is not body:
            flush()
            owners.append(el)
        if tag == "a":
            in_link += 1
        add(el.text)
        stack.append((el, True))
        stack.extend((child, False) for child in reversed(el))
    flush()
    return seg


def align(seg: Segmentation, text: str) -> list[list[tuple[int, int]]]:
    """For each line of *text*, the spans ``[start, end)`` of the page's word stream its words
    were found at (empty for a line found nowhere).

    Each run of a line's words is anchored at the first occurrence of its first three words
    (one or two at a line's end) at or after where the previous line ended, else anywhere;
    the run then extends while the words match."""
    trigrams, unigrams = seg.index()
    words = seg.words
    size = len(words)
    pointer = 0
    out: list[list[tuple[int, int]]] = []
    for line in text.split("\n"):
        found = _WORD.findall(line.lower())
        spans: list[tuple[int, int]] = []
        i, n = 0, len(found)
        while i < n:
            if n - i >= 3:
                places = trigrams.get(f"{found[i]} {found[i + 1]} {found[i + 2]}")
                near = 0
            else:
                places = unigrams.get(found[i])
                near = 400  # a short run is only trusted close to where the text was
            p = _first_after(places, pointer, near)
            if p is None:
                i += 1
                continue
            m = 0
            while i + m < n and p + m < size and words[p + m] == found[i + m]:
                m += 1
            spans.append((p, p + m))
            pointer = p + m
            i += m
        out.append(spans)
    return out


def _first_after(places: list[int] | None, pointer: int, near: int) -> int | None:
    """The first place at or after *pointer* (within *near* words when *near*), else the first
    place of all (not when *near*)."""
    if not places:
        return None
    k = bisect_left(places, pointer)
    if k < len(places) and (not near or places[k] - pointer <= near):
        return places[k]
    if near:
        return None
    return places[0]


def coverage(seg: Segmentation, spans: list[list[tuple[int, int]]]) -> list[float]:
    """Each block's share of words that the aligned text covers."""
    covered = bytearray(len(seg.words))
    for line in spans:
        for start, end in line:
            covered[start:end] = b"\x01" * (end - start)
    return [
        (sum(covered[b.start : b.end]) / b.words) if b.words else 0.0 for b in seg.blocks
    ]


def _class_words(el, cache: dict) -> frozenset:
    key = el  # the element itself: a key holds its proxy alive (an id() could be reused)
    found = cache.get(key)
    if found is None:
        raw = " ".join(
            _CAMEL.sub(" ", v) for v in (el.get("class"), el.get("id"), el.get("role")) if v
        ).lower()
        found = frozenset(_CLASS_SPLIT.split(raw)) if raw else frozenset()
        cache[key] = found
    return found


_CLASS_INDEX = {word: k for k, word in enumerate(_CLASS_WORDS)}
_ITEMPROP_TEXT = frozenset(("text", "articleBody", "commentText", "description", "reviewBody"))


def _ancestry(el, memo: dict, class_cache: dict) -> tuple:
    """``(depth, ancestor tags, class-word counts, itemprop text)`` of *el*, the element itself
    counted for class words and itemprop but not among the ancestor tags; memoised per element
    (a block's facts extend its parent's)."""
    chain = []
    node = el
    while node is not None and node not in memo and len(chain) < 200:
        chain.append(node)
        node = node.getparent()
    if node is not None and node in memo:
        base = memo[node]
    else:
        base = (0, frozenset(), (0,) * len(_CLASS_WORDS), 0.0, "")
    for node in reversed(chain):
        depth, tags, counts, prop, _own = base
        parent_tag = _own
        hits = _class_words(node, class_cache) & _CLASS_SET
        if hits:
            counts = list(counts)
            for word in hits:
                counts[_CLASS_INDEX[word]] += 1
            counts = tuple(counts)
        tag = node.tag if isinstance(node.tag, str) else ""
        base = (
            depth + 1,
            tags | {parent_tag} if parent_tag and parent_tag not in tags else tags,
            counts,
            1.0 if prop or node.get("itemprop") in _ITEMPROP_TEXT else 0.0,
            tag,
        )
        memo[node] = base
    depth, tags, counts, prop, _own = base
    return depth, tags, list(counts), prop


def _near_classes(el, class_cache: dict) -> list[float]:
    """Whether each class word is on the element or one of its three nearest ancestors."""
    near = [0.0] * len(_CLASS_WORDS)
    node = el
    for _ in range(4):
        if node is None:
            break
        for word in _class_words(node, class_cache) & _CLASS_SET:
            near[_CLASS_INDEX[word]] = 1.0
        node = node.getparent()
    return near


def _feature_names() -> list[str]:
    names = [
        "log_words", "log_chars", "mean_word_len", "link_density", "log_link_words",
        "sentence_marks", "comma_rate", "digit_rate", "upper_start_rate", "ends_with_stop",
        "has_colon_end", "depth", "position", "word_position", "log_block_index_from_end",
        "repeats_on_page", "prev_words", "next_words", "prev_link_density", "next_link_density",
    ]
    names += [f"tag_{t}" for t in _OWN_TAGS]
    names += [f"in_{t}" for t in _ANCESTOR_TAGS]
    names += [f"class_{w}" for w in _CLASS_WORDS]
    names += [f"near_class_{w}" for w in _CLASS_WORDS]
    names += ["itemprop_text", "in_heading_run", "parent_blocks", "parent_log_words",
              "parent_link_density"]
    for cand in ("ours", "resiliparse"):
        names += [
            f"{cand}_kept", f"{cand}_prev_kept", f"{cand}_next_kept", f"{cand}_window2",
            f"{cand}_window5", f"{cand}_parent_kept", f"{cand}_page_share",
            f"{cand}_kept_before", f"{cand}_kept_after",
        ]
    names += ["page_log_words", "page_log_blocks", "page_link_density", "agreement"]
    names += [f"type_{t}" for t in _PAGE_TYPES]
    names += ["profile_other", "profile_service", "url_depth", "has_article_markup"]
    return names


#: The name of each feature, in the order of a row of :func:`features`.
FEATURE_NAMES = tuple(_feature_names())


def features(
    seg: Segmentation,
    kept: dict[str, list[float]],
    page: dict,
    rows: list[int] | None = None,
) -> list[list[float]]:
    """One row of :data:`FEATURE_NAMES` per block (or per block index in *rows*).

    *kept* maps ``"ours"`` and ``"resiliparse"`` to each block's covered share
    (:func:`coverage`); *page* holds the page-level facts: ``type`` (the page-type stage's
    guess), ``profile``, ``url_depth`` and ``article_markup``."""
    blocks = seg.blocks
    n = len(blocks)
    if not n:
        return []
    total_words = len(seg.words) or 1
    total_links = sum(b.link_words for b in blocks)
    texts: dict[str, int] = {}
    for b in blocks:
        texts[b.text] = texts.get(b.text, 0) + 1
    class_cache: dict = {}
    # Each block's container: its element's parent (elements are the keys, never their id():
    # lxml makes a new proxy object, with a new id, each time one is reached).
    parent_of: dict[int, object] = {}
    container_blocks: dict[object, list[int]] = {}
    for i, b in enumerate(blocks):
        parent = b.element.getparent() if hasattr(b.element, "getparent") else None
        key = parent if parent is not None else -1
        parent_of[i] = key
        container_blocks.setdefault(key, []).append(i)
    ours, resili = kept.get("ours") or [0.0] * n, kept.get("resiliparse") or [0.0] * n
    cands = (ours, resili)
    container_sums = {}
    for key, members in container_blocks.items():
        container_sums[key] = (
            sum(blocks[j].words for j in members),
            sum(blocks[j].link_words for j in members),
            [sum(cand[j] * blocks[j].words for j in members) for cand in cands],
        )
    ancestry: dict = {}
    # Words kept before and after each block, per candidate (prefix sums of kept words).
    prefix = []
    for cand in cands:
        acc, run = [0.0], 0.0
        for i, b in enumerate(blocks):
            run += cand[i] * b.words
            acc.append(run)
        prefix.append(acc)
    shares = [p[-1] / total_words for p in prefix]
    agreement = sum(min(ours[i], resili[i]) * b.words for i, b in enumerate(blocks)) / max(
        1.0, sum(max(ours[i], resili[i]) * b.words for i, b in enumerate(blocks))
    )
    ptype = page.get("type", "")
    profile = page.get("profile", "")
    page_row = [
        math.log1p(total_words), math.log1p(n), total_links / total_words, agreement,
        *[1.0 if ptype == t else 0.0 for t in _PAGE_TYPES],
        1.0 if profile == "other" else 0.0, 1.0 if profile == "service" else 0.0,
        float(page.get("url_depth", 0)), 1.0 if page.get("article_markup") else 0.0,
    ]
    heading = {"h1", "h2", "h3", "h4", "h5", "h6"}
    out = []
    for i in range(n) if rows is None else rows:
        b = blocks[i]
        el = b.element
        text = b.text
        w = b.words
        tag = el.tag if isinstance(getattr(el, "tag", None), str) else ""
        depth, anc_tags, class_count, itemprop = _ancestry(el, ancestry, class_cache)
        class_near = _near_classes(el, class_cache)
        letters = len(text) or 1
        chunks = text.split()
        sentence_marks = sum(text.count(c) for c in ".!?")
        prev_b = blocks[i - 1] if i > 0 else None
        next_b = blocks[i + 1] if i + 1 < n else None
        siblings = container_blocks[parent_of[i]]
        parent_words, parent_links, parent_kept = container_sums[parent_of[i]]
        row = [
            math.log1p(w), math.log1p(b.chars), b.chars / max(1, len(chunks)),
            b.link_words / w, math.log1p(b.link_words),
            sentence_marks / w, text.count(",") / w,
            sum(ch.isdigit() for ch in text) / letters,
            sum(1 for c in chunks if c[:1].isupper()) / max(1, len(chunks)),
            1.0 if text.rstrip()[-1:] in ".!?\"”" else 0.0,
            1.0 if text.rstrip()[-1:] == ":" else 0.0,
            float(depth), i / n, b.start / total_words, math.log1p(n - 1 - i),
            float(texts.get(text, 1) - 1),
            math.log1p(prev_b.words) if prev_b else 0.0,
            math.log1p(next_b.words) if next_b else 0.0,
            (prev_b.link_words / prev_b.words) if prev_b else 0.0,
            (next_b.link_words / next_b.words) if next_b else 0.0,
        ]
        row += [1.0 if tag == t else 0.0 for t in _OWN_TAGS]
        row += [1.0 if t in anc_tags else 0.0 for t in _ANCESTOR_TAGS]
        row += class_count
        row += class_near
        run = 0
        for j in (i - 1, i + 1):
            if 0 <= j < n:
                jt = blocks[j].element.tag
                run += 1 if isinstance(jt, str) and jt in heading else 0
        row += [itemprop, float(run), math.log1p(len(siblings)), math.log1p(parent_words),
                parent_links / max(1, parent_words)]
        for c, cand in enumerate(cands):
            lo2, hi2 = max(0, i - 2), min(n, i + 3)
            lo5, hi5 = max(0, i - 5), min(n, i + 6)
            acc = prefix[c]
            row += [
                cand[i],
                cand[i - 1] if i > 0 else 0.0,
                cand[i + 1] if i + 1 < n else 0.0,
                sum(cand[lo2:hi2]) / (hi2 - lo2),
                sum(cand[lo5:hi5]) / (hi5 - lo5),
                parent_kept[c] / max(1, parent_words),
                shares[c],
                acc[i] / total_words,
                (acc[-1] - acc[i + 1]) / total_words,
            ]
        row += page_row
        out.append(row)
    return out
