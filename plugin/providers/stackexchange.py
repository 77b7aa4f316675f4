"""Stack Overflow and every Stack Exchange site as a site reader, through the Stack Exchange API
(their question pages answer bots with a Cloudflare wall).

A question gives its body and its answers by score, the accepted one marked, as Markdown (code
blocks kept). The API's ``backoff`` is obeyed: a method it asked us to leave alone for N seconds
is not asked again before then (waited for within the call's deadline, else said). Without a
key the API allows 300 requests a day per address; the page says when few are left.
"""

from __future__ import annotations

import html
import re
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ..api import (
    Reader,
    ReaderError,
    Reading,
    hookimpl,
    html_to_markdown,
    list_field,
    number_field,
    text_field,
)

__all__ = ["STACKEXCHANGE", "read"]

API = "https://api.stackexchange.com/2.3"
THE_API = "the Stack Exchange API"
#: Answers per page (the API's largest) and pages read at most.
PAGE_SIZE = 100
MAX_PAGES = 5
MAX_BYTES = 8 * 1024 * 1024
#: Below this many requests left today, the page says so.
LOW_QUOTA = 20

_backoff_lock = threading.Lock()
_backoff_until: dict[str, float] = {}


def _respect_backoff(method: str, web: Any) -> None:
    """Wait out a backoff the API set for *method*, when it ends before the call's deadline;
    else say how long is left."""
    with _backoff_lock:
        until = _backoff_until.get(method, 0.0)
    wait = until - time.monotonic()
    if wait <= 0:
        return
    if time.monotonic() + wait > web.deadline - 1.0:
        raise ReaderError(
            f"{THE_API} asked clients to wait {wait:.0f} s before asking again (its backoff); "
            "try again then",
            status=429,
            code="rate-limited",
        )
    while time.monotonic() < until:
        if web.cancelled:
            raise ReaderError("cancelled")
        time.sleep(min(0.1, max(0.0, until - time.monotonic())))


def _call(web: Any, method: str, path: str, params: dict) -> dict:
    """One API request; its wrapper object (``items``, ``has_more``, ``quota_remaining``,
    ``backoff``)."""
    _respect_backoff(method, web)
    response = web.get(f"{API}{path}", params=params, max_bytes=MAX_BYTES, source=THE_API)
    data = response.json()
    if not isinstance(data, dict):
        raise ReaderError(
            f"{THE_API} answered an unexpected shape", code="bad-answer", fall_back=True
        )
    backoff = number_field(data.get("backoff"))
    if backoff:
        with _backoff_lock:
            _backoff_until[method] = time.monotonic() + min(backoff, 3600)
    if not response.ok or "error_id" in data:
        name = text_field(data.get("error_name")) or f"HTTP {response.status}"
        said = text_field(data.get("error_message")) or ""
        if name == "throttle_violation" or response.status == 429:
            raise ReaderError(
                f"{THE_API} refuses more requests from this address for now ({said or name}); "
                "it allows 300 a day without a key",
                status=429,
                code="rate-limited",
            )
        raise ReaderError(
            f"{THE_API} answered {name}: {said}".rstrip(": "),
            status=response.status,
            fall_back=True,
        )
    if not isinstance(data.get("items"), list):
        raise ReaderError(
            f"{THE_API} answered an unexpected shape (no items)", code="bad-answer", fall_back=True
        )
    return data


def _question_id(path: str, site: str, web: Any) -> str | None:
    """The question a URL names: ``/questions/{id}/...``, ``/q/{id}``, or an answer's
    ``/a/{id}`` (asked of the API)."""
    found = re.match(r"^/(?:questions|q)/(\d{1,12})(?:/|$)", path)
    if found:
        return found.group(1)
    found = re.match(r"^/a/(\d{1,12})(?:/|$)", path)
    if not found:
        return None
    data = _call(web, "answers", f"/answers/{found.group(1)}", {"site": site})
    items = [item for item in data["items"] if isinstance(item, dict)]
    question = number_field(items[0].get("question_id")) if items else None
    if question is None:
        raise ReaderError(
            f"HTTP 404: {site} has no answer {found.group(1)}", status=404, code="not-found"
        )
    return str(int(question))


def _who(item: dict) -> str:
    owner = item.get("owner")
    name = text_field(owner.get("display_name")) if isinstance(owner, dict) else None
    return html.unescape(name) if name else "a deleted user"


def _date(item: dict, key: str = "creation_date") -> str:
    moment = number_field(item.get(key))
    return time.strftime("%Y-%m-%d", time.gmtime(moment)) if moment is not None else "?"


def read(url: str, web: Any) -> Reading | None:
    """A question page of any Stack Exchange site, through the API."""
    parts = urlsplit(url)
    site = (parts.hostname or "").lower().removeprefix("www.")
    question = _question_id(parts.path, site, web)
    if question is None:
        return None
    data = _call(web, "questions", f"/questions/{question}", {"site": site, "filter": "withbody"})
    items = [item for item in data["items"] if isinstance(item, dict)]
    if not items:
        raise ReaderError(
            f"HTTP 404: {site} has no question {question} (or it was deleted)",
            status=404,
            code="not-found",
        )
    asked = items[0]
    answers: list[dict] = []
    quota = number_field(data.get("quota_remaining"))
    cut_short = False
    if number_field(asked.get("answer_count")) != 0:
        for page in range(1, MAX_PAGES + 1):
            found = _call(
                web,
                "questions/answers",
                f"/questions/{question}/answers",
                {
                    "site": site,
                    "filter": "withbody",
                    "sort": "votes",
                    "order": "desc",
                    "pagesize": PAGE_SIZE,
                    "page": page,
                },
            )
            answers += [item for item in found["items"] if isinstance(item, dict)]
            quota = number_field(found.get("quota_remaining"))
            if found.get("has_more") is not True:
                break
        else:
            cut_short = True
    title = html.unescape(text_field(asked.get("title")) or f"question {question}")
    accepted = number_field(asked.get("accepted_answer_id"))
    facts = [
        f"{site} question {question}",
        f"score {int(number_field(asked.get('score')) or 0)}",
        f"{len(answers)} answer{'s' if len(answers) != 1 else ''}",
        f"asked by {_who(asked)} on {_date(asked)}",
    ]
    tags = [t for t in list_field(asked.get("tags")) if isinstance(t, str)]
    if tags:
        facts.append(f"tags: {', '.join(tags)}")
    if text_field(asked.get("closed_reason")):
        facts.append(f"closed ({asked['closed_reason']})")
    lines = [
        f"# {title}",
        "",
        " · ".join(facts),
        "",
        html_to_markdown(text_field(asked.get("body")) or ""),
        "",
    ]
    if answers:
        lines += [f"## Answers ({len(answers)}), by score", ""]
    for index, answer in enumerate(answers, 1):
        mark = (
            " · accepted"
            if accepted is not None and number_field(answer.get("answer_id")) == accepted
            else ""
        )
        lines += [
            f"### Answer {index}{mark} · score {int(number_field(answer.get('score')) or 0)} · "
            f"by {_who(answer)} on {_date(answer)}",
            "",
            html_to_markdown(text_field(answer.get("body")) or ""),
            "",
        ]
    notes = []
    if cut_short:
        total = number_field(asked.get("answer_count"))
        of = f" of {int(total)}" if total is not None and total > len(answers) else ""
        notes.append(
            f"showing the {len(answers)} highest-scored answers{of}; the rest are on the "
            "question's page"
        )
    if quota is not None and quota < LOW_QUOTA:
        notes.append(f"{THE_API} allows {int(quota)} more requests today from this address")
    return Reading(title=f"{title} · {site}", text="\n".join(lines).rstrip(), notes=tuple(notes))


STACKEXCHANGE = Reader(
    name="stackexchange",
    label="Stack Exchange",
    hosts=(
        "stackoverflow.com",
        "*.stackoverflow.com",
        "superuser.com",
        "*.superuser.com",
        "serverfault.com",
        "*.serverfault.com",
        "askubuntu.com",
        "*.askubuntu.com",
        "mathoverflow.net",
        "*.mathoverflow.net",
        "stackapps.com",
        "*.stackexchange.com",
    ),
    read=read,
    source=THE_API,
    description="questions with their answers by score (Stack Overflow and every Stack Exchange site)",
)


@hookimpl
def register_readers(register):
    """Register the Stack Exchange reader."""
    register(STACKEXCHANGE)
