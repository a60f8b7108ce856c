"""How every option is declared and checked: our settings, the built-in strategies' and providers'
options, and a third-party plugin's.

Options are a frozen dataclass with type hints and defaults. A field that needs more than its type
says so once, with :func:`option`::

    @dataclass(frozen=True)
    class RecentOptions:
        keep_last: int = option(6, ge=1, le=500)              # a bound: ge / gt / le / lt
        mode: str = option("fast", choices=("fast", "exact"))  # a choice
        label: str = ""                                       # a plain field: its type is the check

:func:`build_dataclass` turns a mapping read from YAML into such a dataclass, refusing an unknown key
(with a did-you-mean), a value of the wrong type, a number that is not finite or is outside its
field's bounds, and a value that is not one of its field's choices. Every error is a
:class:`~hermes_ctx_plugins.errors.ConfigError` naming the key path, the value and what is valid; the
config it came from adds the file and line (:meth:`hermes_ctx_plugins.config.Config.locate`). An
instance built in code is taken as it is: whoever built it answers for its values.

Why a helper of our own rather than pydantic v2, which every hermes install has: the checking is
about 200 lines here, and pydantic would make the package slower to start and its errors less
precise. Measured with ``benchmarks/bench_config.py`` on the 2-core development machine, shared
(the least disturbed of 7 fresh interpreters): this module imports in about 1.5 ms, the whole config
package in about 31 ms (PyYAML is 17 ms of it); ``import pydantic`` takes about 47 ms and
``from pydantic import TypeAdapter, ValidationError`` (what validating needs) about 85 ms, and
building pydantic's validator for our settings 60-90 ms more, once per process — where
``import hermes_ctx_plugins`` is to take at most 100 ms and ``load_host`` 150 ms. Pydantic's
validation itself is faster (about 0.01 ms against 0.8 ms for a ``ctx_plugins:`` section with
options and two deployments), but ``load_config`` of hermes' full default config takes about 60 ms,
nearly all of it reading the YAML, so that saves nothing a user notices. Its errors would also have
to be translated, kind by kind, into ours ("a whole number", the bounds, did-you-mean, the value cut
to 60 characters); its lax mode turns ``"5"`` into 5 and ``1`` into ``True``, which a config must not
do silently; and it is no dependency of ours (pluggy, PyYAML, tiktoken and httpx are).
"""

from __future__ import annotations

import dataclasses
import math
import re
import reprlib
import types
import typing
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from .errors import ConfigError, did_you_mean

__all__ = ["MAX_FLOAT", "MAX_INT", "FrozenMap", "Rule", "build_dataclass", "freeze", "option", "plugin_options"]

T = TypeVar("T")

#: The largest float option unless its field says otherwise: about 31 years in seconds, within
#: what Python's timed waits accept (``threading.TIMEOUT_MAX`` is about 9.2e9 s).
MAX_FLOAT = 1e9
#: The largest whole-number option unless its field says otherwise: what SQLite and C code hold.
MAX_INT = 2**63 - 1
#: the key under which :func:`option` keeps a field's :class:`Rule` in ``dataclasses.field`` metadata
_RULE = "hermes_ctx_plugins.option"
#: each dataclass's resolved field types: resolving compiles every annotation's text anew, for every
#: settings section and plugin's options of every host (one per deployment, per Bridge, per check)
_HINTS: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping that, unlike ``types.MappingProxyType``, deep-copies and pickles.

    hermes deep-copies the context engine for every agent, settings and options included.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenMap:
        return self  # immutable all the way down (see freeze)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._data,))


def freeze(value: Any) -> Any:
    """``value`` with every mapping made a :class:`FrozenMap` and every list a tuple."""
    if isinstance(value, Mapping):
        return FrozenMap({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Rule:
    """What one field allows beyond its type. In a list or a mapping, it applies to each item."""

    #: inclusive (``ge``, ``le``) and exclusive (``gt``, ``lt``) bounds of a number
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    #: the only values allowed, when not ``None``
    choices: tuple[Any, ...] | None = None
    #: what a valid value is, for the error: ``'x' is not <kind>; valid: ...``
    kind: str = "valid"

    def range_text(self) -> str:
        """The bounds as `` >= 0 and <= 1`` (empty without bounds)."""
        parts = [f"{sign} {bound:g}" for sign, bound in ((">=", self.ge), (">", self.gt), ("<=", self.le),
                                                         ("<", self.lt)) if bound is not None]
        return f" {' and '.join(parts)}" if parts else ""

    def outside(self, value: float) -> bool:
        return ((self.ge is not None and value < self.ge) or (self.gt is not None and value <= self.gt)
                or (self.le is not None and value > self.le) or (self.lt is not None and value >= self.lt))


_NO_RULE = Rule()


def option(default: Any, *, ge: float | None = None, gt: float | None = None, le: float | None = None,
           lt: float | None = None, choices: tuple[Any, ...] | None = None, kind: str | None = None) -> Any:
    """A dataclass field with a default and what it allows beyond its type.

    :param default: the value when the key is not set; a mapping or list becomes a frozen copy.
    :param ge: the least value allowed (``>=``); ``gt``: the value it must be above (``>``);
        ``le``: the most allowed (``<=``); ``lt``: the value it must be below (``<``).
    :param choices: the only values allowed.
    :param kind: what a valid value is, with its article (``"a review mode"``), for the error
        ``'x' is not a review mode; valid: ...``; default: ``'x' is not valid; valid: ...``.
    """
    rule = Rule(ge=ge, gt=gt, le=le, lt=lt, choices=tuple(choices) if choices is not None else None,
                kind=kind or "valid")
    metadata = {_RULE: rule}
    if isinstance(default, (dict, tuple, list)):
        frozen = freeze(default)
        return field(default_factory=lambda: frozen, metadata=metadata)
    return field(default=default, metadata=metadata)


def build_dataclass(cls: type[T], data: Any, path: str, *, strict: bool = True) -> T:
    """The dataclass ``cls`` built from the mapping ``data`` found at the key path ``path``.

    :param strict: refuse keys ``cls`` has no field for; ``False`` for a section hermes shares
        with us, where such keys are hermes' own.
    :raises ConfigError: naming the key path, the value and what is valid.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"must be a mapping, got {describe(data)}", path=path, value=data,
            expected=f"a mapping with keys: {', '.join(f.name for f in dataclasses.fields(cls))}",  # type: ignore[arg-type]
        )
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        key_path = join_path(path, key)
        if key not in fields:
            if not strict:
                continue
            # a key of a section inside this one, one indent too far left (`enabled:` out of `archive:`): said so,
            # not a look-alike of this level's keys (a newcomer walk was told "did you mean 'disabled'")
            owners = [name for name in fields if dataclasses.is_dataclass(hints.get(name))
                      and key in {f.name for f in dataclasses.fields(hints[name])}]
            hint = (f" (a key of {', '.join(join_path(path, o) for o in owners)}: indent it under "
                    f"{' or '.join(owners)}?)" if owners else did_you_mean(key, fields))
            raise ConfigError(
                f"unknown key {short_repr(key)}{hint}; valid keys: {', '.join(fields)}",
                path=key_path, value=key, expected=", ".join(fields),
            )
        rule = fields[key].metadata.get(_RULE, _NO_RULE)
        kwargs[key] = _coerce(value, hints[key], key_path, rule, strict=strict)
    return cls(**kwargs)


def plugin_options(name: str, options_class: type[Any] | None, options: Any) -> Any:
    """A strategy's or provider's options (``ctx_plugins.options.<name>``): its ``options_class``,
    built and checked, when it has one; else the mapping, frozen. An instance is taken as it is."""
    if options_class is None:
        return freeze(options or {})
    if isinstance(options, options_class):
        return _chosen(options, f"ctx_plugins.options.{name}")
    return build_dataclass(options_class, options or {}, f"ctx_plugins.options.{name}")


def _chosen(options: Any, path: str) -> Any:
    """``options`` built in code, with every field that has ``choices`` checked against them: a
    mode compared by equality (``write_approval == "block"``) must not fail open on a typo. Bounds
    are left to whoever built it (tests build out-of-range options on purpose)."""
    if dataclasses.is_dataclass(options):
        for spec in dataclasses.fields(options):
            rule = spec.metadata.get(_RULE, _NO_RULE)
            if rule.choices is None:
                continue
            value = getattr(options, spec.name)
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                _check_choice(item, join_path(path, spec.name), rule)
    return options


def _coerce(value: Any, hint: Any, path: str, rule: Rule, *, strict: bool) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if value is None and len(options) < len(args):
            return None
        if len(options) == 1:
            return _coerce(value, options[0], path, rule, strict=strict)
    if dataclasses.is_dataclass(hint):
        return build_dataclass(hint, value, path, strict=strict)  # type: ignore[arg-type]
    if origin is tuple:
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            example = f"[{value}]" if isinstance(value, str) else "[a, b]"
            raise _type_error(path, value, f"a list, e.g. {example}")
        return tuple(_coerce(v, args[0], f"{path}[{i}]", rule, strict=strict) for i, v in enumerate(value))
    if origin is Mapping or hint is Mapping:
        if not isinstance(value, Mapping):
            raise _type_error(path, value, "a mapping")
        value_type = args[1] if args else Any
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _type_error(join_path(path, k), k, "string keys")
            out[k] = _coerce(v, value_type, join_path(path, k), rule, strict=strict)
        return FrozenMap(out)
    if hint is Any:
        return freeze(value)
    return _check_choice(_scalar(value, hint, path, rule), path, rule)


def _scalar(value: Any, hint: Any, path: str, rule: Rule) -> Any:
    """``value`` as the scalar type ``hint``, never converting between kinds (``"5"`` is no 5)."""
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _type_error(path, value, "true or false")
    if hint is int:
        if is_number and isinstance(value, int):
            return _check_bounds(value, path, rule, limit=MAX_INT)
        raise _type_error(path, value, "a whole number" + rule.range_text() + _as_text(value))
    if hint is float:
        if is_number:
            return float(_check_bounds(value, path, rule, limit=MAX_FLOAT))
        raise _type_error(path, value, "a number" + rule.range_text() + _as_text(value))
    if hint is str:
        if isinstance(value, str):
            return value
        if isinstance(value, bool) and rule.choices is not None and {"on", "off"} <= set(rule.choices):
            # YAML 1.1 reads an unquoted on / off (README: `review: on`) as true / false
            return "on" if value else "off"
        if isinstance(value, bool) and rule.choices is not None:
            valid = ", ".join(str(c) for c in rule.choices if c != "")
            raise _type_error(path, value, f"one of {valid} (YAML reads unquoted on/off/yes/no as true/false: "
                                           "quote the word)")
        raise _type_error(path, value, "a string")
    raise TypeError(f"config field {path} has an unsupported type {hint!r}")  # a bug of ours


def _as_text(value: Any) -> str:
    """Why a number came as text: YAML reads ``1e3`` (no dot before the exponent) as a string, and a quoted number."""
    if not isinstance(value, str):
        return ""
    try:
        float(value.replace("_", ""))
    except ValueError:
        return ""
    if re.fullmatch(r"\s*[+-]?[\d_]+[eE][+-]?\d+\s*", value):
        return f" (YAML reads {value.strip()} as text: write {value.strip().lower().replace('e', '.0e', 1)} instead)"
    return " (a quoted number is text: write it without the quotes)"


def _check_bounds(value: float, path: str, rule: Rule, *, limit: float) -> Any:
    """``value`` if it is finite and in the field's range; a side the field leaves open is
    bounded by ``limit``, so no setting is too large for the arithmetic and waits it feeds."""
    expected = rule.range_text().strip()
    if isinstance(value, float) and not math.isfinite(value):
        wanted = f"a number {expected}" if expected else "a finite number"
        raise ConfigError(f"{value!r} is not a finite number; expected {wanted}",
                          path=path, value=value, expected=wanted)
    open_above, open_below = rule.le is None and rule.lt is None, rule.ge is None and rule.gt is None
    if (open_above and value > limit) or (open_below and value < -limit):
        size = f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
        wanted = " and ".join([*filter(None, [expected]), f"at most {size} in size"])
        raise ConfigError(f"{short_repr(value)} is out of range; expected {wanted}",
                          path=path, value=value, expected=wanted)
    if rule.outside(value):
        raise ConfigError(f"{short_repr(value)} is out of range; expected{rule.range_text()}",
                          path=path, value=value, expected=expected)
    return value


def _check_choice(value: Any, path: str, rule: Rule) -> Any:
    if rule.choices is None or value in rule.choices:
        return value
    valid = ", ".join(str(c) if c != "" else "''" for c in rule.choices)
    hint = did_you_mean(value, [c for c in rule.choices if isinstance(c, str)])
    raise ConfigError(f"{short_repr(value)} is not {rule.kind}{hint}; valid: {valid}", path=path, value=value,
                      expected=valid)


def _type_error(path: str, value: Any, expected: str) -> ConfigError:
    return ConfigError(f"got {describe(value)}, expected {expected}", path=path, value=value,
                       expected=expected)


def describe(value: Any) -> str:
    """``value`` as an error shows it: its type and a short repr (``str 'many'``)."""
    if value is None:
        return "nothing (null)"
    if type(value) is tuple:  # a config's YAML / JSON list, frozen (the user wrote a list)
        return f"list {short_repr(list(value[:9]))}"  # (reprlib shows 8 and "...")
    return f"{type(value).__name__} {short_repr(value)}"


def short_repr(value: Any, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, made without building the whole of it (a megabyte string, a list
    of a million items: a model's argument); an integer too long to print is named by its size; never raises."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {value.bit_length():,} bits>"  # repr() refuses past 4,300 digits
    try:
        text = repr(value[:width]) if isinstance(value, str) else _BOUNDED.repr(value)
    except Exception:  # a broken __repr__
        return f"<a {type(value).__name__}>"
    return text[:width - 3] + "..." if len(text) > width or (isinstance(value, str) and len(value) > width) else text


#: reprs of containers cut while they are made (see :func:`short_repr`)
_BOUNDED = reprlib.Repr()  # (keyword arguments from Python 3.12)
_BOUNDED.maxlevel = 2
_BOUNDED.maxlist = _BOUNDED.maxtuple = _BOUNDED.maxdict = _BOUNDED.maxset = _BOUNDED.maxfrozenset = 8
_BOUNDED.maxdeque = _BOUNDED.maxarray = 8
_BOUNDED.maxstring = _BOUNDED.maxlong = _BOUNDED.maxother = 60


def join_path(path: str, key: object) -> str:
    """The key path of ``key`` inside ``path``, spelt the same by every error and the line map."""
    text = key if isinstance(key, str) else short_repr(key)
    return f"{path}.{text}" if path else text
