"""The ``summarize`` tool: a URL's summary from the chosen provider (Kagi's Universal Summarizer or Exa), verbatim."""

from __future__ import annotations

from pi_hostspec.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES
from pi_hostspec.types import ToolContext, ToolError, ToolResult

from .common import FRESH_PARAMETER, PROVIDER_PARAMETER, check_url, quoted, web_tool

__all__ = ["TOOL"]

NAME = "summarize"
LABEL = "Summarize"
DESCRIPTION = f"""Summarize content from a URL. Works with web pages, PDFs, videos, podcasts, and other document types. Returns a concise summary to avoid consuming excessive context on long documents.

When to use:
- Digesting long documentation pages, release notes, or changelogs
- Getting key points from a video or podcast transcript
- Summarizing a PDF or technical paper
- Understanding a lengthy discussion thread or blog post

Parameters:
- url (required): The URL to summarize
- summary_type (optional): "summary" for paragraph prose (default), or "takeaway" for a bulleted list of key points
- engine (optional): Summarization engine — "cecil" (default) for fast general-purpose summaries, "agnes" for formal, technical, analytical summaries. Use agnes for technical docs, papers, and specs.
- target_language (optional): Language code for the output (e.g., "EN", "DE", "JA"). Defaults to the document's language.

Output is truncated to {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first); if truncated, the full output is saved to a temp file whose path is given."""

PARAMETERS: dict = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The URL to summarize", "minLength": 1},
        "summary_type": {
            "type": "string",
            "enum": ["summary", "takeaway"],
            "description": '"summary" for paragraph prose (default), or "takeaway" for a bulleted list of key points',
        },
        "engine": {
            "type": "string",
            "enum": ["cecil", "agnes"],
            "description": '"cecil" (default) for fast general-purpose summaries, "agnes" for formal, technical, analytical summaries',
        },
        "target_language": {
            "type": "string",
            "description": 'Language code for the output (e.g., "EN", "DE", "JA"). Defaults to the document\'s language.',
            "minLength": 1,
        },
        "provider": PROVIDER_PARAMETER,
        "fresh": FRESH_PARAMETER,
    },
    "required": ["url"],
    "additionalProperties": False,
}


def execute(args: dict, ctx: ToolContext) -> ToolResult:
    """Validate the URL and language, ask the provider, return its output verbatim."""
    from pi_hostspec import strip_control, truncate_output

    from ..api.errors import ProviderError
    from ..api.types import SummarizeRequest
    from ..runtime import run
    from .common import check_engine, resolve

    url = check_url(args["url"])
    summary_type = args.get("summary_type") or "summary"
    chosen = resolve("summarize", args.get("provider"))
    config = chosen.config
    engines = chosen.type.summary_engines
    check_engine(chosen, args.get("engine"))
    engine = args.get("engine") or (engines[0] if engines else None)
    language = args.get("target_language")
    if language is not None:
        language = language.strip().upper()
        allowed = chosen.type.summary_languages
        if allowed and language not in allowed:
            raise ToolError(
                f"target_language: {quoted(args['target_language'], 40)} is not a language "
                f"{chosen.type.display_name}'s summarizer supports. Use one of: {', '.join(allowed)}."
            )
    request = SummarizeRequest(
        url=url, summary_type=summary_type, engine=engine, target_language=language
    )
    ctx.update(ToolResult(content="Summarizing...", details={"partial": True, "url": url}))
    details: dict = {"url": url, "summaryType": summary_type, "engine": engine}
    try:
        response, age = run.summarize(chosen, request, ctx, fresh=bool(args.get("fresh")))
    except ProviderError as exc:
        raise ToolError(
            f"summarize failed: {exc}", details={**details, "error": exc.to_dict()}
        ) from None
    details["tokens"] = response.tokens
    if age is not None:
        details["cache"] = {"hit": True, "ageSeconds": round(age, 1)}
    output = truncate_output(strip_control(response.output), prefix="pi-summarize")
    details.update(output.details())
    from ..runtime.run import warnings as run_warnings

    warned = run_warnings(config)  # the config's, and the cache's (files moved aside)
    if warned:
        details["warnings"] = warned
    return ToolResult(content=output.text, details=details)


TOOL = web_tool(NAME, LABEL, DESCRIPTION, PARAMETERS, execute)
