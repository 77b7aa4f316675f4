"""Reading ``~/.pi/agent/web-search.json``: where it is, whether it can be trusted, and the memo
that reads it again only when it (or a key variable) changes.

The file is read boundedly (a regular file of at most 1 MiB, never a FIFO or a device), its
shapes are parsed by :mod:`.config_shapes`, and every key in it is remembered for redaction.
When others can change the file or its folder, no key is sent to a ``baseUrl`` read from it,
and ``pi-web config`` says why.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import attrs
from pi_hostspec.host import SkippedPlugin

from ..api import redaction
from ..api.options import (
    Finding,
    Kind,
    option_key,
    options_fields,
    reaches_further,
    runs_something,
)
from ..api.types import ProviderConfig, ProviderType
from .config_shapes import Config, implicit_from_env, invalid, parse_config

__all__ = [
    "AGENT_DIR_ENV",
    "MAX_CONFIG_BYTES",
    "agent_dir",
    "clear_cache",
    "config_path",
    "load_config",
    "other_extension_files",
    "other_files_hint",
    "permission_warning",
    "trust_warnings",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
MAX_CONFIG_BYTES = 1024 * 1024


def agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    override = os.environ.get(AGENT_DIR_ENV, "").strip()
    if override:
        return Path(os.path.expanduser(override))
    return Path.home() / ".pi" / "agent"


def config_path() -> Path:
    """Where the config file is read from."""
    return agent_dir() / "web-search.json"


def other_extension_files() -> list[Path]:
    """Where pi-web-access keeps its ``web-search.json`` (``~/.pi``, ``$XDG_CONFIG_HOME/pi``),
    when such a file exists and is not the one read here."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    ours = config_path()
    found = []
    for candidate in (
        Path.home() / ".pi" / "web-search.json",
        Path(xdg) / "pi" / "web-search.json",
    ):
        try:
            if candidate.is_file() and candidate.resolve() != ours.resolve():
                found.append(candidate)
        except OSError:
            continue
    return found


def other_files_hint() -> str:
    """Lines naming pi-web-access's files that exist while this one does not, and what to do
    (empty when there are none)."""
    import shlex

    ours = config_path()
    if ours.exists():
        return ""
    # Its folder may not exist yet (a user of that extension alone has no ~/.pi/agent): the
    # commands make it first, so they run as printed.
    folder = "" if ours.parent.is_dir() else f"mkdir -p {shlex.quote(str(ours.parent))} && "
    target = shlex.quote(str(ours))
    return "".join(
        f"\nNote: {path} exists (where the pi-web-access extension keeps its keys), but "
        f"pi-web-tools reads {ours}: copy it there ({folder}cp {shlex.quote(str(path))} "
        f"{target}) or link it ({folder}ln -s {shlex.quote(str(path))} {target})."
        for path in other_extension_files()
    )


def _read_text(path: Path) -> str | None:
    """The file's text, ``None`` when it does not exist; a clean error for anything odd."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise invalid(path, f"cannot read it ({exc.strerror}).") from None
    if stat.S_ISDIR(info.st_mode):
        raise invalid(path, "it is a directory, not a file.")
    try:
        # Non-blocking, so a FIFO swapped in after the stat cannot hang the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise invalid(path, f"cannot read it ({exc.strerror}).") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise invalid(
                path, "it is not a regular file (a device, FIFO or socket cannot be a config)."
            )
        if info.st_size > MAX_CONFIG_BYTES:
            raise invalid(path, f"it is {info.st_size} bytes; a config file may be at most 1 MiB.")
        try:
            data = handle.read(MAX_CONFIG_BYTES + 1)  # bounded: the file may grow after the stat
        except OSError as exc:
            raise invalid(path, f"cannot read it ({exc.strerror}).") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise invalid(path, "it is larger than 1 MiB; a config file may be at most 1 MiB.")
    if b"\x00" in data:
        raise invalid(path, "it is a binary file, not JSON text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise invalid(path, "it is not UTF-8 text.") from None


def permission_warning(path: Path) -> Finding | None:
    """A warning when a config file that holds keys is readable by group or others."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
        return Finding(
            what=f"{path} holds API keys and is readable by other users "
            f"(mode {stat.S_IMODE(mode):o})",
            suggestion=f"run: chmod 600 {path}",
        )
    return None


def trust_warnings(path: Path) -> list[Finding]:
    """Warnings when others could change the config: the file or a folder it is reached through
    writable by group or others, or owned by another user (a planted ``baseUrl`` would
    receive the keys). When the config is a symbolic link, the folder of every link on the way
    and of the file it leads to counts too: whoever can write one of them can replace the file
    (a link into a world-writable folder is no safer than a world-writable folder)."""
    if os.name != "posix":
        return []
    found: list[Finding] = []
    for where, why in _trust_places(path):
        try:
            info = where.stat()
        except OSError:
            continue
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            found.append(
                Finding(
                    what=f"{where} is writable by other users "
                    f"(mode {stat.S_IMODE(info.st_mode):o}){why}",
                    suggestion=f"run: chmod go-w {where}",
                )
            )
        if info.st_uid not in (os.getuid(), 0):
            # A folder another user owns is theirs to change, whatever its mode says.
            found.append(Finding(what=f"{where} is owned by another user (uid {info.st_uid}){why}"))
    return found


def _trust_places(path: Path) -> list[tuple[Path, str]]:
    """The config file, and each folder whose writers could replace it: its own, and for a
    symbolic link the folder of every link followed and of the file reached."""
    places = [(path, ""), (path.parent, ", who could replace the config")]
    link = path
    for _ in range(40):  # the kernel's own limit on links followed
        if not link.is_symlink():
            break
        try:
            link = link.parent.resolve() / os.readlink(link)
        except OSError:
            break
        if link.parent not in [where for where, _ in places]:
            places.append((link.parent, f", who could replace the config {path} links to"))
    return places


def _guard(config: Config, untrusted: bool) -> Config:
    """What a file others can change (or whose folder they can) may not decide: it never sends
    a key (from the file or the environment) to a ``baseUrl`` read from it, and it never names
    something this process runs or loads (an option declared ``runs``, such as the browser's
    ``executablePath``: the default is kept). Each such provider says why, and a call to it
    fails saying so. Nor does it widen what this process reaches (an option declared
    ``reaches``, ``allowPrivateNetwork``): the provider keeps working without it, and a refusal
    it would have lifted says why. With a trusted file, an environment key sent to a ``baseUrl`` is said in
    ``pi-web config`` and ``details.warnings``."""
    providers, warnings, problems = [], list(config.warnings), list(config.key_problems)
    for provider in config.providers:
        if untrusted:
            provider = _withhold_what_runs(provider, config.path, problems, warnings)
        base_url = getattr(provider.options, "base_url", None)
        base_url = redaction.without_password(base_url) if base_url else base_url
        where = f"providers ({provider.name})"
        if provider.api_key and base_url and untrusted:
            what = provider.key_from_env or "its API key"
            problems.append(
                Finding(
                    where=where,
                    what=f"{what} is not sent to baseUrl {base_url}: the config can be changed "
                    "by other users",
                    suggestion=f"fix its permissions (chmod go-w {config.path}) or remove baseUrl",
                    kind=Kind.KEY_WITHHELD,
                    entry=provider.name,
                )
            )
            provider = attrs.evolve(provider, api_key=None, key_from_env=None)
        elif provider.key_from_env and base_url:
            warnings.append(
                Finding(
                    where=where,
                    what=f"{provider.key_from_env} from the environment is sent to "
                    f"baseUrl {base_url}, not the provider's default API",
                    entry=provider.name,
                )
            )
        providers.append(provider)
    provider_options = config.provider_options
    if untrusted and provider_options:  # the shared file's, for the built-in fetcher too
        said = {p.name for p in config.providers}  # their findings are made above
        provider_options = tuple(
            (kind, _withheld_options(kind, options, config.path, said, problems, warnings))
            for kind, options in provider_options
        )
    readers = config.readers
    if untrusted and readers.base_urls:  # a planted baseUrl would receive every URL read
        for name, base_url in readers.base_urls:
            warnings.append(
                Finding(
                    where=f"readers.{name}.baseUrl",
                    what=f"{base_url} is ignored: the config can be changed by other users",
                    suggestion=f"fix its permissions (chmod go-w {config.path})",
                )
            )
        readers = attrs.evolve(readers, base_urls=())
    return attrs.evolve(
        config,
        providers=tuple(providers),
        warnings=tuple(warnings),
        key_problems=tuple(problems),
        readers=readers,
        provider_options=provider_options,
    )


def _withhold_what_runs(
    provider: ProviderConfig,
    path: Path,
    problems: list[Finding],
    warnings: list[Finding],
    where: str = "",
) -> ProviderConfig:
    """*provider* with every option that names something to run or load (said in *problems*:
    the provider is not used) or widens what it reaches (said in *warnings*: it works without
    it) back at its default."""
    options = provider.options
    if not attrs.has(type(options)):
        return provider
    reset = {}
    for field in options_fields(type(options)):
        value = getattr(options, field.name)
        if value == field.default or not (runs_something(field) or reaches_further(field)):
            continue
        reset[field.name] = field.default
        key = option_key(field)
        runs = runs_something(field)
        (problems if runs else warnings).append(
            Finding(
                where=where or f"providers ({provider.name})",
                what=f"{key} {value if runs else ''}".rstrip()
                + " is not used: the config can be changed by other users",
                suggestion=f"fix its permissions (chmod go-w {path}) or remove {key}",
                kind=Kind.RUN_WITHHELD if runs else Kind.REACH_WITHHELD,
                entry=provider.name,
            )
        )
    return attrs.evolve(provider, options=attrs.evolve(options, **reset)) if reset else provider


def _withheld_options(
    kind: str,
    options: Any,
    path: Path,
    said: set[str],
    problems: list[Finding],
    warnings: list[Finding],
) -> Any:
    """The shared file's ``providerOptions`` for *kind*, withheld as a provider's are; the
    findings are made once (not again for a type whose provider *said* them)."""
    quiet = kind in said
    entry = ProviderConfig(name=kind, type=kind, options=options)
    return _withhold_what_runs(
        entry, path, [] if quiet else problems, [] if quiet else warnings, f"providerOptions.{kind}"
    ).options


def _url_passwords(config: Config) -> list[str]:
    """The password of every ``user:password@`` URL in the providers' options (a gateway's
    ``baseUrl``): secrets, redacted like keys."""
    found = []
    for provider in config.providers:
        options = provider.options
        for field in options_fields(type(options)) if attrs.has(type(options)) else ():
            password = redaction.url_password(getattr(options, field.name))
            if password:
                found.append(password)
    return found


_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, Config]] = {}


def clear_cache() -> None:
    """Forget every loaded config, so the next call reads the file again (tests, hosts)."""
    with _cache_lock:
        _cache.clear()


def load_config(
    types: Mapping[str, ProviderType],
    path: Path | None = None,
    skipped: Collection[SkippedPlugin] = (),
) -> Config:
    """Read and validate the config now (cached until the file or a key variable changes).

    With no file, key variables of types that declare ``env_key_implies_provider`` configure
    one provider each (``source="env"``); otherwise the config is empty (``source="none"``)
    and tools say what to configure. Every key read is remembered for redaction. *skipped*
    are the provider plugins that could not be loaded: an entry of one of their types is
    skipped, with a problem that names the plugin.
    """
    path = path or config_path()
    env_names = sorted({t.api_key_env for t in types.values() if t.api_key_env})
    redaction.watch_env(env_names)
    env_keys = tuple(os.environ.get(name, "") for name in env_names)
    try:
        info = path.stat()
        stamp: tuple = (
            info.st_mtime_ns,
            info.st_size,
            info.st_ino,
            info.st_mode,
            env_keys,
            id(types),
            tuple(skipped),
        )
    except OSError:
        stamp = (None, env_keys, id(types), tuple(skipped))
    with _cache_lock:
        cached = _cache.get(str(path))
        if cached and cached[0] == stamp:
            return cached[1]
    text = _read_text(path)
    if text is None:
        config = implicit_from_env(path, types)
    else:
        config = parse_config(text, path, types, {p.entry_point: p for p in skipped})
        warning = (
            permission_warning(path)
            if any(p.api_key and not p.key_from_env for p in config.providers)
            else None
        )
        trust = trust_warnings(path)
        redaction.remember(p.api_key for p in config.providers)  # withheld ones stay redacted
        config = _guard(config, untrusted=bool(trust))
        added = ([warning] if warning else []) + trust
        if added:
            config = attrs.evolve(config, warnings=config.warnings + tuple(added))
    redaction.remember(p.api_key for p in config.providers)
    redaction.remember(_url_passwords(config))
    with _cache_lock:
        _cache[str(path)] = (stamp, config)
    return config
