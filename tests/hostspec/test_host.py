"""The Host: entry-point discovery, tool collection, validated calls, error mapping, rendering."""

from __future__ import annotations

import sys
import textwrap
import types

import attrs
import pytest
from pi_hostspec import (
    AnsiTheme,
    DuplicateToolError,
    Host,
    PlainTheme,
    RenderOptions,
    SchemaDefinitionError,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    UnknownToolError,
    get_plugin_manager,
    hookimpl,
)

WEB_TOOLS = {"web_search", "web_fetch", "summarize"}

PLUGIN_SOURCE = '''
"""A tiny third-party plugin, found only through its entry point."""
from pi_hostspec import Tool, ToolResult, hookimpl


def _execute(args, ctx):
    return ToolResult(content="echo: " + args["text"])


@hookimpl
def register_tools(register):
    register(Tool(
        name={tool_name!r},
        label="Tiny Echo",
        description="Echo the text back.",
        parameters={{"type": "object", "properties": {{"text": {{"type": "string"}}}},
                    "required": ["text"]}},
        execute=_execute,
    ))
'''


@pytest.fixture
def install_plugin(tmp_path, monkeypatch):
    """Write a plugin module plus a *.dist-info with a pi.plugins entry point onto sys.path."""
    site = tmp_path / "site"
    site.mkdir()
    written = []

    def install(
        module: str = "tiny_pi_plugin", ep_name: str = "tiny", tool_name: str = "tiny_echo"
    ):
        (site / f"{module}.py").write_text(
            PLUGIN_SOURCE.format(tool_name=tool_name), encoding="utf-8"
        )
        dist = site / f"{module.replace('_', '-')}-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n",
            encoding="utf-8",
        )
        (dist / "entry_points.txt").write_text(
            textwrap.dedent(
                f"""\
                [pi.plugins]
                {ep_name} = {module}
                """
            ),
            encoding="utf-8",
        )
        written.append(module)
        return module

    monkeypatch.syspath_prepend(str(site))
    yield install
    for module in written:
        sys.modules.pop(module, None)


def _plugin(name: str, *tools: Tool, render_call=None, render_result=None) -> types.ModuleType:
    """A plugin object (a module) that registers *tools* and optionally renders."""
    module = types.ModuleType(name)

    @hookimpl
    def register_tools(register):
        for tool in tools:
            register(tool)

    module.register_tools = register_tools
    if render_call is not None:
        module.render_call = hookimpl(render_call)
    if render_result is not None:
        module.render_result = hookimpl(render_result)
    return module


def _host(*plugins: types.ModuleType) -> Host:
    pm = get_plugin_manager(load_entrypoints=False)
    for plugin in plugins:
        pm.register(plugin, name=plugin.__name__)
    return Host(pm)


def _tool(name="echo", execute=None, parameters=None, prepare_arguments=None) -> Tool:
    return Tool(
        name=name,
        label=name.title(),
        description=f"The {name} tool.",
        parameters=parameters
        or {
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}},
            "required": ["text"],
            "additionalProperties": False,
        },
        execute=execute or (lambda args, ctx: ToolResult(content=args["text"])),
        prepare_arguments=prepare_arguments,
    )


# --------------------------------------------------------------------------- discovery


def test_real_entry_point_plugin_is_discovered(install_plugin):
    """A plugin declared only in a dist-info's pi.plugins entry point is found, next to the web tools."""
    install_plugin()
    host = Host(get_plugin_manager())
    assert "tiny_echo" in host.tools
    assert WEB_TOOLS <= set(host.tools)
    assert host.tools["tiny_echo"].plugin_name == "tiny"
    assert host.tools["web_search"].plugin_name == "web_tools"
    result = host.call("tiny_echo", {"text": "hi"})
    assert result.is_error is False
    assert result.text == "echo: hi"


def test_default_host_loads_entry_points(install_plugin):
    """Host() without a plugin manager loads the entry points itself."""
    install_plugin()
    assert {"tiny_echo"} | WEB_TOOLS <= set(Host().tools)


def test_disable_env_blocks_plugin_by_entry_point_name(install_plugin, monkeypatch):
    """PI_DISABLE_PLUGINS (comma separated entry-point names) keeps those plugins out."""
    install_plugin()
    monkeypatch.setenv("PI_DISABLE_PLUGINS", " tiny , other")
    tools = set(Host(get_plugin_manager()).tools)
    assert "tiny_echo" not in tools
    assert WEB_TOOLS <= tools
    monkeypatch.setenv("PI_DISABLE_PLUGINS", "web_tools")
    tools = set(Host(get_plugin_manager()).tools)
    assert "tiny_echo" in tools
    assert not (WEB_TOOLS & tools)


def test_blocked_argument_blocks_plugin(install_plugin):
    """get_plugin_manager(blocked=...) blocks by entry-point name too."""
    install_plugin()
    assert "tiny_echo" not in Host(get_plugin_manager(blocked=["tiny"])).tools


def test_entry_point_plugin_clashing_with_web_tools_names_both(install_plugin):
    """A third-party plugin that reuses a web tool's name raises DuplicateToolError naming both plugins."""
    install_plugin(module="clash_pi_plugin", ep_name="clash", tool_name="web_search")
    host = Host(get_plugin_manager())
    with pytest.raises(DuplicateToolError) as info:
        _ = host.tools
    message = str(info.value)
    assert "'web_search'" in message
    assert "web_tools" in message and "clash" in message


def test_duplicate_tool_names_raise_naming_both_plugins():
    """Two plugins registering the same tool name raise DuplicateToolError naming both."""
    host = _host(_plugin("alpha_plugin", _tool("echo")), _plugin("beta_plugin", _tool("echo")))
    with pytest.raises(DuplicateToolError) as info:
        _ = host.tools
    message = str(info.value)
    assert "'echo'" in message
    assert "alpha_plugin" in message and "beta_plugin" in message


def test_registering_a_non_tool_is_rejected():
    """register() accepts only Tool objects."""
    host = _host(_plugin("bad_plugin", "not a tool"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bad_plugin"):
        _ = host.tools


def test_tools_are_collected_with_plugin_name():
    """Collected tools keep their fields and gain the registering plugin's name."""
    tool = _tool("echo")
    host = _host(_plugin("alpha_plugin", tool))
    collected = host.tools["echo"]
    assert collected.plugin_name == "alpha_plugin"
    assert (collected.label, collected.description, collected.parameters) == (
        tool.label,
        tool.description,
        tool.parameters,
    )


# --------------------------------------------------------------------------- calls


def test_unknown_tool_raises_listing_known_names():
    """Calling a tool nobody registered raises UnknownToolError naming the available tools."""
    host = _host(_plugin("alpha_plugin", _tool("echo")))
    with pytest.raises(UnknownToolError, match=r"'nope'.*echo"):
        host.call("nope", {})
    with pytest.raises(UnknownToolError):
        host.get_tool("nope")


def test_successful_call_returns_the_result():
    """A valid call runs execute and returns its result unchanged."""
    host = _host(_plugin("alpha_plugin", _tool("echo")))
    result = host.call("echo", {"text": "hello"})
    assert result == ToolResult(content="hello")


def test_results_are_always_valid_unicode():
    """A tool returning lone surrogates (text, details, an error) gives valid Unicode to the host."""

    def execute(args, ctx):
        if args["text"] == "raise":
            raise ToolError("bad \ud800", details={"k\udc00": ["v\ud800"]})
        return ToolResult(content=["a\ud800", "b"], details={"title": "t\udfff"})

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    ok = host.call("echo", {"text": "x"})
    assert ok.text == "a\ufffd\nb" and ok.details == {"title": "t\ufffd"}
    failed = host.call("echo", {"text": "raise"})
    assert failed.text == "bad \ufffd" and failed.details == {"k\ufffd": ["v\ufffd"]}


def test_validation_error_names_the_field_and_skips_execute():
    """Arguments that break the schema give an error result naming the field; execute never runs."""
    calls = []

    def execute(args, ctx):
        calls.append(args)
        return ToolResult(content="ran")

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    result = host.call("echo", {"text": 5})
    assert result.is_error is True
    assert result.text == "Invalid arguments for echo: text: expected string, got a number"
    missing = host.call("echo", {})
    assert missing.is_error is True
    assert "text: required field is missing" in missing.text
    unknown = host.call("echo", {"text": "x", "extra": 1})
    assert unknown.is_error and "'extra'" in unknown.text
    assert calls == []


def test_prepare_arguments_runs_before_validation():
    """prepare_arguments rewrites raw arguments before they are validated and passed to execute."""
    seen = []

    def prepare(args):
        if isinstance(args, dict) and "query" in args:
            args = {"text": args.pop("query")}
        return args

    def execute(args, ctx):
        seen.append(args)
        return ToolResult(content="ok")

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute, prepare_arguments=prepare)))
    result = host.call("echo", {"query": "folded"})
    assert result.is_error is False
    assert seen == [{"text": "folded"}]


def test_prepare_arguments_failure_is_an_error_result():
    """A prepare_arguments that raises gives a one-line error result, not a crash."""

    def prepare(args):
        raise RuntimeError("cannot prepare\nsecond line")

    host = _host(_plugin("alpha_plugin", _tool("echo", prepare_arguments=prepare)))
    result = host.call("echo", {"text": "x"})
    assert result.is_error is True
    assert result.text == "Invalid arguments for echo: cannot prepare"


def test_tool_error_keeps_message_and_details():
    """A ToolError becomes an error result whose text is the message, with its details kept."""

    def execute(args, ctx):
        raise ToolError("the provider said no", details={"status": 403})

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    result = host.call("echo", {"text": "x"})
    assert result.is_error is True
    assert result.text == "the provider said no"
    assert result.details == {"status": 403}


def test_unexpected_exception_is_one_line_without_traceback():
    """Any other exception becomes a single-line error result naming its type, with no traceback."""

    def execute(args, ctx):
        try:
            {}["missing"]
        except KeyError as exc:
            raise RuntimeError(
                'boom\nTraceback (most recent call last):\n  File "x.py", line 1'
            ) from exc

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    result = host.call("echo", {"text": "x"})
    assert result.is_error is True
    assert "Traceback" not in result.text
    assert "\n" not in result.text
    assert result.text == "echo failed unexpectedly: RuntimeError: boom"
    assert "missing" not in result.text  # nothing of the exception chain


def test_exception_with_empty_message_still_names_its_type():
    """An exception with no message still gives a useful one-line error."""

    def execute(args, ctx):
        raise ValueError()

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    result = host.call("echo", {"text": "x"})
    assert result.is_error is True
    assert "ValueError" in result.text
    assert "\n" not in result.text


def test_non_tool_result_return_is_an_error():
    """A tool returning something other than a ToolResult gives an error result."""
    host = _host(_plugin("alpha_plugin", _tool("echo", execute=lambda args, ctx: "plain string")))
    result = host.call("echo", {"text": "x"})
    assert result.is_error is True
    assert result.text == "echo returned str instead of a ToolResult"


def test_call_passes_the_given_context():
    """The ToolContext given to call() reaches execute; a fresh one is made when none is given."""
    seen = []

    def execute(args, ctx):
        seen.append(ctx)
        return ToolResult(content="ok")

    host = _host(_plugin("alpha_plugin", _tool("echo", execute=execute)))
    ctx = ToolContext()
    host.call("echo", {"text": "x"}, ctx)
    host.call("echo", {"text": "x"})
    assert seen[0] is ctx
    assert isinstance(seen[1], ToolContext) and seen[1] is not ctx


# --------------------------------------------------------------------------- rendering


def test_render_fallbacks_without_renderers():
    """With no renderer the call renders as the tool name and the result as its raw text."""
    host = _host(_plugin("alpha_plugin", _tool("echo")))
    assert host.render_call("echo", {"text": "x"}) == "echo"
    result = ToolResult(content=["line one", "line two"])
    assert host.render_result("echo", result) == "line one\nline two"
    assert host.render_result("echo", ToolResult(content="bad", is_error=True)) == "bad"


def test_render_fallbacks_with_ansi_theme_keep_the_text():
    """The fallbacks go through the theme, so ANSI themes colour them but keep the text."""
    host = _host(_plugin("alpha_plugin", _tool("echo")))
    theme = AnsiTheme()
    assert "echo" in host.render_call("echo", {}, theme)
    assert "\x1b[" in host.render_call("echo", {}, theme)
    assert "raw" in host.render_result("echo", ToolResult(content="raw"), theme=theme)


def test_renderers_are_used_when_present():
    """A plugin's render_call and render_result are used, receiving options and theme."""
    got = {}

    def render_call(tool_name, args, theme):
        return f"CALL {tool_name} {args!r}"

    def render_result(tool_name, result, options, theme):
        got["options"] = options
        got["theme"] = theme
        return f"RESULT {result.text} expanded={options.expanded}"

    host = _host(
        _plugin("alpha_plugin", _tool("echo"), render_call=render_call, render_result=render_result)
    )
    assert host.render_call("echo", {"text": "x"}) == "CALL echo {'text': 'x'}"
    theme = PlainTheme()
    text = host.render_result("echo", ToolResult(content="r"), RenderOptions(expanded=True), theme)
    assert text == "RESULT r expanded=True"
    assert got["theme"] is theme


def test_renderer_returning_none_falls_back():
    """Renderers that return None defer to the fallbacks."""
    host = _host(
        _plugin(
            "alpha_plugin",
            _tool("echo"),
            render_call=lambda tool_name, args, theme: None,
            render_result=lambda tool_name, result, options, theme: None,
        )
    )
    assert host.render_call("echo", {}) == "echo"
    assert host.render_result("echo", ToolResult(content="raw")) == "raw"


def test_raising_renderers_fall_back():
    """Renderers that raise do not break the host: the tool name and the raw text are shown."""

    def render_call(tool_name, args, theme):
        raise RuntimeError("renderer bug")

    def render_result(tool_name, result, options, theme):
        raise AttributeError("renderer bug")

    host = _host(
        _plugin("alpha_plugin", _tool("echo"), render_call=render_call, render_result=render_result)
    )
    assert host.render_call("echo", '{"te') == "echo"  # streaming, incomplete arguments
    assert host.render_result("echo", ToolResult(content="raw text")) == "raw text"


# --------------------------------------------------------------------------- types


def test_tool_result_to_json_shape():
    """to_json gives pi's wire shape: content parts, details and isError."""
    assert ToolResult(content="hi").to_json() == {
        "content": [{"type": "text", "text": "hi"}],
        "details": {},
        "isError": False,
    }
    error = ToolResult(content=["a", "b"], details={"k": 1}, is_error=True).to_json()
    assert error == {
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "details": {"k": 1},
        "isError": True,
    }


def test_tool_result_accepts_dict_parts():
    """Content may be given as {'type','text'} dicts and is normalised to text parts."""
    result = ToolResult(content=[{"type": "text", "text": "x"}])
    assert result.text == "x"
    with pytest.raises(TypeError):
        ToolResult(content=[42])


def test_tool_context_update_calls_on_update():
    """ToolContext.update forwards partial results to on_update, and is a no-op without one."""
    seen = []
    ctx = ToolContext(on_update=seen.append)
    partial = ToolResult(content="partial")
    ctx.update(partial)
    assert seen == [partial]
    ToolContext().update(partial)  # no listener: nothing happens


def test_tool_context_cancelled_reflects_the_event():
    """ToolContext.cancelled is True once the cancel event is set."""
    ctx = ToolContext()
    assert ctx.cancelled is False
    ctx.cancel.set()
    assert ctx.cancelled is True


def test_tool_error_str_is_the_message():
    """str(ToolError) is its message and details default to an empty dict."""
    error = ToolError("nope")
    assert str(error) == "nope"
    assert error.details == {}


def test_tool_name_must_be_model_safe():
    """Tool names must be identifiers a model API accepts."""
    with pytest.raises(ValueError):
        _tool("bad name!")


def test_a_tool_whose_schema_cannot_be_checked_is_refused_at_registration():
    """A schema keyword the host does not enforce stops registration, naming plugin, tool and keyword."""
    parameters = {"type": "object", "properties": {"a": {"type": "string"}}, "if": {}}
    host = _host(_plugin("iffy_plugin", _tool("iffy", parameters=parameters)))
    with pytest.raises(SchemaDefinitionError) as info:
        _ = host.tools
    assert "iffy_plugin" in str(info.value) and "'if'" in str(info.value)


def test_plugins_add_commands_but_cannot_take_core_names():
    """register_commands adds pi-web subcommands; a core name or a duplicate is an error."""
    from pi_hostspec import Command

    def plugin_with(name: str, *commands: Command) -> types.ModuleType:
        module = types.ModuleType(name)

        @hookimpl
        def register_commands(register):
            for command in commands:
                register(command)

        module.register_commands = register_commands
        return module

    hello = Command(name="hello", help="say hello", run=lambda options, cli: 0)
    host = _host(plugin_with("greeter", hello))
    assert host.commands["hello"].plugin_name == "greeter"
    with pytest.raises(ValueError, match="core command 'call'"):
        _ = _host(plugin_with("thief", attrs.evolve(hello, name="call"))).commands
    with pytest.raises(ValueError, match="registered by both"):
        _ = _host(plugin_with("one", hello), plugin_with("two", hello)).commands


def test_collected_tools_keep_their_behaviour_hints():
    """MCP hints declared on a Tool survive collection unchanged."""
    tool = attrs.evolve(_tool("echo"), read_only_hint=True, open_world_hint=False)
    collected = _host(_plugin("alpha_plugin", tool)).tools["echo"]
    assert collected.read_only_hint is True and collected.open_world_hint is False
    assert collected.destructive_hint is None
