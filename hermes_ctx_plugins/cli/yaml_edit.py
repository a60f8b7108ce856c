"""Editing hermes' ``config.yaml`` in place: what ``hermes-ctx install`` changes, and nothing else.

ruamel.yaml in round-trip mode keeps comments (and their columns), key order, quoting, the way numbers
and booleans are written, flow or block style and anchors of everything it does not touch. What it
cannot keep: one indentation is applied to the whole file (guessed here from the file: its first nested
mapping and first block list under a key), spaces inside a flow collection (``{ a: 1 }``) and after a
colon are normalised, a null is written one way for the whole file (``null`` if the file has one, else
nothing; ``~`` becomes that), and a ``%YAML`` directive or a closing ``...`` is dropped. It has no notion
of a comment that belongs to the next key: a comment is filed under the value above it, so an appended
key would land below the comments that close the file, and a deleted key or list item would take the
comment lines below it along; :func:`put` and :func:`delete` move those lines so they stay where they
were. A byte-order mark and CRLF line ends, which ruamel neither keeps nor writes, are taken off before
it reads and put back on what it writes (the file's first line end decides for the whole file).

ruamel.yaml is imported inside the functions: the ``hermes-ctx`` command should not pay for it unless
it edits the file.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError

_NULL = re.compile(r"^[^#\n]*:[ \t]+null[ \t]*(#.*)?$", re.MULTILINE)
#: a document that starts with ``---`` (after comments and blank lines): ruamel drops it unless told
_START = re.compile(r"\A(?:[ \t]*(?:#.*)?\n)*---(?:[ \t]|$)", re.MULTILINE)
_BOM = "\ufeff"


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import RoundTripRepresenter

    yaml = YAML()  # round trip
    yaml.preserve_quotes = True
    yaml.width = 1 << 30  # never fold a long line the user wrote on one (4096 folded a long quoted value)
    yaml.indent(**_indentation(text))
    yaml.explicit_start = _START.match(text) is not None
    if _NULL.search(text):  # ruamel writes a null as nothing; hermes' own writer (PyYAML) as "null"

        class Representer(RoundTripRepresenter):
            pass

        Representer.add_representer(type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null"))
        yaml.Representer = Representer
    return yaml


def load(text: str) -> Any:
    """``text`` as ruamel's round-trip mapping (an empty one for an empty or comments-only file).

    :raises ConfigError: not YAML, or not a mapping at the top (with the line).
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    text = _plain(text)
    try:
        doc = _yaml(text).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        if "'\\t'" in problem:  # hermes (libyaml) and our reader take a tab between words; ruamel does not
            problem += " (a tab: hermes reads it there, but a file is edited only with spaces: replace it)"
        raise ConfigError(f"malformed YAML: {problem}", line=mark.line + 1 if mark else None) from None
    except YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}") from None
    if doc is None:
        return CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise ConfigError("the top level must be a mapping of sections", line=1,
                          expected="a mapping such as 'plugins: {...}'")
    return doc


def dump(doc: Any, original: str) -> str:
    """``doc`` as text in ``original``'s layout, byte-order mark and line ends."""
    plain = _plain(original)
    out = io.StringIO()
    _yaml(plain).dump(doc, out)
    text = out.getvalue()
    if not doc:  # every key gone: what is left is the comments, not "{}"
        text = text.removesuffix("{}\n")
    if _comments_only(plain):  # ruamel read nothing from it, so it would drop it
        text = plain + ("" if plain.endswith("\n") else "\n") + text
    first_end = original.find("\n")
    if first_end > 0 and original[first_end - 1] == "\r":
        text = text.replace("\n", "\r\n")
    return (_BOM if original.startswith(_BOM) else "") + text


def _plain(text: str) -> str:
    """``text`` as ruamel reads and writes it: no byte-order mark, ``\\n`` line ends (its comments
    would keep a ``\\r`` each, and a mark ahead of ``---`` would hide it from :data:`_START`)."""
    return text.removeprefix(_BOM).replace("\r\n", "\n")


def get(doc: Any, *path: str) -> Any:
    """The value at ``path`` (``None`` when a key on the way is missing).

    :raises ConfigError: a value on the way is not a mapping (hermes would not read our key in it).
    """
    from ruamel.yaml.comments import CommentedMap

    node = doc
    for depth, key in enumerate(path):
        if node is None:
            return None
        if not isinstance(node, CommentedMap):
            where = ".".join(path[:depth])
            raise ConfigError(f"{where} must be a mapping", path=where, value=node, expected="a mapping of keys")
        node = node.get(key)
    return node


def set_in(doc: Any, path: tuple[str, ...], value: Any) -> None:
    """Set the value at ``path``, the mappings missing on the way made as one new block (see :func:`put`)."""
    from ruamel.yaml.comments import CommentedMap

    for depth in range(len(path) - 1, -1, -1):  # the deepest mapping that exists
        parent = get(doc, *path[:depth])
        if parent is not None:
            break
    for key in reversed(path[depth + 1:]):
        value = CommentedMap({key: value})
    put(parent, path[depth], value)


def append_to(doc: Any, path: tuple[str, ...], item: str) -> None:
    """Append ``item`` to the list at ``path``, made when missing.

    :raises ConfigError: something other than a list is there.
    """
    from ruamel.yaml.comments import CommentedSeq

    found = get(doc, *path)
    if found is None:
        set_in(doc, path, CommentedSeq([item]))
    elif isinstance(found, CommentedSeq):
        put(found, None, item)
    else:
        where = ".".join(path)
        raise ConfigError(f"{where} must be a list", path=where, value=found, expected="a list of names")


def put(parent: Any, key: Any, value: Any) -> None:
    """``parent[key] = value`` (``key`` ``None``: append to a list). A new entry goes at the end, but
    above the comment lines written below the last one: they close the block, like hermes' own notes
    at the end of the file it writes."""
    from ruamel.yaml.comments import CommentedMap

    if key is not None and key in parent:
        parent[key] = value
        return
    last = _last(parent)
    lines = _take_below(parent, last) if last is not None else ""
    if isinstance(parent, CommentedMap):
        parent[key] = value
    else:
        parent.append(value)
    if lines:
        _put_below(parent, _last(parent), lines)


def with_comment(section: Any, comment: str, original: str) -> Any:
    """``section`` with ``comment`` as its first line (indented as ``original`` indents)."""
    section.yaml_set_start_comment(comment, indent=_indentation(original)["mapping"])
    return section


def new_mapping(**values: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(values)


def flow_list(items: Iterable[str]) -> Any:
    """A list written on one line, ``[a, b]``."""
    from ruamel.yaml.comments import CommentedSeq

    value = CommentedSeq(items)
    value.fa.set_flow_style()
    return value


def delete(doc: Any, *path: Any) -> None:
    """Delete the value at ``path`` (mapping keys, list indexes), and the mappings and lists that
    leaves empty, keeping the comment lines written below what goes."""
    chain = [doc]
    for step in path[:-1]:
        chain.append(chain[-1][step])
    depth = len(path) - 1
    while depth > 0 and len(chain[depth]) == 1:  # it would be left empty: it goes too
        depth -= 1
    _remove(chain[depth], path[depth])


def _remove(parent: Any, key: Any) -> None:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    keys = list(parent) if isinstance(parent, CommentedMap) else list(range(len(parent)))
    position = keys.index(key)
    lines = _take_below(parent, key)
    del parent[key]
    if not lines:
        return
    if position > 0:
        _put_below(parent, keys[position - 1], lines)
    elif parent:  # the first key or item: the lines go above the one that is first now
        first = next(iter(parent)) if isinstance(parent, CommentedMap) else 0
        entry = parent.ca.items.setdefault(first, [None] * 4)
        entry[1] = [CommentToken(lines, CommentMark(0)), *(entry[1] or [])]
    else:  # the file's last key (only the top is left empty): the lines join the comments above it
        parent.ca.comment = parent.ca.comment or [None, None]
        parent.ca.comment[1] = [*(parent.ca.comment[1] or []), CommentToken(lines, CommentMark(0))]


def _last(node: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if not node:
        return None
    return next(reversed(node)) if isinstance(node, CommentedMap) else len(node) - 1


def _below(node: Any, key: Any) -> tuple[Any, int]:
    """Where ruamel files the comment lines below ``node[key]``: the comment list of the last value
    in its block (a flow collection counts as one value), and the slot in it."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    while True:
        value = node[key]
        if not (isinstance(value, (CommentedMap, CommentedSeq)) and value and not value.fa.flow_style()):
            return node.ca.items.setdefault(key, [None] * 4), 2 if isinstance(node, CommentedMap) else 0
        node, key = value, _last(value)


def _take_below(node: Any, key: Any) -> str:
    """Cut the comment lines below ``node[key]`` (its inline comment stays) and return them."""
    entry, slot = _below(node, key)
    token = entry[slot]
    if token is None:
        return ""
    inline, _, lines = str(token.value).partition("\n")
    if inline:
        token.value = inline + "\n"
    else:
        entry[slot] = None
    return lines


def _put_below(node: Any, key: Any, lines: str) -> None:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    entry, slot = _below(node, key)
    if entry[slot] is None:
        entry[slot] = CommentToken("\n" + lines, CommentMark(0))
    else:
        entry[slot].value += lines


def _indentation(text: str) -> dict[str, int]:
    """ruamel's ``indent()`` for ``text``: the step of its first nested mapping, and the dash offset
    of its first block list under a key (none: ``- item`` level with its key, as PyYAML writes)."""
    mapping_step = offset = None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for above, line in itertools.pairwise(lines):
        if not above.rstrip().endswith(":"):
            continue
        step = _indent(line) - _indent(above)
        if line.lstrip().startswith("- ") and offset is None and step >= 0:
            offset = step
        elif not line.lstrip().startswith("-") and mapping_step is None and step > 0:
            mapping_step = step
    mapping_step, offset = mapping_step or 2, offset or 0
    return {"mapping": mapping_step, "sequence": offset + 2, "offset": offset}


def _indent(line: str) -> int:
    """The column a line's content starts at (after a list dash: ``- key:`` nests its mapping there)."""
    stripped = line.lstrip(" ")
    column = len(line) - len(stripped)
    return column + 2 if stripped.startswith("- ") and stripped.rstrip().endswith(":") else column


def _comments_only(text: str) -> bool:
    return any(line.strip() for line in text.splitlines()) and all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())
