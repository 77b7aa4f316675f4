"""GitHub as a site reader: files, folders, READMEs, issues, pull requests, commits, releases and
gists, read through the REST API and the raw file host instead of the web pages' markup.

- ``blob``/``raw`` URLs (and raw.githubusercontent.com ones): the file's exact text from the raw
  host; ``#L10-L40`` gives those lines, numbered.
- A repository's root: its description, top-level listing and README; ``tree``: that folder's
  listing (and its README).
- ``issues/N`` and ``pull/N``: title, state, body and every comment in order, read to the end of
  the thread; a pull request also lists its changed files and review comments, and names its
  diff (``pull/N.diff``, which this reader reads too).
- ``commit/SHA``, ``releases`` (``/tag/T``, ``/latest``) and gists.

Every other URL form (wikis, discussions, actions, profiles) is left to the usual fetch. A token
from ``GITHUB_TOKEN`` / ``GH_TOKEN`` (or ``gh auth token``) goes to GitHub's own hosts only. A
404 on a file or folder names what exists: the default branch when the URL guessed another,
and the repository's paths closest to the one asked for. Content at a full commit SHA is cached
long.
"""

from __future__ import annotations

import difflib
import re
import time
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ..api import (
    Reader,
    ReaderError,
    ReaderToken,
    Reading,
    hookimpl,
    list_field,
    number_field,
    one_line,
    text_field,
)

__all__ = ["GITHUB", "read"]

API = "https://api.github.com"
RAW = "https://raw.githubusercontent.com"
WEB = "https://github.com"
#: The request shape GitHub documents for its REST API.
API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
THE_API = "the GitHub API"
THE_RAW_HOST = "raw.githubusercontent.com"
#: Items per page of a list (GitHub's largest page).
PER_PAGE = 100
#: Pages of one list read at most (3,000 comments or files: GitHub's own cap for PR files).
MAX_PAGES = 30
#: The largest file read from the raw host, and the largest API answer.
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_API_BYTES = 16 * 1024 * 1024
#: Candidate URLs a 404 offers at most.
MAX_SUGGESTIONS = 5
#: Releases listed for ``/releases``.
RELEASES_SHOWN = 10

_SHA = re.compile(r"^[0-9a-f]{40}$")
_SHORT_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_NUMBER = re.compile(r"^[0-9]{1,9}$")
_DIFF = re.compile(r"^([0-9a-f]{7,40}|[0-9]{1,9})\.(diff|patch)$")
_LINES = re.compile(r"^L(\d{1,7})(?:C\d+)?(?:-L?(\d{1,7})(?:C\d+)?)?$")
_README = re.compile(r"^readme(\.[a-z0-9]+)?$", re.I)
#: First path segments of github.com that are not users or organisations.
_NOT_OWNERS = frozenset(
    """about account apps blog codespaces collections contact customer-stories enterprise
    explore features login logout marketplace new notifications orgs organizations pricing
    pulls issues search security settings site sponsors stars topics trending users""".split()
)


# --- the request and its failures -------------------------------------------------------------


def _reset_words(reset: str | None) -> str:
    if not reset or not reset.strip().isdigit():
        return "within the hour"
    seconds = int(reset.strip())
    wait = max(0, int(seconds - time.time()))
    clock = time.strftime("%H:%M UTC", time.gmtime(seconds))
    return f"at {clock} (in {max(1, round(wait / 60))} min)"


def _rate_limited(response: Any) -> bool:
    """A rate-limit answer, by its headers (403 or 429 with no quota left, or a Retry-After)."""
    return response.status in (403, 429) and (
        response.headers.get("x-ratelimit-remaining", "").strip() == "0"
        or "retry-after" in response.headers
        or response.status == 429
    )


def _rate_limit_error(web: Any, response: Any) -> ReaderError:
    headers = response.headers
    if headers.get("x-ratelimit-remaining", "").strip() == "0":
        limit = headers.get("x-ratelimit-limit") or ("5000" if web.has_token else "60")
        whose = "for your token" if web.has_token else "without a token"
        text = (
            f"the GitHub API rate limit is spent ({limit} requests an hour {whose}); it resets "
            f"{_reset_words(headers.get('x-ratelimit-reset'))}"
        )
    else:
        wait = headers.get("retry-after", "").strip()
        after = f"{wait} s" if wait.isdigit() else "a minute"
        text = f"GitHub asks to wait {after} before the next request (a secondary rate limit)"
    if not web.has_token:
        text += (
            "; set GITHUB_TOKEN or GH_TOKEN (or log in with the GitHub CLI: gh auth login) to "
            "raise the limit to 5,000 requests an hour"
        )
    return ReaderError(text, status=429, code="rate-limited", fall_back=True)


def _api_message(response: Any) -> str:
    try:
        data = response.json()
    except ReaderError:
        return ""
    message = text_field(data.get("message")) if isinstance(data, dict) else None
    return f": {one_line(message, 160)}" if message else ""


def _failure(web: Any, response: Any, what: str) -> ReaderError:
    """The error for a non-2xx API answer other than a 404 the caller handles."""
    if _rate_limited(response):
        return _rate_limit_error(web, response)
    status = response.status
    if status == 401:
        return ReaderError(
            "GitHub refused the token (HTTP 401): check GITHUB_TOKEN / GH_TOKEN, or unset it to "
            "read public repositories without one",
            status=401,
            fall_back=True,
        )
    return ReaderError(
        f"{response.source or THE_API} answered HTTP {status} for {what}{_api_message(response)}",
        status=status,
        fall_back=True,
    )


def _api(web: Any, path: str, what: str, params: dict | None = None, missing: tuple = ()) -> Any:
    """GET ``api.github.com{path}``: the response (2xx, or a status in *missing* for the caller
    to explain), else the error for it."""
    response = web.get(
        path if path.startswith("http") else API + path,
        params=params,
        headers=API_HEADERS,
        max_bytes=MAX_API_BYTES,
        source=THE_API,
    )
    if response.ok or response.status in missing:
        return response
    raise _failure(web, response, what)


def _shape(what: str) -> ReaderError:
    return ReaderError(
        f"the GitHub API answered an unexpected shape for {what}", code="bad-answer", fall_back=True
    )


def _object(response: Any, what: str) -> dict:
    data = response.json()
    if not isinstance(data, dict):
        raise _shape(what)
    return data


def _paged(web: Any, path: str, what: str, params: dict | None = None) -> list:
    """Every page of a paged answer, following the ``Link: rel="next"`` headers (at most
    :data:`MAX_PAGES` pages), each page's JSON."""
    import requests

    answers: list = []
    url: str | None = API + path
    query = {"per_page": PER_PAGE, **(params or {})}
    for _ in range(MAX_PAGES):
        if url is None:
            break
        response = _api(web, url, what, params=query)
        answers.append(response.json())
        query = None  # the next link carries its own query
        url = None
        for link in requests.utils.parse_header_links(response.headers.get("Link", "") or ""):
            if link.get("rel") == "next" and link.get("url", "").startswith("http"):
                url = link["url"]
    return answers


def _pages(web: Any, path: str, what: str, params: dict | None = None) -> list:
    """Every item of a paged list."""
    items: list = []
    for page in _paged(web, path, what, params):
        if not isinstance(page, list):
            raise _shape(what)
        items.extend(page)
    return items


def _no_repo(web: Any, owner: str, repo: str) -> ReaderError:
    hint = (
        ", and the token in use cannot see it"
        if web.has_token
        else "; reading a private repository needs a token: set GITHUB_TOKEN or GH_TOKEN (or "
        "log in with the GitHub CLI: gh auth login)"
    )
    return ReaderError(
        f"HTTP 404: GitHub has no repository {owner}/{repo}, or it is private{hint}",
        status=404,
        code="not-found",
    )


def _repository(web: Any, owner: str, repo: str) -> dict:
    """The repository's facts (``GET /repos/{owner}/{repo}``); a 404 says it may be private."""
    response = _api(web, f"/repos/{owner}/{repo}", f"{owner}/{repo}", missing=(404,))
    if response.status == 404:
        raise _no_repo(web, owner, repo)
    data = _object(response, f"{owner}/{repo}")
    if not text_field(data.get("default_branch")):
        raise _shape(f"{owner}/{repo} (no default_branch)")
    return data


# --- rendering helpers ------------------------------------------------------------------------


def _login(value: Any) -> str:
    login = text_field(value.get("login")) if isinstance(value, dict) else None
    return f"@{login}" if login else "someone"


def _date(value: Any) -> str:
    text = text_field(value)
    return text[:10] if text else "?"


def _size(value: Any) -> str:
    size = number_field(value)
    if size is None:
        return ""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return ""


def _display(segments: list[str]) -> str:
    return "/".join(unquote(segment) for segment in segments)


def _fence(text: str, language: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{language}\n{text.rstrip()}\n{ticks}"


# --- files ------------------------------------------------------------------------------------


def _numbered(text: str, fragment: str) -> tuple[str, str | None]:
    """The lines a ``#L10-L40`` fragment names, numbered, and a note; or the text unchanged."""
    found = _LINES.match(fragment or "")
    if not found:
        return text, None
    lines = text.splitlines()
    first = int(found.group(1))
    last = int(found.group(2) or first)
    first, last = min(first, last), max(first, last)
    if first > len(lines):
        return text, f"the file has {len(lines)} lines, fewer than line {first}: shown whole"
    last = min(last, len(lines))
    width = len(str(last))
    shown = "\n".join(f"{n:>{width}}  {lines[n - 1]}" for n in range(first, last + 1))
    return shown, f"lines {first}-{last} of {len(lines)}, numbered"


def _file(web: Any, owner: str, repo: str, rest: list[str], fragment: str, url: str) -> Reading:
    """A file at ``{ref}/{path}`` (the ref may hold slashes: the raw host resolves it)."""
    raw_url = f"{RAW}/{owner}/{repo}/{'/'.join(rest)}"
    response = web.get(raw_url, max_bytes=MAX_FILE_BYTES, source=THE_RAW_HOST)
    if response.status == 404:
        raise _missing(web, owner, repo, rest, "blob")
    if not response.ok:
        if _rate_limited(response):
            raise _rate_limit_error(web, response)
        raise ReaderError(
            f"{THE_RAW_HOST} answered HTTP {response.status}",
            status=response.status,
            fall_back=True,
        )
    ref, path = unquote(rest[0]), _display(rest[1:])
    title = f"{path} ({owner}/{repo} at {ref})"
    immutable = bool(_SHA.match(ref))
    body = response.body
    if body[:5] == b"%PDF-":
        found = web.to_text(response)
        return Reading(
            title=title,
            text=found.text,
            notes=found.notes,
            source=THE_RAW_HOST,
            immutable=immutable,
            content_type="application/pdf",
        )
    if b"\x00" in body[:8192]:
        kind = response.content_type or "binary"
        raise ReaderError(
            f"{path} is a binary file ({kind}, {_size(len(body))}); web_fetch returns text: "
            f"download it from {raw_url}",
            code="binary",
        )
    text = response.text()
    notes = []
    if response.truncated:
        notes.append(f"Stopped reading after {_size(len(body))}: the file is larger")
    text, lines_note = _numbered(text, fragment)
    if lines_note:
        notes.append(f"{lines_note}; the whole file: {url.split('#', 1)[0]}")
    return Reading(
        title=title,
        text=text,
        notes=tuple(notes),
        source=THE_RAW_HOST,
        final_url=raw_url,
        content_type=response.content_type or "text/plain",
        immutable=immutable,
        more_text=False,
    )


def _tree_paths(web: Any, owner: str, repo: str, ref: str) -> list[tuple[str, str]] | None:
    """(path, type) of every entry of the repository at *ref* (``blob``/``tree``), or ``None``
    when the tree cannot be read."""
    try:
        response = _api(
            web,
            f"/repos/{owner}/{repo}/git/trees/{quote(ref, safe='')}",
            "the tree",
            params={"recursive": "1"},
            missing=(404, 409, 422),
        )
        if not response.ok:
            return None
        data = response.json()
    except ReaderError:
        return None
    entries = list_field(data.get("tree")) if isinstance(data, dict) else []
    return [
        (entry["path"], entry.get("type") or "blob")
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("path"), str)
    ]


def _closest(asked: str, paths: list[str]) -> list[str]:
    """Paths of the repository closest to *asked*: same name first, then by similarity."""
    name = asked.rsplit("/", 1)[-1].lower()
    same_name = [path for path in paths if path.rsplit("/", 1)[-1].lower() == name]
    same_name.sort(key=lambda path: -difflib.SequenceMatcher(None, asked, path).ratio())
    similar = difflib.get_close_matches(asked, paths, n=MAX_SUGGESTIONS, cutoff=0.5)
    return list(dict.fromkeys([*same_name, *similar]))


def _missing(web: Any, owner: str, repo: str, rest: list[str], kind: str) -> ReaderError:
    """A 404 for ``{kind}/{ref}/{path}``, with the URLs that exist: the same path on the
    default branch, and the paths of its tree closest to the one asked for."""
    facts = _repository(web, owner, repo)
    default = facts["default_branch"]
    ref, asked = unquote(rest[0]), _display(rest[1:])
    tree = _tree_paths(web, owner, repo, default) or []
    wanted = "tree" if kind == "tree" else "blob"
    paths = [path for path, entry_type in tree if entry_type == wanted]
    found: list[str] = []
    # The ref may hold slashes (feature/x): every split of the URL's path is a guess.
    for cut in range(1, len(rest)):
        guess = _display(rest[cut:])
        if guess in paths:
            found.append(guess)
    found.extend(_closest(asked, paths) if asked else [])
    suggestions = [
        f"{WEB}/{owner}/{repo}/{kind}/{quote(default, safe='')}/{quote(path)}"
        for path in list(dict.fromkeys(found))[:MAX_SUGGESTIONS]
    ]
    where = f" (its default branch is {default})" if ref != default else ""
    what = "folder" if kind == "tree" else "file"
    message = f"HTTP 404: {owner}/{repo} has no {what} {asked or '/'} at {ref}{where}"
    if not tree:
        message += "; its file tree could not be read to suggest others"
    return ReaderError(message, status=404, code="not-found", suggestions=suggestions)


# --- folders and the repository root ----------------------------------------------------------


def _listing(entries: list) -> list[str]:
    rows = []
    order = {"dir": 0, "submodule": 1, "symlink": 2, "file": 3}
    for entry in sorted(
        (e for e in entries if isinstance(e, dict) and text_field(e.get("name"))),
        key=lambda e: (order.get(e.get("type"), 4), e["name"].lower()),
    ):
        kind = entry.get("type")
        if kind == "dir":
            rows.append(f"- {entry['name']}/")
        elif kind == "submodule":
            rows.append(f"- {entry['name']} (submodule)")
        elif kind == "symlink":
            rows.append(f"- {entry['name']} (symlink)")
        else:
            size = _size(entry.get("size"))
            rows.append(f"- {entry['name']}" + (f" ({size})" if size else ""))
    return rows


def _readme(web: Any, entries: list) -> tuple[str, str] | None:
    """(name, text) of the README in a folder's *entries*, read from the raw host."""
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "file":
            continue
        name = text_field(entry.get("name")) or ""
        link = text_field(entry.get("download_url"))
        if _README.match(name) and link and link.startswith(RAW + "/"):
            response = web.get(link, max_bytes=MAX_FILE_BYTES, source=THE_RAW_HOST)
            if response.ok and b"\x00" not in response.body[:8192]:
                return name, response.text()
    return None


def _repo_root(web: Any, owner: str, repo: str) -> Reading:
    facts = _repository(web, owner, repo)
    name = text_field(facts.get("full_name")) or f"{owner}/{repo}"
    response = _api(web, f"/repos/{owner}/{repo}/contents", "the top-level listing", missing=(404,))
    entries = list_field(response.json()) if response.ok else []
    lines = [f"# {name}"]
    if text_field(facts.get("description")):
        lines += ["", facts["description"].strip()]
    about = [f"default branch {facts['default_branch']}"]
    if number_field(facts.get("stargazers_count")) is not None:
        about.append(f"{int(facts['stargazers_count']):,} stars")
    if number_field(facts.get("forks_count")) is not None:
        about.append(f"{int(facts['forks_count']):,} forks")
    if text_field(facts.get("language")):
        about.append(facts["language"])
    license_ = facts.get("license")
    if isinstance(license_, dict) and text_field(license_.get("spdx_id")):
        about.append(f"licence {license_['spdx_id']}")
    if facts.get("archived") is True:
        about.append("archived")
    if facts.get("fork") is True and isinstance(facts.get("parent"), dict):
        about.append(f"fork of {facts['parent'].get('full_name')}")
    lines += ["", " · ".join(about)]
    if text_field(facts.get("homepage")):
        lines.append(f"Homepage: {facts['homepage']}")
    topics = [t for t in list_field(facts.get("topics")) if isinstance(t, str)]
    if topics:
        lines.append(f"Topics: {', '.join(topics)}")
    lines += ["", "## Files", ""]
    lines += _listing(entries) or ["(the repository is empty)"]
    readme = _readme(web, entries)
    if readme:
        lines += ["", f"## {readme[0]}", "", readme[1].strip()]
    return Reading(title=name, text="\n".join(lines))


def _folder(web: Any, owner: str, repo: str, rest: list[str]) -> Reading:
    """``tree/{ref}/{path}``: the folder's listing and README. A ref with slashes is found by
    trying the first one, two, then three segments as the ref."""
    for cut in range(1, min(3, len(rest)) + 1):
        ref, path = _display(rest[:cut]), "/".join(rest[cut:])
        response = _api(
            web,
            f"/repos/{owner}/{repo}/contents/{path}".rstrip("/"),
            f"{_display(rest[cut:]) or '/'} at {ref}",
            params={"ref": ref},
            missing=(404,),
        )
        if response.ok:
            break
    else:
        raise _missing(web, owner, repo, rest, "tree")
    data = response.json()
    shown = _display(rest[cut:]) or "/"
    if isinstance(data, dict):  # a file: GitHub shows it as a blob
        return _file(web, owner, repo, rest, "", f"{WEB}/{owner}/{repo}/blob/{'/'.join(rest)}")
    if not isinstance(data, list):
        raise _shape(f"the folder {shown}")
    lines = [f"# {owner}/{repo}: {shown} at {ref}", ""] + (_listing(data) or ["(empty)"])
    readme = _readme(web, data)
    if readme:
        lines += ["", f"## {readme[0]}", "", readme[1].strip()]
    return Reading(
        title=f"{shown} ({owner}/{repo} at {ref})",
        text="\n".join(lines),
        immutable=bool(_SHA.match(ref)),
    )


# --- issues and pull requests -----------------------------------------------------------------


def _state(issue: dict, pull: dict | None) -> str:
    if pull is not None:
        if pull.get("merged_at"):
            return f"merged on {_date(pull.get('merged_at'))}" + (
                f" by {_login(pull.get('merged_by'))}" if pull.get("merged_by") else ""
            )
        if pull.get("draft") is True and issue.get("state") == "open":
            return "open (draft)"
        if issue.get("state") == "closed":
            return f"closed without merging on {_date(issue.get('closed_at'))}"
        return "open"
    state = text_field(issue.get("state")) or "?"
    if state == "closed":
        reason = text_field(issue.get("state_reason"))
        return f"closed on {_date(issue.get('closed_at'))}" + (
            f" ({reason.replace('_', ' ')})" if reason else ""
        )
    return state


def _comment(
    heading: str, item: dict, when: str = "created_at", empty: str = "(empty)"
) -> list[str]:
    association = text_field(item.get("author_association"))
    said = f" ({association.lower()})" if association and association != "NONE" else ""
    body = (text_field(item.get("body")) or empty).strip()
    head = f"### {heading} · {_login(item.get('user'))}{said} · {_date(item.get(when))}"
    return [head, "", body, ""] if body else [head, ""]


def _verdicts(reviews: list) -> list[str]:
    """A pull request's submitted reviews: each verdict and its summary, in order. A review
    that only comments with nothing of its own to say (the container of inline comments) is
    left out."""
    shown = [
        item
        for item in reviews
        if isinstance(item, dict)
        and text_field(item.get("state")) not in (None, "PENDING")
        and (item.get("state") != "COMMENTED" or text_field(item.get("body")))
    ]
    lines = [f"## Reviews ({len(shown)})", ""] if shown else []
    for item in shown:
        verdict = str(item["state"]).replace("_", " ").capitalize()
        lines += _comment(verdict, item, when="submitted_at", empty="")
    return lines


def _thread(web: Any, owner: str, repo: str, number: str, as_pull: bool) -> Reading:
    what = f"#{number}"
    response = _api(web, f"/repos/{owner}/{repo}/issues/{number}", what, missing=(404, 410))
    if response.status == 410:
        raise ReaderError(
            f"HTTP 410: issue {owner}/{repo}#{number} was deleted", status=410, code="gone"
        )
    if response.status == 404:
        _repository(web, owner, repo)  # says whether the repository itself is missing
        kind = "pull request" if as_pull else "issue"
        raise ReaderError(
            f"HTTP 404: {owner}/{repo} has no {kind} #{number}", status=404, code="not-found"
        )
    issue = _object(response, what)
    if not isinstance(issue.get("title"), str):
        raise _shape(f"{what} (no title)")
    is_pull = isinstance(issue.get("pull_request"), dict)
    comments = (
        _pages(web, f"/repos/{owner}/{repo}/issues/{number}/comments", f"the comments of {what}")
        if number_field(issue.get("comments")) != 0
        else []
    )
    pull = files = reviews = None
    verdicts: list = []
    notes: list[str] = []
    said = number_field(issue.get("comments"))
    if len(comments) >= MAX_PAGES * PER_PAGE and said is not None and said > len(comments):
        notes.append(
            f"the first {len(comments):,} of its {int(said):,} comments (the most one read "
            f"takes); the others are on {WEB}/{owner}/{repo}/issues/{number}"
        )
    if is_pull:
        pull = _object(_api(web, f"/repos/{owner}/{repo}/pulls/{number}", what), what)
        files = _pages(web, f"/repos/{owner}/{repo}/pulls/{number}/files", f"the files of {what}")
        try:  # best effort: the thread is whole without them
            verdicts = _pages(
                web, f"/repos/{owner}/{repo}/pulls/{number}/reviews", f"the reviews of {what}"
            )
        except ReaderError as exc:
            notes.append(f"its reviews could not be read ({one_line(exc.message, 200)})")
        reviews = (
            _pages(
                web,
                f"/repos/{owner}/{repo}/pulls/{number}/comments",
                f"the review comments of {what}",
            )
            if number_field(pull.get("review_comments")) != 0
            else []
        )
    labels = [
        label["name"]
        for label in list_field(issue.get("labels"))
        if isinstance(label, dict) and isinstance(label.get("name"), str)
    ]
    kind = "pull request" if is_pull else "issue"
    facts = [
        f"{owner}/{repo} {kind}",
        _state(issue, pull),
        f"opened by {_login(issue.get('user'))} on {_date(issue.get('created_at'))}",
    ]
    if labels:
        facts.append(f"labels: {', '.join(labels)}")
    facts.append(f"{len(comments)} comment{'s' if len(comments) != 1 else ''}")
    lines = [f"# {issue['title'].strip()} (#{number})", "", " · ".join(facts)]
    if pull is not None:
        head = pull.get("head") if isinstance(pull.get("head"), dict) else {}
        base = pull.get("base") if isinstance(pull.get("base"), dict) else {}
        change = (
            f"+{int(number_field(pull.get('additions')) or 0)} "
            f"-{int(number_field(pull.get('deletions')) or 0)} in "
            f"{int(number_field(pull.get('changed_files')) or len(files or []))} files, "
            f"{int(number_field(pull.get('commits')) or 0)} commits"
        )
        lines.append(
            f"Branches: {head.get('label') or '?'} into {base.get('label') or '?'} · {change}"
        )
        lines.append(f"Diff: {WEB}/{owner}/{repo}/pull/{number}.diff (web_fetch reads it)")
    lines += ["", text_field(issue.get("body")) or "(no description)", ""]
    if comments:
        lines += [f"## Comments ({len(comments)})", ""]
        for index, item in enumerate(comments, 1):
            if isinstance(item, dict):
                lines += _comment(f"Comment {index}", item)
    if files:
        lines += [f"## Changed files ({len(files)})", ""]
        for item in files:
            if not isinstance(item, dict) or not text_field(item.get("filename")):
                continue
            before = text_field(item.get("previous_filename"))
            name = f"{before} -> {item['filename']}" if before else item["filename"]
            lines.append(
                f"- {item.get('status') or 'changed'} {name} "
                f"(+{int(number_field(item.get('additions')) or 0)} "
                f"-{int(number_field(item.get('deletions')) or 0)})"
            )
        lines.append("")
    lines += _verdicts(verdicts)
    if reviews:
        lines += [f"## Review comments ({len(reviews)})", ""]
        for item in reviews:
            if isinstance(item, dict):
                line = number_field(item.get("line")) or number_field(item.get("original_line"))
                where = f"{item.get('path') or '?'}" + (f" line {int(line)}" if line else "")
                lines += _comment(f"On {where}", item)
    return Reading(
        title=f"{issue['title'].strip()} · {owner}/{repo}#{number}",
        text="\n".join(lines).rstrip(),
        notes=tuple(notes),
    )


def _diff(web: Any, owner: str, repo: str, url: str, what: str) -> Reading:
    """A pull request's or commit's ``.diff`` / ``.patch``, as GitHub serves it."""
    response = web.get(url.split("#", 1)[0], max_bytes=MAX_FILE_BYTES, source="github.com")
    if response.status == 404:
        _repository(web, owner, repo)
        raise ReaderError(f"HTTP 404: {owner}/{repo} has no {what}", status=404, code="not-found")
    if not response.ok:
        if _rate_limited(response):
            raise _rate_limit_error(web, response)
        raise ReaderError(
            f"github.com answered HTTP {response.status} for the diff",
            status=response.status,
            fall_back=True,
        )
    notes = ("Stopped reading after 5 MB: the diff is larger",) if response.truncated else ()
    return Reading(
        title=f"{what} of {owner}/{repo}",
        text=response.text(),
        notes=notes,
        source="github.com",
        content_type="text/x-diff",
    )


def _commit(web: Any, owner: str, repo: str, sha: str) -> Reading:
    what = f"commit {sha}"
    response = _api(web, f"/repos/{owner}/{repo}/commits/{sha}", what, missing=(404, 422))
    if not response.ok:
        _repository(web, owner, repo)
        raise ReaderError(
            f"HTTP 404: {owner}/{repo} has no commit {sha}", status=404, code="not-found"
        )
    data = _object(response, what)
    commit = data.get("commit") if isinstance(data.get("commit"), dict) else None
    if commit is None or not isinstance(commit.get("message"), str):
        raise _shape(f"{what} (no commit message)")
    files = list_field(data.get("files"))
    if 'rel="next"' in (response.headers.get("Link", "") or ""):
        # More than 300 files: every page repeats the commit with its next files.
        pages = _paged(web, f"/repos/{owner}/{repo}/commits/{sha}", f"the files of {what}")
        files = [
            f for page in pages if isinstance(page, dict) for f in list_field(page.get("files"))
        ]
    author = commit.get("author") if isinstance(commit.get("author"), dict) else {}
    full = text_field(data.get("sha")) or sha
    stats = data.get("stats") if isinstance(data.get("stats"), dict) else {}
    parents = [p.get("sha", "")[:7] for p in list_field(data.get("parents")) if isinstance(p, dict)]
    message = commit["message"].strip()
    facts = [
        f"{owner}/{repo} commit {full}",
        f"{author.get('name') or '?'}"
        + (f" ({_login(data['author'])})" if isinstance(data.get("author"), dict) else ""),
        _date(author.get("date")),
    ]
    if parents:
        facts.append(f"parent{'s' if len(parents) > 1 else ''} {', '.join(parents)}")
    if stats:
        facts.append(
            f"+{int(number_field(stats.get('additions')) or 0)} "
            f"-{int(number_field(stats.get('deletions')) or 0)} in {len(files)} files"
        )
    lines = [
        f"# {message.splitlines()[0] if message else full}",
        "",
        " · ".join(facts),
        "",
        message,
        "",
    ]
    for item in files:
        if not isinstance(item, dict) or not text_field(item.get("filename")):
            continue
        lines.append(
            f"## {item.get('status') or 'changed'} {item['filename']} "
            f"(+{int(number_field(item.get('additions')) or 0)} "
            f"-{int(number_field(item.get('deletions')) or 0)})"
        )
        patch = text_field(item.get("patch"))
        lines += ["", _fence(patch, "diff") if patch else "(no text diff: binary or too large)", ""]
    return Reading(
        title=f"{message.splitlines()[0] if message else full} · {owner}/{repo}@{full[:7]}",
        text="\n".join(lines).rstrip(),
        immutable=bool(_SHA.match(full)) and full.startswith(sha),
    )


# --- releases and gists -----------------------------------------------------------------------


def _release_lines(item: dict) -> list[str]:
    tag = text_field(item.get("tag_name")) or "?"
    name = text_field(item.get("name")) or tag
    flags = [f"tag {tag}", f"published {_date(item.get('published_at') or item.get('created_at'))}"]
    if item.get("prerelease") is True:
        flags.append("pre-release")
    if item.get("draft") is True:
        flags.append("draft")
    lines = [f"## {name}", "", " · ".join(flags), "", text_field(item.get("body")) or "(no notes)"]
    assets = [
        f"{asset['name']} ({_size(asset.get('size'))})"
        for asset in list_field(item.get("assets"))
        if isinstance(asset, dict) and isinstance(asset.get("name"), str)
    ]
    if assets:
        lines += ["", f"Assets: {', '.join(assets)}"]
    return [*lines, ""]


def _releases(web: Any, owner: str, repo: str, rest: list[str]) -> Reading | None:
    if not rest:
        response = _api(
            web,
            f"/repos/{owner}/{repo}/releases",
            "the releases",
            params={"per_page": RELEASES_SHOWN},
            missing=(404,),
        )
        if response.status == 404:
            _repository(web, owner, repo)
            raise ReaderError(
                f"HTTP 404: {owner}/{repo} has no releases", status=404, code="not-found"
            )
        items = response.json()
        if not isinstance(items, list):
            raise _shape("the releases")
        lines = [f"# Releases of {owner}/{repo} (newest {RELEASES_SHOWN})", ""]
        for item in items:
            if isinstance(item, dict):
                lines += _release_lines(item)
        if not items:
            lines.append("(no releases)")
        return Reading(title=f"Releases · {owner}/{repo}", text="\n".join(lines).rstrip())
    if rest[0] == "latest":
        path, what = f"/repos/{owner}/{repo}/releases/latest", "the latest release"
    elif rest[0] == "tag" and len(rest) > 1:
        tag = _display(rest[1:])
        path, what = f"/repos/{owner}/{repo}/releases/tags/{quote(tag, safe='')}", f"release {tag}"
    else:
        return None  # an unknown form: the usual fetch
    response = _api(web, path, what, missing=(404,))
    if response.status == 404:
        _repository(web, owner, repo)
        raise ReaderError(f"HTTP 404: {owner}/{repo} has no {what}", status=404, code="not-found")
    item = _object(response, what)
    lines = [f"# {owner}/{repo}", "", *_release_lines(item)]
    name = text_field(item.get("name")) or text_field(item.get("tag_name")) or what
    return Reading(title=f"{name} · {owner}/{repo}", text="\n".join(lines).rstrip())


def _gist(web: Any, segments: list[str]) -> Reading | None:
    ids = [s for s in segments if re.fullmatch(r"[0-9a-f]{20,40}|[0-9]{1,12}", s)]
    if not ids:
        return None
    gist_id = ids[0]
    after = segments[segments.index(gist_id) + 1 :]
    revision = after[0] if after and _SHA.match(after[0]) else None
    path = f"/gists/{gist_id}" + (f"/{revision}" if revision else "")
    response = _api(web, path, f"gist {gist_id}", missing=(404,))
    if response.status == 404:
        hint = (
            "" if web.has_token else " (a secret gist needs a token: set GITHUB_TOKEN or GH_TOKEN)"
        )
        raise ReaderError(
            f"HTTP 404: GitHub has no gist {gist_id}{hint}", status=404, code="not-found"
        )
    gist = _object(response, f"gist {gist_id}")
    files = gist.get("files")
    if not isinstance(files, dict):
        raise _shape(f"gist {gist_id} (no files)")
    title = text_field(gist.get("description")) or f"gist {gist_id}"
    lines = [
        f"# {title}",
        "",
        f"gist {gist_id} by {_login(gist.get('owner'))} · updated {_date(gist.get('updated_at'))}",
        "",
    ]
    for name, item in files.items():
        if not isinstance(item, dict):
            continue
        content = item.get("content") if isinstance(item.get("content"), str) else ""
        link = text_field(item.get("raw_url"))
        if item.get("truncated") is True and link:
            raw = web.get(link, max_bytes=MAX_FILE_BYTES, source="gist.githubusercontent.com")
            if raw.ok:
                content = raw.text()
        language = (text_field(item.get("language")) or "").lower()
        lines += [f"## {name}", ""]
        lines += [content.strip() if language == "markdown" else _fence(content, language), ""]
    return Reading(title=title, text="\n".join(lines).rstrip(), immutable=revision is not None)


# --- the reader -------------------------------------------------------------------------------


def read(url: str, web: Any) -> Reading | None:
    """Read a GitHub URL through the API or the raw host; ``None`` for a form this reader does
    not know (the usual fetch then reads the page)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    segments = [segment for segment in parts.path.split("/") if segment]
    if host == "gist.github.com":
        return _gist(web, segments)
    if host == THE_RAW_HOST:
        if len(segments) < 4:
            return None
        return _file(web, segments[0], segments[1], segments[2:], parts.fragment, url)
    if len(segments) < 2 or segments[0].lower() in _NOT_OWNERS:
        return None
    owner, repo = segments[0], segments[1].removesuffix(".git")
    kind, rest = (segments[2], segments[3:]) if len(segments) > 2 else (None, [])
    if kind is None:
        return _repo_root(web, owner, repo)
    if kind in ("blob", "raw") and len(rest) >= 2:
        return _file(web, owner, repo, rest, parts.fragment, url)
    if kind == "tree" and rest:
        return _folder(web, owner, repo, rest)
    if kind in ("issues", "pull", "pulls") and rest:
        diff = _DIFF.match(rest[0])
        if diff and kind != "issues":
            return _diff(web, owner, repo, url, f"the diff of pull request #{diff.group(1)}")
        if _NUMBER.match(rest[0]):
            return _thread(web, owner, repo, rest[0], as_pull=kind != "issues")
        return None
    if kind in ("commit", "commits") and rest:
        diff = _DIFF.match(rest[0])
        if diff:
            return _diff(web, owner, repo, url, f"the diff of commit {diff.group(1)}")
        if _SHORT_SHA.match(rest[0]) and len(rest) == 1:
            return _commit(web, owner, repo, rest[0])
        return None
    if kind == "releases":
        return _releases(web, owner, repo, rest)
    return None


GITHUB = Reader(
    name="github",
    label="GitHub",
    hosts=("github.com", "www.github.com", "gist.github.com", THE_RAW_HOST),
    read=read,
    source=THE_API,
    description="files, folders, READMEs, issues, pull requests, commits, releases, gists",
    token=ReaderToken(
        env=("GITHUB_TOKEN", "GH_TOKEN"),
        command=("gh", "auth", "token"),
        hosts=(
            "github.com",
            "api.github.com",
            THE_RAW_HOST,
            "gist.githubusercontent.com",
            "patch-diff.githubusercontent.com",
        ),
    ),
)


@hookimpl
def register_readers(register):
    """Register the GitHub reader."""
    register(GITHUB)
