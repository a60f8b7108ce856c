"""Reading a config file: at most so large, valid YAML, within the limits, with the line of every key.

A config is checked against a few limits before anything is built from it, so that no file can hang
start-up or exhaust the stack: at most :data:`MAX_CONFIG_BYTES` of YAML, :data:`MAX_NODES` values
(an alias counts as many values as it stands for, so an "alias bomb" is refused at once),
:data:`MAX_DEPTH` levels of nesting and :data:`MAX_STRING_CHARS` characters in one string. hermes'
own full default config is about 15 KB, 1,500 values and 6 levels deep. A config given as Python
values is held to the same limits (:func:`check_limits`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from ..options import FrozenMap, describe, join_path, short_repr

#: The largest config file read: 17 times hermes' own full default config. PyYAML reads about
#: 50-150 KB a second, so this also bounds how long parsing can take.
MAX_CONFIG_BYTES = 256 * 1024
#: The most values (mappings, lists, keys and scalars) a config may hold, an alias counting as
#: every value it stands for: 35 times hermes' own full default config.
MAX_NODES = 50_000
#: The deepest nesting of mappings and lists (hermes' own default config is 6 levels deep).
MAX_DEPTH = 32
#: The longest single string (a key or a value).
MAX_STRING_CHARS = 100_000


def read_text(path: Path, label: str) -> str:
    """The file's text, refusing a file over :data:`MAX_CONFIG_BYTES` without reading all of it, and anything but a
    file (a named pipe's reader waited for a writer forever: ``check --config`` hung; a red-team pass)."""
    if "\0" in str(path):
        raise ConfigError("the config path holds a NUL character, which no file name can", source=repr(str(path)),
                          expected="a path to config.yaml")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe's open does not wait then
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode) and str(path) != os.devnull:
            raise ConfigError("not a regular file (a folder, a pipe, a socket or a device): a config is a file",
                              source=label, expected="a path to config.yaml")
        raw = b""
        while len(raw) <= MAX_CONFIG_BYTES and (part := os.read(descriptor, MAX_CONFIG_BYTES + 1 - len(raw))):
            raw += part
    finally:
        os.close(descriptor)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"the file is larger than {MAX_CONFIG_BYTES:,} bytes, the limit for a config file; "
            "keep only settings in it (generated data belongs in files of its own)",
            expected=f"at most {MAX_CONFIG_BYTES:,} bytes", source=label,
            line=raw.count(b"\n", 0, MAX_CONFIG_BYTES) + 1,
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read config file: {exc}", source=label,
                          line=raw.count(b"\n", 0, exc.start) + 1, expected="UTF-8 text") from None


#: the most tabs between words (see :func:`parse_yaml`) taken as spaces, each costing a parse of the file again
MAX_TAB_RETRIES = 8


def parse_yaml(text: str, label: str) -> tuple[Mapping[str, Any], Mapping[str, int]]:
    """The document in ``text`` and the line of each of its key paths.

    A tab between words (``default: m<TAB># note``, ``default:<TAB>m``) is read as a space, as hermes' own reader
    (libyaml) reads it; PyYAML refuses it, and the plugin was switched off for a tab hermes takes and nobody sees. A
    tab in a line's indentation stays an error (libyaml refuses it too)."""
    for _ in range(MAX_TAB_RETRIES):
        try:
            return _parse_yaml(text, label)
        except _TabBetweenWords as tab:
            text = text[:tab.index] + " " + text[tab.index + 1:]  # same length: every line number stays
    return _parse_yaml(text, label, tabs=False)


class _TabBetweenWords(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def _parse_yaml(text: str, label: str, *, tabs: bool = True) -> tuple[Mapping[str, Any], Mapping[str, int]]:
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # reading starts here: it refuses control characters at once
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        lines = FrozenMap(_key_lines(node, loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = exc.problem_mark.index if exc.problem_mark is not None else -1
        if (tabs and isinstance(exc, yaml.scanner.ScannerError) and 0 <= at < len(text) and text[at] == "\t"
                and text[text.rfind("\n", 0, at) + 1:at].strip()):  # after a word on its line: not indentation
            raise _TabBetweenWords(at) from None
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        if at >= 0 and at < len(text) and text[at] == "\t":
            problem += " (a tab: write spaces instead)"
        raise ConfigError(f"malformed YAML: {problem}", source=label, line=line) from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"malformed YAML: {exc.reason} ({exc.character!r})", source=label,
                          line=text.count("\n", 0, exc.position) + 1) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", source=label) from None
    except ConfigError as exc:  # a limit, found while composing
        raise exc.located(source=label, line=exc.line) from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        return {}, lines
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"the top level must be a mapping of sections, got {describe(data)}",
            value=data, expected="a mapping such as 'ctx_plugins: {...}'", source=label, line=1,
        )
    return data, lines



class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, checking the limits while it composes, before anything is built.

    Values are counted as they are composed, an alias as every value of the node it names, so
    neither a billion laughs nor a long flat list is composed past :data:`MAX_NODES`; a value
    PyYAML cannot build (a month 13, an integer of 5,000 digits) is a marked YAML error.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._total = 0  # values so far, aliases counted as written out
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values, levels), once composed

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            target = self.anchors.get(event.anchor)
            if target is not None:  # PyYAML itself reports an undefined alias
                size = self._sizes.get(id(target))
                if size is None:
                    raise _limit_error(f"the alias *{event.anchor} is used inside the value it names, so "
                                       "that value would never end; use an alias only after the value "
                                       "of its anchor is complete", "no alias inside its own anchor",
                                       event.start_mark)
                self._check_depth(self._depth + size[1], event.start_mark)
                self._count(size[0], event.start_mark)
            return super().compose_node(parent, index)
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        self._depth += 1
        self._check_depth(self._depth, mark)
        self._count(1, mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if node is not None:
            self._measure(node)
        return node

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            what = short_repr(node.value) if isinstance(node, yaml.ScalarNode) else "this value"
            raise yaml.constructor.ConstructorError(
                None, None, f"{what} is not a valid {node.tag.rpartition(':')[2]} ({exc})",
                node.start_mark) from None

    def _measure(self, node: yaml.Node) -> None:
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > MAX_STRING_CHARS:
                raise _string_error(len(node.value), node.start_mark)
            self._sizes[id(node)] = (1, 1)
            return
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = node.value
        sizes = [self._sizes[id(child)] for child in children]
        self._sizes[id(node)] = (1 + sum(size[0] for size in sizes), 1 + max((size[1] for size in sizes), default=0))

    def _count(self, values: int, mark: Any) -> None:
        self._total += values
        if self._total > MAX_NODES:
            raise _nodes_error(mark)

    @staticmethod
    def _check_depth(levels: int, mark: Any) -> None:
        if levels > MAX_DEPTH:
            raise _depth_error(mark)


def _limit_error(message: str, expected: str, mark: Any) -> ConfigError:
    return ConfigError(message, expected=expected, line=mark.line + 1 if mark is not None else None)


def _depth_error(mark: Any) -> ConfigError:
    return _limit_error(f"values are nested more than {MAX_DEPTH} levels deep, the limit for a config "
                        "(hermes' own is 6 deep); flatten the structure",
                        f"at most {MAX_DEPTH} levels of mappings and lists", mark)


def _nodes_error(mark: Any) -> ConfigError:
    return _limit_error(f"the config stands for more than {MAX_NODES:,} values (an alias or a shared value "
                        "counts as every value it names), the limit for a config (hermes' own has about 1,500); write "
                        "the values out instead of multiplying them with aliases, and keep generated "
                        "data in a file of its own", f"at most {MAX_NODES:,} values", mark)


def _string_error(length: int, mark: Any) -> ConfigError:
    return _limit_error(f"a string of {length:,} characters, longer than the {MAX_STRING_CHARS:,} a "
                        "config string may have; keep long text in a file of its own",
                        f"strings of at most {MAX_STRING_CHARS:,} characters", mark)


def check_limits(data: Mapping[str, Any]) -> None:
    """The limits the YAML loader checks, for a config given as Python values.

    The walk counts shared values each time they occur and stops at the first limit, so it is
    bounded however the values are shared, or even cyclic.
    """
    count = 1
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, level = stack.pop()
        if level > MAX_DEPTH:
            raise _depth_error(None)
        if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
            raise _string_error(len(value), None)
        children: list[Any] = []
        if isinstance(value, Mapping):
            children = [part for pair in value.items() for part in pair]
        elif isinstance(value, (list, tuple)):
            children = list(value)
        count += len(children)
        if count > MAX_NODES:
            raise _nodes_error(None)
        stack.extend((child, level + 1) for child in children)


def _key_lines(root: yaml.Node | None, loader: _Loader) -> dict[str, int]:
    """The 1-based line of every key path under ``root``, spelt as
    :func:`~hermes_ctx_plugins.options.join_path` spells them.

    A value reached through an alias is listed once, where its anchor is; its uses are listed by
    their own key, which is the line :func:`~.settings.line_in` falls back to.
    """
    lines: dict[str, int] = {}
    seen: set[int] = set()
    stack: list[tuple[str, yaml.Node]] = [("", root)] if root is not None else []
    while stack:
        path, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            here: set[str] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    child = join_path(path, loader.construct_object(key_node))
                    line = key_node.start_mark.line + 1
                    # hermes' reader keeps the last of two equal keys, silently; in our section that is a mistake
                    # (two `compressor:` lines, one of them forgotten: a bad-input sweep)
                    if child in here and child.startswith("ctx_plugins") and key_node.value != "<<":
                        raise ConfigError(f"the key is given twice, here and at line {lines[child]}: YAML would keep "
                                          "only this one; remove one of them", path=child, line=line,
                                          expected="each key once")
                    here.add(child)
                    lines[child] = line
                    stack.append((child, value_node))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[f"{path}[{index}]"] = item.start_mark.line + 1
                stack.append((f"{path}[{index}]", item))
    return lines
