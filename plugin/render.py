"""Human views of calls and results for the three tools (pi's renderCall / renderResult).

Renderers cope with anything: arguments still streaming in, missing details, error results.
Web text is cleaned of ANSI and control characters before it reaches a terminal.
"""

from __future__ import annotations

import reprlib
from typing import Any

from pi_hostspec import RenderOptions, Theme, ToolResult, clip, strip_control

__all__ = ["render_call", "render_result"]

CALL_WIDTH = 100
LINE_WIDTH = 160


def _title(theme: Theme, name: str) -> str:
    return theme.fg("toolTitle", theme.bold(name))


# Arguments may be anything a model sent, still streaming: shown briefly, never fully walked.
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 5, 5, 60, 60
_SLICE = 4 * CALL_WIDTH  # enough characters of one value to fill a line after cleaning


def _text(value: Any) -> str:
    """A bounded piece of *value* as text (a huge or deeply nested value is never walked whole)."""
    return value[:_SLICE] if isinstance(value, str) else _REPR.repr(value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [_text(value)]
    if isinstance(value, (list, tuple)):
        return [_text(item) for item in value if item is not None]
    return []


def _clean(text: Any, width: int) -> str:
    return clip(strip_control(_text(text)), width)


def _redacted(text: str | None) -> str | None:
    """The view with every configured API key replaced (a URL may carry one in its query)."""
    from .config import redact_secrets

    return redact_secrets(text, load=True) if text else text


def render_call(tool_name: str, args: Any, theme: Theme) -> str | None:
    """One line: the tool name and what it was asked (queries, URL(s), summary options)."""
    return _redacted(_render_call(tool_name, args, theme))


def _render_call(tool_name: str, args: Any, theme: Theme) -> str | None:
    args = args if isinstance(args, dict) else {}
    if tool_name == "web_search":
        queries = _strings(args.get("queries")) or _strings(args.get("query"))
        shown = ", ".join(f'"{strip_control(q)}"' for q in queries)
        text = _title(theme, "web_search")
        if shown:
            text += " " + theme.fg("accent", clip(shown, CALL_WIDTH))
        if isinstance(args.get("provider"), str):
            text += theme.fg("muted", f" via {_clean(args['provider'], 30)}")
        return text
    if tool_name == "web_fetch":
        urls = _strings(args.get("urls")) or _strings(args.get("url"))
        text = _title(theme, "web_fetch")
        if len(urls) == 1:
            text += " " + theme.fg("accent", _clean(urls[0], CALL_WIDTH))
        elif urls:
            text += " " + theme.fg("accent", f"{len(urls)} URLs")
        return text
    if tool_name == "summarize":
        text = _title(theme, "summarize")
        url = args.get("url")
        if isinstance(url, str) and url:
            text += " " + theme.fg("accent", f'"{_clean(url, CALL_WIDTH)}"')
        extras = []
        if args.get("summary_type") not in (None, "summary"):
            extras.append(_clean(args["summary_type"], 20))
        if args.get("engine") not in (None, "cecil"):
            extras.append(_clean(args["engine"], 20))
        if extras:
            text += " " + theme.fg("muted", f"({', '.join(extras)})")
        if isinstance(args.get("target_language"), str) and args["target_language"]:
            text += theme.fg("muted", f" → {_clean(args['target_language'].upper(), 10)}")
        return text
    return None


def _truncation_note(details: dict, theme: Theme) -> str:
    if not isinstance(details.get("truncation"), dict):
        return ""
    path = details.get("fullOutputPath")
    where = f"; full output: {path}" if path else ""
    return theme.fg("warning", f" (truncated{where})")


def _error_view(result: ToolResult, options: RenderOptions, theme: Theme) -> str:
    lines = strip_control(result.text).strip().splitlines() or ["unknown error"]
    if options.expanded:
        return theme.fg("error", "Error: " + "\n".join(lines))
    more = f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
    return theme.fg("error", "Error: " + clip(lines[0], LINE_WIDTH)) + theme.fg("muted", more)


def _body(result: ToolResult) -> str:
    """The result's whole text for the expanded view (the terminal wraps long lines)."""
    return strip_control(result.text)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def render_result(
    tool_name: str, result: ToolResult, options: RenderOptions, theme: Theme
) -> str | None:
    """Collapsed: a one-line count; expanded: that line and the results; errors as errors."""
    return _redacted(_render_result(tool_name, result, options, theme))


def _render_result(
    tool_name: str, result: ToolResult, options: RenderOptions, theme: Theme
) -> str | None:
    if tool_name not in ("web_search", "web_fetch", "summarize"):
        return None
    if options.is_partial:
        word = {
            "web_search": "Searching...",
            "web_fetch": "Fetching...",
            "summarize": "Summarizing...",
        }[tool_name]
        return theme.fg("warning", word)
    if result.is_error:
        return _error_view(result, options, theme)
    details = result.details if isinstance(result.details, dict) else {}

    if tool_name == "web_search":
        total = details.get("totalResults")
        if not isinstance(total, int):
            total = sum(
                1 for line in result.text.splitlines() if line[:1].isdigit() and ". " in line[:6]
            )
        line = theme.fg("success", _plural(total, "result"))
        queries = details.get("queries")
        if isinstance(queries, list) and len(queries) > 1:
            line += theme.fg("muted", f" for {len(queries)} queries")
        failed = [
            q for q in details.get("perQuery") or [] if isinstance(q, dict) and q.get("error")
        ]
        if failed:
            line += theme.fg(
                "error", f" ({_plural(len(failed), 'query')} failed)".replace("querys", "queries")
            )
    elif tool_name == "web_fetch":
        fetched, failed = details.get("fetched"), details.get("failed")
        if isinstance(fetched, int) and isinstance(failed, int):
            line = theme.fg("success", f"Fetched {fetched} of {_plural(fetched + failed, 'URL')}")
            if failed:
                line += theme.fg("error", f" ({failed} failed)")
        else:
            line = theme.fg("success", "Fetched")
        if options.expanded and isinstance(details.get("urls"), list):
            rows = []
            for facts in details["urls"]:
                if not isinstance(facts, dict):
                    continue
                url = _clean(facts.get("url", ""), 100)
                if facts.get("status") == "ok":
                    title = _clean(facts.get("title") or "", 80)
                    size = (
                        f" ({facts['characters']:,} chars)"
                        if isinstance(facts.get("characters"), int)
                        else ""
                    )
                    rows.append(
                        theme.fg("success", "✓ ")
                        + (f"{title} — " if title else "")
                        + theme.fg("muted", url + size)
                    )
                else:
                    rows.append(
                        theme.fg("error", "✗ ")
                        + url
                        + theme.fg("error", f" — {_clean(facts.get('error', 'failed'), 120)}")
                    )
            return (
                line + _truncation_note(details, theme) + ("\n" + "\n".join(rows) if rows else "")
            )
    else:  # summarize
        kind = "Takeaway" if details.get("summaryType") == "takeaway" else "Summary"
        tokens = details.get("tokens")
        line = theme.fg("success", kind)
        if isinstance(tokens, int):
            line += theme.fg("muted", f" · {tokens:,} tokens")
        if details.get("engine") not in (None, "cecil"):
            line += theme.fg("muted", f" · {_clean(details['engine'], 20)}")
    line += _truncation_note(details, theme)
    if options.expanded:
        return line + "\n" + _body(result)
    return line
