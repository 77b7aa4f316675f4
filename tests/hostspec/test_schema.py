"""validate(): the JSON Schema subset tool arguments use, with errors that name the field."""

from __future__ import annotations

import pytest
from pi_hostspec import SchemaDefinitionError, SchemaError, check_schema, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "pattern": r"\S"},
            "minItems": 1,
            "maxItems": 3,
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "mode": {"type": "string", "enum": ["fast", "deep"]},
        "code": {"type": "string", "pattern": r"^[A-Z]{2}$", "maxLength": 2},
        "flag": {"type": "boolean"},
        "nested": {
            "type": "object",
            "properties": {"inner": {"type": "number"}},
            "required": ["inner"],
        },
    },
    "required": ["queries"],
    "additionalProperties": False,
}


def _error(value, schema=SCHEMA) -> str:
    with pytest.raises(SchemaError) as info:
        validate(value, schema)
    return str(info.value)


def test_valid_arguments_pass():
    """Arguments that satisfy every keyword raise nothing."""
    validate(
        {
            "queries": ["a", "b"],
            "limit": 5,
            "mode": "deep",
            "code": "DE",
            "flag": True,
            "nested": {"inner": 1.5},
        },
        SCHEMA,
    )


def test_schema_error_is_a_value_error():
    """SchemaError is a ValueError, so generic handlers catch it."""
    assert issubclass(SchemaError, ValueError)


def test_missing_required_field_is_named():
    """A missing required field is named in the message."""
    assert _error({}) == "queries: required field is missing"


def test_missing_nested_required_field_names_its_path():
    """A missing field inside a nested object is named by its dotted path."""
    assert _error({"queries": ["a"], "nested": {}}) == "nested.inner: required field is missing"


def test_wrong_item_type_names_the_index():
    """A wrong type inside an array names the path with the index and what was found."""
    assert _error({"queries": ["ok", 7]}) == "queries[1]: expected string, got a number"


@pytest.mark.parametrize(
    "value, found",
    [("x", "a string"), (None, "null"), ({"a": 1}, "an object"), (True, "a boolean")],
)
def test_wrong_top_level_field_type(value, found):
    """A field of the wrong type says what was expected and what kind of value came."""
    assert _error({"queries": value}) == f"queries: expected array, got {found}"


def test_arguments_not_an_object():
    """A non-object at the top level is reported against 'arguments'."""
    assert _error(["queries"]) == "arguments: expected object, got an array"


def test_enum_lists_the_options():
    """A value outside an enum names the field, the allowed options and the value."""
    message = _error({"queries": ["a"], "mode": "slow"})
    assert message == "mode: must be one of 'fast', 'deep', got 'slow'"


def test_min_items():
    """Too few items names the field and the minimum."""
    assert _error({"queries": []}) == "queries: needs at least 1 item(s), got 0"


def test_max_items():
    """Too many items names the field and the maximum."""
    assert _error({"queries": ["a", "b", "c", "d"]}) == "queries: allows at most 3 items, got 4"


def test_minimum():
    """A number under the minimum names the field, the bound and the value."""
    assert _error({"queries": ["a"], "limit": 0}) == "limit: must be at least 1, got 0"


def test_maximum():
    """A number over the maximum names the field, the bound and the value."""
    assert _error({"queries": ["a"], "limit": 51}) == "limit: must be at most 50, got 51"


def test_bounds_are_inclusive():
    """The minimum and maximum themselves are allowed."""
    validate({"queries": ["a"], "limit": 1}, SCHEMA)
    validate({"queries": ["a"], "limit": 50}, SCHEMA)


def test_min_length_one_says_must_not_be_empty():
    """An empty string where minLength is 1 says the field must not be empty."""
    assert _error({"queries": ["a", ""]}) == "queries[1]: must not be empty"


def test_min_length_above_one():
    """A minLength above 1 states the number of characters."""
    assert (
        _error("ab", {"type": "string", "minLength": 3})
        == "arguments: must be at least 3 characters"
    )


def test_max_length():
    """A string over maxLength names the field and the limit."""
    assert _error({"queries": ["a"], "code": "DEU"}) == "code: must be at most 2 characters"


def test_pattern():
    """A string not matching the pattern names the field and the pattern."""
    assert _error({"queries": ["a"], "code": "de"}) == "code: does not match the pattern ^[A-Z]{2}$"
    assert _error({"queries": ["   "]}) == r"queries[0]: does not match the pattern \S"


def test_additional_properties_false_names_the_unknown_field():
    """An unknown field is named, together with the allowed ones."""
    message = _error({"queries": ["a"], "qeury": "x"})
    assert "unknown field(s) 'qeury'" in message
    assert message.startswith("arguments: ")
    assert "queries" in message.split("allowed:")[1]


def test_additional_properties_allowed_by_default():
    """Without additionalProperties: false, extra fields pass."""
    validate({"a": 1, "b": 2}, {"type": "object", "properties": {"a": {"type": "integer"}}})


def test_bool_is_not_an_integer():
    """A boolean is rejected where an integer (or number) is expected, although bool subclasses int."""
    assert _error({"queries": ["a"], "limit": True}) == "limit: expected integer, got a boolean"
    assert _error(False, {"type": "number"}) == "arguments: expected number, got a boolean"


def test_integral_float_is_an_integer():
    """3.0 is accepted as an integer (JSON has one number type); 3.5 is not."""
    validate({"queries": ["a"], "limit": 3.0}, SCHEMA)
    assert _error({"queries": ["a"], "limit": 3.5}) == "limit: expected integer, got a number"


def test_boolean_type():
    """A non-boolean where a boolean is expected is named."""
    assert _error({"queries": ["a"], "flag": "yes"}) == "flag: expected boolean, got a string"


def test_type_list():
    """A list of types accepts any of them and names all when none fits."""
    schema = {"type": ["string", "null"]}
    validate(None, schema)
    validate("x", schema)
    assert _error(1, schema) == "arguments: expected string or null, got a number"


def test_any_of():
    """anyOf passes when one option fits and reports the options' problems when none does."""
    schema = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    validate("x", schema)
    validate(["x"], schema)
    message = _error(5, schema)
    assert "expected string" in message and "expected array" in message


def test_long_values_are_quoted_briefly():
    """A huge wrong value or unknown key is cut short in the message, never echoed whole."""
    import pytest
    from pi_hostspec.schema import SchemaError, validate

    schema = {
        "type": "object",
        "properties": {"e": {"enum": ["a", "b"]}},
        "additionalProperties": False,
    }
    with pytest.raises(SchemaError) as info:
        validate({"e": "x" * 100000}, schema)
    assert len(str(info.value)) < 200 and "…" in str(info.value)
    with pytest.raises(SchemaError) as info:
        validate({"k" * 100000: 1}, schema)
    assert len(str(info.value)) < 200


def test_const_must_match_exactly():
    """const accepts only its value (and 1 equals 1.0, but true is not 1)."""
    validate({"v": 1.0}, {"properties": {"v": {"const": 1}}})
    assert _error({"v": True}, {"properties": {"v": {"const": 1}}}) == "v: must be 1, got True"


def test_enum_does_not_confuse_booleans_with_numbers():
    """enum [1, 2] refuses true, as JSON Schema does."""
    assert "must be one of 1, 2" in _error({"v": True}, {"properties": {"v": {"enum": [1, 2]}}})


def test_unique_items_names_the_duplicate():
    """uniqueItems names the first item that repeats an earlier one."""
    schema = {"properties": {"urls": {"type": "array", "uniqueItems": True}}}
    validate({"urls": ["a", "b"]}, schema)
    assert _error({"urls": ["a", "b", "a"]}, schema) == "urls[2]: duplicates an earlier item"


def test_local_ref_is_followed():
    """A local $ref into $defs is validated like the schema it names."""
    schema = {
        "$defs": {"domain": {"type": "string", "minLength": 3}},
        "properties": {"site": {"$ref": "#/$defs/domain"}},
    }
    validate({"site": "abc"}, schema)
    assert _error({"site": "a"}, schema) == "site: must be at least 3 characters"


def test_one_of_needs_exactly_one_match():
    """oneOf fails when no form matches and when more than one does."""
    schema = {"properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}
    assert "more than one" in _error({"v": 3}, schema)
    validate({"v": 2.5}, schema)
    assert "expected integer" in _error({"v": "x"}, schema)


def test_schema_valued_additional_properties_checks_the_extra_fields():
    """additionalProperties given as a schema validates every field not in properties."""
    schema = {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}
    validate({"a": "anything", "b": 2}, schema)
    assert _error({"a": 1, "b": "two"}, schema) == "b: expected integer, got a string"


def test_all_of_and_not():
    """allOf applies every schema; not refuses what its schema accepts."""
    schema = {"allOf": [{"type": "string"}, {"minLength": 2}], "not": {"const": "no"}}
    validate("yes", schema)
    assert "at least 2" in _error("y", schema)
    assert "not allowed" in _error("no", schema)


@pytest.mark.parametrize(
    "schema, keyword",
    [
        ({"type": "object", "if": {}}, "if"),
        ({"properties": {"a": {"prefixItems": []}}}, "prefixItems"),
        ({"items": {"contains": {}}}, "contains"),
        ({"dependentRequired": {}}, "dependentRequired"),
    ],
)
def test_unsupported_keywords_are_refused_by_name(schema, keyword):
    """check_schema refuses any keyword validate() would not enforce, naming it and its place."""
    with pytest.raises(SchemaDefinitionError, match=repr(keyword)):
        check_schema(schema)


def test_remote_or_broken_refs_are_refused():
    """Only local references that resolve are accepted."""
    with pytest.raises(SchemaDefinitionError, match="only local"):
        check_schema({"$ref": "https://example.com/schema.json"})
    with pytest.raises(SchemaDefinitionError, match="does not resolve"):
        check_schema({"$ref": "#/$defs/missing"})


def test_the_web_tools_schemas_are_fully_checkable():
    """Our own tools use only keywords the checker enforces."""
    from pi_web_tools.plugin import TOOLS

    for tool in TOOLS:
        check_schema(tool.parameters)
