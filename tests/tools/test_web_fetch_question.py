"""web_fetch's question and find: over each page's cached copy, for every content type, with
offsets that read true, within the output limits."""

from __future__ import annotations

import json
import re

import pytest
from pi_hostspec import PlainTheme, RenderOptions

from tests.support import hits, serve
from tests.support.pdfs import make_pdf

FILLER = (
    "The harbour town keeps its old stone walls, and visitors walk along them in the evening "
    "to watch the fishing boats come back with the tide. "
)
ANSWER = (
    "To reload the configuration, send the reload signal with nginx -s reload; the master "
    "process checks the new configuration and starts new worker processes."
)
GUIDE = "\n\n".join(
    [
        "# Beginner's guide",
        FILLER * 10,
        "## Starting and stopping",
        "Run the executable to start the server. " + FILLER * 6,
        "## Reloading",
        ANSWER,
        "```\nnginx -s reload\n```",
        "## Logs",
        FILLER * 12,
    ]
)
LABEL = re.compile(r"^\[offset (\d+)[^\]]*\]$", re.M)
READ_AROUND = re.compile(r"Read around (?:it|one): web_fetch (\{.*\})\]$", re.M)


@pytest.fixture
def direct(write_config):
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )


@pytest.fixture
def guide(httpserver, direct):
    return serve(httpserver, {"/guide": (200, "text/markdown; charset=utf-8", GUIDE)}) + "/guide"


def test_question_shows_the_passages_that_answer_with_offsets_that_read_true(host, guide):
    result = host.call("web_fetch", {"urls": [guide], "question": "How do I reload nginx?"})
    assert not result.is_error, result.text
    assert "nginx -s reload" in result.text
    offsets = [int(n) for n in LABEL.findall(result.text)]
    assert offsets
    for offset in offsets:  # each label's offset reads from the passage shown under it
        window = host.call("web_fetch", {"urls": [guide], "offset": offset})
        shown = result.text.split(f"[offset {offset}", 1)[1].split("\n", 1)[1].split("\n\n")[0]
        body = window.text.split("\n\n", 1)[1]
        assert body.startswith(shown), (shown, body[:200])
    assert len(result.text) < len(GUIDE) / 2


def test_the_section_ends_with_the_exact_call_that_reads_around_the_best_passage(host, guide):
    result = host.call("web_fetch", {"urls": [guide], "question": "How do I reload nginx?"})
    last = result.text.rstrip().splitlines()[-1]
    call = json.loads(READ_AROUND.search(last).group(1))
    facts = result.details["urls"][0]
    assert re.fullmatch(r"[0-9a-f]{8}", call.pop("content_hash"))
    assert call == {"urls": [guide], "offset": facts["bestOffset"]}
    around = host.call("web_fetch", call)
    assert around.text.split("\n\n", 1)[1].startswith(GUIDE[facts["bestOffset"] :][:40])
    assert result.details["question"] == "How do I reload nginx?"
    assert all(start < end for start, end in facts["passages"])


def test_a_page_fetched_once_answers_many_questions_without_downloading_again(
    host, guide, httpserver
):
    host.call("web_fetch", {"urls": [guide]})
    for question in ("How do I reload nginx?", "Where are the logs?", "How do I start it?"):
        result = host.call("web_fetch", {"urls": [guide], "question": question})
        assert result.details["urls"][0]["cache"]["hit"]
    host.call("web_fetch", {"urls": [guide], "find": ["reload"]})
    assert hits(httpserver, "/guide") == 1


def test_a_question_the_page_does_not_answer_gets_one_line_and_no_passages(host, guide):
    result = host.call(
        "web_fetch", {"urls": [guide], "question": "How do I rotate Kubernetes TLS certificates?"}
    )
    section = result.text.split("\n\n", 1)[1]
    assert section.count("\n") == 0, section
    assert "this page may not answer the question" in section
    assert not LABEL.search(result.text)
    assert result.details["urls"][0]["mayNotAnswer"] is True
    assert f'web_fetch {{"urls": ["{guide}"]}}' in section


def test_code_blocks_are_shown_whole_and_labelled_as_code(host, httpserver, direct):
    code = "```toml\n[profile.release]\nopt-level = 3\n\n\nlto = true\ncodegen-units = 1\n```"
    page = "\n\n".join(["# Profiles", FILLER * 8, "The release profile:", code, FILLER * 8])
    url = serve(httpserver, {"/p": (200, "text/markdown", page)}) + "/p"
    result = host.call("web_fetch", {"urls": [url], "question": "release opt-level lto"})
    assert code in result.text
    assert re.search(r"^\[offset \d+ · code\]$", result.text, re.M)


def test_find_shows_every_occurrence_with_context_offsets_and_counts(host, guide):
    result = host.call("web_fetch", {"urls": [guide], "find": ["RELOAD", "absent words"]})
    assert not result.is_error
    offsets = [int(n) for n in re.findall(r'offset (\d+): "RELOAD"', result.text)]
    assert offsets == [m.start() for m in re.finditer("reload", GUIDE.lower())]
    assert result.details["urls"][0]["found"] == {"RELOAD": len(offsets), "absent words": 0}
    assert f'"RELOAD" {len(offsets)}, "absent words" 0' in result.text
    assert "## Reloading" in result.text  # the line before an occurrence


def test_find_is_capped_and_counts_the_rest(host, httpserver, direct):
    page = "\n\n".join(f"Paragraph {n} mentions the needle once." for n in range(60))
    url = serve(httpserver, {"/n": (200, "text/plain", page)}) + "/n"
    result = host.call("web_fetch", {"urls": [url], "find": ["needle"]})
    assert len(re.findall(r'offset \d+: "needle"', result.text)) == 20
    assert "60 occurrences" in result.text and "40 more not shown" in result.text


def test_a_capped_find_ends_with_the_exact_call_that_finds_the_rest(host, httpserver, direct):
    """Past the cap, the line gives the call that looks on from the last occurrence shown;
    pasted, it shows the next ones, and so on until every occurrence was seen once."""
    page = "\n\n".join(f"Paragraph {n} mentions the needle once." for n in range(60))
    url = serve(httpserver, {"/n": (200, "text/plain", page)}) + "/n"
    seen: list[int] = []
    args: dict = {"urls": [url], "find": ["NEEDLE"]}
    for _ in range(4):
        result = host.call("web_fetch", args)
        assert not result.is_error, result.text
        seen += [int(n) for n in re.findall(r'offset (\d+): "NEEDLE"', result.text)]
        rest = re.search(r"The rest: web_fetch (\{.*?\})\. ", result.text)
        if rest is None:
            break
        args = json.loads(rest.group(1))
        assert args["find"] == ["NEEDLE"]
    assert seen == [m.start() for m in re.finditer("needle", page)]


def test_find_with_no_occurrence_says_so(host, guide):
    result = host.call("web_fetch", {"urls": [guide], "find": ["zebra"]})
    assert 'No occurrence of "zebra"' in result.text
    assert "(no text content)" not in result.text


def test_question_and_find_together(host, guide):
    result = host.call(
        "web_fetch", {"urls": [guide], "question": "How do I reload nginx?", "find": ["worker"]}
    )
    facts = result.details["urls"][0]
    assert facts["passages"] and facts["found"] == {"worker": 1}
    assert result.details["find"] == ["worker"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"find": ["x"], "text": False, "summary": True}, "page text"),
        ({"find": ["  "]}, "not blank"),
        ({"question": "   "}, "blank"),
    ],
)
def test_questions_that_cannot_be_answered_as_asked_are_clean_errors(host, guide, args, message):
    result = host.call("web_fetch", {"urls": [guide], **args})
    assert result.is_error and message in result.text
    assert "Traceback" not in result.text


def test_an_offset_starts_the_search_there(host, guide):
    start = GUIDE.index("## Logs")
    asked = host.call("web_fetch", {"urls": [guide], "question": "reload nginx", "offset": start})
    assert "nginx -s reload" not in asked.text
    assert f"characters {start}–{len(GUIDE)} of {len(GUIDE)}" in asked.text
    found = host.call("web_fetch", {"urls": [guide], "find": ["reload"], "offset": start})
    assert 'No occurrence of "reload"' in found.text
    past = host.call("web_fetch", {"urls": [guide], "find": ["reload"], "offset": 10**6})
    assert "is past the end" in past.text and "(no text content)" not in past.text


def test_a_long_page_is_asked_in_parts_each_ending_with_the_call_for_the_rest(
    host, httpserver, direct, monkeypatch
):
    from pi_web_tools.tools import model_text

    monkeypatch.setattr(model_text, "QUESTION_CHARACTERS", 2000)
    url = serve(httpserver, {"/g": (200, "text/markdown", GUIDE)}) + "/g"
    first = host.call("web_fetch", {"urls": [url], "question": "How do I reload nginx?"})
    rest = re.search(r"The rest: web_fetch (\{.*?\})\. ", first.text)
    assert rest, first.text
    call = json.loads(rest.group(1))
    assert re.fullmatch(r"[0-9a-f]{8}", call["content_hash"])
    assert {**call, "content_hash": None} == {
        "urls": [url],
        "question": "How do I reload nginx?",
        "offset": 2000,
        "content_hash": None,
    }
    later = host.call("web_fetch", call)
    assert "characters 2000–4000" in later.text


def test_every_content_type(host, httpserver, direct):
    """PDF (labels name the page), JSON, feeds and plain text all answer a question."""
    pdf = make_pdf(
        ["Cover page of the report.", "Chapter two: the budget for bridges is 40 million."]
    )
    feed = (
        "<?xml version='1.0'?><rss version='2.0'><channel><title>News</title>"
        "<item><title>Harbour walls restored</title><link>http://x.test/a</link>"
        "<description>The old walls were restored this spring.</description></item>"
        "<item><title>Ferry timetable changes</title><link>http://x.test/b</link>"
        "<description>The winter ferry leaves at seven.</description></item>"
        "</channel></rss>"
    )
    data = json.dumps({"name": "demo", "settings": {"retries": 5, "timeout_seconds": 30}})
    base = serve(
        httpserver,
        {
            "/r.pdf": (200, "application/pdf", pdf),
            "/feed": (200, "application/rss+xml", feed),
            "/d.json": (200, "application/json", data),
            "/t.txt": (200, "text/plain", FILLER * 5 + "\n\nThe lighthouse opens at nine."),
        },
    )
    asked = {
        "/r.pdf": ("budget for bridges", "40 million"),
        "/feed": ("when does the winter ferry leave", "seven"),
        "/d.json": ("timeout seconds", '"timeout_seconds": 30'),
        "/t.txt": ("when does the lighthouse open", "nine"),
    }
    for path, (question, answer) in asked.items():
        result = host.call("web_fetch", {"urls": [base + path], "question": question})
        assert answer in result.text, (path, result.text)
    pdf_result = host.call("web_fetch", {"urls": [base + "/r.pdf"], "question": "budget bridges"})
    assert re.search(r"^\[offset \d+ · page 2 of 2\]$", pdf_result.text, re.M)


def test_many_urls_share_the_output_limit_and_keep_their_last_line(host, httpserver, direct):
    big = "\n\n".join(
        "```\n" + "\n".join(f"reload step {n}.{i}" for i in range(400)) + "\n```" for n in range(3)
    )
    paths = {f"/big{n}": (200, "text/markdown", big) for n in range(20)}
    base = serve(httpserver, paths)
    urls = [base + path for path in paths]
    result = host.call("web_fetch", {"urls": urls, "question": "reload step"})
    assert not result.is_error
    assert len(result.text.encode()) <= 51200 and result.text.count("\n") < 2000
    assert len(READ_AROUND.findall(result.text)) == 20
    assert "passages cut short" in result.text


def test_the_human_view_shows_the_question_and_how_many_passages(host, guide):
    from pi_web_tools.views.human_view import render_call, render_result

    args = {"urls": [guide], "question": "How do I reload nginx?"}
    result = host.call("web_fetch", args)
    call = render_call("web_fetch", args, PlainTheme())
    assert '"How do I reload nginx?"' in call
    count = len(result.details["urls"][0]["passages"])
    line = render_result("web_fetch", result, RenderOptions(), PlainTheme())
    assert f"{count} passage" in line and "How do I reload nginx?" in line
    expanded = render_result("web_fetch", result, RenderOptions(expanded=True), PlainTheme())
    assert f"· {count} passage" in expanded
    unanswered = host.call("web_fetch", {"urls": [guide], "question": "Kubernetes TLS rotation"})
    line = render_result("web_fetch", unanswered, RenderOptions(), PlainTheme())
    assert "0 passages" in line and "may not answer" in line
    found = host.call("web_fetch", {"urls": [guide], "find": ["reload"]})
    assert "occurrences found" in render_result("web_fetch", found, RenderOptions(), PlainTheme())
    assert '"reload"' in render_call(
        "web_fetch", {"urls": [guide], "find": ["reload"]}, PlainTheme()
    )


def test_text_max_characters_caps_what_the_passages_hold(host, guide):
    result = host.call(
        "web_fetch",
        {"urls": [guide], "question": "How do I reload nginx?", "text_max_characters": 60},
    )
    body = result.text.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
    shown = "\n".join(line for line in body.splitlines() if not line.startswith("["))
    assert len(shown) <= 60
    if "cut here" in body:
        at = int(re.search(r"goes on from offset (\d+)", body).group(1))
        assert GUIDE[at - 5 : at] in shown
    call = json.loads(READ_AROUND.search(result.text).group(1))
    assert call["text_max_characters"] == 60  # the read-around call keeps the window size


def _code_lines_of(section_text: str) -> list[list[str]]:
    """The code blocks of a section as their lines; an unclosed fence is a block that never
    ends (returned with a None last line)."""
    blocks, current = [], None
    for line in section_text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        blocks.append([*current, None])
    return blocks


CODE_LINES = [
    f"step_{i} = reload_worker({i}, graceful=True)  # reload step {i}" for i in range(300)
]


@pytest.mark.parametrize("urls", [1, 12], ids=["text_max_characters", "fair-share-of-many-urls"])
def test_a_code_block_cut_to_fit_stays_a_closed_block_of_whole_lines(
    host, httpserver, direct, urls
):
    """Code is never split into a dangling fence: cut to fit (text_max_characters, or a fair
    share of the output among many URLs), a code block ends at a whole line and is closed, so
    the section's last line (the call that reads on) is not swallowed by the block."""
    page = "\n\n".join(
        [
            "# Workers",
            "How to reload a worker gracefully:",
            "```python\n" + "\n".join(CODE_LINES) + "\n```",
        ]
    )
    paths = {f"/code{n}": (200, "text/markdown", page) for n in range(urls)}
    base = serve(httpserver, paths)
    args = {"urls": [base + path for path in paths], "question": "reload worker step"}
    if urls == 1:
        args["text_max_characters"] = 1000
    result = host.call("web_fetch", args)
    assert not result.is_error, result.text
    sections = re.split(r"(?m)^## \[\d+/\d+\] ", result.text)[1:]
    assert len(sections) == urls
    for section in sections:
        blocks = _code_lines_of(section)
        assert blocks, section
        for block in blocks:
            assert None not in block, f"a code fence left open:\n{section[-400:]}"
            assert all(line in CODE_LINES for line in block), block[-2:]
        assert READ_AROUND.search(section), section[-300:]
    if urls == 1:
        at = int(re.search(r"goes on from offset (\d+)", result.text).group(1))
        assert page[at:].startswith("step_"), page[at - 20 : at + 20]
