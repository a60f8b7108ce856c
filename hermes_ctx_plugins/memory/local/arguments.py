"""The arguments a model passes to ctx-local's tools, checked against the tools' own JSON schemas.

Tool arguments come from the model: anything JSON can say, of any size — ``2**63`` where an id is
expected, a 10 MB string, a list of a million ids. They are checked before anything touches the
store, against the schema the model was shown, so the bounds it is told are the bounds enforced.
The subset of JSON schema the tools use is understood: ``type`` (``string``, ``integer``,
``array``), ``enum``, ``minimum`` / ``maximum``, ``minLength`` / ``maxLength`` (text of only
whitespace counts as empty), ``minItems`` / ``maxItems``, ``items``, ``required`` and ``default``.
Two leniencies: ``null`` counts as leaving the argument out, and one item where a list is
expected is a list of that item.

A bad argument raises :class:`ArgumentError`, whose message names the argument, shows a bounded
piece of its value and says what is valid. The tool returns it to the model as an error result:
the model's mistake, not a failure of the provider.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...errors import HermesCtxError
from ...safety.engine.tables import renders_blank

#: how much of a bad text value an error message shows
_SHOWN_CHARS = 60
#: how many items of a bad list an error message shows
_SHOWN_ITEMS = 5
_TYPES: dict[str, type] = {"string": str, "integer": int, "array": list}


class ArgumentError(HermesCtxError, ValueError):
    """A tool argument that is not valid; the message is written for the model."""


def parse(arguments: object, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` checked against a tool's ``parameters`` schema, with defaults filled in and
    arguments the schema does not name left out. Raises :class:`ArgumentError`."""
    if not isinstance(arguments, dict):
        raise ArgumentError(f"the arguments must be a JSON object, got {describe(arguments)}")
    required = set(parameters.get("required", ()))
    parsed: dict[str, Any] = {}
    for name, schema in parameters["properties"].items():
        value = arguments.get(name)
        if value is not None:
            parsed[name] = _checked(name, value, schema)
        elif name in required:
            raise ArgumentError(f"{name!r} is required: {expected(schema)}")
        elif "default" in schema:
            parsed[name] = schema["default"]
    return parsed


def _checked(name: str, value: Any, schema: Mapping[str, Any]) -> Any:
    if schema["type"] != "array":
        if not _valid(value, schema):
            raise ArgumentError(f"{name!r} must be {expected(schema)}, got {describe(value)}")
        return value
    items = [value] if _is_type(value, schema["items"]) else value
    if not _valid(items, schema):
        raise ArgumentError(f"{name!r} must be {expected(schema)}, got {describe(value)}")
    for number, item in enumerate(items):
        if not _valid(item, schema["items"]):
            where = f" (item {number} is {describe(item)})" if items is value and len(items) > 1 else ""
            raise ArgumentError(f"{name!r} must be {expected(schema)}, got {describe(value)}{where}")
    return items


def _is_type(value: Any, schema: Mapping[str, Any]) -> bool:
    return isinstance(value, _TYPES[schema["type"]]) and not isinstance(value, bool)


def _valid(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets ``schema`` (an array's items are checked separately)."""
    if not _is_type(value, schema):
        return False
    if "enum" in schema:
        return bool(value in schema["enum"])
    if isinstance(value, int):
        return bool(schema.get("minimum", -math.inf) <= value <= schema.get("maximum", math.inf))
    if isinstance(value, str):
        # text of characters that render as nothing is as empty as white space (a hostile-values pass)
        return bool(len(value) <= schema.get("maxLength", math.inf)
                    and (0 if renders_blank(value) else len(value.strip())) >= schema.get("minLength", 0))
    return bool(schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", math.inf))


def expected(schema: Mapping[str, Any]) -> str:
    """What ``schema`` accepts, in words: "a whole number from 1 to 20", "'chat' or 'user'"."""
    if "enum" in schema:
        choices = [repr(choice) for choice in schema["enum"]]
        return choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}"
    kind = schema["type"]
    if kind == "integer":
        return "a whole number" + _range(schema.get("minimum"), schema.get("maximum"), "")
    if kind == "string":
        empty = schema.get("minLength", 0) == 1
        low = None if empty else schema.get("minLength")
        return ("non-empty text" if empty else "text") + _range(low, schema.get("maxLength"), " characters")
    empty = schema.get("minItems", 0) == 1
    low = None if empty else schema.get("minItems")
    return (("a non-empty list" if empty else "a list") + _range(low, schema.get("maxItems"), " items")
            + f", each {expected(schema['items'])}")


def _range(low: int | None, high: int | None, unit: str) -> str:
    """The bounds in words, to follow a noun: ``from 1 to 20``, ``of at most 2,000 characters``."""
    if low is not None and high is not None:
        bounds = f"{low:,} to {high:,}"
        return f" of {bounds}{unit}" if unit else f" from {bounds}"
    if low is None and high is None:
        return ""
    bound = f"at most {high:,}" if high is not None else f"at least {low:,}"
    return f" of {bound}{unit}" if unit else f" {bound}"


def describe(value: Any, *, depth: int = 0) -> str:
    """A short, bounded rendering of a JSON value for an error message. It never raises: no full
    ``repr`` of a huge or deeply nested value, no decimal conversion of an integer of thousands
    of digits (Python refuses those)."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        if value.bit_length() <= 128:
            return str(value)
        return f"a whole number of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if len(value) <= _SHOWN_CHARS:
            return repr(value)
        return f"{value[:_SHOWN_CHARS]!r}… ({len(value):,} characters)"
    if isinstance(value, (list, tuple)):
        if depth or len(value) > _SHOWN_ITEMS:
            return f"a list of {_count(len(value), 'item')}"
        return "[" + ", ".join(describe(item, depth=depth + 1) for item in value) + "]"
    if isinstance(value, dict):
        return f"an object with {_count(len(value), 'key')}"
    return f"a {type(value).__name__}"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
