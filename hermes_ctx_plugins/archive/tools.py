"""``ctx_search`` and ``ctx_expand``: the model's way back into what compaction archived.

Both are scoped to the session's deployment namespace and there to this session, or with
``scope: user`` every session of the same user (never another user's, nor the same user id's in
another namespace), and bounded: ``ctx_expand`` returns original messages verbatim within a token
budget, keeps tool calls with their results, and says what it left out and how to get it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..events import Message
from ..options import short_repr
from ..storage import ArchiveBackend, Scope, Stored
from ..tokens import TokenCounter

if TYPE_CHECKING:
    from .dense import Hybrid

SEARCH = "ctx_search"
EXPAND = "ctx_expand"
NAMES = (SEARCH, EXPAND)
MAX_LIMIT = 20
# ASCII digits only, as every id the command line takes (a fullwidth or an Arabic-Indic 3 named #3)
_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-|\.\.)\s*([0-9]+)\s*$")
_MARKED = re.compile(r"^\s*#?[0-9]+\s*(?:(?:-|\.\.)\s*#?[0-9]+\s*)?$")
MAX_RANGE = 200
#: the largest id SQLite can hold
MAX_ID = 2**63 - 1
MIN_TOKENS = 200
#: tokens kept for the answer's envelope (keys, token count, the note on what was left out)
_ENVELOPE = 120

SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": SEARCH,
        "description": ("Search the messages earlier compactions archived from this conversation (they are no "
                        "longer in your context). Use exact identifiers when you have them (a SHA, a path, an "
                        "error text) or a few distinctive words. Returns ids and snippets (and, in a long message, the "
                        "offset of the match); read them with ctx_expand."),
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 5}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": EXPAND,
        "description": ("Read archived messages verbatim: one id from ctx_search (its tool call or result comes "
                        "with it) or a range 'first-last'. The answer stays within max_tokens; a message too long "
                        "for it shows its start and end, and says which offset reads the part cut out."),
        "parameters": {"type": "object", "properties": {
            "id": {"type": ["integer", "string"], "description": "an id, or a range like '120-135'"},
            "max_tokens": {"type": "integer", "minimum": MIN_TOKENS},
            "offset": {"type": "integer", "minimum": 0, "description": "with one id: start this many characters "
                       "into that message's text (a cut note names the offset to read on from)"}},
            "required": ["id"]}}},
]


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


#: the most characters of the query a search's answer repeats
SHOWN_QUERY_CHARS = 200


def handle(name: str, args: dict[str, Any], *, store: ArchiveBackend, scope: Scope, counter: TokenCounter,
           max_tokens: int, hybrid: Hybrid | None = None) -> str:
    """Run one archive tool call; bad arguments get an error naming the value and what is valid.
    ``hybrid``: the dense side of ``ctx_search`` (:mod:`.dense`), when an embedder is configured."""
    if not isinstance(args, dict):
        return _error("the arguments must be a JSON object")
    if name == SEARCH:
        return search(args, store=store, scope=scope, hybrid=hybrid)
    if name == EXPAND:
        return expand(args, store=store, scope=scope, counter=counter, max_tokens=max_tokens)
    return _error(f"unknown archive tool {short_repr(name)}; valid: {', '.join(NAMES)}")


def search(args: dict[str, Any], *, store: ArchiveBackend, scope: Scope, hybrid: Hybrid | None = None) -> str:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        return _error(f"query must be non-empty text, got {short_repr(query)}")
    limit = args.get("limit", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return _error(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {short_repr(limit)}")
    if hybrid is None:
        hits = store.search(query, scope, limit=limit)
    else:  # lexical and dense candidates fused; the dense side failing leaves the lexical answer
        hits = hybrid.search(store, query, scope, limit=limit)
    results = [{"id": h.id, "role": h.role, "compaction": h.compaction_id,
                "archived": datetime.fromtimestamp(h.created, UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "snippet": h.snippet} for h in hits]
    offsets = _match_offsets(store, hits, scope)
    for result in results:
        if result["id"] in offsets:
            result["offset"] = offsets[result["id"]]
    shown = query if len(query) <= SHOWN_QUERY_CHARS else f"{query[:SHOWN_QUERY_CHARS]}… ({len(query):,} characters)"
    answer: dict[str, Any] = {"query": shown, "results": results}
    if not results:
        answer["note"] = "nothing archived matches; try an exact identifier or other distinctive words"
    elif offsets:
        answer["note"] = ("read a result with ctx_expand(id); a long message's result gives the offset of its match: "
                          "ctx_expand(id, offset) reads from there")
    else:
        answer["note"] = "read a result with ctx_expand(id)"
    return json.dumps(answer, ensure_ascii=False)


#: a message's text longer than this (characters) is read in pieces: its search result says where the match is
LONG_TEXT = 12_000
#: the most characters of long results a search reads to find where their matches are (the first results' first)
OFFSET_CHARS = 25_000_000
#: the characters before the match that reading from the offset shows
_LEAD = 200


def _match_offsets(store: ArchiveBackend, hits: list[Any], scope: Scope) -> dict[int, int]:
    """For each hit in a long text: the offset ctx_expand reads from to show its (first) match. Without it a match
    at character 1,200,000 of a pasted log took 157 ctx_expand calls, following the cut notes, to reach."""
    marked = {h.id: h.snippet.split("\u00ab", 1)[1].split("\u00bb", 1)[0] for h in hits
              if "\u00ab" in h.snippet and "\u00bb" in h.snippet.split("\u00ab", 1)[1]}
    offsets: dict[int, int] = {}
    read = 0
    for found in marked:  # best first, while OFFSET_CHARS last: each is read whole (~15 ms for 4.8 MB)
        if read >= OFFSET_CHARS:
            break
        stored = next(iter(store.get([found], scope)), None)
        if stored is None:
            continue
        content = stored.message.get("content")
        text = content if isinstance(content, str) else _parts_text(content) if isinstance(content, list) else ""
        match = marked[stored.id]
        read += len(text)
        if len(text) > LONG_TEXT and match.strip():
            # the snippet marks the text as stored: found as it is (casefolding megabytes took ~0.2 s a hit)
            at = text.find(match)
            if at < 0:  # casefold keeps the length of most text; a miss (it did not) gives no offset
                at = text.casefold().find(match.casefold())
            if at >= 0:
                offsets[stored.id] = max(0, at - _LEAD)
    return offsets


def _whole(digits: str) -> int:
    """``digits`` as a number; past the length of any id, just one too large (Python refuses to
    convert thousands of digits)."""
    return int(digits) if len(digits.strip()) <= len(str(MAX_ID)) else MAX_ID + 1


def _ids(value: Any) -> list[int] | str:
    """The ids ``value`` names, or an error message (quoting at most 80 characters of it)."""
    if isinstance(value, bool):
        return f"id must be an id or a range 'first-last', got {short_repr(value)}"
    if isinstance(value, str) and "#" in value and _MARKED.match(value):  # "#5", "#40-#48": as the CLI prints ids
        value = value.replace("#", "")
    number = _whole(value) if isinstance(value, str) and value.strip().isascii() and value.strip().isdecimal() \
        else value
    if isinstance(number, int):
        if 0 < number <= MAX_ID:
            return [number]
        return f"id must be positive and at most {MAX_ID}, got {short_repr(value)}"
    if isinstance(value, str):
        match = _RANGE.match(value)
        if match:
            first, last = _whole(match.group(1)), _whole(match.group(2))
            if first > last:
                return f"range {value!r:.80} is backwards; write it as '{last}-{first}'"
            if last - first + 1 > MAX_RANGE:
                return f"range {value!r:.80} covers more than {MAX_RANGE} ids; at most {MAX_RANGE} at a time"
            if first < 1 or last > MAX_ID:
                return f"range {value!r:.80} must lie within 1-{MAX_ID}"
            return list(range(first, last + 1))
    return f"id must be an id (e.g. 42) or a range 'first-last' (e.g. '40-48'), got {short_repr(value)}"


def expand(args: dict[str, Any], *, store: ArchiveBackend, scope: Scope, counter: TokenCounter,
           max_tokens: int, cli: bool = False) -> str:
    """``ctx_expand``'s answer (JSON text). ``cli``: for ``hermes-ctx archive show``, whose notes name its own options,
    not the model's tools (a newcomer's walk: the command told its user to call ``ctx_expand(id=1, offset=83)``)."""
    ids = _ids(args.get("id"))
    if isinstance(ids, str):
        return _error(ids)
    limit = args.get("max_tokens", max_tokens)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < MIN_TOKENS:
        return _error(f"max_tokens must be a whole number of at least {MIN_TOKENS}, got {short_repr(limit)}")
    limit = min(limit, max_tokens)
    offset = args.get("offset", 0)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return _error(f"offset must be a whole number of characters, 0 or more, got {short_repr(offset)}")
    if offset and len(ids) != 1:
        return _error(f"offset reads on in one message: give one id, not the range {short_repr(args.get('id'))}")
    budget = limit - _ENVELOPE  # the answer's own keys and note come out of the same budget
    found = store.get(ids, scope)
    if not found:
        return _error(f"no archived message with id {short_repr(args.get('id'))} in "
                      + ("the archive; ids come from hermes-ctx archive search" if cli
                         else "this conversation's archive; ids come from ctx_search"))
    if offset:
        content = found[0].message.get("content")
        text = content if isinstance(content, str) else _parts_text(content) if isinstance(content, list) else ""
        if offset >= len(text):
            # an integer of thousands of digits: Python refuses to print it
            at = short_repr(offset) if offset.bit_length() > 128 else f"{offset:,}"
            return _error(f"offset {at} is past the end of message {found[0].id}'s text, which has {len(text):,} "
                          "characters (offset reads on in a message's content)")
    # tool calls travel with their results (and results with their call)
    by_id: dict[int, Stored] = {s.id: s for s in found}
    for stored in list(found):
        for partner in store.partners(stored, scope):
            by_id.setdefault(partner.id, partner)
    ordered = sorted(by_id.values(), key=lambda s: (s.session_id, s.seq))
    groups = _pair_groups(ordered)
    out: list[dict[str, Any]] = []
    used = 0
    left_out: list[int] = []
    for group in groups:
        rendered = [_render(s, offset if s.id == ids[0] else 0) for s in group]
        cost = sum(counter.count_text(json.dumps(r, ensure_ascii=False)) for r in rendered)
        if used + cost <= budget:
            out += rendered
            used += cost
        elif not out:  # the first group alone is too big: clip it to fit, saying so
            clipped = _clip(rendered, budget, counter, keep=set(ids), cli=cli)
            out += clipped
            used += sum(counter.count_text(json.dumps(r, ensure_ascii=False)) for r in clipped)
            shown = {r["id"] for r in clipped}
            left_out += [s.id for s in group if s.id not in shown]
        else:
            left_out += [s.id for s in group]
    out = [{k: v for k, v in r.items() if k != _FROM} for r in out]  # where a text was read from: not shown
    answer: dict[str, Any] = {"messages": out, "tokens": used}
    if left_out:
        answer["left_out"] = left_out[:10] + (["..."] if len(left_out) > 10 else [])
        answer["note"] = (f"{len(left_out)} more messages did not fit in {limit} tokens; expand them with a "
                          "narrower range, e.g. "
                          + (f"hermes-ctx archive show {left_out[0]}" if cli else f"ctx_expand(id={left_out[0]})"))
    return json.dumps(answer, ensure_ascii=False)


def _pair_groups(ordered: list[Stored]) -> list[list[Stored]]:
    """Consecutive groups that must stay together: an assistant tool call and its results."""
    groups: list[list[Stored]] = []
    open_calls: set[str] = set()
    for stored in ordered:
        call_id = stored.message.get("tool_call_id")
        if groups and call_id and call_id in open_calls:
            groups[-1].append(stored)
            continue
        groups.append([stored])
        open_calls = {str(c.get("id")) for c in stored.message.get("tool_calls") or () if isinstance(c, dict)}
    return groups


#: where a rendered message's text starts in the archived one (``offset``): not shown, read by :func:`_clip`
_FROM = "_from"


def _render(stored: Stored, offset: int = 0) -> dict[str, Any]:
    """``stored`` as ctx_expand shows it; with ``offset``, its text from that character on (content in parts,
    a user's text beside an image, read on as :func:`_parts_text` joins it)."""
    message: Message = stored.message
    rendered: dict[str, Any] = {"id": stored.id, "role": message.get("role")}
    for key in ("content", "tool_calls", "tool_call_id", "name"):
        if message.get(key) not in (None, ""):
            rendered[key] = message[key]
    if offset and isinstance(rendered.get("content"), list):
        rendered["content"] = _parts_text(rendered["content"])
    if offset and isinstance(rendered.get("content"), str):
        text = rendered["content"]
        rendered["content"] = f"[... from character {offset:,} of {len(text):,} ...]\n" + text[offset:]
        rendered[_FROM] = offset
    return rendered


def _parts_text(parts: list[Any]) -> str:
    """Content parts as one text, to be cut and read on: each text part's text, each other part
    ``[<type> part not shown]`` (an image's base64 is no reading for the model)."""
    out = []
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
        else:
            kind = part.get("type") if isinstance(part, dict) else None
            out.append(f"[{str(kind)[:40] if kind else 'non-text'} part not shown]")
    return "\n".join(out)


def _clip(rendered: list[dict[str, Any]], budget: int, counter: TokenCounter,
          keep: Collection[int] = (), *, cli: bool = False) -> list[dict[str, Any]]:
    """The group cut to ``budget``: the longest texts -- contents, and tool calls' arguments (a ``write_file``
    call carries the whole file) -- shortened to their start and end (a log's failure is usually at its end),
    each with a note of what was cut and, for a content, the offset that reads it. Still too big, the group
    loses its last messages other than those asked for (``keep``), listed as left out."""
    clipped = [{k: v for k, v in r.items() if k != _FROM} for r in rendered]
    for r in clipped:  # copies: the cut must not reach the stored messages
        if isinstance(r.get("content"), list):
            r["content"] = _parts_text(r["content"])
        if isinstance(r.get("tool_calls"), list):
            r["tool_calls"] = [{**c, "function": dict(c["function"])} if isinstance(c, dict)
                               and isinstance(c.get("function"), dict) else c for c in r["tool_calls"]]
    starts = {n: int(r.get(_FROM, 0)) for n, r in enumerate(rendered)}
    # every text that may be cut: (message, None) its content, (message, k) its k-th call's arguments
    originals: dict[tuple[int, int | None], str] = {}
    for n, r in enumerate(clipped):
        if isinstance(r.get("content"), str):
            originals[(n, None)] = r["content"]
        for k, call in enumerate(r.get("tool_calls") or ()):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                originals[(n, k)] = function["arguments"]
    keeps = {field: len(text) for field, text in originals.items()}
    alive = list(range(len(clipped)))

    def cost() -> int:
        return sum(counter.count_text(json.dumps(clipped[n], ensure_ascii=False)) for n in alive)

    while cost() > budget:
        fields = [f for f in keeps if f[0] in alive and keeps[f] >= 200]
        if not fields:
            # still too big: drop the last message not asked for (listed as left out), else the last but the first
            spare = [n for n in alive if clipped[n]["id"] not in keep] or alive[1:]
            if spare:
                alive.remove(spare[-1])
                continue
            break
        longest = max(fields, key=lambda f: keeps[f])
        keeps[longest] //= 2
        n, call = longest
        text, head = originals[longest], keeps[longest] * 2 // 3
        tail = keeps[longest] - head
        if call is None:
            # where the cut part begins in the archived message (a note an offset added is not the message's)
            note = len(text) - len(text.split("\n", 1)[-1]) if starts[n] else 0
            first = starts[n] + max(head - note, 0)
            clipped[n]["content"] = (
                text[:head] + f"\n[... {len(text) - head - tail:,} characters cut to fit max_tokens; "
                + (f"hermes-ctx archive show {clipped[n]['id']} --offset {first}" if cli
                   else f"ctx_expand(id={clipped[n]['id']}, offset={first})") + " reads on from there ...]\n"
                + text[len(text) - tail:])
        else:
            clipped[n]["tool_calls"][call]["function"]["arguments"] = (
                text[:head] + f"[... {len(text) - head - tail:,} of the arguments' {len(text):,} characters cut "
                "to fit max_tokens ...]" + text[len(text) - tail:])
    return [clipped[n] for n in alive]
