"""A small JSON Schema checker for tool arguments (the subset tool schemas use).

Supported keywords: type, properties, required, additionalProperties (bool), items, minItems,
maxItems, minLength, maxLength, pattern, enum, minimum, maximum, anyOf.
Errors name the field by its path (``queries[2]``) and say what was expected.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SchemaError", "validate"]


class SchemaError(ValueError):
    """Arguments that do not match a tool's schema; the message names the field."""


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _brief(value: Any, limit: int = 60) -> str:
    """*value*'s repr, cut at *limit* characters (a model may send megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate(value: Any, schema: dict, path: str = "") -> None:
    """Raise :class:`SchemaError` naming the first field of *value* that breaks *schema*."""
    where = path or "arguments"
    if "anyOf" in schema:
        problems = []
        for option in schema["anyOf"]:
            try:
                validate(value, option, path)
                break
            except SchemaError as exc:
                problems.append(str(exc))
        else:
            raise SchemaError(
                problems[0] if len(problems) == 1 else f"{where}: " + " or ".join(problems)
            )
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES[name](value) for name in names if name in _TYPES):
            raise SchemaError(f"{where}: expected {' or '.join(names)}, got {_describe(value)}")
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(repr(option) for option in schema["enum"])
        raise SchemaError(f"{where}: must be one of {options}, got {_brief(value)}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            if schema.get("minLength") == 1:
                raise SchemaError(f"{where}: must not be empty")
            raise SchemaError(f"{where}: must be at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise SchemaError(f"{where}: must be at most {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise SchemaError(f"{where}: does not match the pattern {schema['pattern']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"{where}: must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"{where}: must be at most {schema['maximum']}, got {value}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise SchemaError(
                f"{where}: needs at least {schema['minItems']} item(s), got {len(value)}"
            )
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise SchemaError(
                f"{where}: allows at most {schema['maxItems']} items, got {len(value)}"
            )
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                validate(item, items, f"{path}[{index}]" if path else f"[{index}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise SchemaError(f"{_join(path, key)}: required field is missing")
        if schema.get("additionalProperties") is False:
            unknown = sorted(str(key) for key in value if key not in properties)
            if unknown:
                allowed = ", ".join(properties) or "none"
                raise SchemaError(
                    f"{where}: unknown field(s) {', '.join(map(_brief, unknown[:10]))} (allowed: {allowed})"
                )
        for key, sub in properties.items():
            if key in value:
                validate(value[key], sub, _join(path, key))
