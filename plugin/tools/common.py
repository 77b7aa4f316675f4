"""What the three tools share: provider resolution as tool errors, bounded concurrency."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, TypeVar

from pi_hostspec.types import ToolError

__all__ = ["MAX_WORKERS", "fold_singular", "resolve", "run_all"]

MAX_WORKERS = 5

T = TypeVar("T")
R = TypeVar("R")


def fold_singular(args: Any, single: str, plural: str) -> Any:
    """Fold a lone *single* string (``query``, ``url``) into the *plural* list argument."""
    if not isinstance(args, dict) or single not in args:
        return args
    args = dict(args)
    value = args.pop(single)
    values = args.get(plural)
    if values is None:
        args[plural] = [value] if isinstance(value, str) else value
    elif isinstance(values, list) and isinstance(value, str) and value not in values:
        args[plural] = [value, *values]
    return args


def resolve(capability: str, requested: Optional[str]) -> tuple[Any, Any, Any]:
    """(provider, provider config, config) for *capability*; config problems become ToolErrors."""
    from ..errors import ConfigError
    from ..registry import resolve_provider

    try:
        return resolve_provider(capability, requested)
    except ConfigError as exc:
        raise ToolError(str(exc)) from None


def run_all(
    items: Sequence[T],
    work: Callable[[T], R],
    *,
    on_done: Optional[Callable[[int, int], None]] = None,
    max_workers: int = MAX_WORKERS,
) -> list[R | BaseException]:
    """Run *work* on every item concurrently (bounded); results or exceptions in item order."""
    results: list[Any] = [None] * len(items)
    if len(items) == 1:
        try:
            results[0] = work(items[0])
        except Exception as exc:  # noqa: BLE001 - reported per item by the caller
            results[0] = exc
        return results
    from concurrent.futures import ThreadPoolExecutor

    done = 0
    with ThreadPoolExecutor(max_workers=min(max_workers, len(items))) as pool:
        futures = [pool.submit(work, item) for item in items]
        for index, future in enumerate(futures):
            try:
                results[index] = future.result()
            except Exception as exc:  # noqa: BLE001
                results[index] = exc
            done += 1
            if on_done is not None:
                on_done(done, len(items))
    return results
