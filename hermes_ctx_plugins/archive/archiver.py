"""The step the host runs around every compaction, whatever the strategy.

Every original a compaction removed or rewrote — dropped, truncated, summarised — is archived with
its position; which ones, and where the summary is, the host tells the archiver (see :mod:`.changes`:
from the strategy's report, checked, or worked out for a strategy that does not report). Then the
anchor index of what was removed is attached where the model will see it: to the summary or marker
that stands for it (``summarize``, ``window``, ``pipeline``, the static fallback, a third party's
own), to each rewritten tool result (``prune``), or, for a strategy that only drops, to a small
marker the host inserts where the dropped messages were.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from .. import embedding
from ..compression.base import CompressionResult
from ..compression.messages import append_text, is_bridge, is_real_user, summary_role
from ..config import ArchiveSettings
from ..events import Forgotten, Message, SessionInfo
from ..safety import redact_secrets
from ..storage import ArchiveBackend, Scope, message_text
from ..storage.spool import redacted
from ..tokens import TokenCounter
from . import anchors as anchor_index
from . import dense, tools
from .anchors import Anchor
from .changes import Changes, call_keys

INDEX_OPEN = "<archive-index>"
INDEX_CLOSE = "</archive-index>"
_INDEX_BLOCK = re.compile(re.escape(INDEX_OPEN) + r".*?" + re.escape(INDEX_CLOSE), re.S)
_INDEX_LINE = re.compile(r"^([a-z]+): (.+)$", re.M)
#: marks the marker message the host inserts for strategies that only drop
ARCHIVE_MARKER_KEY = "_archive_marker"
#: share of the compacted context the index may take at most
INDEX_SHARE = 0.15


class Archiver:
    """Archives what a compaction removed and leaves an anchor index in the compacted context."""

    def __init__(self, store: ArchiveBackend, settings: ArchiveSettings, *,
                 open_store: Callable[[], ArchiveBackend] | None = None) -> None:
        """``open_store``: another connection to the same archive, for the thread that embeds what is
        archived (with ``settings.embedder``; default: ``store`` itself).

        :raises ConfigError: the embedder named cannot be loaded (its package or the extra missing).
        """
        self.store = store
        self.settings = settings
        embedder = embedding.load(settings.embedder, threads=settings.embed_threads, option=dense.OPTION)
        #: the dense side of ``ctx_search`` (:mod:`.dense`), None without an embedder
        self.hybrid = None if embedder is None else dense.Hybrid(
            embedder, open_store or (lambda: store), weight=settings.dense_weight)

    def import_spooled(self, *, wait: bool = True) -> int:
        """Import what the archive's spool holds (see :meth:`ArchiveBackend.import_spooled
        <hermes_ctx_plugins.storage.base.ArchiveBackend.import_spooled>`), and embed it; how many compactions."""
        imported = self.store.import_spooled(wait=wait)
        if imported and self.hybrid is not None:
            self.hybrid.imported()
        return imported

    def close(self) -> None:
        """Stop the embedding thread (what it has not embedded is embedded at the next start) and
        release the store's connection."""
        if self.hybrid is not None:
            self.hybrid.close()
        self.store.close()

    def scope(self, session: SessionInfo) -> Scope:
        """What ``session`` may see of the archive: its own deployment namespace only, and there
        this session, or with ``scope: user`` every session of its user (which needs a user id)."""
        return Scope(session_id=session.session_id, user_id=session.user_id, namespace=session.deployment,
                     all_sessions=self.settings.scope == "user" and bool(session.user_id),
                     earlier_sessions=session.earlier_sessions)

    def forget_user(self, user_id: str, *, namespaces: Collection[str] | None = None) -> list[Forgotten]:
        """See :meth:`ArchiveBackend.forget_user`."""
        return self.store.forget_user(user_id, namespaces=namespaces)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return list(tools.SCHEMAS)

    def handle_tool_call(self, name: str, args: dict[str, Any], *, session: SessionInfo,
                         counter: TokenCounter) -> str:
        # what an outage spooled here: searchable now, not after this worker's next compaction -- unless another
        # process imports it, or it is long: the user's turn waits a second for it at most
        self.import_spooled(wait=False)
        return tools.handle(name, args, store=self.store, scope=self.scope(session), counter=counter,
                            max_tokens=self.settings.expand_max_tokens, hybrid=self.hybrid)

    def apply(self, changes: Changes, result: CompressionResult, *, session: SessionInfo, strategy: str,
              counter: TokenCounter, ceiling: int | None = None,
              smaller: Callable[[int], bool] | None = None,
              owner_at: Callable[[int], str] | None = None) -> CompressionResult:
        """``result`` with the index attached, after the removed originals were archived.

        :param changes: what the compaction removed and where its summary is (see :mod:`.changes`).
        :param ceiling: the most the index may take (the host passes a share of the strategy's
            threshold); ``index_max_tokens`` bounds it too.
        :param smaller: whether a prompt of that many tokens is smaller than the one compacted: an index that
            would make it no smaller gives way to the pointer alone, and that to no index (the originals stay
            archived, found by ``ctx_search``): a compaction never grows the prompt (a red-team pass: dropping a
            few short messages and adding the index did, 22 of 120 small forced compactions).
        :param owner_at: whose turn the message at a position of the conversation is (a session several users
            speak in; see :meth:`ArchiveBackend.record <hermes_ctx_plugins.storage.base.ArchiveBackend.record>`);
            ``None``: every one is the session's owner's.
        """
        # a compaction's bridge (the assistant's note beside a summary) is not the assistant's words
        removed = [(p, m) for p, m in changes.removed if not is_bridge(m)]
        if not removed:
            return result
        # redacted once, here: what the store keeps and what the index is made of (never a secret)
        clean = [(position, redacted(message)) for position, message in removed]
        imports = self.store.spool_imports
        ids = self.store.record(session_id=session.session_id, user_id=session.user_id,
                                namespace=session.deployment, strategy=strategy, removed=clean,
                                tokens_before=result.tokens_before, tokens_after=result.tokens_after,
                                cited=_cited([*result.messages, *(m for _, m in removed)]),
                                owners=None if owner_at is None else [owner_at(p) for p, _ in removed])
        if self.hybrid is not None:  # embedded on a thread of its own: the compaction does not wait for it
            self.hybrid.recorded(ids, imported=self.store.spool_imports != imports)
        budget = self.settings.index_max_tokens
        if ceiling is not None:
            budget = min(budget, ceiling)
        for room in (budget, 0):  # the index; the pointer alone
            messages = self._indexed(changes, result, removed, clean, ids, room, counter)
            tokens = counter.count_messages(messages)
            if smaller is None or smaller(tokens):
                return dataclasses.replace(result, messages=messages, tokens_after=tokens,
                                           notes=(*result.notes, f"archived {len(removed)} messages"))
        return dataclasses.replace(result, notes=(*result.notes, f"archived {len(removed)} messages (no index: it "
                                                                "would have made the prompt larger)"))

    def _indexed(self, changes: Changes, result: CompressionResult, removed: list[tuple[int, Message]],
                 clean: Sequence[tuple[int, Message]], ids: list[int], budget: int,
                 counter: TokenCounter) -> list[Message]:
        """``result``'s messages with an index of at most ``budget`` tokens (0: the pointers alone)."""
        messages = list(result.messages)
        pointer = _pointer(len(removed), ids)
        carrier = changes.summary_at
        if carrier is not None:  # a summary or a marker: the whole index goes with it
            block = _index_block(pointer, _anchors(removed, clean, budget), budget, counter)
            messages[carrier] = _with_text(messages[carrier], "\n\n" + block)
        else:  # each rewritten message points to its original; plain drops get a marker
            pointed, used = self._point_rewritten(messages, changes.fresh, removed, clean, ids, budget, counter)
            dropped = [n for n in range(len(removed)) if n not in pointed]
            if dropped:
                self._insert_marker(messages, [removed[n] for n in dropped], [clean[n] for n in dropped],
                                    _pointer(len(dropped), [ids[n] for n in dropped if n < len(ids)]),
                                    max(0, budget - used), counter)
        return messages

    @staticmethod
    def _point_rewritten(messages: list[Message], fresh: list[int], removed: list[tuple[int, Message]],
                         clean: Sequence[tuple[int, Message]], ids: list[int], budget: int,
                         counter: TokenCounter) -> tuple[set[int], int]:
        """Give each rewritten message (matched to its original by tool-call ids) a pointer and its
        own anchors; returns the indexes into ``removed`` it covered and the tokens it added.

        A model may reuse a call id: the rewrites of one id take its originals in order (the first rewrite
        the first original), so a rewritten second result is not taken for a dropped message, whose marker
        would then sit between a call and its result."""
        originals: dict[str, list[int]] = {}
        for n, (_, original) in enumerate(removed):
            for key in call_keys(original):
                originals.setdefault(key, []).append(n)
        covered: set[int] = set()
        used = 0
        for i in fresh:
            match = next((n for k in call_keys(messages[i]) for n in originals.get(k, ()) if n not in covered), None)
            if match is None:
                continue
            n = match
            covered.add(n)
            archive_id = ids[n] if n < len(ids) else None
            where = f"ctx_expand(id={archive_id})" if archive_id else "ctx_search"
            room = max(0, budget - used - 12)
            found = _fit(_anchors([removed[n]], [clean[n]], room), room, counter)
            note = f"\n[original archived: {where}" + (
                "; exact values: " + " · ".join(a.text for a in found) if found else "") + "]"
            messages[i] = _with_text(messages[i], note)
            used += counter.count_text(note)
        return covered, used

    @staticmethod
    def _insert_marker(messages: list[Message], removed: list[tuple[int, Message]],
                       clean: Sequence[tuple[int, Message]], pointer: str, budget: int, counter: TokenCounter) -> None:
        block = _index_block(pointer, _anchors(removed, clean, budget), budget, counter)
        # everything before the first removed message survived, so it sits at the same index
        at = min(removed[0][0], len(messages))
        before = messages[at - 1] if at > 0 else None
        after = messages[at] if at < len(messages) else None
        role = summary_role(before, after, has_real_user=any(is_real_user(m) for m in messages))
        if role is None and after is not None:
            messages[at] = _with_text(after, block + "\n\n", prepend=True)
        else:
            messages.insert(at, {"role": role or "user", "content": block, ARCHIVE_MARKER_KEY: len(removed)})


_CITED = re.compile(r"archive ids (\d+)-(\d+)|ctx_expand\(id=(\d+)\)")


def _cited(messages: Sequence[Message]) -> Callable[[int], bool]:
    """Whether an archive id is cited by an index or a pointer in ``messages`` (the conversation a compaction
    works on): the compactions it follows. Only messages naming ``ctx_expand`` are read through."""
    spans: list[tuple[int, int]] = []
    for message in messages:
        text = message_text(message)
        if "ctx_expand" in text:
            spans += [(int(m[1]), int(m[2])) if m[1] else (int(m[3]), int(m[3])) for m in _CITED.finditer(text)]
    return lambda ident: any(low <= ident <= high for low, high in spans)


def _pointer(count: int, ids: list[int]) -> str:
    where = f" (archive ids {ids[0]}-{ids[-1]})" if ids else ""
    return (f"{count} earlier messages were archived verbatim{where}. Exact identifiers from them are listed "
            "below; call ctx_search(query) to find the original messages and ctx_expand(id) to read them.")


def _anchors(removed: Sequence[tuple[int, Message]], clean: Sequence[tuple[int, Message]],
             budget: int) -> list[Anchor]:
    """Anchors of the ``removed`` messages (``clean``: the same, redacted) in priority order, for an
    index of at most ``budget`` tokens, including those a previous index carried.

    First what an earlier index kept in view, then what was said (user and assistant text: where
    hermes found the lost identifiers), then what tools were given and returned; within each,
    kinds take turns, so one chatty kind (tool output is full of paths) cannot crowd out the rest.

    Each anchor takes two tokens of the index at least, so no more than ``budget // 2`` can show:
    each kind is looked for up to twice that, ``budget`` (so kinds still take turns among the first
    ones found; see :func:`anchors.extract <.anchors.extract>`), and a tier is not read at all once
    the tiers before it found twice as many again.
    """
    if budget < 2:
        return []
    prior: list[Anchor] = []
    spoken: list[str] = []
    worked: list[str] = []
    for (_, original), (_, message) in zip(removed, clean, strict=True):
        text = message_text(original)
        for block in _INDEX_BLOCK.findall(text) if INDEX_OPEN in text else ():
            for kind, values in _INDEX_LINE.findall(block):
                # an index written before redaction covered this kind of value may still carry one
                prior += [Anchor(kind, v) for v in values.split(" · ") if v and redact_secrets(v) == v]
        # the index rides on the summary to the model and into hermes' session store: read from
        # the redacted copy, never a secret
        content = _without_index(message_text({"content": message.get("content")}))
        if message.get("role") in ("user", "assistant"):
            spoken.append(content)
            worked.append(message_text({"tool_calls": message.get("tool_calls")}))
        else:
            worked.append(content)
    ordered: list[Anchor] = []
    seen: set[str] = set()
    tiers: tuple[Callable[[], list[Anchor]], ...] = (
        lambda: prior, lambda: anchor_index.extract(spoken, limit=budget),
        lambda: anchor_index.extract(worked, limit=budget))
    for tier in tiers:
        if len(ordered) >= 2 * budget:  # the tiers before found four times what the index can show
            break
        for anchor in _kinds_take_turns(tier()):
            if anchor.text not in seen:
                seen.add(anchor.text)
                ordered.append(anchor)
    return ordered


def _without_index(text: str) -> str:
    return _INDEX_BLOCK.sub("", text) if INDEX_OPEN in text else text


def _kinds_take_turns(found: list[Anchor]) -> list[Anchor]:
    queues: dict[str, list[Anchor]] = {}
    for anchor in found:
        queues.setdefault(anchor.kind, []).append(anchor)
    order = [k for k in anchor_index.KINDS if k in queues] + [k for k in queues if k not in anchor_index.KINDS]
    out: list[Anchor] = []
    depth = 0
    while len(out) < len(found):
        for kind in order:
            if depth < len(queues[kind]):
                out.append(queues[kind][depth])
        depth += 1
    return out


def _fit(found: list[Anchor], budget: int, counter: TokenCounter) -> list[Anchor]:
    """The anchors that fit ``budget`` tokens, taken in priority order (``found``'s order), as the index
    may show them (:func:`anchors.shown <.anchors.shown>`; only one that fits is checked, and what it
    shows of an anchor is never longer than the anchor)."""
    kept: list[Anchor] = []
    texts: set[str] = set()
    used = 0
    for anchor in found:
        if used + 2 > budget:  # none fits any more: each takes a token and its separator at least
            break
        cost = counter.count_text(anchor.text) + 1
        if used + cost > budget:
            continue
        checked = anchor_index.shown(anchor)
        if checked is None or checked.text in texts:
            continue
        if checked != anchor:  # an error's name, without its message
            cost = counter.count_text(checked.text) + 1
        kept.append(checked)
        texts.add(checked.text)
        used += cost
    return kept


def _index_block(pointer: str, found: list[Anchor], budget: int, counter: TokenCounter) -> str:
    """The index, at most ``budget`` tokens (the pointer alone when even that is too much)."""
    head = f"{INDEX_OPEN}\n{pointer}\n"
    room = budget - counter.count_text(head + INDEX_CLOSE) - 2 * len(anchor_index.KINDS)
    kept = _fit(found, max(0, room), counter)

    def block(anchors: list[Anchor]) -> str:
        body = anchor_index.render(anchors)
        return head + (body + "\n" if body else "") + INDEX_CLOSE

    text = block(kept)
    while kept and counter.count_text(text) > budget:  # the estimate above was short: trim exactly
        kept = kept[: max(0, len(kept) - max(1, len(kept) // 20))]
        text = block(kept)
    return text


def _with_text(message: Message, text: str, *, prepend: bool = False) -> Message:
    updated: dict[str, Any] = dict(message)
    updated["content"] = append_text(message.get("content"), text, prepend=prepend)
    updated.pop("api_content", None)  # hermes' sidecar of what was sent: now stale
    return updated

