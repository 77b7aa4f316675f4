"""Main-content extraction for web_fetch.

extract(html, url) -> Extraction(text, title, links, fallback, kind, page_type)

Pipeline (each rule was kept only where ``bench/extract.py`` showed it pays, on held-out halves
of the WCXB data, split by site; see docs/benchmarks.md):
 1. parse once with lxml; the page-type stage (classify): URL rules first, then signals in
    the HTML (schema.org JSON-LD / microdata types, og:type, generator meta); the type and
    its profile (_profile) are features of the learned stage, and forums read differently;
 2. trafilatura (default mode) on the parsed tree -> internal XML body; comments are kept
    only for forums (they are the posts there; elsewhere they cost precision);
 3. resiliparse's main-content text, for the learned stage;
 3b. forums: the posts their markup names (_marked_posts), else the message bodies of the
     repeated post containers (_forum_posts).
    (Round 3's other per-type rules, resiliparse's text in place of trafilatura's, item cards
    appended, comments on unmarked pages, were each switched off under the learned stage and
    scored by site-grouped cross-validation: none still paid, see docs/benchmarks.md.)
 4. render trafilatura's XML as Markdown-ish text: headings, lists, code fences, tables,
    block quotes; no inline link markup, no emphasis markers; links collected separately;
 5. the learned stage (block_filter): the block model drops the lines it scores as not main
    content and adds the page's blocks it scores as main content that the text missed;
 6. if nearly nothing was found, fall back to whole-page text and set fallback=True.
Never raises: garbage input yields an empty Extraction.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlparse

__all__ = ["Extraction", "extract"]

FALLBACK_MIN_WORDS = 30  # below this many words the extraction is "nearly nothing"
MAX_HTML_CHARS = 8_000_000  # larger documents are truncated before parsing

_WORD = re.compile(r"\w+")
MAX_BLOCKS_FOR_FALLBACKS = (
    6500  # above this many block elements, trafilatura runs without its fallbacks
)
_BLOCK_TAGS = tuple("p li div td dd dt h1 h2 h3 h4 h5 h6 pre blockquote tr".split())


@dataclass
class Extraction:
    text: str = ""
    title: str = ""
    links: list = field(default_factory=list)  # [(anchor text, absolute url)]
    fallback: bool = False  # whole-page text used (extraction found ~nothing)
    kind: str = ""  # which rules/candidate produced the text
    page_type: str = ""  # guessed page type (article, forum, product, ...)


# --------------------------------------------------------------------------- page type
_FORUM_GEN = re.compile(
    r"discourse|phpbb|vbulletin|xenforo|invision|flarum|mybb|simple machines|\bsmf\b|nodebb|vanilla|khoros|lithium",
    re.I,
)
_DOCS_GEN = re.compile(
    r"sphinx|mkdocs|docusaurus|gitbook|vitepress|docfx|just-the-docs|starlight|mintlify|readme\.io|docsy|antora|doxygen|javadoc",
    re.I,
)
_ART_TYPES = {
    "article",
    "newsarticle",
    "blogposting",
    "reportagenewsarticle",
    "analysisnewsarticle",
    "opinionnewsarticle",
    "scholarlyarticle",
    "liveblogposting",
    "report",
    "review",
    "socialmediaposting",
    "backgroundnewsarticle",
    "howto",
    "recipe",
}
_FORUM_TYPES = {"discussionforumposting", "qapage"}
_PRODUCT_TYPES = {
    "product",
    "productgroup",
    "offer",
    "aggregateoffer",
    "individualproduct",
    "productmodel",
    "vehicle",
    "car",
}
_LIST_TYPES = {"itemlist", "collectionpage", "searchresultspage", "offercatalog"}
_DOC_TYPES = {"techarticle", "apireference"}


def _ld_types(obj, out, depth=0):
    if depth > 6:
        return
    if isinstance(obj, dict):
        t = obj.get("@type")
        for x in t if isinstance(t, list) else [t]:
            if isinstance(x, str):
                out.append(x.rsplit("/", 1)[-1].lower())
        for k, v in obj.items():
            if isinstance(v, (list, dict)) and (
                depth < 2 or k in ("@graph", "mainEntity", "itemListElement", "hasPart")
            ):
                _ld_types(v, out, depth + 1)
    elif isinstance(obj, list):
        for x in obj[:50]:
            _ld_types(x, out, depth + 1)


def _signals(tree):
    sig = {"types": [], "ogtype": "", "generator": "", "ld": []}
    for s in tree.xpath('//script[@type="application/ld+json"]')[:20]:
        txt = (s.text or "").strip()
        if not txt:
            continue
        try:
            obj = json.loads(txt)
        except Exception:
            try:
                obj = json.loads(re.sub(r"[\x00-\x1f]", " ", txt))
            except Exception:
                continue
        sig["ld"].append(obj)
        _ld_types(obj, sig["types"])
    for it in tree.xpath("//*[@itemtype]")[:200]:
        sig["types"].append((it.get("itemtype") or "").rstrip("/").rsplit("/", 1)[-1].lower())
    og = tree.xpath('//meta[@property="og:type"]/@content')
    sig["ogtype"] = (og[0] if og else "").lower()
    sig["generator"] = " ".join(tree.xpath('//meta[@name="generator"]/@content'))[:300]
    return sig


# --------------------------------------------------------------------------- page-type stage
# Three steps, first answer wins: (1) the URL, (2) when the URL says nothing (article), signals
# in the HTML, (3) article. The types are WCXB's seven. Each rule is kept only where it helps
# on the validation half of the sample (bench/extract.py prints the confusion table).
_URL_FORUM = re.compile(
    r"^(forum|forums|community|discuss|discussion|boards?|bbs)\.|/(thread|threads|topic|t)/|"
    r"/questions/\d|/comments/|viewtopic\.php|showthread\.php|showtopic|/item\?id=",
    re.I,
)
_URL_DOCS = re.compile(
    r"^(docs|doc|wiki|developer|developers|devdocs)\.|readthedocs|/(docs|reference|api|guide|"
    r"manual|documentation)/",
    re.I,
)
_URL_PRODUCT = re.compile(r"/(products?|shop|dp|itm)/[^/?#]+|^(shop|store)\.", re.I)
_URL_COLLECTION = re.compile(r"/(collections|category|product-category|browse|c)/", re.I)
_URL_SERVICE = re.compile(r"/(services|solutions)(/|$)|-consulting-services", re.I)
_URL_LISTING = re.compile(r"/(news|reviews|issues|blog)/?$|/list/", re.I)


def _url_type(url):
    """The page type a URL names, or None (first match wins; host rules see the host without
    ``www.``, path rules the path and query)."""
    parts = urlparse(url or "")
    host = (parts.hostname or "").lower().removeprefix("www.")
    path = parts.path or "/"
    where = path + ("?" + parts.query if parts.query else "")
    if _URL_FORUM.search(host) or _URL_FORUM.search(where):
        return "forum"
    if _URL_DOCS.search(host) or _URL_DOCS.search(where):
        return "documentation"
    if _URL_COLLECTION.search(path):
        return "collection"
    if _URL_PRODUCT.search(path) or _URL_PRODUCT.search(host):
        return "product"
    if _URL_SERVICE.search(path):
        return "service"
    if _URL_LISTING.search(path):
        return "listing"
    return None


def classify(tree, url, sig=None):
    """The page type: ``article``, ``documentation``, ``service``, ``forum``, ``collection``,
    ``listing`` or ``product``, from the URL first and then from the HTML."""
    sig = sig if sig is not None else _signals(tree)
    kind = _url_type(url)
    if kind:
        return kind
    types = set(sig["types"])
    if types & _FORUM_TYPES or _FORUM_GEN.search(sig["generator"]):
        return "forum"
    if types & {"collectionpage", "offercatalog"} or (
        "product" in types and "aggregateoffer" in types and "itemlist" in types
    ):
        return "collection"
    if sig["ogtype"] in ("product.group",):
        return "collection"
    if sig["ogtype"] in ("product", "og:product") or (
        types & _PRODUCT_TYPES and types & {"offer", "aggregateoffer"} and not types & _ART_TYPES
    ):
        return "product"
    if types & _DOC_TYPES or _DOCS_GEN.search(sig["generator"]):
        return "documentation"
    return "article"


def _profile(page_type, sig, url):
    """The extraction profile of a page type. ``service`` is the profile of a site's front page
    (``/`` or one short segment); a service page deeper in a site (``/services/...``) reads like
    an article without markup, with the generic profile ``other``. An article with no article
    markup (schema.org or ``og:type``) is a weaker guess: a front page, or ``other``."""
    path = urlparse(url or "").path or "/"
    front = path.strip("/") == "" or (path.count("/") <= 1 and len(path) < 25)
    if page_type == "service" or (
        page_type == "article"
        and not (set(sig["types"]) & _ART_TYPES or sig["ogtype"] == "article")
    ):
        return "service" if front else "other"
    return page_type


# --------------------------------------------------------------------------- rendering
def _norm_ws(s):
    return re.sub(r"[ \t\r\f\v\u00a0]+", " ", s or "")


def _inline(el, links, base):
    """Text of an inline subtree: no markup, links collected."""
    parts = [el.text or ""]
    for ch in el:
        tag = ch.tag if isinstance(ch.tag, str) else ""
        if tag == "lb":
            parts.append("\n")
        elif tag == "graphic":
            pass
        else:
            inner = _inline(ch, links, base)
            if tag == "ref":
                tgt = ch.get("target")
                if tgt and inner.strip():
                    links.append((" ".join(inner.split()), urljoin(base, tgt) if base else tgt))
            elif tag == "code":
                inner = "`" + inner + "`" if inner.strip() and "\n" not in inner else inner
            parts.append(inner)
        parts.append(ch.tail or "")
    return "".join(parts)


def _render_block(el, out, links, base, depth=0):
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in ("head",):
        rend = el.get("rend") or "h2"
        lvl = int(rend[1]) if len(rend) == 2 and rend[1].isdigit() else 2
        t = " ".join(_inline(el, links, base).split())
        if t:
            out.append("#" * min(max(lvl, 1), 6) + " " + t)
    elif tag == "list":
        items = []
        _render_list(el, items, links, base, 0)
        if items:
            out.append("\n".join(items))
    elif tag == "table":
        t = _render_table(el, links, base)
        if t:
            out.append(t)
    elif tag == "code":  # a code block: fenced, one line or many, in its language when known
        t = "".join(el.itertext()).strip("\n")
        if t.strip():
            language = getattr(_LANGUAGES, "by_text", {}).get(_norm_ws(t), "")
            out.append(f"```{language}\n{t}\n```")
    elif tag == "quote":
        sub = []
        _render_children(el, sub, links, base, depth + 1)
        t = "\n\n".join(sub).strip()
        if t:
            out.append("\n".join("> " + line if line else ">" for line in t.split("\n")))
    elif tag in ("div", "body", "section", "article", "main", "done"):
        _render_children(el, out, links, base, depth + 1)
    elif tag == "graphic":
        return
    else:  # p, hi, ref, and anything unknown: paragraph
        has_block = any(
            isinstance(c.tag, str) and c.tag in ("list", "table", "p", "head", "quote") for c in el
        )
        if has_block:
            _render_children(el, out, links, base, depth + 1)
        else:
            t = _norm_ws(_inline(el, links, base))
            t = "\n".join(line.strip() for line in t.split("\n")).strip()
            if t:
                out.append(t)


def _render_children(el, out, links, base, depth):
    if el.text and el.text.strip():
        out.append(" ".join(el.text.split()))
    for ch in el:
        _render_block(ch, out, links, base, depth)
        if ch.tail and ch.tail.strip():
            out.append(" ".join(ch.tail.split()))


def _render_list(el, items, links, base, level):
    for it in el:
        if not isinstance(it.tag, str):
            continue
        if it.tag == "list":
            _render_list(it, items, links, base, level + 1)
            continue
        text_parts = [it.text or ""]
        sub = []
        for ch in it:
            if isinstance(ch.tag, str) and ch.tag == "list":
                sub.append(ch)
            elif isinstance(ch.tag, str) and ch.tag in ("p", "head", "quote", "code", "table"):
                b = []
                _render_block(ch, b, links, base)
                text_parts.append(" " + " ".join(b))
            else:
                text_parts.append(_inline(ch, links, base) if isinstance(ch.tag, str) else "")
            text_parts.append(ch.tail or "")
        t = " ".join("".join(text_parts).split())
        if t:
            items.append("  " * level + "- " + t)
        for s in sub:
            _render_list(s, items, links, base, level + 1)


def _render_table(el, links, base):
    rows = []
    for row in el.iter("row"):
        cells = [
            " ".join(_inline(c, links, base).split()).replace("|", "/")
            for c in row
            if isinstance(c.tag, str) and c.tag == "cell"
        ]
        if any(cells):
            rows.append(cells)
    if not rows:
        return ""
    if len(rows) == 1 or max(len(r) for r in rows) == 1:
        return "\n".join(" ".join(r) for r in rows)
    n = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (n - len(r))) + " |" for r in rows]
    lines.insert(1, "|" + " --- |" * n)
    return "\n".join(lines)


_LANGUAGES = threading.local()
_LANGUAGE_CLASS = re.compile(
    r"(?:^|\s)(?:language|lang|highlight|brush:?)-?([A-Za-z0-9_+#.-]{1,20})(?:\s|$)"
)


def code_languages(tree) -> dict:
    """``{code text with its spaces folded: language}`` for the page's ``<pre>`` blocks whose
    class names one (``language-python``, ``lang-js``, ``highlight-rust``)."""
    found = {}
    for pre in tree.iter("pre"):
        for el in [pre, *pre.iter("code")]:
            match = _LANGUAGE_CLASS.search(el.get("class") or "")
            if match:
                text = _norm_ws(pre.text_content())
                if text:
                    found.setdefault(text, match.group(1).lower())
                break
    return found


def render_markdown(body, base=None, languages=None):
    """Markdown of trafilatura's XML *body*; code blocks are fenced in the language
    *languages* maps their text to."""
    _LANGUAGES.by_text = languages or {}
    out, links = [], []
    if body is not None:
        _render_children(body, out, links, base, 0)
    text = "\n\n".join(b for b in out if b.strip())
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, links


# --------------------------------------------------------------------------- helpers
def _words(s):
    return _WORD.findall((s or "").lower())


def _title(tree):
    for xp in ('//meta[@property="og:title"]/@content', "//title//text()", "//h1//text()"):
        v = tree.xpath(xp)
        if v:
            t = " ".join(" ".join(v[:5] if xp.endswith("text()") else v[:1]).split())
            if t:
                return t
    return ""


def _page_links(tree, base):
    out, seen = [], set()
    for a in tree.xpath("//body//a[@href]")[:2000]:
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        t = " ".join(a.text_content().split())
        if not t:
            continue
        u = urljoin(base, href) if base else href
        if u not in seen:
            seen.add(u)
            out.append((t, u))
    return out


def _whole_page_text(html):
    try:
        from resiliparse.extract.html2text import extract_plain_text

        return extract_plain_text(html, main_content=False, alt_texts=False, noscript=True)
    except Exception:
        return ""


def _resiliparse_main(html):
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(
        html, main_content=True, alt_texts=False, noscript=True, list_bullets=True
    )


# --------------------------------------------------------------------------- repeated siblings
# Sibling groups of structurally similar elements (same tag + class signature, >= 3 members,
# enough words per member, not inside nav/header/footer/aside and not menu-/filter-/pager-
# classed), largest first: a forum thread's posts (_forum_posts). (Round 2 also appended
# listing pages' item cards from them; under the learned stage, which adds the blocks the
# text misses, that no longer paid: see docs/benchmarks.md.)
_CARD_SKIP = set("script style noscript template svg iframe head select option button".split())
_CARD_BLOCK = set(
    "p div li ul ol h1 h2 h3 h4 h5 h6 article section tr td th table dd dt dl br header footer"
    " figure figcaption blockquote pre main aside nav form".split()
)
_CARD_NAVTAGS = {"nav", "header", "footer", "aside"}
_CARD_NAVRE = re.compile(
    r"(^|[-_ ])(nav|navbar|navigation|menu|megamenu|footer|header|breadcrumbs?|cookie|consent|sidebar|social|share|pagination|pager|filters?|facets?|refine)([-_ ]|$)",
    re.I,
)
_CARD_VOLATILE = re.compile(r"active|selected|first|last|odd|even|current|is-|has-")
def _nw(s):
    return len(_WORD.findall(s)) if s else 0


def _card_sig(el):
    cls = [
        re.sub(r"\d+", "", c)
        for c in (el.get("class") or "").split()
        if not _CARD_VOLATILE.search(c)
    ]
    return (el.tag, tuple(sorted(cls)[:3]))


def _card_navlike(par, members):
    for m in list(members[:3]) + [par]:
        if _CARD_NAVRE.search((m.get("class") or "") + " " + (m.get("id") or "")):
            return True
    el, depth = par, 0
    while el is not None and depth < 60:
        if el.tag in _CARD_NAVTAGS or (el.get("role") or "") in (
            "navigation",
            "banner",
            "contentinfo",
            "menu",
            "menubar",
        ):
            return True
        el = el.getparent()
        depth += 1
    return False


def _card_text(el):
    parts = []

    def rec(e, depth=0):
        if not isinstance(e.tag, str) or e.tag in _CARD_SKIP or depth > 200:
            if e.tail:
                parts.append(e.tail)
            return
        blk = e.tag in _CARD_BLOCK
        if blk:
            parts.append("\n")
        if e.text:
            parts.append(e.text)
        for c in e:
            rec(c, depth + 1)
        if blk:
            parts.append("\n")
        if e.tail:
            parts.append(e.tail)

    tail = el.tail
    rec(el)
    if tail:
        parts.pop()
    lines = [" ".join(x.split()) for x in "".join(parts).split("\n")]
    return "\n".join(x for x in lines if x)


def card_groups(tree, rule):
    """sibling groups of item cards, best first: list of (words, parent, members)"""
    body = tree.find(".//body")
    if body is None:
        body = tree
    els = []
    for el in body.iter():
        if isinstance(el.tag, str):
            els.append(el)
            if len(els) > rule["max_nodes"]:
                break
    wc = {}
    for el in reversed(els):
        if el.tag in _CARD_SKIP:
            wc[el] = 0
            continue
        n = _nw(el.text)
        for ch in el:
            if isinstance(ch.tag, str):
                n += wc.get(ch, 0)
            n += _nw(ch.tail)
        wc[el] = n
    bodyw = wc.get(body, 0)
    out = []
    for par in els:
        if par.tag in _CARD_SKIP or wc.get(par, 0) < 10 or len(par) < rule["min_items"]:
            continue
        by = {}
        for c in par:
            if isinstance(c.tag, str) and c.tag not in _CARD_SKIP and wc.get(c, 0) > 0:
                by.setdefault(_card_sig(c), []).append(c)
        for mem in by.values():
            if len(mem) < rule["min_items"]:
                continue
            tot = sum(wc[m] for m in mem)
            if tot / len(mem) < rule["min_avg"]:
                continue
            out.append((tot, par, mem))
    out.sort(key=lambda g: -g[0])
    res = []
    for g in out[:40]:
        if not _card_navlike(g[1], g[2]):
            res.append(g)
    return res, bodyw


# Forum threads: the posts are the largest group of repeated siblings. Inside them, keep the
# smallest repeated descendant (same tag + class signature in >= 60% of the posts) that still
# holds >= 40% of the posts' words: the message bodies, without user cards and post chrome.
FORUM_RULE = {
    "min_items": 2,
    "min_avg": 10,
    "min_frac": 0.5,
    "alpha": 0.4,
    "key_cover": 0.6,
    "min_ratio": 0.4,
    "max_nodes": 60000,
}


def _forum_posts(tree, text, rule=FORUM_RULE):
    groups, bodyw = card_groups(tree, rule)
    if not groups or groups[0][0] < rule["min_frac"] * max(bodyw, 1):
        return None
    tot, par, mem = groups[0]
    keys = {}

    def walk(e, on_path, found, depth=0):
        for d in e:
            if not isinstance(d.tag, str) or d.tag in _CARD_SKIP or depth > 100:
                continue
            key = _card_sig(d)
            if key[1] and key not in on_path:
                found.setdefault(key, []).append(d)
                walk(d, on_path | {key}, found, depth + 1)
            else:
                walk(d, on_path, found, depth + 1)

    for m in mem:
        found = {}
        walk(m, frozenset(), found)
        for key, els in found.items():
            keys.setdefault(key, []).append(els)
    best = None
    for _key, lst in keys.items():
        if len(lst) < rule["key_cover"] * len(mem):
            continue
        parts = [_card_text(e) for els in lst for e in els]
        n = sum(len(_words(p)) for p in parts)
        if n >= rule["alpha"] * tot and (best is None or n < best[0]):
            best = (n, parts)
    if best is None:
        return None
    if best[0] < rule["min_ratio"] * len(_words(text)):
        return None
    return "\n\n".join(p for p in best[1] if p.strip())


#: schema.org's property for the text of a post, an answer or a comment (Discourse, Stack
#: Exchange, XenForo and most forum software mark their posts with it).
_POST_TEXT = '//*[@itemprop="text" or @itemprop="articleBody" or @itemprop="commentText"]'


def _marked_posts(tree):
    """The posts of a thread whose markup says which element holds each post's text (two or
    more), or None."""
    found = tree.xpath(_POST_TEXT)[:2000]
    marked = set(found)
    posts = [el for el in found if not any(up in marked for up in el.iterancestors())]
    if len(posts) < 2:
        return None
    texts = [_card_text(el) for el in posts]
    return "\n\n".join(t for t in texts if t.strip()) or None


# --------------------------------------------------------------------------- main entry
def extract(html: str, url: str | None = None) -> Extraction:
    """The main content of *html* (fetched from *url*) as Markdown, its title and links; never
    raises (garbage gives an empty or whole-page result)."""
    try:
        return _extract(html, url)
    except Exception as e:  # never raise
        try:
            txt = _whole_page_text(html) if isinstance(html, str) else ""
        except Exception:
            txt = ""
        return Extraction(
            text=txt.strip(), fallback=bool(txt.strip()), kind=f"error:{type(e).__name__}"
        )


def _extract(html, url, trace=None):
    if isinstance(html, bytes):
        html = html.decode("utf-8", "replace")
    if not isinstance(html, str) or not html.strip():
        return Extraction(kind="empty")
    if len(html) > MAX_HTML_CHARS:
        html = html[:MAX_HTML_CHARS]
    import trafilatura
    from trafilatura.utils import load_html

    try:  # trafilatura's own parser settings (a plain lxml.html tree loses text)
        tree = load_html(html)
    except Exception:
        tree = None
    if tree is None:
        txt = _whole_page_text(html).strip()
        return Extraction(text=txt, fallback=bool(txt), kind="unparsable")

    sig = _signals(tree)
    page_type = classify(tree, url, sig)
    ptype = _profile(page_type, sig, url)
    title = _title(tree)
    base = url
    bases = tree.xpath("//base/@href")
    if bases and url:
        base = urljoin(url, bases[0])
    page_links = None

    forum = ptype == "forum"  # keep comments: they are the posts of a thread
    # jusText (one of trafilatura's fallbacks) is quadratic on long runs of short blocks
    # (20,000 list items: > 2 minutes); skip the fallbacks on pages with very many blocks.
    n_blocks = sum(1 for _ in tree.iter(*_BLOCK_TAGS))
    doc = trafilatura.bare_extraction(
        tree,
        url=url,
        fast=n_blocks > MAX_BLOCKS_FOR_FALLBACKS,
        include_comments=forum,
        include_tables=True,
        include_links=True,
        include_formatting=True,
        with_metadata=False,
    )
    kind = ["traf"]
    body = getattr(doc, "body", None) if doc is not None else None
    text, links = render_markdown(body, base, code_languages(tree))
    if (
        forum
        and doc is not None
        and getattr(doc, "commentsbody", None) is not None
        and len(doc.commentsbody)
    ):
        ctext, clinks = render_markdown(doc.commentsbody, base)
        if ctext:
            text = (text + "\n\n" + ctext).strip()
            links += clinks
            kind.append("comments")

    try:
        rtext = _resiliparse_main(html)
    except ImportError:  # no resiliparse on this platform: the rules alone, no block model
        rtext = None
    except Exception:
        rtext = ""
    if ptype == "forum":
        posts = _marked_posts(tree) or _forum_posts(tree, text, FORUM_RULE)
        if posts:
            text = posts
            kind.append("posts")
            if page_links is None:
                page_links = _page_links(tree, base)

    facts = {
        "type": page_type,
        "profile": ptype,
        "url_depth": len([p for p in urlparse(url or "").path.split("/") if p]),
        "article_markup": bool(set(sig["types"]) & _ART_TYPES or sig["ogtype"] == "article"),
    }
    if trace is not None:
        trace.update(tree=tree, rules_text=text, resiliparse=rtext, facts=facts)
    else:
        from .block_filter import filter_text

        filtered = filter_text(text, rtext, tree, facts)
        if filtered is not None and filtered != text:
            text = filtered
            kind.append("model")

    fallback = False
    if len(_words(text)) < FALLBACK_MIN_WORDS:
        whole = _whole_page_text(html).strip()
        if len(_words(whole)) > len(_words(text)):
            text, fallback, kind = whole, True, ["fallback-wholepage"]
            page_links = _page_links(tree, base)

    if page_links is not None:
        links = page_links
    # de-duplicate links, keep order
    seen, uniq = set(), []
    for t, u in links:
        if u not in seen:
            seen.add(u)
            uniq.append((t, u))
    return Extraction(
        text=text,
        title=title,
        links=uniq,
        fallback=fallback,
        kind="+".join(kind),
        page_type=page_type,
    )
