"""The browser fetcher's set-up path, with no browser needed: what `pi-web config` says is
missing and the one command that fixes it, and that nothing of the browser loads at start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pi_web_tools.providers import browser


@pytest.fixture
def no_browser(monkeypatch, tmp_path):
    """No browser on the PATH, none of Playwright's own; *tools* names the programs found."""
    tools: set[str] = set()
    monkeypatch.setattr(
        browser.shutil, "which", lambda name: f"/usr/bin/{name}" if name in tools else None
    )
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "none"))
    return tools


@pytest.mark.parametrize(
    ("platform", "family", "tools", "euid", "command"),
    [
        ("linux", None, {"apt-get"}, 1000, "sudo apt-get install chromium"),
        ("linux", None, {"apt-get"}, 0, "apt-get install chromium"),
        ("linux", None, {"dnf"}, 1000, "sudo dnf install chromium"),
        ("linux", "debian", set(), 1000, "sudo apt-get install chromium"),  # PATH lacks apt-get
        ("linux", "fedora", set(), 0, "dnf install chromium"),
        ("darwin", None, {"brew"}, 501, "brew install --cask chromium"),
        ("win32", None, set(), None, "-m playwright install chromium"),
        ("linux", None, set(), 1000, "-m playwright install chromium"),
    ],
)
def test_a_missing_browser_names_the_one_command_for_this_machine(
    no_browser, monkeypatch, platform, family, tools, euid, command
):
    no_browser.update(tools)
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(browser, "linux_family", lambda: family)
    if euid is None:
        monkeypatch.delattr(browser.os, "geteuid", raising=False)
    else:
        monkeypatch.setattr(browser.os, "geteuid", lambda: euid, raising=False)
    problem = browser.setup_problem()
    assert problem.startswith("no Chromium or Chrome found; install one with: ")
    said = problem.split("install one with: ", 1)[1].split(" (or set", 1)[0]
    assert said.endswith(command)
    if "playwright" in command:
        assert said.startswith(sys.executable) or said.startswith(f'"{sys.executable}"')


@pytest.mark.parametrize(
    ("os_release", "family"),
    [
        ('ID=debian\nVERSION_ID="12"\n', "debian"),
        ("ID=ubuntu\nID_LIKE=debian\n", "debian"),
        ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "debian"),
        ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "fedora"),
        ("ID=arch\n", None),
    ],
)
def test_the_linux_family_comes_from_os_release(tmp_path, os_release, family):
    path = tmp_path / "os-release"
    path.write_text(os_release)
    assert browser.linux_family(str(path)) == family
    assert browser.linux_family(str(tmp_path / "none")) is None


def test_a_missing_certificate_library_names_the_install_command(monkeypatch):
    """The browser's proxy makes its certificate with cryptography (the browser extra brings
    it): without it, the same one command."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "cryptography" else real(name, *a),
    )
    problem = browser.setup_problem()
    assert problem.startswith("the browser fetcher needs cryptography; install it with: ")
    assert "[browser]" in problem


def test_a_missing_driver_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "playwright", None)  # import fails
    problem = browser.setup_problem()
    assert problem.startswith("the browser fetcher needs Playwright; install it with: ")
    assert "[browser]" in problem


def test_an_executable_path_that_is_not_there_is_named(tmp_path):
    missing = str(tmp_path / "no-chrome")
    assert browser.setup_problem(missing) == (
        f"no browser at executablePath {missing!r}; point it at Chromium or Chrome"
    )


def test_nothing_of_the_browser_loads_until_a_call_needs_it(write_config):
    """Loading the tools and a config with a browser fetcher imports no Playwright."""
    write_config({"providers": [{"name": "chrome", "type": "browser"}]})
    code = (
        "import sys, pi_hostspec, pi_hostspec.cli\n"
        "from pi_web_tools.runtime.registry import resolve_provider\n"
        "pi_hostspec.Host().tools\n"
        "resolve_provider('fetch', 'chrome')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('playwright', 'greenlet')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


class _FakeChromium:
    """Playwright's chromium launcher, recording each launch; *refuse* fails sandboxed ones."""

    def __init__(self, refuse: bool):
        self.refuse = refuse
        self.launches: list[bool] = []

    async def launch(self, *, chromium_sandbox: bool, **options):
        self.launches.append(chromium_sandbox)
        if chromium_sandbox and self.refuse:
            raise RuntimeError("No usable sandbox! Update your kernel ...")
        return _FakeBrowser()


class _FakeBrowser:
    def is_connected(self) -> bool:
        return True

    async def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("euid", "refuse", "launches", "sandboxed"),
    [
        (1000, False, [True], True),  # an ordinary user: in the sandbox
        (1000, True, [True, False], False),  # no namespaces (a container): without
        (0, False, [False], False),  # root: Chromium refuses the sandbox
    ],
)
def test_the_browser_runs_in_its_sandbox_where_it_can(
    monkeypatch, euid, refuse, launches, sandboxed
):
    import asyncio
    from types import SimpleNamespace

    monkeypatch.setattr(browser.os, "geteuid", lambda: euid, raising=False)
    chromium = _FakeChromium(refuse)
    engine = browser._Engine.__new__(browser._Engine)
    engine.playwright = SimpleNamespace(chromium=chromium)
    engine.browsers = {}
    engine.launches = 0
    engine.starting = None
    engine.memory = None
    engine.network = None  # the loop's default executor
    engine.nowhere = SimpleNamespace(getsockname=lambda: ("127.0.0.1", 9))
    launched = asyncio.run(engine.browser("/usr/bin/chromium"))
    assert chromium.launches == launches
    assert launched.sandboxed is sandboxed
