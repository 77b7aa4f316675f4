"""The README stays short and every link in it and in docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _links(path: Path) -> list[str]:
    """Every Markdown link target of *path*, outside code blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", path.read_text(encoding="utf-8")))
    return _LINK.findall(text)


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of *path*'s headings."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_the_readme_is_read_in_one_sitting():
    """README.md is at most 400 lines; the rest lives in docs/."""
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"README.md has {lines} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    """Every relative link of the README and of docs/ names a file that exists, and an anchor
    that one of its headings makes."""
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z]+:", target):  # https:, mailto: ...
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(target)
    assert broken == [], f"{page.relative_to(ROOT)}: broken links {broken}"


def test_the_readme_links_every_docs_page():
    """Every page of docs/ is linked from the README, so a newcomer can find it."""
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in _links(README)}
    unlinked = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert unlinked == [], f"docs pages the README does not link: {unlinked}"


def test_the_architecture_tree_names_every_module():
    """docs/architecture.md's tree lists every module of hostspec/ and plugin/ under its folder
    (a package's ``__init__.py`` may be left to its folder's line), and nothing that no longer
    exists."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    tree = text[text.index("```\nhostspec/") + 4 :]
    tree = tree[: tree.index("```")]
    listed, folders = set(), []
    for line in tree.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        name = line.split()[0]
        folders = folders[:depth]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            listed.add("/".join([*folders, name]))
    actual = {
        str(path.relative_to(ROOT))
        for folder in ("hostspec", "plugin")
        for path in (ROOT / folder).rglob("*.py")
    }
    modules = {name for name in actual if not name.endswith("__init__.py")}
    assert sorted(modules - listed) == [], "modules missing from docs/architecture.md"
    assert sorted(listed - actual) == [], "docs/architecture.md lists modules that do not exist"


def test_the_package_face_reexports_exactly_the_provider_api():
    """``pi_web_tools`` exports the provider API's one list (and its version), each name usable."""
    import pi_web_tools
    import pi_web_tools.api as api

    assert set(pi_web_tools.__all__) == {"__version__", *api.__all__}
    for name in api.__all__:
        assert getattr(pi_web_tools, name) is getattr(api, name)


def test_the_provider_guide_names_every_name_of_the_provider_api():
    """docs/writing-a-provider.md mentions every name a provider can import."""
    import re

    import pi_web_tools.api as api

    guide = (ROOT / "docs" / "writing-a-provider.md").read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", guide, flags=re.S)  # inline code, not the code blocks
    spans = " ".join(re.findall(r"`([^`]+)`", prose))
    missing = [name for name in api.__all__ if not re.search(rf"\b{re.escape(name)}\b", spans)]
    assert missing == []


def test_no_page_gives_an_install_command_that_fails_for_a_checkout():
    """pi-web-tools is installed from a checkout (or a git URL), not from an index: a page that
    says `pip install 'pi-web-tools[keyless]'` gives a command that fails (issue 22, item 4)."""
    pages = [*PAGES, ROOT / "sample_config" / "README.md"]
    wrong = re.compile(r"pip install '?pi-web-tools(\[[a-z,]+\])?'?(?! @)")
    found = [
        f"{page.relative_to(ROOT)}: {match.group(0)}"
        for page in pages
        for match in wrong.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    "page",
    [*PAGES, ROOT / "sample_config" / "README.md", ROOT / "examples" / "acme-search" / "README.md"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_table_is_whole(page):
    """Each run of table rows starts with its header and separator: a blank line inside a table
    (as sample_config/README.md had before its last row) makes the rows after it plain text."""
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    runs, run = [], []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            run.append(line.strip())
        elif run:
            runs.append(run)
            run = []
    separator = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
    broken = [run[0][:60] for run in runs if len(run) < 2 or not separator.match(run[1])]
    assert broken == []


@pytest.mark.parametrize(
    "page",
    [*PAGES, ROOT / "sample_config" / "README.md", ROOT / "examples" / "acme-search" / "README.md"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_code_block_is_closed_on_a_line_of_its_own(page):
    """A closing fence with text after it (docs/hosts.md had "``` Arguments are validated")
    does not close the block: the rest of the page renders as code."""
    open_fence = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if open_fence is None:
            if stripped.startswith("```"):
                open_fence = number
        elif stripped.startswith("```"):
            assert stripped == "```", (
                f"line {number}: text after the fence that closes line {open_fence}"
            )
            open_fence = None
    assert open_fence is None, f"the code block opened on line {open_fence} is never closed"


def test_no_page_says_pdfs_are_unsupported():
    """PDFs are read (pages/documents.py): the README's old failure table still called them
    unsupported (issue 22, item 10)."""
    unsupported = re.compile(
        r"PDFs?\b[^.\n|]*\b(unsupported|not supported)|unsupported content type application/pdf",
        re.IGNORECASE,
    )
    found = [
        f"{page.relative_to(ROOT)}: {match.group(0)}"
        for page in PAGES
        for match in unsupported.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert "PDF" in (DOCS / "failure-behaviour.md").read_text(encoding="utf-8")


def test_the_install_section_says_which_python_and_to_make_a_virtualenv():
    """A new user reads, before the first pip command, the Python the package needs (the one
    pyproject.toml requires) and how to make and enter a virtualenv."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    requires = re.search(r'^requires-python = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    section = README.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    version = requires.removeprefix(">=")
    assert f"Python {version} or newer" in section
    assert "python3 -m venv .venv && . .venv/bin/activate" in section
    assert section.index("venv") < section.index("pip install")


def test_security_md_lists_exactly_the_credential_like_parameters():
    """docs/security.md says which parameters keep a URL off the fetch ladder (issue 21,
    Medium 1: "decide the list and document it"): the same names as the code."""
    from pi_web_tools.runtime.handoff import CREDENTIAL_NAMES, CREDENTIAL_PARTS

    text = " ".join((DOCS / "security.md").read_text(encoding="utf-8").split())
    names = text.split("It is credential-like when it is one of", 1)[1]
    names, parts = names.split("or contains one of", 1)
    parts = parts.split("which covers", 1)[0]
    assert set(re.findall(r"`([^`]+)`", names)) == set(CREDENTIAL_NAMES)
    assert set(re.findall(r"`([^`]+)`", parts)) == set(CREDENTIAL_PARTS)


def test_the_provider_tutorial_runs_as_written(tmp_path, monkeypatch):
    """docs/writing-a-provider.md opens with the smallest provider and its test: both blocks,
    written to files as the reader would, import and pass."""
    import importlib
    import re
    import textwrap

    guide = (ROOT / "docs" / "writing-a-provider.md").read_text(encoding="utf-8")
    tutorial = guide[guide.index("## Step by step") : guide.index("## The provider API")]
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", tutorial, re.S)]
    assert len(blocks) == 2
    (tmp_path / "hello_search.py").write_text(blocks[0])
    (tmp_path / "test_hello_search.py").write_text(blocks[1])
    monkeypatch.syspath_prepend(str(tmp_path))
    tests = importlib.import_module("test_hello_search")
    tests.test_hello_follows_the_contract_and_answers()
