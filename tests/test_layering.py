"""The import layering is a checked fact: every import (function-local ones included) points
down, and no module imports itself back through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"pi_hostspec": ROOT / "hostspec", "pi_web_tools": ROOT / "plugin"}

#: The host contract's modules, in layers: a module may import only modules of lower layers.
HOST_LAYERS = {
    "pi_hostspec.install": 0,
    "pi_hostspec.lazy": 0,
    "pi_hostspec.limits": 0,
    "pi_hostspec.loading": 0,
    "pi_hostspec.sanitize": 0,
    "pi_hostspec.schema": 0,
    "pi_hostspec.stdout": 0,
    "pi_hostspec.theme": 0,
    "pi_hostspec.types": 0,
    "pi_hostspec.tokens": 0,
    "pi_hostspec.hookspecs": 1,
    "pi_hostspec.truncate": 1,
    "pi_hostspec.host": 2,
    "pi_hostspec.mcp_server": 3,
    "pi_hostspec.llm_bridge": 3,
    "pi_hostspec.mcp_http": 4,
    "pi_hostspec.cli": 5,
    "pi_hostspec": 6,
}

#: The plugin's folders are its layers, bottom first: a module imports only modules of its own
#: folder or of folders before it (the host contract sits below them all). The loose modules at
#: the top (the hook implementation, the provider author's test kit, the package face) may import
#: any folder.
FOLDERS = ("api", "pages", "providers", "runtime", "tools", "views")
LOOSE = {"pi_web_tools.plugin": 7, "pi_web_tools.testing": 7, "pi_web_tools": 8}

#: The named exceptions to "built-in providers import only api/": the two fetchers that download
#: or render bodies on this machine themselves (direct, browser) turn them into text through the
#: page pipeline's entry. No other provider may import anything outside api/.
PROVIDER_EXCEPTIONS = {
    "pi_web_tools.providers.direct": {"pi_web_tools.pages"},
    "pi_web_tools.providers.browser": {
        "pi_web_tools.pages",
        "pi_web_tools.providers._browser_proxy",  # its own guarded proxy, which imports only api/
    },
}
#: The same two fetchers are the named exceptions to "a provider imports only names of the
#: api face": they drive the transport and the network guard themselves.
FACE_EXCEPTIONS = {
    "pi_web_tools.providers.direct",
    "pi_web_tools.providers.browser",
    "pi_web_tools.providers._browser_proxy",
}


def _layer(name: str) -> float:
    if name in HOST_LAYERS:
        return HOST_LAYERS[name] / 10  # every host module sits below the plugin's first folder
    if name in LOOSE:
        return LOOSE[name]
    parts = name.split(".")
    if parts[0] == "pi_web_tools" and len(parts) >= 2 and parts[1] in FOLDERS:
        return FOLDERS.index(parts[1]) + 1
    return 99


def _folder(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "pi_web_tools" and len(parts) > 1 else name


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
    """Every module of the plugin lives in a layer folder or is one of the few loose ones; every
    host module is in the host's table."""
    assert sorted(name for name in MODULES if _layer(name) == 99) == []
    assert sorted(set(HOST_LAYERS) - set(MODULES)) == []


def test_the_plugin_has_at_most_a_few_loose_modules():
    """plugin/ holds folders and at most three loose modules besides the package face."""
    loose = sorted(n for n in MODULES if n.startswith("pi_web_tools") and n.count(".") == 1)
    loose = [n for n in loose if n.split(".")[1] not in FOLDERS]
    assert loose == sorted(set(LOOSE) - {"pi_web_tools"})


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    """A module imports only modules of its own folder or of folders below it (host modules:
    only lower host layers)."""
    if name in HOST_LAYERS:
        wrong = sorted(t for t in GRAPH[name] if HOST_LAYERS.get(t, 99) >= HOST_LAYERS[name])
    else:
        wrong = sorted(
            t
            for t in GRAPH[name]
            if _layer(t) > _layer(name)
            or (_layer(t) == _layer(name) and _folder(t) != _folder(name))
        )
    assert wrong == [], f"{name} (layer {_layer(name)}) imports {wrong}"


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
    """Built-in providers import only api/ and the host contract (the named fetchers also the page
    pipeline's entry): they are written exactly as a third party would write them."""
    assert set(PROVIDER_EXCEPTIONS) <= set(MODULES)
    for name in MODULES:
        if name.startswith("pi_web_tools.providers."):
            other = [
                t
                for t in GRAPH[name]
                if t.startswith("pi_web_tools")
                and not t.startswith("pi_web_tools.api")
                and t not in PROVIDER_EXCEPTIONS.get(name, set())
            ]
            assert other == [], f"{name} imports {other}"


def _beside_the_face(name: str, path: Path) -> list[str]:
    """What module *name* imports from the provider API other than a name of ``api.__all__``
    through the face (``from ..api import X``, ``from pi_web_tools import X``)."""
    import pi_web_tools.api as api

    package = name.split(".")[:-1]
    wrong = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wrong += [a.name for a in node.names if a.name.startswith("pi_web_tools.api")]
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target in ("pi_web_tools.api", "pi_web_tools"):
            wrong += [f"{target}.{a.name}" for a in node.names if a.name not in api.__all__]
        elif target.startswith("pi_web_tools.api."):
            wrong.append(target)
    return wrong


@pytest.mark.parametrize(
    "name", sorted(n for n in MODULES if n.startswith("pi_web_tools.providers."))
)
def test_providers_import_only_the_names_of_the_api_face(name):
    """A built-in provider imports from the provider API only names in ``api.__all__``, through
    the face, as a third party does: never a module of api/ (the transport and the network
    guard are private by name). direct and browser are the named exceptions."""
    if name in FACE_EXCEPTIONS:
        return
    assert _beside_the_face(name, MODULES[name]) == []


def test_the_face_rule_catches_a_provider_that_imports_beside_it(tmp_path):
    """A planted provider importing the transport module, or a name the face does not export,
    is caught."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from ..api import HttpClient, option\n"
        "from ..api._http_client import read_body\n"
        "from pi_web_tools import check_response\n"
    )
    assert _beside_the_face("pi_web_tools.providers.planted", planted) == [
        "pi_web_tools.api._http_client",
        "pi_web_tools.check_response",
    ]
