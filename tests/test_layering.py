"""The import layering is a checked fact: every import (function-local ones included) points
down, and no module imports itself back through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"pi_hostspec": ROOT / "hostspec", "pi_web_tools": ROOT / "plugin"}

#: Each module's layer: a module may import only modules of lower layers. The host contract
#: (pi_hostspec) sits below the plugin; in the plugin, the provider API and its small helpers sit
#: at the bottom, providers above the HTTP layer but below config, registry, tools and views.
LAYERS = {
    "pi_hostspec.install": 0,
    "pi_hostspec.limits": 0,
    "pi_hostspec.sanitize": 0,
    "pi_hostspec.schema": 0,
    "pi_hostspec.theme": 0,
    "pi_hostspec.types": 0,
    "pi_hostspec.hookspecs": 1,
    "pi_hostspec.truncate": 1,
    "pi_hostspec.host": 2,
    "pi_hostspec.mcp_server": 3,
    "pi_hostspec.llm_bridge": 3,
    "pi_hostspec.mcp_http": 4,
    "pi_hostspec.cli": 5,
    "pi_hostspec": 6,
    "pi_web_tools.version": 10,
    "pi_web_tools.defaults": 10,
    "pi_web_tools.budget": 10,
    "pi_web_tools.cache": 11,
    "pi_web_tools.errors": 10,
    "pi_web_tools.secrets": 10,
    "pi_web_tools.retry": 10,
    "pi_web_tools.api": 11,
    "pi_web_tools.hookspecs": 12,
    "pi_web_tools.http": 12,
    "pi_web_tools.netguard": 12,
    "pi_web_tools.charsets": 10,
    "pi_web_tools.extraction": 10,
    "pi_web_tools.content": 11,
    "pi_web_tools.documents": 12,
    "pi_web_tools.workers": 12,
    "pi_web_tools.providers": 13,
    "pi_web_tools.providers.kagi": 13,
    "pi_web_tools.providers.exa": 13,
    "pi_web_tools.providers.direct": 13,
    "pi_web_tools.providers.brave": 13,
    "pi_web_tools.providers.tavily": 13,
    "pi_web_tools.providers.ddgs": 13,
    "pi_web_tools.config": 14,
    "pi_web_tools.registry": 15,
    "pi_web_tools.format": 16,
    "pi_web_tools.render": 16,
    "pi_web_tools.report": 16,
    "pi_web_tools.testing": 16,
    "pi_web_tools.tools": 17,
    "pi_web_tools.tools.common": 17,
    "pi_web_tools.tools.web_search": 18,
    "pi_web_tools.tools.web_fetch": 18,
    "pi_web_tools.tools.summarize": 18,
    "pi_web_tools.commands": 19,
    "pi_web_tools.plugin": 20,
    "pi_web_tools": 21,
}


def _modules() -> dict[str, Path]:
    found = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = [p for p in path.relative_to(root).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module of ours that *path* imports, anywhere in the file."""
    found = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names]
            hits = [sub for sub in subs if sub in modules]
            if len(hits) < len(subs) and target in modules:
                hits.append(target)
            found.update(hits)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
    found.discard(name)
    return found


MODULES = _modules()
GRAPH = {name: _imports(name, path, MODULES) for name, path in MODULES.items()}


def test_every_module_has_a_layer():
    """A new module must be placed in LAYERS (deciding what it may import)."""
    assert sorted(set(MODULES) - set(LAYERS)) == []
    assert sorted(set(LAYERS) - set(MODULES)) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    """A module imports only modules of lower layers (no upward import, no import sideways)."""
    upward = sorted(
        target for target in GRAPH[name] if LAYERS.get(target, 99) >= LAYERS.get(name, -1)
    )
    assert upward == [], f"{name} (layer {LAYERS.get(name)}) imports {upward}"


def test_the_host_contract_never_names_the_plugin():
    """pi_hostspec neither imports nor names pi_web_tools (the contract knows no plugin)."""
    for name, path in MODULES.items():
        if name.startswith("pi_hostspec"):
            assert "pi_web_tools" not in path.read_text(encoding="utf-8"), name


def test_no_import_cycle():
    """The import graph has no cycle (checked independently of the layer table)."""
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in GRAPH[node]:
            if state.get(target) == 1:
                cycle = trail[trail.index(target) :] + [target] if target in trail else [target]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [node])


def test_providers_use_only_the_provider_api_layer():
    """Built-in providers import nothing above the HTTP layer: they are written exactly as a
    third party would write them."""
    for name in MODULES:
        if name.startswith("pi_web_tools.providers."):
            above = [t for t in GRAPH[name] if LAYERS[t] > LAYERS["pi_web_tools.providers"]]
            assert above == [], f"{name} imports {above}"
