"""The llm bridge: our tools inside Simon Willison's `llm` CLI, in-process and end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pi_hostspec import Host, Tool, ToolError, ToolResult, get_plugin_manager, hookimpl

from tests.support import SECRET, kagi_config
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import echo_tool_results as _echo_tool_results
from tests.support.hosts import run_llm as _llm

OUR_TOOLS = {"web_search", "web_fetch", "summarize"}
SEARCH_X = '{"tool_calls": [{"name": "web_search", "arguments": {"queries": ["x"]}}]}'


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


@pytest.fixture
def llm_home(tmp_path) -> Path:
    """llm's own user dir (logs.db, keys.json), kept out of the real one."""
    path = tmp_path / "llm-home"
    path.mkdir()
    return path


# --- end to end: the llm CLI in a subprocess ------------------------------------------------


def test_llm_tools_list_shows_our_tools(llm_home, host):
    """`llm tools list` shows web_search, web_fetch and summarize with our descriptions and schemas."""
    plain = _llm(llm_home, "tools", "list")
    assert plain.returncode == 0, plain.stderr
    for name in OUR_TOOLS:
        assert f"\n{name}(*, " in "\n" + plain.stdout and "(plugin: pi_tools)" in plain.stdout
    listed = _llm(llm_home, "tools", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"] if t["plugin"] == "pi_tools"}
    assert set(tools) == OUR_TOOLS
    for name, tool in tools.items():
        assert tool["description"] == host.tools[name].description
        assert tool["arguments"] == host.tools[name].parameters


def test_llm_echo_runs_web_search(llm_home, kagi):
    """`llm -m echo -T web_search` runs our tool against the loopback Kagi and its text is the tool result."""
    proc = _llm(llm_home, "-m", "echo", "-T", "web_search", SEARCH_X)
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    assert result["name"] == "web_search"
    assert result["output"].startswith("1. x — page 1\n   https://results.example/x/1\n")
    assert 'Related searches for "x": x tutorial; x examples' in result["output"]
    assert [r["json"]["query"] for r in kagi.requests] == ["x"]
    assert SECRET not in proc.stdout + proc.stderr


def test_llm_echo_error_result(llm_home, kagi, write_config):
    """A failing call becomes llm's `Error: ...` tool result, and the key is in no output or llm log."""
    config = kagi_config(kagi.base_url)
    config["providers"][0]["apiKey"] = "wrong-key-123456"
    write_config(config)
    proc = _llm(llm_home, "-m", "echo", "-T", "web_search", SEARCH_X)
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    assert result["output"].startswith(
        "Error: web_search failed: Kagi: both search APIs failed: v1 answered HTTP 401 Unauthorized"
    )
    assert "wrong-key-123456" not in proc.stdout + proc.stderr
    logged = b"".join(p.read_bytes() for p in llm_home.rglob("*") if p.is_file())
    assert b"wrong-key-123456" not in logged and b"web_search failed" in logged


def test_llm_invalid_arguments_are_reported(llm_home, kagi):
    """Arguments that fail our schema come back as `Error: Invalid arguments ...` without calling the API."""
    bad = '{"tool_calls": [{"name": "web_search", "arguments": {"queries": []}}]}'
    proc = _llm(llm_home, "-m", "echo", "-T", "web_search", bad)
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    assert result["output"].startswith("Error: Invalid arguments for web_search: queries")
    assert kagi.requests == []


def test_imports_stay_lazy():
    """Importing pi_hostspec, its CLI and collecting the tools imports neither llm nor mcp."""
    code = (
        "import sys, pi_hostspec, pi_hostspec.cli\n"
        "pi_hostspec.Host().tools\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('llm', 'mcp', 'mcp_types'))\n"
        "print(loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- in process: the hook with a fake register callback ------------------------------------


class _FakePlugin:
    """A pi plugin with one tool that echoes and one that fails."""

    def __init__(self) -> None:
        self.stopped = threading.Event()  # the slow tool saw its cancellation

    @hookimpl
    def register_tools(self, register):
        def slow(args, ctx):
            if ctx.cancel.wait(args.get("seconds", 10)):
                self.stopped.set()
                return ToolResult(content="cancelled", is_error=True)
            return ToolResult(content="slept")

        register(
            Tool(
                name="slow",
                label="Slow",
                description="Sleep, unless cancelled.",
                parameters={"type": "object", "properties": {"seconds": {"type": "number"}}},
                execute=slow,
            )
        )
        schema = {
            "type": "object",
            "properties": {
                "word": {"type": "string", "minLength": 1},
                "times": {"type": "integer"},
            },
            "required": ["word"],
            "additionalProperties": False,
        }

        def shout(args, ctx):
            return ToolResult(content=" ".join([args["word"].upper()] * args.get("times", 1)))

        def broken(args, ctx):
            raise ToolError("the service is down")

        register(
            Tool(
                name="shout",
                label="Shout",
                description="Shout a word.",
                parameters=schema,
                execute=shout,
            )
        )
        register(
            Tool(
                name="broken",
                label="Broken",
                description="Always fails.",
                parameters=schema,
                execute=broken,
            )
        )


@pytest.fixture
def bridge(monkeypatch, llm_home):
    """The bridge module with its process-wide host reset to a fake-plugin host."""
    from pi_hostspec import llm_bridge

    monkeypatch.setenv("LLM_USER_PATH", str(llm_home))

    monkeypatch.setattr(
        llm_bridge,
        "_host",
        Host(get_plugin_manager(load_entrypoints=False, plugins=[_FakePlugin()])),
    )
    monkeypatch.setattr(llm_bridge, "_warned", False)
    return llm_bridge


def _registered(bridge) -> dict:
    tools = {}
    bridge.register_tools(
        register=lambda tool, name=None: tools.__setitem__(name or tool.name, tool)
    )
    return tools


def test_bridge_registers_llm_tools(bridge):
    """Every host tool is registered as an llm.Tool with its name, description and JSON Schema."""
    import llm

    tools = _registered(bridge)
    assert set(tools) == {"shout", "broken", "slow"}
    shout = tools["shout"]
    assert isinstance(shout, llm.Tool)
    assert shout.description == "Shout a word."
    assert shout.input_schema == bridge._host.tools["shout"].parameters
    assert (
        str(__import__("inspect").signature(shout.implementation))
        == "(*, word: str, times: int = None)"
    )


def test_bridge_implementation_runs_through_host(bridge):
    """The implementation (a coroutine function: llm awaits it, or runs it with asyncio.run in
    sync chains) returns the result text; errors and invalid arguments raise with the host's
    message."""
    import asyncio

    tools = _registered(bridge)
    assert asyncio.run(tools["shout"].implementation(word="hi", times=2)) == "HI HI"
    with pytest.raises(bridge.PiToolError, match="^the service is down$"):
        asyncio.run(tools["broken"].implementation(word="hi"))
    with pytest.raises(bridge.PiToolError, match="^Invalid arguments for shout: "):
        asyncio.run(tools["shout"].implementation(word=""))
    with pytest.raises(bridge.PiToolError, match="^Invalid arguments for shout: "):
        asyncio.run(tools["shout"].implementation(word="hi", extra=1))


def test_bridge_chain_with_echo_model(bridge):
    """Through llm's own chain, an error result reaches the model as `Error: <message>`."""
    import llm

    tools = list(_registered(bridge).values())
    prompt = json.dumps(
        {
            "tool_calls": [
                {"name": "shout", "arguments": {"word": "ok"}},
                {"name": "broken", "arguments": {"word": "x"}},
            ]
        }
    )
    responses = list(llm.get_model("echo").chain(prompt, tools=tools).responses())
    outputs = {r.name: r.output for r in responses[-1].prompt.tool_results}
    assert outputs == {"shout": "OK", "broken": "Error: the service is down"}


def test_bridge_survives_a_broken_host(bridge, monkeypatch, capsys):
    """When the host cannot be built, nothing is registered, llm keeps working and one line goes to stderr."""
    import pi_hostspec.host

    def explode(*args, **kwargs):
        raise RuntimeError("plugin 'bad' failed to import\ntraceback ...")

    monkeypatch.setattr(bridge, "_host", None)
    monkeypatch.setattr(pi_hostspec.host, "Host", explode)
    assert _registered(bridge) == {}
    assert _registered(bridge) == {}
    err = capsys.readouterr().err
    assert err == "pi-web-tools: no pi tools registered with llm: plugin 'bad' failed to import\n"


# --- issue 33, item 4: async chains ----------------------------------------------------------


def _slow_call(seconds: float) -> str:
    return json.dumps({"tool_calls": [{"name": "slow", "arguments": {"seconds": seconds}}]})


def test_an_async_chain_keeps_its_event_loop_running_during_a_call(bridge):
    """llm's async API: while our tool runs 2 s in an async chain, a 0.1 s ticker on the same
    loop keeps ticking (it ran once during a blocking call, about 20 times expected)."""
    import asyncio

    import llm

    tools = [tool for name, tool in _registered(bridge).items() if name == "slow"]
    ticks = []

    async def scenario() -> str:
        async def ticker():
            while True:
                await asyncio.sleep(0.1)
                ticks.append(time.monotonic())

        running = asyncio.create_task(ticker())
        chain = llm.get_async_model("echo").chain(_slow_call(2.0), tools=tools)
        text = await chain.text()
        running.cancel()
        return text

    text = asyncio.run(scenario())
    assert "slept" in text
    assert len(ticks) >= 10, len(ticks)


def test_cancelling_an_async_chain_reaches_the_call(bridge):
    """Cancelling the task of an async chain 0.5 s into a 10 s call ends it at once, and the
    tool is told to stop (its ToolContext is cancelled); before, the cancellation took effect
    only when the tool returned."""
    import asyncio

    import llm

    tools = [tool for name, tool in _registered(bridge).items() if name == "slow"]
    plugin = next(iter(bridge._host.pm.get_plugins()))

    async def scenario() -> float:
        chain = llm.get_async_model("echo").chain(_slow_call(10.0), tools=tools)
        task = asyncio.create_task(chain.text())
        await asyncio.sleep(0.5)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 1.0
    assert plugin.stopped.wait(2.0), "the tool never heard of the cancellation"


# --- issue 33, item 5: another llm plugin with the same tool names ---------------------------


def _exa_like_plugin(tmp_path: Path) -> Path:
    """A folder for PYTHONPATH holding an installed-looking llm plugin that registers its own
    `web_search` (as llm-tools-exa does)."""
    from tests.support.hosts import declare_distribution

    site = tmp_path / "site"
    site.mkdir()
    (site / "llm_tools_fakeexa.py").write_text(
        "import llm\n\n\n"
        "def web_search(query: str) -> str:\n"
        '    """Search with the other plugin."""\n'
        '    return "the other plugin answered"\n\n\n'
        "@llm.hookimpl\n"
        "def register_tools(register):\n"
        "    register(web_search)\n"
    )
    declare_distribution(site, "llm_tools_fakeexa-0.1", "llm", "tools_fakeexa", "llm_tools_fakeexa")
    return site


def test_a_name_clash_with_another_llm_plugin_is_said_once_and_a_prefix_picks_ours(
    llm_home, kagi, tmp_path, monkeypatch
):
    """With a plugin that registers `web_search` too, `llm tools list` says so once on stderr
    with the way to pick ours; with PI_WEB_LLM_PREFIX=pi_ our tools are pi_web_search, ... and
    `-T pi_web_search` runs ours, with no warning."""
    monkeypatch.setenv("PYTHONPATH", str(_exa_like_plugin(tmp_path)))
    listed = _llm(llm_home, "tools", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.count("another llm plugin registers tools named like ours") == 1
    assert "web_search (also from plugin" in listed.stderr
    assert "run: export PI_WEB_LLM_PREFIX=pi_ " in listed.stderr  # a shell's `set` would not do
    assert "-T pi_web_search" in listed.stderr
    monkeypatch.setenv("PI_WEB_LLM_PREFIX", "pi_")
    prefixed = _llm(llm_home, "tools", "list", "--json")
    assert prefixed.returncode == 0 and prefixed.stderr == "", prefixed.stderr
    ours = {t["name"] for t in json.loads(prefixed.stdout)["tools"] if t["plugin"] == "pi_tools"}
    assert ours == {"pi_web_search", "pi_web_fetch", "pi_summarize"}
    call = json.dumps({"tool_calls": [{"name": "pi_web_search", "arguments": {"queries": ["x"]}}]})
    proc = _llm(llm_home, "-m", "echo", "-T", "pi_web_search", call)
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    assert result["output"].startswith("1. x — page 1")
