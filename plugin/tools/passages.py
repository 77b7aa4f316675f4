"""Passages of a page's text: the few that answer a question (BM25), and literal finds.

Text in, spans out, no I/O: every passage and every find is a (start, end) span of the very
text ``web_fetch`` pages through with ``offset``, so a label's offset reads from that place.

A page is cut into blocks (paragraphs; fenced code blocks, never split; headings; PDF page
markers), and the blocks are joined into passages of about :data:`PASSAGE_WORDS` words that
never cross a heading or a page marker. A code block is a passage of its own. Passages are
ranked with BM25 (bm25s, English stemming by PyStemmer), loaded on first use.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from attrs import frozen

__all__ = [
    "Answer",
    "Found",
    "Passage",
    "answer",
    "find",
    "open_fence_line",
    "split",
]

#: About how many words a passage holds (a code block holds what it holds).
PASSAGE_WORDS = 70
#: At most this many passages answer a question.
TOP_PASSAGES = 8
#: Passages are added, best first, until they hold this many characters.
ANSWER_CHARACTERS = 2500
#: A passage is shown only if its score is at least this share of the best passage's.
RELATIVE_SCORE = 0.4
#: Below this confidence (see :meth:`_Index.confidence`), the page may not answer the question.
MIN_CONFIDENCE = 0.12

#: How much of the text just before a code block counts as the code's own words.
LEAD_CHARACTERS = 400

_FENCE_LINE = re.compile(r"^[ \t]*(?:>[ \t]?)*(`{3,}|~{3,})(.*)$", re.M)
_SPACE = re.compile(r"\s*")
_PAGE_MARK = re.compile(r"^\[Page \d+ of \d+\]$")
_MD_HEADING = re.compile(r"#{1,6}[ \t]")
_WORD = re.compile(r"\S+")


@frozen
class Passage:
    """A span of the page text: ``start``/``end`` offsets, ``code`` for a fenced code block,
    ``heading`` the nearest heading above it (used for ranking, not shown)."""

    start: int
    end: int
    code: bool = False
    heading: str = ""


@frozen
class _Block:
    start: int
    end: int
    kind: str  # "text", "code", "heading", "page"
    words: int


def _code_spans(text: str) -> dict[int, int]:
    """Fenced code blocks: the start of each opening fence line -> the end of the line that
    closes it (a fence never closed opens nothing; one closed on its own line is inline code)."""
    fences = [(m.start(), m.end(), m.group(1), m.group(2)) for m in _FENCE_LINE.finditer(text)]
    # the longest bare fence of each kind at or after each fence line: is there a closer?
    longest = {"`": [0] * (len(fences) + 1), "~": [0] * (len(fences) + 1)}
    for index in range(len(fences) - 1, -1, -1):
        _, _, fence, rest = fences[index]
        for kind, lengths in longest.items():
            lengths[index] = lengths[index + 1]
            if kind == fence[0] and not rest.strip():
                lengths[index] = max(lengths[index], len(fence))
    spans: dict[int, int] = {}
    index = 0
    while index < len(fences):
        start, _, fence, rest = fences[index]
        if fence not in rest and longest[fence[0]][index + 1] >= len(fence):
            for later in range(index + 1, len(fences)):
                _, end, other, after = fences[later]
                if other[0] == fence[0] and len(other) >= len(fence) and not after.strip():
                    spans[start] = end
                    index = later
                    break
        index += 1
    return spans


def open_fence_line(
    text: str, start: int = 0, end: int | None = None, inside: str | None = None
) -> str | None:
    """The fence (```` ``` ````, ``~~~``) of a code block that *text* (from *start* to *end*)
    opens and never closes (a text cut short inside the block) as a line that opens or closes
    that block where it is: after the block quote markers it is inside (``> ```` ``), which a
    bare fence would end instead; or ``None``. *inside* is the line this gave for the text
    before *start*: the block *start* is inside, so the text before it is not read again."""
    opened = None
    if inside is not None:
        fence = inside.lstrip(" \t>")
        opened = (fence, inside[: len(inside) - len(fence)])
    for found in _FENCE_LINE.finditer(text, start, len(text) if end is None else end):
        fence, rest = found.group(1), found.group(2)
        if opened is None:
            if fence not in rest:  # a fence line that closes itself is inline code
                quotes = found.group(0)[: found.start(1) - found.start()].strip(" \t")
                opened = (fence, f"{quotes} " if quotes and not quotes.endswith(" ") else quotes)
        elif fence[0] == opened[0][0] and len(fence) >= len(opened[0]) and not rest.strip():
            opened = None
    return f"{opened[1]}{opened[0]}" if opened is not None else None


def _is_heading(line: str) -> bool:
    """A Markdown heading, or a short line that reads like a title (no closing punctuation)."""
    if _MD_HEADING.match(line):
        return True
    stripped = line.strip()
    return (
        0 < len(stripped) <= 60
        and stripped[-1] not in ".,;:!?)]}\"'"
        and len(stripped.split()) <= 8
    )


def _blocks(text: str) -> list[_Block]:
    """Paragraphs (runs of non-blank lines), fenced code blocks, headings and page markers.
    One pass over the lines, nothing kept per line (a page may have a million of them)."""
    code = _code_spans(text)
    blocks: list[_Block] = []
    run = [-1, -1, 0]  # the paragraph being read: start, end, lines

    def close_run() -> None:
        start, end, lines = run
        if lines:
            body = text[start:end]
            kind = "heading" if lines == 1 and _is_heading(body) else "text"
            blocks.append(_Block(start, end, kind, len(body.split())))
        run[:] = [-1, -1, 0]

    position, size = 0, len(text)
    while position <= size:
        if position in code:
            close_run()
            stop = code[position]
            blocks.append(_Block(position, stop, "code", len(text[position:stop].split())))
            position = stop + 1
            continue
        end = text.find("\n", position)
        end = size if end == -1 else end
        line = text[position:end].strip()
        if not line:
            close_run()
            # skip the whole run of blank lines at once: to the start of the next line with text
            after = _SPACE.match(text, position).end()
            if after > end:
                end = text.rfind("\n", position, after)
        elif line[0] == "[" and _PAGE_MARK.match(line):
            close_run()
            blocks.append(_Block(position, end, "page", 0))
        elif line[0] == "#" and _MD_HEADING.match(text, position, end):
            close_run()
            blocks.append(_Block(position, end, "heading", len(line.split())))
        else:
            if not run[2]:
                run[0] = position
            run[1], run[2] = end, run[2] + 1
        position = end + 1
    close_run()
    return blocks


def _pieces(text: str, block: _Block, words: int) -> list[tuple[int, int]]:
    """A long text block cut into spans of about *words* words at line breaks; a line of more
    than twice that many words is cut after a word."""
    spans: list[tuple[int, int]] = []
    start, count, previous_end = block.start, 0, block.start
    position = block.start
    while position < block.end:
        newline = text.find("\n", position, block.end)
        end = block.end if newline == -1 else newline
        in_line = len(text[position:end].split())
        if in_line > 2 * words:
            if count:
                spans.append((start, previous_end))
            matches = list(_WORD.finditer(text, position, end))
            for first in range(0, len(matches), words):
                chunk = matches[first : first + words]
                spans.append((chunk[0].start(), chunk[-1].end()))
            start, count = end + 1, 0
        elif in_line:
            count += in_line
            if count >= words:
                spans.append((start, end))
                start, count = end + 1, 0
        elif not count:
            start = end + 1
        previous_end = end
        position = end + 1
    if count:
        spans.append((start, previous_end))
    return [span for span in spans if span[0] < span[1]]


def split(text: str, words: int | None = None) -> list[Passage]:
    """The page's passages in page order: about *words* (:data:`PASSAGE_WORDS`) words each,
    never across a heading or a page marker; each fenced code block whole, on its own."""
    words = words or PASSAGE_WORDS
    passages: list[Passage] = []
    heading = ""
    current: list[tuple[int, int]] = []  # spans of the passage being filled
    count = 0

    def flush() -> None:
        nonlocal count
        if current:
            passages.append(Passage(current[0][0], current[-1][1], heading=heading))
        current.clear()
        count = 0

    for block in _blocks(text):
        if block.kind in ("heading", "page"):
            flush()
            if block.kind == "heading":
                heading = text[block.start : block.end].strip().lstrip("#").strip()
            current.append((block.start, block.end))
            continue
        if block.kind == "code":
            lead = current[0][0] if current and count == 0 else block.start
            if count:
                flush()
            else:
                current.clear()
            passages.append(Passage(lead, block.end, code=True, heading=heading))
            continue
        if block.words > 2 * words:
            for start, end in _pieces(text, block, words):
                if count and count + (end - start) // 6 > words:
                    flush()
                current.append((start, end))
                count += len(text[start:end].split())
                if count >= words:
                    flush()
            continue
        current.append((block.start, block.end))
        count += block.words
        if count >= words:
            flush()
    flush()
    return passages


# -- ranking ---------------------------------------------------------------------------------

_STEMMER = None


def _stemmer():
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER


_TOKEN = re.compile(r"\w\w+")  # every run of two or more word characters


_PARTS = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")


def _words(text: str) -> list[str]:
    """The words of *text*, lower-cased; an identifier (``refresh_task``, ``onChange``) also
    gives its parts (a name such as ``PostgreSQL`` does not)."""
    words = []
    for word in _TOKEN.findall(text):
        words.append(word.lower())
        if "_" in word or word[0].islower() and not word.islower():
            words.extend(_parts(word))
    return words


_IDENTIFIER = re.compile(r"\b(?:\w*_\w*|[a-z]\w*[A-Z]\w*)\b")
_MAYBE_IDENTIFIER = re.compile(r"_|[a-z][A-Z]")


def _parts(identifier: str) -> list[str]:
    parts = [part.lower() for part in _PARTS.split(identifier) if len(part) > 1]
    return parts if len(parts) > 1 else []


def _documents(text: str, passages: Sequence[Passage]) -> tuple[list[list[int]], dict[str, int]]:
    """Each passage's stemmed words as ids, and the ids of the stems: the passage's own words,
    its heading's, and for a code block the end of the text before it (:func:`_words`, done in
    bulk: one lower-casing of the page, each distinct word stemmed once)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters lower-case to two: keep offsets aligned
        lowered = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    headings: dict[str, list[str]] = {}
    documents = []
    for number, passage in enumerate(passages):
        words = _TOKEN.findall(lowered, passage.start, passage.end)
        if passage.code and number and not passages[number - 1].code:
            # a code block is found by what the text just before it says it does
            lead = passages[number - 1]
            words.extend(
                _TOKEN.findall(lowered, max(lead.start, lead.end - LEAD_CHARACTERS), lead.end)
            )
        if _MAYBE_IDENTIFIER.search(text, passage.start, passage.end):
            for identifier in _IDENTIFIER.findall(text, passage.start, passage.end):
                words.extend(_parts(identifier))
        if passage.heading:
            if passage.heading not in headings:
                headings[passage.heading] = _words(passage.heading)
            words.extend(headings[passage.heading])
        documents.append(words)
    distinct = list({word for words in documents for word in words})
    vocabulary: dict[str, int] = {}
    ids = {
        word: vocabulary.setdefault(stem, len(vocabulary))
        for word, stem in zip(distinct, _stemmer().stemWords(distinct), strict=True)
    }
    return [list(map(ids.__getitem__, words)) for words in documents], vocabulary


def _query(question: str) -> list[str]:
    """The question's distinct stemmed words, without stop words and question words."""
    words = [w for w in _words(question) if w not in _stop_words()]
    return list(dict.fromkeys(_stemmer().stemWords(words)))


_STOP: frozenset[str] | None = None
#: Words that frame a question rather than say what it asks about.
_QUESTION_WORDS = ("could", "would", "much", "many", "anyone", "someone", "whether", "way")


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from bm25s.stopwords import STOPWORDS_EN_PLUS

        _STOP = frozenset(STOPWORDS_EN_PLUS) | frozenset(_QUESTION_WORDS)
    return _STOP


@frozen
class Answer:
    """The passages that answer a question, in page order, and ``best``, the one that answers
    it best; no passages and no ``best`` when the page may not answer the question."""

    passages: tuple[Passage, ...] = ()
    best: Passage | None = None


def answer(
    text: str,
    question: str,
    max_characters: int | None = None,
    start: int = 0,
    end: int | None = None,
) -> Answer:
    """The few passages of ``text[start:end]`` most relevant to *question*, in page order
    (their offsets are in *text*): the best ones until they hold :data:`ANSWER_CHARACTERS`, at
    most :data:`TOP_PASSAGES`, none scoring under :data:`RELATIVE_SCORE` of the best, within
    *max_characters* in all (the best passage is always kept). None when even the best holds
    too little of what the question asks."""
    part = text[start:end]
    query = _query(question)
    if not query or not part.strip():
        return Answer()
    index = _index(part)
    passages = index.passages
    scores = index.scores(query)
    order = sorted(range(len(passages)), key=lambda i: -scores[i])
    best = order[0]
    if scores[best] <= 0 or index.confidence(query, scores[best]) < MIN_CONFIDENCE:
        return Answer()
    chosen: list[int] = []
    used = 0
    for rank in order[:TOP_PASSAGES]:
        if scores[rank] < RELATIVE_SCORE * scores[best]:
            break
        if chosen and used >= ANSWER_CHARACTERS:
            break
        size = passages[rank].end - passages[rank].start
        if chosen and max_characters is not None and used + size > max_characters:
            continue
        chosen.append(rank)
        used += size

    def moved(passage: Passage) -> Passage:  # offsets in the page, not in the part
        if not start:
            return passage
        return Passage(passage.start + start, passage.end + start, passage.code, passage.heading)

    return Answer(tuple(moved(passages[i]) for i in sorted(chosen)), moved(passages[best]))


class _Index:
    """A page's passages and their BM25 index (bm25s), built once per page text."""

    def __init__(self, text: str):
        import bm25s

        self.passages = split(text)
        ids, vocabulary = _documents(text, self.passages)
        self.vocabulary = vocabulary
        self.retriever = bm25s.BM25()
        if vocabulary:  # a page of one-letter words and symbols has nothing to index
            self.retriever.index(bm25s.tokenization.Tokenized(ids, vocabulary), show_progress=False)
        self.terms = [frozenset(doc) for doc in ids]

    def scores(self, query: list[str]) -> list[float]:
        """Every passage's BM25 score for the query terms."""
        known = [self.vocabulary[term] for term in query if term in self.vocabulary]
        if not known:
            return [0.0] * len(self.passages)
        return [float(score) for score in self.retriever.get_scores(known)]

    def confidence(self, query: list[str], best: float) -> float:
        """The best passage's score as a share of the question's weight: the sum of its
        terms' inverse document frequencies over the passages, where a term the page never
        uses weighs as much as the rarest one (BM25 scores alone do not compare across
        questions)."""
        n = len(self.passages)
        weight = 0.0
        for term in query:
            known = self.vocabulary.get(term)
            df = 0 if known is None else sum(1 for terms in self.terms if known in terms)
            weight += math.log(1 + (n - df + 0.5) / (df + 0.5)) if df else math.log(1 + n)
        return best / weight if weight else 0.0


#: Pages whose index is kept, so one page can be asked many questions: at most this many,
#: holding at most :data:`INDEX_CHARACTERS` of text in all.
INDEX_PAGES = 16
INDEX_CHARACTERS = 8_000_000
_INDEXES: OrderedDict[tuple[int, int], tuple[str, _Index]] = OrderedDict()
_INDEX_LOCK = threading.Lock()


def _index(text: str) -> _Index:
    """The index of *text*, from the last pages asked about or built now."""
    key = (len(text), hash(text))
    with _INDEX_LOCK:
        kept = _INDEXES.get(key)
        if kept is not None and kept[0] == text:
            _INDEXES.move_to_end(key)
            return kept[1]
    index = _Index(text)
    with _INDEX_LOCK:
        _INDEXES[key] = (text, index)
        while len(_INDEXES) > INDEX_PAGES or (
            len(_INDEXES) > 1 and sum(k[0] for k in _INDEXES) > INDEX_CHARACTERS
        ):
            _INDEXES.popitem(last=False)
    return index


# -- literal finds ---------------------------------------------------------------------------


@frozen
class Found:
    """One place where terms occur: the span shown (the line of each occurrence and a line
    either side, merged with neighbours), and each occurrence's (start, term)."""

    start: int
    end: int
    hits: tuple[tuple[int, str], ...]


def find(
    text: str, terms: Sequence[str], limit: int | None = None, start: int = 0
) -> tuple[list[Found], dict[str, int]]:
    """The places where the terms occur in ``text[start:]`` (case ignored), in page order:
    the first *limit* occurrences (all by default), each with a line of context on each side
    (overlapping contexts merged); and how many times each term occurs there in all."""
    hits: list[tuple[int, str]] = []
    counts: dict[str, int] = {}
    for term in dict.fromkeys(t for t in terms if t):
        count = 0
        for match in re.finditer(re.escape(term), text[start:] if start else text, re.IGNORECASE):
            if limit is None or count < limit:
                hits.append((match.start() + start, term))
            count += 1
        counts[term] = count
    hits.sort()
    found: list[Found] = []
    for position, term in hits[:limit]:
        first = _neighbour_start(text, _line_start(text, position))
        last = _neighbour_end(text, _line_end(text, position))
        if found and first <= found[-1].end:
            previous = found[-1]
            found[-1] = Found(
                previous.start, max(previous.end, last), (*previous.hits, (position, term))
            )
        else:
            found.append(Found(first, last, ((position, term),)))
    return found, counts


def _neighbour_start(text: str, line_start: int) -> int:
    """The start of the last line before *line_start* that is not blank (else
    *line_start*)."""
    position = line_start - 1
    while position > 0 and text[position - 1] in "\n \t\r":
        position -= 1
    if position <= 0:
        return line_start
    return _line_start(text, position)


def _neighbour_end(text: str, line_end: int) -> int:
    """The end of the first line after *line_end* that is not blank (else *line_end*)."""
    position = line_end + 1
    while position < len(text) and text[position] in "\n \t\r":
        position += 1
    if position >= len(text):
        return line_end
    return _line_end(text, position)


def _line_start(text: str, position: int) -> int:
    if position <= 0:
        return 0
    return text.rfind("\n", 0, position) + 1


def _line_end(text: str, position: int) -> int:
    if position >= len(text):
        return len(text)
    end = text.find("\n", position)
    return len(text) if end == -1 else end
