"""Merging search results: one canonical form per URL, reciprocal rank fusion of several
providers' lists, and each URL listed once across the queries of a call.

Reciprocal rank fusion (Cormack et al., 2009; pi-search-hub's ``k = 60``) scores a result by
the sum of ``1 / (k + rank)`` over the lists that hold it, so a page several providers agree on
ranks above any page only one of them found. Ties go to the result more providers returned,
then to the better single rank, then to the earlier provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

import attrs
from attrs import frozen

from ..api.types import SearchHit, SearchResponse

__all__ = [
    "RRF_K",
    "Listing",
    "QueryAnswer",
    "canonical_url",
    "fuse",
    "list_once",
    "plain",
]

#: The constant of reciprocal rank fusion: large enough that the first few ranks of one list do
#: not outweigh agreement between lists.
RRF_K = 60
#: Query parameters that only track where a click came from (never what the page shows).
TRACKING = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref",
        "ref_src",
        "ref_url",
        "spm",
    }
)


def _tracking(name: str) -> bool:
    name = name.lower()
    return name in TRACKING or name.startswith("utm_")


def canonical_url(url: str) -> str:
    """The form two URLs of one page share: no scheme (http and https are one page), the host
    in lower case without ``www.`` or a default port, no trailing slash, no fragment, and no
    tracking parameter (``utm_*``, ``fbclid``, ``ref``, …); the path and the other parameters
    are kept as written."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".").removeprefix("www.")
        port = parts.port
    except ValueError:
        return text
    if not host:
        return text
    if port is not None and port not in (80, 443):
        host = f"{host}:{port}"
    query = "&".join(
        piece for piece in parts.query.split("&") if piece and not _tracking(piece.split("=")[0])
    )
    path = parts.path.rstrip("/")
    return host + path + (f"?{query}" if query else "")


@frozen(kw_only=True)
class Listing:
    """One result as the call lists it: the hit, the providers that returned it (a fused
    call), and the other queries of the call that found it too (their indexes)."""

    hit: SearchHit
    providers: tuple[str, ...] = ()
    also_for: tuple[int, ...] = ()


@frozen(kw_only=True)
class QueryAnswer:
    """What one query of a call shows: its listings, the answer's related searches, notices,
    warnings and balance (``response``), lines about its providers (``notes``: which one served
    it, which failed), and how many of its results an earlier query already listed
    (``repeated``)."""

    listings: tuple[Listing, ...]
    response: SearchResponse = SearchResponse()
    notes: tuple[str, ...] = ()
    repeated: int = 0


def plain(response: SearchResponse, notes: Sequence[str] = ()) -> QueryAnswer:
    """One provider's answer as listings (a URL it returned twice is listed once)."""
    seen: set[str] = set()
    listings = []
    for hit in response.hits:
        key = canonical_url(hit.url)
        if key not in seen:
            seen.add(key)
            listings.append(Listing(hit=hit))
    return QueryAnswer(listings=tuple(listings), response=response, notes=tuple(notes))


def _untidiness(url: str) -> tuple[bool, int]:
    """How far a copy's URL is from the one to cite: plain http, then each tracking parameter."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return True, 0
    tracked = sum(1 for piece in parts.query.split("&") if _tracking(piece.split("=")[0]))
    return parts.scheme.lower() != "https", tracked


def _merged(copies: list[tuple[int, int, SearchHit]]) -> SearchHit:
    """One hit from its copies (rank, provider index, hit), best rank first: that copy's title,
    the URL of the tidiest copy (https, no tracking parameter; the best-ranked among equals),
    the richest snippet, and the first date and author any copy has."""
    best = copies[0][2]
    url = min(copies, key=lambda copy: _untidiness(copy[2].url))[2].url  # min keeps the first
    snippet = max((hit.snippet for _, _, hit in copies), key=len)
    published = next((hit.published for _, _, hit in copies if hit.published), None)
    author = next((hit.author for _, _, hit in copies if hit.author), None)
    # Providers' scores are on scales of their own: a fused result shows none.
    return attrs.evolve(
        best, url=url, snippet=snippet, published=published, author=author, score=None
    )


def fuse(
    answers: Sequence[tuple[str, SearchResponse]],
    limit: int,
    notes: Sequence[str] = (),
) -> QueryAnswer:
    """Several providers' answers to one query as one list, by reciprocal rank fusion (see the
    module), cut to *limit*; each listing names the providers that returned it. Related
    searches are merged, notices and warnings kept, each prefixed with its provider's name
    when several providers answered."""
    scores: dict[str, float] = {}
    copies: dict[str, list[tuple[int, int, SearchHit]]] = {}
    found_by: dict[str, list[str]] = {}
    for order, (name, response) in enumerate(answers):
        seen: set[str] = set()
        for rank, hit in enumerate(response.hits, 1):
            key = canonical_url(hit.url)
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            copies.setdefault(key, []).append((rank, order, hit))
            found_by.setdefault(key, []).append(name)
    for kept in copies.values():
        kept.sort(key=lambda copy: (copy[0], copy[1]))
    ranked = sorted(
        scores,
        key=lambda key: (-scores[key], -len(found_by[key]), copies[key][0][0], copies[key][0][1]),
    )
    listings = tuple(
        Listing(hit=_merged(copies[key]), providers=tuple(found_by[key])) for key in ranked[:limit]
    )
    several = len(answers) > 1
    related = tuple(dict.fromkeys(r for _, response in answers for r in response.related))
    notices = tuple(
        f"{name}: {notice}" if several else notice
        for name, response in answers
        for notice in response.notices
    )
    warnings = tuple(
        f"{name}: {warning}" if several else warning
        for name, response in answers
        for warning in response.warnings
    )
    balance = next((r.balance for _, r in answers if r.balance is not None), None)
    merged = SearchResponse(
        hits=tuple(listing.hit for listing in listings),
        related=related,
        notices=notices,
        warnings=warnings,
        balance=balance,
    )
    return QueryAnswer(listings=listings, response=merged, notes=tuple(notes))


def list_once(outcomes: Sequence[QueryAnswer | BaseException]) -> list[QueryAnswer | BaseException]:
    """Each URL listed once across the queries of a call: under the first query that found it,
    noting the later ones (``also_for``); a later query counts it as ``repeated``."""
    first: dict[str, tuple[int, int]] = {}  # canonical URL -> (query index, listing index)
    also: dict[tuple[int, int], list[int]] = {}
    kept: list[list[Listing] | None] = []
    repeated: list[int] = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            kept.append(None)
            repeated.append(0)
            continue
        mine: list[Listing] = []
        dropped = 0
        for listing in outcome.listings:
            key = canonical_url(listing.hit.url)
            if key in first:
                where = first[key]
                if where[0] != index and index not in also.setdefault(where, []):
                    also[where].append(index)
                dropped += 1
                continue
            first[key] = (index, len(mine))
            mine.append(listing)
        kept.append(mine)
        repeated.append(dropped)
    result: list[QueryAnswer | BaseException] = []
    for index, outcome in enumerate(outcomes):
        mine = kept[index]
        if isinstance(outcome, BaseException) or mine is None:
            result.append(outcome)
            continue
        listings = tuple(
            attrs.evolve(listing, also_for=tuple(also[(index, position)]))
            if (index, position) in also
            else listing
            for position, listing in enumerate(mine)
        )
        result.append(attrs.evolve(outcome, listings=listings, repeated=repeated[index]))
    return result
