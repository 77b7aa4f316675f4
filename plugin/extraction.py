"""Main-content extraction for web_fetch.

extract(html, url) -> Extraction(text, title, links, fallback, kind, page_type)

Pipeline (see REPORT.md for the measurements behind each rule):
 1. parse once with lxml; guess the page type from the HTML/URL only
    (schema.org JSON-LD / microdata types, og:type, generator meta, URL and host patterns);
 2. trafilatura (default mode) on the parsed tree -> internal XML body; comments are kept
    only for forum-like pages (they are the posts there; elsewhere they cost precision);
 3. for page types where the data showed it pays (forum, listing, service/other), compare with
    resiliparse's main-content text and take it when it contains most of trafilatura's words
    (trafilatura often keeps only the first post / first item);
 4. render trafilatura's XML as Markdown-ish text: headings, lists, code fences, tables,
    block quotes; no inline link markup, no emphasis markers; links collected separately;
 5. if nearly nothing was found, fall back to whole-page text and set fallback=True.
Never raises: garbage input yields an empty Extraction.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlparse

__all__ = ["Extraction", "extract"]

OPTS = {"title": False}  # research toggles (see variants.py)
FALLBACK_MIN_WORDS = 30  # below this many words the extraction is "nearly nothing"
MAX_HTML_CHARS = 8_000_000  # larger documents are truncated before parsing

_WORD = re.compile(r"\w+")


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
_FORUM_URL = re.compile(
    r"/(t|thread|threads|topic|topics|forum|forums|discussion|discussions|questions|comments|d|boards?|talk|community)(/|\.|$)|[?&](topic|t)=\d|showthread|viewtopic",
    re.I,
)
_FORUM_HOST = re.compile(
    r"^(forum|forums|community|communities|discuss|discussion|answers|talk|boards?|bbs)\.", re.I
)
_DOCS_URL = re.compile(
    r"/(docs?|documentation|reference|api|manual|guides?|tutorials?|learn|handbook|wiki|library|howto|man)(/|$)|\.readthedocs\.|/en/(latest|stable)/",
    re.I,
)
_DOCS_HOST = re.compile(
    r"^(docs|doc|developer|developers|devdocs|api|learn|wiki|manual|help|support|kb|reference)\.",
    re.I,
)
_PRODUCT_URL = re.compile(r"/(product|products|item|itm|dp|p|listing|sku|pd)/", re.I)
_LIST_URL = re.compile(
    r"/(category|categories|collections?|c|tag|tags|shop|browse|list|search|catalog|department)(/|$)|[?&](q|query|search|s|page)=",
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


def guess_page_type(sig, url):
    types = set(sig["types"])
    u = urlparse(url or "")
    path = u.path or "/"
    host = (u.hostname or "").lower()
    full = path + ("?" + u.query if u.query else "")
    art = bool(types & _ART_TYPES)
    if types & _FORUM_TYPES or _FORUM_GEN.search(sig["generator"]):
        return "forum"
    if _FORUM_HOST.match(host) or (_FORUM_URL.search(full) and not art):
        return "forum"
    if sig["ogtype"] in ("product", "og:product") or (_PRODUCT_URL.search(path) and not art):
        return "product"
    if types & _PRODUCT_TYPES and not art and ("offer" in types or "aggregateoffer" in types):
        return "product"
    if (
        types & _DOC_TYPES
        or _DOCS_GEN.search(sig["generator"])
        or _DOCS_HOST.match(host)
        or (_DOCS_URL.search(path) and not art)
    ):
        return "documentation"
    if (types & _LIST_TYPES or _LIST_URL.search(full)) and not art:
        return "listing"
    if art or sig["ogtype"] == "article":
        return "article"
    if path.strip("/") == "" or (path.count("/") <= 1 and len(path) < 25):
        return "service"
    return "other"


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
    elif tag == "code":
        t = _inline(el, links, base).strip("\n")
        if t.strip():
            out.append("```\n" + t + "\n```" if "\n" in t or len(t) > 80 else "`" + t.strip() + "`")
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


def render_markdown(body, base=None):
    out, links = [], []
    if body is not None:
        _render_children(body, out, links, base, 0)
    text = "\n\n".join(b for b in out if b.strip())
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, links


# --------------------------------------------------------------------------- helpers
def _words(s):
    return _WORD.findall((s or "").lower())


def _coverage(a_words, b_words):
    """share of a's words (multiset) that also occur in b"""
    if not a_words:
        return 1.0
    from collections import Counter

    return sum((Counter(a_words) & Counter(b_words)).values()) / len(a_words)


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


# which page types may swap trafilatura's result for resiliparse's main-content text, and when:
# (min share of trafilatura's words found in the resiliparse text, max length ratio)
RESILI_RULES = {
    "forum": (0.7, 1000.0),
    "listing": (0.7, 1000.0),
    "service": (0.5, 5.0),
    "other": (0.9, 3.0),
    "documentation": (0.95, 1000.0),
}


def _ld_product_text(lds):
    """name + description of schema.org Product objects found in JSON-LD"""
    out = []

    def walk(o, d=0):
        if d > 5:
            return
        if isinstance(o, dict):
            t = o.get("@type")
            ts = [x.lower() for x in (t if isinstance(t, list) else [t]) if isinstance(x, str)]
            if "product" in ts or "productgroup" in ts:
                for key in ("name", "description"):
                    v = o.get(key)
                    if isinstance(v, str) and v.strip() and v.strip() not in out:
                        out.append(" ".join(v.split()))
            for v in o.values():
                if isinstance(v, (dict, list)):
                    walk(v, d + 1)
        elif isinstance(o, list):
            for x in o[:30]:
                walk(x, d + 1)

    for o in lds:
        walk(o)
    import html as _h

    return "\n\n".join(_h.unescape(re.sub(r"<[^>]+>", " ", x)) for x in out)


# --------------------------------------------------------------------------- main entry
def extract(html: str, url: str | None = None) -> Extraction:
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


def _extract(html, url):
    if isinstance(html, bytes):
        html = html.decode("utf-8", "replace")
    if not isinstance(html, str) or not html.strip():
        return Extraction(kind="empty")
    if len(html) > MAX_HTML_CHARS:
        html = html[:MAX_HTML_CHARS]
    import trafilatura
    from trafilatura.utils import load_html

    try:
        tree = load_html(
            html
        )  # trafilatura's own parser settings (a plain lxml.html tree loses text)
    except Exception:
        tree = None
    if tree is None:
        txt = _whole_page_text(html).strip()
        return Extraction(text=txt, fallback=bool(txt), kind="unparsable")

    sig = _signals(tree)
    ptype = guess_page_type(sig, url)
    title = _title(tree)
    base = url
    bases = tree.xpath("//base/@href")
    if bases and url:
        base = urljoin(url, bases[0])
    page_links = None

    forum = ptype in ("forum", "other")  # keep comments (= posts) where a thread is plausible
    doc = trafilatura.bare_extraction(
        tree,
        url=url,
        include_comments=forum,
        include_tables=True,
        include_links=True,
        include_formatting=True,
        with_metadata=False,
    )
    kind = ["traf"]
    body = getattr(doc, "body", None) if doc is not None else None
    text, links = render_markdown(body, base)
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

    rule = OPTS.get("rules", RESILI_RULES).get(ptype)
    if rule is not None:
        try:
            rtext = _resiliparse_main(html)
        except Exception:
            rtext = ""
        tw, rw = _words(text), _words(rtext)
        if (
            rw
            and _coverage(tw, rw) >= rule[0]
            and len(rw) <= rule[1] * max(len(tw), 1)
            and len(rw) > len(tw)
        ):
            text = rtext.strip()
            kind = ["resiliparse"]
            page_links = _page_links(tree, base)

    if OPTS.get("ld") and ptype == "product":
        desc = _ld_product_text(sig["ld"])
        if desc and _coverage(_words(desc), _words(text)) < 0.5:
            text = (text + "\n\n" + desc).strip()
            kind.append("jsonld")

    fallback = False
    if len(_words(text)) < FALLBACK_MIN_WORDS:
        whole = _whole_page_text(html).strip()
        if len(_words(whole)) > len(_words(text)):
            text, fallback, kind = whole, True, ["fallback-wholepage"]
            page_links = _page_links(tree, base)

    if OPTS.get("title") and title and text and not fallback:
        h1 = tree.xpath("//h1//text()")
        h1 = " ".join(" ".join(h1[:10]).split()) if h1 else ""
        head = h1 or title
        if head and _words(head)[:6] != _words(text)[:6][: len(_words(head)[:6])]:
            text = "# " + head + "\n\n" + text

    if page_links is not None:
        links = page_links
    # de-duplicate links, keep order
    seen, uniq = set(), []
    for t, u in links:
        if u not in seen:
            seen.add(u)
            uniq.append((t, u))
    return Extraction(
        text=text, title=title, links=uniq, fallback=fallback, kind="+".join(kind), page_type=ptype
    )


def extract_text(html, url=None):
    """benchmark helper"""
    return extract(html, url).text
