"""The full-output temp file of a truncated result: private, never through a planted link, and a
full or unwritable temp directory costs only the file (the truncated output still arrives)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from pathlib import Path

import pytest

from tests.support import SECRET, assert_no_secret
from tests.support.fault_server import Reply, json_reply

from .cases import DIRECT_FETCH, KAGI_SUMMARIZE, secret_url

BIG_TEXT = "".join(
    f"line {i:05d} of a long page, key echoed: {SECRET}\n" for i in range(4000)
)  # ~220 KB


def big_fetch(server, tools, write_config):
    """A direct fetch whose output is far over 50 KB (the page echoes the key in every line)."""
    server.script(Reply(200, BIG_TEXT, content_type="text/plain; charset=utf-8"))
    write_config(DIRECT_FETCH.config(server))
    return tools.call("web_fetch", {"urls": [secret_url(server)], "text_max_characters": 1_000_000})


def test_full_output_file_is_private_and_complete(server, tools, write_config, debug_logs):
    """A >50 KB result is truncated; the full text goes to a 0600 file in a fresh 0700 directory."""
    outcome = big_fetch(server, tools, write_config)
    assert not outcome.result.is_error
    details = outcome.result.details
    assert details["truncation"]["truncated"] is True
    path = Path(details["fullOutputPath"])
    assert f"Full output saved to: {path}]" in outcome.text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.parent.parent == Path(tempfile.gettempdir())
    saved = path.read_text(encoding="utf-8")
    assert "line 03999 of a long page" in saved and len(saved) > 150_000
    assert_no_secret(outcome, debug_logs)  # the saved copy is redacted as well


def test_summary_over_50kb_is_saved_privately(server, tools, write_config):
    """A summarizer output over 50 KB is truncated too, its full text saved to a private file."""
    server.script(json_reply({"data": {"output": BIG_TEXT, "tokens": 1}}))
    write_config(KAGI_SUMMARIZE.config(server))
    outcome = tools.call("summarize", {"url": "https://example.com/a"})
    path = Path(outcome.result.details["fullOutputPath"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert SECRET not in path.read_text(encoding="utf-8")


def test_a_planted_link_is_never_followed(server, tools, write_config, tmp_path):
    """A symlink planted where the spill directory goes is skipped; nothing is written through it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    planted = Path(tempfile.gettempdir(), f"pi-tool-output-{os.getuid()}")
    planted.symlink_to(victim)
    outcome = big_fetch(server, tools, write_config)
    assert not outcome.result.is_error
    assert list(victim.iterdir()) == []
    path = Path(outcome.result.details["fullOutputPath"])
    assert path.parent.name.startswith("pi-tool-output-") and path.parent != planted
    assert not path.parent.is_symlink()


def test_a_planted_output_file_link_is_never_followed(
    server, tools, write_config, monkeypatch, tmp_path
):
    """Even inside the spill directory, a pre-existing file link is refused, not written through."""
    import secrets as secrets_module

    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    trap = Path(tempfile.gettempdir(), f"pi-tool-output-{os.getuid()}")
    trap.mkdir(mode=0o700)
    (trap / "pi-web-fetch-feedfacefeedface.txt").symlink_to(victim)
    monkeypatch.setattr(secrets_module, "token_hex", lambda n: "feedfacefeedface")
    outcome = big_fetch(server, tools, write_config)
    assert not outcome.result.is_error
    assert victim.read_text() == "untouched"
    assert "Full output could not be saved" in outcome.text


def test_unwritable_temp_dir_still_gives_the_truncated_output(
    server, tools, write_config, monkeypatch, tmp_path
):
    """A temp directory that cannot be written gives the truncated text with a note, not an error."""
    if os.geteuid() == 0:  # root writes anywhere: use a directory that cannot exist instead
        monkeypatch.setattr(tempfile, "tempdir", "/proc/pi-web-no-such-dir")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        monkeypatch.setattr(tempfile, "tempdir", str(locked))
    outcome = big_fetch(server, tools, write_config)
    assert not outcome.result.is_error
    assert "line 00000 of a long page" in outcome.text
    assert (
        "[Output truncated:" in outcome.text and "Full output could not be saved:" in outcome.text
    )
    assert (
        "fullOutputPath" not in outcome.result.details and outcome.result.details["fullOutputError"]
    )


def test_full_disk_still_gives_the_truncated_output_and_leaves_nothing(
    server, tools, write_config, monkeypatch
):
    """A disk that fills while the full output is written gives the truncated text with a note, and no half file."""
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, mode="r", *args, **kwargs):
        handle = real_fdopen(fd, mode, *args, **kwargs)
        return Full(handle) if "w" in mode else handle

    monkeypatch.setattr(os, "fdopen", fdopen)
    outcome = big_fetch(server, tools, write_config)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert not outcome.result.is_error
    assert "Full output could not be saved: No space left on device]" in outcome.text
    left = [p for p in Path(tempfile.gettempdir()).rglob("*") if p.is_file()]
    assert left == []  # no half file (the private spill directory itself may stay)


def test_renderings_mention_truncation_without_a_path_when_not_saved(
    server, tools, write_config, monkeypatch
):
    """When the full output could not be saved the views still say the result was truncated."""
    monkeypatch.setattr(tempfile, "tempdir", "/proc/pi-web-no-such-dir")
    outcome = big_fetch(server, tools, write_config)
    assert "(truncated)" in outcome.views[1]


def test_spill_files_stay_bounded_over_many_large_calls(server, tools, write_config):
    """20 large URLs per call, 30 calls: the spill directory keeps at most its size cap (64 MB)
    plus the newest file, instead of growing by every call's full output."""
    from pi_hostspec import truncate

    page = "".join(f"line {i:06d} of a large page with some words in it\n" for i in range(20_000))
    server.script(Reply(200, page, content_type="text/plain; charset=utf-8"))
    write_config(DIRECT_FETCH.config(server, timeout=10.0))
    urls = [server.url(f"/p{i}") for i in range(20)]
    sizes = []
    for _ in range(30):
        outcome = tools.call("web_fetch", {"urls": urls, "text_max_characters": 1_000_000})
        assert not outcome.result.is_error and outcome.result.details["fullOutputPath"]
        spill = Path(outcome.result.details["fullOutputPath"]).parent
        files = [p for p in spill.iterdir() if p.is_file()]
        sizes.append(sum(p.stat().st_size for p in files))
    newest = Path(outcome.result.details["fullOutputPath"]).stat().st_size
    assert newest > 15 * 1024 * 1024  # each call spills about 20 MB
    assert max(sizes) <= truncate.SPILL_MAX_TOTAL_BYTES + newest


def test_spill_files_older_than_a_day_are_removed(server, tools, write_config):
    """A spill file older than the age limit is deleted when the next one is written."""
    from pi_hostspec import truncate

    old = Path(truncate.spill_directory(), "pi-web-fetch-0000000000000000.txt")
    old.write_text("stale")
    stale = time.time() - truncate.SPILL_MAX_AGE_SECONDS - 60
    os.utime(old, (stale, stale))
    outcome = big_fetch(server, tools, write_config)
    assert Path(outcome.result.details["fullOutputPath"]).exists()
    assert not old.exists()


@pytest.mark.parametrize("squat", ["foreign directory", "file", "open directory"])
def test_a_squatted_spill_folder_name_does_not_escape_pruning(squat, tmp_path):
    """Issue 21: another user's directory (or a file) at pi-tool-output-<uid> sent every spill
    to a new random directory, which no later prune ever looked at. The spills now go to one
    stable private folder, pruned as usual."""
    from pi_hostspec import truncate

    squatted = Path(tempfile.gettempdir(), f"pi-tool-output-{os.getuid()}")
    if squat == "file":
        squatted.write_text("not a directory")
    else:
        squatted.mkdir(mode=0o777)
        squatted.chmod(0o777)
        if squat == "foreign directory":
            if os.getuid() != 0:
                pytest.skip("needs root to give a directory to another user")
            os.chown(squatted, 65534, 65534)
    big = "".join(f"line {i}\n" for i in range(5000))
    first = truncate.truncate_output(big, prefix="squat").full_output_path
    folder = Path(first).parent
    assert folder != squatted and stat.S_IMODE(folder.stat().st_mode) == 0o700
    old = folder / "squat-0000000000000000.txt"
    old.write_text("a day old")
    os.utime(old, (time.time() - 2 * 86400, time.time() - 2 * 86400))
    later = [truncate.truncate_output(big, prefix="squat").full_output_path for _ in range(3)]
    assert {Path(p).parent for p in later} == {folder}, later
    assert not old.exists(), "the old spill file was never pruned"
    leftovers = [
        p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith("pi-tool-output-")
    ]
    assert len(leftovers) <= 2, leftovers  # the squatted name, and at most one folder of ours
