"""The GitHub reader against a faithful fake of GitHub at its real URLs (``responses``)."""

from __future__ import annotations

import pytest
from pi_web_tools.api.readers import ReaderError
from pi_web_tools.providers.github import GITHUB

from tests.support.sites import (
    GITHUB_TOKEN,
    OWNER,
    REPO,
    SHA,
    Answer,
    app_source,
    json_answer,
    read_with,
    text_answer,
)

HELLO = f"https://github.com/{OWNER}/{REPO}"


def read(url: str):
    return read_with(GITHUB, url)


def test_a_blob_url_gives_the_files_exact_text_from_the_raw_host(sites):
    reading, web = read(f"{HELLO}/blob/main/src/hello/app.py")
    assert reading.text == app_source()
    assert reading.source == "raw.githubusercontent.com"
    assert web.requests == 1 and sites.log[0]["host"] == "raw.githubusercontent.com"
    assert "src/hello/app.py" in reading.title


def test_a_line_range_gives_those_lines_numbered(sites):
    reading, _ = read(f"{HELLO}/blob/main/src/hello/app.py#L10-L12")
    assert reading.text.splitlines() == [
        "10  value_10 = 10  # line 10",
        "11  value_11 = 11  # line 11",
        "12  value_12 = 12  # line 12",
    ]
    assert any("lines 10-12 of 120" in note for note in reading.notes)


def test_content_at_a_full_sha_is_immutable_and_a_branch_is_not(sites):
    assert read(f"{HELLO}/blob/{SHA}/README.md")[0].immutable
    assert not read(f"{HELLO}/blob/main/README.md")[0].immutable


def test_a_guessed_branch_suggests_the_default_branch_and_close_paths(sites):
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/blob/master/src/hello/app.py")
    error = info.value
    assert error.status == 404 and "default branch is main" in error.message
    assert error.suggestions[0] == f"{HELLO}/blob/main/src/hello/app.py"
    assert len(error.suggestions) <= 5


def test_a_misspelt_path_suggests_paths_that_exist(sites):
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/blob/main/docs/guid.md")
    assert f"{HELLO}/blob/main/docs/guide.md" in info.value.suggestions


def test_a_missing_repository_may_be_private_and_a_token_reads_it(sites, monkeypatch):
    with pytest.raises(ReaderError) as info:
        read(f"https://github.com/{OWNER}/secret")
    assert "or it is private" in info.value.message and "GITHUB_TOKEN" in info.value.message
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    reading, _ = read(f"https://github.com/{OWNER}/secret")
    assert reading.title == f"{OWNER}/secret"


def test_the_token_goes_to_githubs_hosts_only(sites, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", GITHUB_TOKEN)
    read(f"https://github.com/{OWNER}/{REPO}/pull/8")
    read(f"{HELLO}/pull/8.diff")  # redirected to patch-diff.githubusercontent.com
    hosts = {entry["host"] for entry in sites.log}
    assert {"api.github.com", "github.com", "patch-diff.githubusercontent.com"} <= hosts
    assert all(
        entry["headers"].get("authorization") == f"Bearer {GITHUB_TOKEN}" for entry in sites.log
    )


def test_the_token_is_dropped_on_a_redirect_to_another_host(sites, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    sites.routes.append(("elsewhere.example", lambda path, query, headers: text_answer("x")))

    def moved(path, query, headers):
        return Answer(302, {"Location": "https://elsewhere.example/file.py"})

    sites.routes.append(("raw.githubusercontent.com", moved))
    reading, _ = read(f"{HELLO}/blob/main/src/hello/app.py")
    assert reading.text == "x"
    first, second = sites.log
    assert first["headers"]["authorization"] == f"Bearer {GITHUB_TOKEN}"
    assert "authorization" not in second["headers"]


def test_api_requests_use_the_documented_headers(sites):
    read(HELLO)
    api = sites.requests_to("api.github.com")
    assert api and all(r["headers"]["accept"] == "application/vnd.github+json" for r in api)
    assert all(r["headers"]["x-github-api-version"] == "2022-11-28" for r in api)


def test_a_repository_root_gives_its_readme_and_listing(sites):
    reading, web = read(HELLO)
    assert reading.title == f"{OWNER}/{REPO}"
    text = reading.text
    assert "- docs/" in text and "- src/" in text and "- README.md" in text
    assert "## README.md" in text and "pip install hello" in text
    assert "default branch main" in text and "1,234 stars" in text
    assert web.requests == 3  # repository, listing (API); README (raw host)


def test_a_tree_url_gives_the_folders_listing(sites):
    reading, _ = read(f"{HELLO}/tree/main/docs")
    assert "- api/" in reading.text and "- guide.md" in reading.text


def test_a_missing_folder_suggests_folders_that_exist(sites):
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/tree/main/doc")
    assert f"{HELLO}/tree/main/docs" in info.value.suggestions


def test_an_issue_is_read_to_its_last_comment_in_order(sites):
    reading, web = read(f"{HELLO}/issues/7")
    text = reading.text
    assert text.startswith("# Crash when the config is empty (#7)")
    assert "closed on 2026-02-01 (completed)" in text and "labels: bug, config" in text
    positions = [text.index(f"Comment number {n}:") for n in range(1, 131)]
    assert positions == sorted(positions)
    assert "## Comments (130)" in text
    assert web.requests == 3  # the issue and two pages of 100 comments


def test_a_thread_longer_than_the_pages_one_read_takes_says_so(sites, monkeypatch):
    from pi_web_tools.providers import github

    monkeypatch.setattr(github, "MAX_PAGES", 1)  # 100 comments a read, of the issue's 130
    reading, _ = read(f"{HELLO}/issues/7")
    assert "Comment number 100:" in reading.text and "Comment number 101:" not in reading.text
    assert any("the first 100 of its 130 comments" in note for note in reading.notes)


def test_a_pull_request_lists_its_files_review_comments_and_diff(sites):
    reading, _ = read(f"{HELLO}/pull/8")
    text = reading.text
    assert "pull request" in text and "author:lazy-config into octo-org:main" in text
    assert "- modified src/hello/app.py (+10 -2)" in text
    assert "- renamed src/hello/conf.py -> src/hello/config.py" in text
    assert "## Review comments (2)" in text and "Why here?" in text
    assert f"{HELLO}/pull/8.diff" in text


def test_a_pull_request_gives_its_reviews_verdicts_and_summaries(sites):
    text = read(f"{HELLO}/pull/8")[0].text
    assert "## Reviews (2)" in text
    assert "### Changes requested · @reviewer (member) · 2026-02-03" in text
    assert "Please read it in one place." in text
    assert "### Approved · @maintainer (owner) · 2026-02-04" in text
    assert "### Commented" not in text  # an empty review only holds inline comments


def test_a_pull_request_whose_reviews_cannot_be_read_is_read_without_them(sites):
    def api(path, query, headers):
        if path.endswith("/reviews"):
            return json_answer({"message": "Not Found"}, 404)
        return sites._github_api(path, query, headers)

    sites.routes.append((r"api\.github\.com", api))
    reading, _ = read(f"{HELLO}/pull/8")
    assert "## Changed files (3)" in reading.text and "## Reviews" not in reading.text
    assert any("its reviews could not be read" in note for note in reading.notes)


def test_a_pull_request_diff_is_read_as_github_serves_it(sites):
    reading, _ = read(f"{HELLO}/pull/8.diff")
    assert reading.text.startswith("diff --git a/src/hello/app.py")


def test_a_commit_gives_its_message_and_patches(sites):
    reading, _ = read(f"{HELLO}/commit/{SHA}")
    assert reading.text.startswith("# Read the config lazily")
    assert "```diff\n@@ -1,2 +1,2 @@" in reading.text
    assert reading.immutable


def test_releases_latest_and_a_tag(sites):
    assert "Hello 1.1" in read(f"{HELLO}/releases")[0].text
    assert "Hello 1.0" in read(f"{HELLO}/releases")[0].text
    assert "Reads the config lazily." in read(f"{HELLO}/releases/latest")[0].text
    assert "First release." in read(f"{HELLO}/releases/tag/v1.0")[0].text


def test_a_gist_gives_its_files(sites):
    reading, _ = read("https://gist.github.com/gister/aa5a315d61ae9438b18d")
    assert "## hello.py" in reading.text and "print('hello')" in reading.text


def test_a_renamed_repository_is_followed(sites):
    reading, _ = read("https://github.com/old-org/hello/issues/7")
    assert "Crash when the config is empty" in reading.text


@pytest.mark.parametrize(
    "url",
    [
        f"{HELLO}/wiki",
        f"{HELLO}/actions/runs/1",
        f"{HELLO}/discussions/3",
        "https://github.com/octo-org",
        "https://github.com/topics/python",
        f"{HELLO}/issues",
    ],
)
def test_unknown_url_forms_are_left_to_the_usual_fetch(sites, url):
    assert read(url)[0] is None
    assert sites.log == []


def test_the_keyless_limit_says_when_it_resets_and_how_a_token_raises_it(sites):
    sites.github_budget = 0
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/issues/7")
    message = info.value.message
    assert "60 requests an hour without a token" in message
    assert "resets at" in message and "UTC" in message
    assert "GITHUB_TOKEN" in message and "5,000" in message
    assert info.value.fall_back  # the page itself is fetched instead, with this note


def test_a_blob_is_read_while_the_api_limit_is_spent(sites):
    sites.github_budget = 0
    assert read(f"{HELLO}/blob/main/README.md")[0].text.startswith("# Hello")


def test_a_binary_file_is_named_not_shown(sites):
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/blob/main/logo.png")
    assert "binary file (image/png" in info.value.message


def test_a_malformed_api_answer_is_named(sites):
    sites.routes.append(
        ("api.github.com", lambda path, query, headers: json_answer(["not", "an", "issue"]))
    )
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/issues/7")
    assert "unexpected shape" in info.value.message and info.value.fall_back


def test_an_api_answer_that_is_not_json_is_named(sites):
    sites.routes.append(
        (
            "api.github.com",
            lambda path, query, headers: text_answer("<html>oops</html>", kind="text/html"),
        )
    )
    with pytest.raises(ReaderError) as info:
        read(f"{HELLO}/issues/7")
    assert "not JSON" in info.value.message
