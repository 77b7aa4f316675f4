"""Acme Search (an API with a key) and a local docs index (keyless) as pi-web-tools providers."""

from __future__ import annotations

from pathlib import Path

from attrs import frozen
from pi_web_tools import (
    ApiKey,
    ApiOptions,
    CommonOptions,
    HttpClient,
    ProviderError,
    ProviderType,
    Search,
    SearchHit,
    SearchResponse,
    between,
    hookimpl,
    option,
)


@frozen(kw_only=True)
class AcmeOptions(ApiOptions):
    """``options`` of an ``acme`` entry; ``baseUrl`` and ``timeoutSeconds`` come from ApiOptions."""

    region: str = option("us")
    default_search_limit: int | None = option(None, validator=between(1, 20))


class AcmeProvider:
    """A configured Acme Search account."""

    def __init__(self, config):
        self.name = config.name
        self.options = config.options
        self.http = HttpClient(
            provider=f"Acme ({config.name})",
            base_url=self.options.base_url or "https://api.acme.example/v1",
            headers={"Authorization": f"Bearer {config.api_key}"},
            secrets=[config.api_key],
            timeout=self.options.timeout_seconds or 20,
            error_text=lambda body: body.get("message") if isinstance(body, dict) else None,
        )

    def search(self, request, ctx):
        """One query; the HttpClient retries, honours the timeout and stops when ctx is cancelled."""
        limit = request.limit or self.options.default_search_limit or 5
        params = {"q": request.query, "n": limit, "region": self.options.region}
        body, _ = self.http.request_json("GET", "/search", params=params, ctx=ctx)
        items = body.get("results") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise self.http.error("unexpected response shape: 'results' should be a list")
        hits = [
            SearchHit(
                title=item.get("title") or item["url"],
                url=item["url"],
                snippet=item.get("summary") or "",
            )
            for item in items
            if isinstance(item, dict) and isinstance(item.get("url"), str)
        ]
        return SearchResponse(hits=tuple(hits[:limit]))

    def close(self):
        """Close the HTTP session (called when the config entry changes)."""
        self.http.close()


@frozen(kw_only=True)
class DocsOptions(CommonOptions):
    """``options`` of an ``acme-docs`` entry: the folder of Markdown files to search."""

    root: str = option("~/docs")


class DocsProvider:
    """A keyless provider: searches the Markdown files of a local folder."""

    def __init__(self, config):
        self.name = config.name
        self.root = Path(config.options.root).expanduser()

    def search(self, request, ctx):
        """Files whose text holds every word of the query, checking for cancellation as it goes."""
        if not self.root.is_dir():
            raise ProviderError(f"acme-docs: {self.root} is not a folder", provider=self.name)
        words = request.query.lower().split()
        hits = []
        for path in sorted(self.root.rglob("*.md")):
            if ctx is not None and ctx.cancelled:
                raise ProviderError("acme-docs: cancelled", provider=self.name)
            text = path.read_text(encoding="utf-8", errors="replace")
            if all(word in text.lower() for word in words):
                first = text.strip().splitlines()[0] if text.strip() else path.name
                hits.append(
                    SearchHit(title=first.lstrip("# "), url=path.as_uri(), snippet=text[:200])
                )
        return SearchResponse(hits=tuple(hits[: request.limit or 10]))


ACME = ProviderType(
    name="acme",
    label="Acme Search",
    factory=AcmeProvider,
    options_class=AcmeOptions,
    search=Search(default_limit=5),
    key=ApiKey(env="ACME_API_KEY", url="https://acme.example/keys"),
)
DOCS = ProviderType(
    name="acme-docs",
    label="Acme local docs",
    factory=DocsProvider,
    options_class=DocsOptions,
    search=Search(),
)


@hookimpl
def register_provider_types(register):
    """Register both provider types."""
    register(ACME)
    register(DOCS)
