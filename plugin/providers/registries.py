"""Package registries as site readers: PyPI project pages through PyPI's JSON API, npm package
pages through the npm registry (npmjs.com's pages answer bots with 403).

Each page gives the facts a coding agent looks for (version, summary, the Python or Node
versions it needs, dependencies, links) and then the package's README as its authors wrote it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ..api import Reader, ReaderError, Reading, hookimpl, list_field, text_field

__all__ = ["NPM", "PYPI", "read_npm", "read_pypi"]

PYPI_API = "https://pypi.org/pypi"
NPM_REGISTRY = "https://registry.npmjs.org"
#: The largest registry answer read (npm documents of big packages run to megabytes).
MAX_BYTES = 16 * 1024 * 1024
_PYPI_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_NPM_NAME = re.compile(r"^(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*$", re.I)


def _object(response: Any, where: str, what: str) -> dict:
    data = response.json()
    if not isinstance(data, dict):
        raise ReaderError(
            f"{where} answered an unexpected shape for {what}", code="bad-answer", fall_back=True
        )
    return data


def _failure(response: Any, where: str, what: str) -> ReaderError:
    if response.status == 429:
        return ReaderError(
            f"{where} is rate limiting requests (HTTP 429); try again shortly",
            status=429,
            fall_back=True,
        )
    return ReaderError(
        f"{where} answered HTTP {response.status} for {what}",
        status=response.status,
        fall_back=True,
    )


# --- PyPI -------------------------------------------------------------------------------------


def read_pypi(url: str, web: Any) -> Reading | None:
    """``pypi.org/project/{name}/`` (and ``/{version}/``) through ``/pypi/{name}/json``."""
    segments = [unquote(s) for s in urlsplit(url).path.split("/") if s]
    if len(segments) < 2 or segments[0] != "project" or not _PYPI_NAME.match(segments[1]):
        return None
    name = segments[1]
    version = (
        segments[2] if len(segments) > 2 and segments[2] not in ("#history", "history") else None
    )
    if version is not None and not re.fullmatch(r"[\w.+!-]{1,64}", version):
        return None
    path = f"{PYPI_API}/{quote(name)}" + (f"/{quote(version)}" if version else "") + "/json"
    response = web.get(path, max_bytes=MAX_BYTES, source="PyPI's JSON API")
    what = f"{name} {version}" if version else name
    if response.status == 404:
        raise ReaderError(
            f"HTTP 404: PyPI has no project {what}"
            + ("" if version else " (check the spelling; web_search can find the package's name)"),
            status=404,
            code="not-found",
        )
    if not response.ok:
        raise _failure(response, "PyPI", what)
    data = _object(response, "PyPI", what)
    info = data.get("info")
    if not isinstance(info, dict) or not text_field(info.get("name")):
        raise ReaderError(
            f"PyPI answered an unexpected shape for {what} (no info.name)",
            code="bad-answer",
            fall_back=True,
        )
    return Reading(
        title=f"{info['name']} {info.get('version') or ''}".strip() + " · PyPI",
        text=_pypi_text(info, data),
    )


def _pypi_text(info: dict, data: dict) -> str:
    lines = [f"# {info['name']} {info.get('version') or ''}".rstrip()]
    if text_field(info.get("summary")):
        lines += ["", info["summary"].strip()]
    facts = []
    if text_field(info.get("requires_python")):
        facts.append(f"Requires Python: {info['requires_python']}")
    licence = text_field(info.get("license_expression")) or text_field(info.get("license"))
    if licence and len(licence) <= 120:
        facts.append(f"License: {licence}")
    files = [f for f in list_field(data.get("urls")) if isinstance(f, dict)]
    uploaded = sorted(text_field(f.get("upload_time_iso_8601")) or "" for f in files)
    if uploaded and uploaded[0]:
        facts.append(f"Released: {uploaded[0][:10]}")
    if info.get("yanked") is True:
        facts.append(
            "Yanked"
            + (f": {info['yanked_reason']}" if text_field(info.get("yanked_reason")) else "")
        )
    releases = data.get("releases")
    if isinstance(releases, dict) and releases:
        facts.append(f"{len(releases)} releases")
    if facts:
        lines += [""] + facts
    requires = [r for r in list_field(info.get("requires_dist")) if isinstance(r, str)]
    if requires:
        lines += ["", "Dependencies:"] + [f"- {r}" for r in requires]
    links = info.get("project_urls") if isinstance(info.get("project_urls"), dict) else {}
    links = {k: v for k, v in links.items() if isinstance(v, str)}
    if text_field(info.get("home_page")) and info["home_page"] not in links.values():
        links = {"Homepage": info["home_page"], **links}
    if links:
        lines += ["", "Project links:"] + [f"- {label}: {link}" for label, link in links.items()]
    kinds = sorted({text_field(f.get("packagetype")) or "" for f in files} - {""})
    if kinds:
        lines += ["", f"Files: {', '.join(kinds)}"]
    readme = text_field(info.get("description"))
    if readme and readme.strip() != "UNKNOWN":
        lines += ["", "## README", "", readme.strip()]
    return "\n".join(lines)


# --- npm --------------------------------------------------------------------------------------


def read_npm(url: str, web: Any) -> Reading | None:
    """``npmjs.com/package/{name}`` (scoped names too, and ``/v/{version}``) through the
    registry's package document."""
    segments = [unquote(s) for s in urlsplit(url).path.split("/") if s]
    if len(segments) < 2 or segments[0] != "package":
        return None
    scoped = segments[1].startswith("@")
    name = "/".join(segments[1:3]) if scoped else segments[1]
    rest = segments[3:] if scoped else segments[2:]
    version = rest[1] if len(rest) >= 2 and rest[0] == "v" else None
    if not _NPM_NAME.match(name):
        return None
    response = web.get(
        f"{NPM_REGISTRY}/{quote(name, safe='@')}",
        headers={"Accept": "application/json"},
        max_bytes=MAX_BYTES,
        source="the npm registry",
    )
    if response.status == 404:
        raise ReaderError(
            f"HTTP 404: the npm registry has no package {name}", status=404, code="not-found"
        )
    if not response.ok:
        raise _failure(response, "The npm registry", name)
    notes: list[str] = []
    if response.truncated:  # a package document too big to read whole: its latest manifest
        notes.append(
            "the registry's document of this package is larger than 16 MB: its README is not shown"
        )
        response = web.get(
            f"{NPM_REGISTRY}/{quote(name, safe='@')}/{quote(version or 'latest')}",
            headers={"Accept": "application/json"},
            max_bytes=MAX_BYTES,
            source="the npm registry",
        )
        if not response.ok:
            raise _failure(response, "The npm registry", name)
        manifest = _object(response, "the npm registry", name)
        document = {
            "name": name,
            "dist-tags": {"latest": manifest.get("version")},
            "versions": {manifest.get("version"): manifest},
        }
    else:
        document = _object(response, "the npm registry", name)
    tags = document.get("dist-tags") if isinstance(document.get("dist-tags"), dict) else {}
    versions = document.get("versions") if isinstance(document.get("versions"), dict) else {}
    shown = version or text_field(tags.get("latest"))
    manifest = versions.get(shown) if shown else None
    if version is not None and not isinstance(manifest, dict):
        raise ReaderError(
            f"HTTP 404: npm package {name} has no version {version}", status=404, code="not-found"
        )
    if not isinstance(manifest, dict):
        manifest = {}
    return Reading(
        title=f"{name} {shown or ''}".strip() + " · npm",
        text=_npm_text(name, shown, document, manifest),
        notes=tuple(notes),
    )


def _npm_text(name: str, version: str | None, document: dict, manifest: dict) -> str:
    lines = [f"# {name} {version or ''}".rstrip()]
    description = text_field(manifest.get("description")) or text_field(document.get("description"))
    if description:
        lines += ["", description.strip()]
    facts = []
    if text_field(manifest.get("deprecated")):
        facts.append(f"Deprecated: {manifest['deprecated']}")
    licence = manifest.get("license") or document.get("license")
    if isinstance(licence, str):
        facts.append(f"License: {licence}")
    engines = manifest.get("engines")
    if isinstance(engines, dict) and engines:
        facts.append(
            "Engines: " + ", ".join(f"{k} {v}" for k, v in engines.items() if isinstance(v, str))
        )
    times = document.get("time") if isinstance(document.get("time"), dict) else {}
    if version and text_field(times.get(version)):
        facts.append(f"Published: {times[version][:10]}")
    tags = document.get("dist-tags") if isinstance(document.get("dist-tags"), dict) else {}
    if tags:
        facts.append(
            "Tags: " + ", ".join(f"{k} {v}" for k, v in tags.items() if isinstance(v, str))
        )
    if facts:
        lines += [""] + facts
    for key, label in (
        ("dependencies", "Dependencies"),
        ("peerDependencies", "Peer dependencies"),
        ("optionalDependencies", "Optional dependencies"),
    ):
        found = manifest.get(key)
        if isinstance(found, dict) and found:
            lines += ["", f"{label}:"] + [
                f"- {k} {v}" for k, v in found.items() if isinstance(v, str)
            ]
    links = []
    homepage = text_field(manifest.get("homepage")) or text_field(document.get("homepage"))
    if homepage:
        links.append(f"- Homepage: {homepage}")
    repository = manifest.get("repository") or document.get("repository")
    where = repository.get("url") if isinstance(repository, dict) else repository
    if isinstance(where, str) and where:
        links.append(f"- Repository: {where}")
    bugs = manifest.get("bugs") or document.get("bugs")
    bug_url = bugs.get("url") if isinstance(bugs, dict) else None
    if isinstance(bug_url, str):
        links.append(f"- Issues: {bug_url}")
    if links:
        lines += ["", "Links:"] + links
    readme = text_field(document.get("readme")) or text_field(manifest.get("readme"))
    if readme and not readme.startswith("ERROR: No README data found"):
        lines += ["", "## README", "", readme.strip()]
    return "\n".join(lines)


PYPI = Reader(
    name="pypi",
    label="PyPI",
    hosts=("pypi.org", "www.pypi.org"),
    read=read_pypi,
    source="PyPI's JSON API",
    description="project pages: version, requirements, links, README",
)
NPM = Reader(
    name="npm",
    label="npm",
    hosts=("npmjs.com", "www.npmjs.com"),
    read=read_npm,
    source="the npm registry",
    description="package pages: version, dependencies, links, README",
)


@hookimpl
def register_readers(register):
    """Register the PyPI and npm readers."""
    register(PYPI)
    register(NPM)
