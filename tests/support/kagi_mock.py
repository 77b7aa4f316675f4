"""Kagi v1 search answers for ``responses`` tests written with v0-shaped bodies: the default
search API is v1 now, and the seeds' scenarios must hold on it."""

from __future__ import annotations

from typing import Any

V1 = "https://kagi.com/api/v1"


def v1_body(body: Any) -> Any:
    """A v0 search body in v1's shape: ``data.search`` items (``published`` becomes ``time``),
    ``data.related_search``; an error envelope keeps its list with ``message`` for ``msg``."""
    if not isinstance(body, dict):
        return body
    meta = {k: v for k, v in (body.get("meta") or {}).items() if k != "api_balance"}
    if "error" in body:
        errors = [
            {"code": e.get("code"), "message": e.get("msg")} if isinstance(e, dict) else e
            for e in body["error"]
        ]
        return {"meta": meta, "data": [], "error": errors}
    data = body.get("data")
    if not isinstance(data, list):
        return {"meta": meta, "data": data}
    search, related = [], []
    for item in data:
        if isinstance(item, dict) and item.get("t") == 1:
            related += item.get("list") or []
        elif isinstance(item, dict):
            hit = {k: v for k, v in item.items() if k not in ("t", "published")}
            if "published" in item:
                hit["time"] = item["published"]
            search.append(hit)
        else:
            search.append(item)
    return {"meta": meta, "data": {"search": search, "related_search": related}}


def kagi_search(mock, json: Any = None, status: int = 200, match=(), **kwargs) -> Any:
    """Register one Kagi v1 ``POST /search`` answering *json* (v0-shaped, converted)."""
    return mock.post(f"{V1}/search", json=v1_body(json), status=status, match=list(match), **kwargs)
