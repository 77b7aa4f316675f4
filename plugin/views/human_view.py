"""Human views of calls and results for the three tools (pi's renderCall / renderResult).

Renderers cope with anything: arguments still streaming in, missing details, error results.
Web text is cleaned of ANSI and control characters before it reaches a terminal.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from typing import Any

from attrs import frozen
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
    if not text:
        return text
    from ..api.redaction import redact_secrets
    from ..runtime.registry import load_secrets

    load_secrets()
    return redact_secrets(text)


def render_call(tool_name: str, args: Any, theme: Theme) -> str | None:
    """One line: the tool name and what it was asked (queries, URL(s), summary options)."""
    return _redacted(_render_call(tool_name, args, theme))


def _search_call(args: dict, theme: Theme) -> str:
    queries = _strings(args.get("queries")) or _strings(args.get("query"))
    shown = ", ".join(f'"{strip_control(q)}"' for q in queries)
    text = _title(theme, "web_search")
    if shown:
        text += " " + theme.fg("accent", clip(shown, CALL_WIDTH))
    if isinstance(args.get("provider"), str):
        text += theme.fg("muted", f" via {_clean(args['provider'], 30)}")
    elif _strings(args.get("provider")):  # a fused call
        text += theme.fg("muted", f" via {_clean(' + '.join(_strings(args['provider'])), 60)}")
    return text


def _fetch_call(args: dict, theme: Theme) -> str:
    urls = _strings(args.get("urls")) or _strings(args.get("url"))
    text = _title(theme, "web_fetch")
    if len(urls) == 1:
        text += " " + theme.fg("accent", _clean(urls[0], CALL_WIDTH))
    elif urls:
        text += " " + theme.fg("accent", f"{len(urls)} URLs")
    question = args.get("question")
    if isinstance(question, str) and question.strip():
        text += theme.fg("muted", " asking ") + theme.fg("accent", f'"{_clean(question, 80)}"')
    terms = _strings(args.get("find"))
    if terms:
        shown = ", ".join(f'"{_clean(term, 40)}"' for term in terms)
        text += theme.fg("muted", " finding ") + theme.fg("accent", clip(shown, 80))
    return text


def _summarize_call(args: dict, theme: Theme) -> str:
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


_CALLS = {"web_search": _search_call, "web_fetch": _fetch_call, "summarize": _summarize_call}


def _render_call(tool_name: str, args: Any, theme: Theme) -> str | None:
    render = _CALLS.get(tool_name)
    return render(args if isinstance(args, dict) else {}, theme) if render else None


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


def _search_line(result: ToolResult, details: dict, theme: Theme) -> str:
    total = details.get("totalResults")
    if not isinstance(total, int):
        total = sum(
            1 for line in result.text.splitlines() if line[:1].isdigit() and ". " in line[:6]
        )
    line = theme.fg("success", _plural(total, "result"))
    queries = details.get("queries")
    if isinstance(queries, list) and len(queries) > 1:
        line += theme.fg("muted", f" for {len(queries)} queries")
    per_query = [q for q in details.get("perQuery") or [] if isinstance(q, dict)]
    failed = [q for q in per_query if q.get("error")]
    if failed:
        count = len(failed)
        line += theme.fg("error", f" ({count} {'query' if count == 1 else 'queries'} failed)")
    line += _providers_note(per_query, theme)
    return line + _truncation_note(details, theme)


def _providers_note(per_query: list[dict], theme: Theme) -> str:
    """`` · answered by brave (kagi failed: quota)`` for a query that failed over, or
    `` · exa failed`` for a fused provider that failed (the first of each, by name)."""
    served: dict[str, list[str]] = {}
    for query in per_query:
        passed = [p for p in query.get("failedOver") or [] if isinstance(p, dict)]
        if passed and isinstance(query.get("provider"), str):
            reasons = served.setdefault(_clean(query["provider"], 40), [])
            for one in passed:
                reason = f"{_clean(one.get('provider'), 40)} failed: {_clean(one.get('kind'), 40)}"
                if reason not in reasons:
                    reasons.append(reason)
    lost = list(
        dict.fromkeys(
            _clean(name, 40)
            for query in per_query
            if isinstance(query.get("providers"), dict)
            for name, answer in query["providers"].items()
            if isinstance(answer, dict) and answer.get("error")
        )
    )
    parts = [f"answered by {name} ({'; '.join(why)})" for name, why in served.items()]
    parts += [f"{', '.join(lost)} failed"] if lost else []
    return theme.fg("warning", " · " + " · ".join(parts)) if parts else ""


def _fetch_line(result: ToolResult, details: dict, theme: Theme) -> str:
    fetched, failed = details.get("fetched"), details.get("failed")
    if isinstance(fetched, int) and isinstance(failed, int):
        line = theme.fg("success", f"Fetched {fetched} of {_plural(fetched + failed, 'URL')}")
        if failed:
            line += theme.fg("error", f" ({failed} failed)")
    else:
        line = theme.fg("success", "Fetched")
    line += _reading_note(details, theme)
    return line + _truncation_note(details, theme)


def _reading_note(details: dict, theme: Theme) -> str:
    """`` · 3 passages for "question"`` and `` · 5 finds``, from the per-URL facts."""
    facts = [f for f in details.get("urls") or [] if isinstance(f, dict)]
    note = ""
    question = details.get("question")
    if isinstance(question, str):
        count = sum(len(f["passages"]) for f in facts if isinstance(f.get("passages"), list))
        unanswered = sum(1 for f in facts if f.get("mayNotAnswer"))
        note += theme.fg("muted", f" · {_plural(count, 'passage')} for ") + theme.fg(
            "accent", f'"{_clean(question, 80)}"'
        )
        if unanswered:
            pages = "page" if unanswered == 1 else "pages"
            note += theme.fg("warning", f" ({unanswered} {pages} may not answer it)")
    if isinstance(details.get("find"), list):
        count = sum(
            sum(n for n in f["found"].values() if isinstance(n, int))
            for f in facts
            if isinstance(f.get("found"), dict)
        )
        note += theme.fg("muted", f" · {_plural(count, 'occurrence')} found")
    return note


def _fetch_rows(details: dict, theme: Theme) -> str | None:
    """The expanded fetch view: one row per URL (the page texts are the model's, not shown)."""
    if not isinstance(details.get("urls"), list):
        return None
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
            read = ""
            if isinstance(facts.get("passages"), list):
                read = f" · {_plural(len(facts['passages']), 'passage')}"
                if facts.get("mayNotAnswer"):
                    read = " · may not answer the question"
            if isinstance(facts.get("found"), dict):
                found = sum(n for n in facts["found"].values() if isinstance(n, int))
                read += f" · {_plural(found, 'occurrence')}"
            rows.append(
                theme.fg("success", "✓ ")
                + (f"{title} — " if title else "")
                + theme.fg("muted", url + size + read)
            )
        else:
            rows.append(
                theme.fg("error", "✗ ")
                + url
                + theme.fg("error", f" — {_clean(facts.get('error', 'failed'), 120)}")
            )
    return "\n".join(rows)


def _summary_line(result: ToolResult, details: dict, theme: Theme) -> str:
    kind = "Takeaway" if details.get("summaryType") == "takeaway" else "Summary"
    tokens = details.get("tokens")
    line = theme.fg("success", kind)
    if isinstance(tokens, int):
        line += theme.fg("muted", f" · {tokens:,} tokens")
    if details.get("engine") not in (None, "cecil"):
        line += theme.fg("muted", f" · {_clean(details['engine'], 20)}")
    return line + _truncation_note(details, theme)


@frozen
class _ResultView:
    working: str  # shown while the call runs
    line: Callable[[ToolResult, dict, Theme], str]  # the collapsed view
    expanded: Callable[[dict, Theme], str | None] | None = None  # else the whole text


_RESULTS = {
    "web_search": _ResultView("Searching...", _search_line),
    "web_fetch": _ResultView("Fetching...", _fetch_line, _fetch_rows),
    "summarize": _ResultView("Summarizing...", _summary_line),
}


def _render_result(
    tool_name: str, result: ToolResult, options: RenderOptions, theme: Theme
) -> str | None:
    view = _RESULTS.get(tool_name)
    if view is None:
        return None
    if options.is_partial:
        return theme.fg("warning", view.working)
    if result.is_error:
        return _error_view(result, options, theme)
    details = result.details if isinstance(result.details, dict) else {}
    line = view.line(result, details, theme)
    if not options.expanded:
        return line
    body = view.expanded(details, theme) if view.expanded else None
    if body is None:
        body = _body(result)
    elif not body:
        return line
    return f"{line}\n{body}"
