"""A small JSON Schema checker for tool arguments.

Supported keywords: ``type``, ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties`` (boolean or schema), ``patternProperties``, ``minProperties``,
``maxProperties``, ``items`` (one schema), ``minItems``, ``maxItems``, ``uniqueItems``,
``minLength``, ``maxLength``, ``pattern``, ``minimum``, ``maximum``, ``exclusiveMinimum``,
``exclusiveMaximum``, ``multipleOf``, ``anyOf``, ``oneOf``, ``allOf``, ``not`` and local ``$ref``
(``#/$defs/...``, ``#/definitions/...``, ``#``). Annotations (``description``, ``title``,
``default``, ``format``, ...) are accepted and not checked. Any other keyword is refused when a
tool registers (:func:`check_schema`), so no part of a schema is silently ignored.

Errors name the field by its path (``queries[2]``) and say what was expected.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["SchemaDefinitionError", "SchemaError", "check_schema", "describe", "validate"]


class SchemaError(ValueError):
    """Arguments that do not match a tool's schema; the message names the field."""


class SchemaDefinitionError(ValueError):
    """A schema that uses a keyword this checker does not support, or is malformed."""


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

#: Keywords that carry a schema, a list of schemas or a map of schemas.
_SCHEMA_VALUED = {"items", "not", "additionalProperties"}
_SCHEMA_LISTS = {"anyOf", "oneOf", "allOf"}
_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions"}
_CHECKED = {
    "type",
    "enum",
    "const",
    "required",
    "minProperties",
    "maxProperties",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "$ref",
}
_ANNOTATIONS = {
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
}
SUPPORTED_KEYWORDS = frozenset(
    _SCHEMA_VALUED | _SCHEMA_LISTS | _SCHEMA_MAPS | _CHECKED | _ANNOTATIONS
)


def describe(value: Any, *, show: bool = False) -> str:
    """What kind of JSON value *value* is (``a string``); with *show*, the value too, briefly
    (``the string "abc"``, ``the number 5``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}" if show else "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}" if show else "a number"
    if isinstance(value, str):
        return f"the string {_brief_json(value)}" if show else "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _brief_json(value: str, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _brief(value: Any, limit: int = 60) -> str:
    """*value*'s repr, cut at *limit* characters (a model may send megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _index(path: str, index: int) -> str:
    return f"{path}[{index}]" if path else f"[{index}]"


# --- checking a schema when a tool registers --------------------------------------------------


def check_schema(schema: Any, *, root: Any = None, path: str = "#") -> None:
    """Raise :class:`SchemaDefinitionError` naming the first keyword :func:`validate` would not
    enforce (or a malformed value, or a ``$ref`` that does not resolve)."""
    root = schema if root is None else root
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaDefinitionError(f"{path}: a schema must be an object or a boolean")
    for keyword, value in schema.items():
        where = f"{path}/{keyword}"
        if keyword not in SUPPORTED_KEYWORDS:
            raise SchemaDefinitionError(
                f"{where}: the keyword {keyword!r} is not supported by this host's checker"
            )
        if keyword in _SCHEMA_VALUED:
            check_schema(value, root=root, path=where)
        elif keyword in _SCHEMA_LISTS:
            if not isinstance(value, list) or not value:
                raise SchemaDefinitionError(f"{where}: must be a non-empty list of schemas")
            for index, sub in enumerate(value):
                check_schema(sub, root=root, path=f"{where}/{index}")
        elif keyword in _SCHEMA_MAPS:
            if not isinstance(value, dict):
                raise SchemaDefinitionError(f"{where}: must be an object of schemas")
            for name, sub in value.items():
                if keyword == "patternProperties":
                    _compile(name, where)
                check_schema(sub, root=root, path=f"{where}/{name}")
        elif keyword == "$ref":
            _resolve(root, value, where)
        elif keyword == "type":
            names = value if isinstance(value, list) else [value]
            unknown = [n for n in names if n not in _TYPES]
            if unknown:
                raise SchemaDefinitionError(f"{where}: unknown type(s) {unknown}")
        elif keyword == "pattern":
            _compile(value, where)
        elif keyword == "enum" and not isinstance(value, list):
            raise SchemaDefinitionError(f"{where}: must be a list")
        elif keyword == "required" and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise SchemaDefinitionError(f"{where}: must be a list of property names")


def _compile(pattern: Any, where: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise SchemaDefinitionError(f"{where}: invalid pattern {pattern!r} ({exc})") from None


def _resolve(root: Any, ref: Any, where: str = "$ref") -> Any:
    """The schema a local ``$ref`` (``#`` or ``#/a/b``, JSON-pointer escapes honoured) names."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        raise SchemaDefinitionError(f"{where}: only local references (#/...) are supported")
    node = root
    for token in ref[2:].split("/") if ref != "#" else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or token not in node:
            raise SchemaDefinitionError(f"{where}: {ref!r} does not resolve")
        node = node[token]
    return node


# --- validating arguments ---------------------------------------------------------------------


def validate(value: Any, schema: Any, path: str = "", *, root: Any = None) -> None:
    """Raise :class:`SchemaError` naming the first field of *value* that breaks *schema*."""
    root = schema if root is None else root
    where = path or "arguments"
    if schema is True or schema is None:
        return
    if schema is False:
        raise SchemaError(f"{where}: no value is allowed here")
    if "$ref" in schema:
        try:
            target = _resolve(root, schema["$ref"])
        except SchemaDefinitionError as exc:
            raise SchemaError(f"{where}: the tool's schema is broken: {exc}") from None
        validate(value, target, path, root=root)
    _combinators(value, schema, path, root)
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES[name](value) for name in names if name in _TYPES):
            raise SchemaError(f"{where}: expected {' or '.join(names)}, got {describe(value)}")
    if "const" in schema and not _equal(value, schema["const"]):
        raise SchemaError(f"{where}: must be {_brief(schema['const'])}, got {_brief(value)}")
    if "enum" in schema and not any(_equal(value, option) for option in schema["enum"]):
        options = ", ".join(repr(option) for option in schema["enum"])
        raise SchemaError(f"{where}: must be one of {options}, got {_brief(value)}")
    if isinstance(value, str):
        _check_string(value, schema, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, where)
    if isinstance(value, list):
        _check_array(value, schema, path, root)
    if isinstance(value, dict):
        _check_object(value, schema, path, root)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0``, but ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _passes(value: Any, schema: Any, path: str, root: Any) -> str | None:
    try:
        validate(value, schema, path, root=root)
    except SchemaError as exc:
        return str(exc)
    return None


def _combinators(value: Any, schema: dict, path: str, root: Any) -> None:
    where = path or "arguments"
    for sub in schema.get("allOf", ()):
        validate(value, sub, path, root=root)
    if "anyOf" in schema:
        problems = [_passes(value, sub, path, root) for sub in schema["anyOf"]]
        if all(problems):
            raise SchemaError(
                problems[0]
                if len(problems) == 1
                else f"{where}: " + " or ".join(map(str, problems))
            )
    if "oneOf" in schema:
        problems = [_passes(value, sub, path, root) for sub in schema["oneOf"]]
        matched = sum(1 for problem in problems if problem is None)
        if matched == 0:
            raise SchemaError(
                problems[0]
                if len(problems) == 1
                else f"{where}: " + " or ".join(map(str, problems))
            )
        if matched > 1:
            raise SchemaError(f"{where}: matches more than one of the allowed forms")
    if "not" in schema and _passes(value, schema["not"], path, root) is None:
        raise SchemaError(f"{where}: is a form that is not allowed here")


def _check_string(value: str, schema: dict, where: str) -> None:
    if len(value) < schema.get("minLength", 0):
        if schema.get("minLength") == 1:
            raise SchemaError(f"{where}: must not be empty")
        raise SchemaError(f"{where}: must be at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise SchemaError(f"{where}: must be at most {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        raise SchemaError(f"{where}: does not match the pattern {schema['pattern']}")


def _check_number(value: float, schema: dict, where: str) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        raise SchemaError(f"{where}: must be at least {schema['minimum']}, got {value}")
    if "maximum" in schema and value > schema["maximum"]:
        raise SchemaError(f"{where}: must be at most {schema['maximum']}, got {value}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        raise SchemaError(
            f"{where}: must be greater than {schema['exclusiveMinimum']}, got {value}"
        )
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        raise SchemaError(f"{where}: must be less than {schema['exclusiveMaximum']}, got {value}")
    step = schema.get("multipleOf")
    if step and math.isfinite(value):
        quotient = value / step
        if not math.isclose(quotient, round(quotient), abs_tol=1e-9):
            raise SchemaError(f"{where}: must be a multiple of {step}, got {value}")


def _check_array(value: list, schema: dict, path: str, root: Any) -> None:
    where = path or "arguments"
    if len(value) < schema.get("minItems", 0):
        raise SchemaError(f"{where}: needs at least {schema['minItems']} item(s), got {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        raise SchemaError(f"{where}: allows at most {schema['maxItems']} items, got {len(value)}")
    if schema.get("uniqueItems"):
        for index, item in enumerate(value):
            if any(_equal(item, earlier) for earlier in value[:index]):
                raise SchemaError(f"{_index(path, index)}: duplicates an earlier item")
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        for index, item in enumerate(value):
            validate(item, items, _index(path, index), root=root)


def _check_object(value: dict, schema: dict, path: str, root: Any) -> None:
    where = path or "arguments"
    properties = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            raise SchemaError(f"{_join(path, key)}: required field is missing")
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        raise SchemaError(f"{where}: needs at least {schema['minProperties']} field(s)")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        raise SchemaError(f"{where}: allows at most {schema['maxProperties']} field(s)")
    patterns = [(re.compile(p), sub) for p, sub in schema.get("patternProperties", {}).items()]
    extra = schema.get("additionalProperties", True)
    others = [
        key
        for key in value
        if key not in properties and not any(p.search(str(key)) for p, _ in patterns)
    ]
    if extra is False and others:
        allowed = ", ".join(properties) or "none"
        unknown = sorted(str(key) for key in others)
        raise SchemaError(
            f"{where}: unknown field(s) {', '.join(map(_brief, unknown[:10]))} (allowed: {allowed})"
        )
    for key, sub in properties.items():
        if key in value:
            validate(value[key], sub, _join(path, key), root=root)
    for key, item in value.items():
        for pattern, sub in patterns:
            if pattern.search(str(key)):
                validate(item, sub, _join(path, str(key)), root=root)
    if isinstance(extra, dict):
        for key in others:
            validate(value[key], extra, _join(path, str(key)), root=root)
