"""The Stack Exchange reader against a faithful fake of the Stack Exchange API."""

from __future__ import annotations

import time

import pytest
from pi_web_tools.api.readers import ReaderError
from pi_web_tools.providers import stackexchange
from pi_web_tools.providers.stackexchange import STACKEXCHANGE

from tests.support.sites import read_with

QUESTION = "https://stackoverflow.com/questions/11227809/why-is-processing-a-sorted-array-faster"


@pytest.fixture(autouse=True)
def no_backoff():
    stackexchange._backoff_until.clear()
    yield
    stackexchange._backoff_until.clear()


def test_a_question_gives_its_answers_by_score_with_the_accepted_one_marked(sites):
    reading, web = read_with(STACKEXCHANGE, QUESTION)
    text = reading.text
    assert text.startswith(
        "# Why is processing a sorted array faster than processing an unsorted array?"
    )
    assert "```cpp\nfor (unsigned c = 0; c < arraySize; ++c)" in text
    first = text.index("### Answer 1 · accepted · score 34000 · by Mysticial")
    second = text.index("### Answer 2 · score 4500")
    assert first < second < text.index("### Answer 3 · score 3000")
    assert "```\nif (data[c] >= 128)\n    sum += data[c];\n```" in text
    assert web.requests == 2
    questions, answers = sites.log
    assert questions["query"] == {"site": "stackoverflow.com", "filter": "withbody"}
    assert answers["query"]["sort"] == "votes" and answers["query"]["filter"] == "withbody"


def test_the_question_page_itself_is_never_asked_for(sites):
    read_with(STACKEXCHANGE, QUESTION)
    assert {entry["host"] for entry in sites.log} == {"api.stackexchange.com"}


def test_answers_are_read_page_after_page(sites, monkeypatch):
    monkeypatch.setattr(stackexchange, "PAGE_SIZE", 2)
    reading, web = read_with(STACKEXCHANGE, QUESTION)
    assert "### Answer 3" in reading.text and web.requests == 3


def test_answers_past_the_pages_read_are_said_not_dropped_silently(sites, monkeypatch):
    monkeypatch.setattr(stackexchange, "PAGE_SIZE", 1)
    monkeypatch.setattr(stackexchange, "MAX_PAGES", 2)
    reading, web = read_with(STACKEXCHANGE, QUESTION)
    assert "### Answer 2" in reading.text and "### Answer 3" not in reading.text
    assert any(note.startswith("showing the 2 highest-scored answers of 3") for note in reading.notes)


def test_a_question_read_whole_has_no_note_about_the_rest(sites):
    reading, _ = read_with(STACKEXCHANGE, QUESTION)
    assert not any("highest-scored" in note for note in reading.notes)


def test_an_answer_link_reads_its_question(sites):
    reading, _ = read_with(STACKEXCHANGE, "https://stackoverflow.com/a/11227832")
    assert "### Answer 1 · accepted" in reading.text


def test_a_backoff_is_waited_out_before_the_same_method_is_asked_again(sites):
    sites.se_backoff = 1
    read_with(STACKEXCHANGE, QUESTION)
    started = time.monotonic()
    read_with(STACKEXCHANGE, QUESTION)
    assert time.monotonic() - started >= 0.9


def test_a_backoff_longer_than_the_call_is_said_not_waited(sites):
    sites.se_backoff = 60
    read_with(STACKEXCHANGE, QUESTION)
    with pytest.raises(ReaderError) as info:
        read_with(STACKEXCHANGE, QUESTION, seconds=5)
    assert "backoff" in info.value.message and info.value.status == 429


def test_a_spent_quota_is_a_clear_message(sites):
    sites.se_quota = 0
    with pytest.raises(ReaderError) as info:
        read_with(STACKEXCHANGE, QUESTION)
    assert "300 a day without a key" in info.value.message and "76327 seconds" in info.value.message


def test_few_requests_left_are_noted(sites):
    sites.se_quota = 10
    reading, _ = read_with(STACKEXCHANGE, QUESTION)
    assert any("more requests today" in note for note in reading.notes)


def test_a_missing_question_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(STACKEXCHANGE, "https://stackoverflow.com/questions/1/nothing")
    assert info.value.status == 404


def test_pages_that_are_not_questions_are_left_to_the_usual_fetch(sites):
    assert read_with(STACKEXCHANGE, "https://stackoverflow.com/tags")[0] is None
    assert read_with(STACKEXCHANGE, "https://unix.stackexchange.com/users/1/x")[0] is None
    assert sites.log == []


def test_a_site_the_api_does_not_know_falls_back(sites):
    with pytest.raises(ReaderError) as info:
        read_with(STACKEXCHANGE, "https://cooking.stackexchange.com/questions/5/eggs")
    assert info.value.fall_back and "bad_parameter" in info.value.message
