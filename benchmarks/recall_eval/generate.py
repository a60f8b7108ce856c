"""Generate the paraphrase recall benchmark (deterministic): ``data/tune.jsonl`` and ``data/test.jsonl``.

Run from the repository root::

    .venv/bin/python benchmarks/recall_eval/generate.py            # writes both halves, prints their statistics
    .venv/bin/python benchmarks/recall_eval/generate.py --check    # regenerates in memory, fails if data/ differs

Each line is one conversation: a user with 10-30 dated sessions of 4-16 turns, mostly everyday filler, with
planted evidence turns and 7 questions asked in a later session (2 single-session facts, 1 preference, 1 fact
about one of two near-identical entities, 1 knowledge update, 1 temporal, 1 multi-evidence). The halves come
from different seeds and disjoint value pools (alternate entries of every pool), so no value of one half appears
as an answer of the other. See ``data/README.md``.
"""



from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import templates_en
import templates_zh

DATA = Path(__file__).parent / "data"
#: split -> (seed, half of every value pool, conversations, of which Chinese)
SPLITS: dict[str, tuple[str, int, int, int]] = {"tune": ("recall-eval-tune-1", 0, 60, 20),
                                                 "test": ("recall-eval-test-7", 1, 60, 20)}
#: the questions of every conversation, in the order they are planted
TYPES = ("temporal", "single", "single", "preference", "entity", "update", "multi")
#: questions per conversation asked with the statement's own words in mind, as real users often do (~20% of
#: all questions end up sharing a content word with their evidence)
EASY_PER_CONVERSATION = 2

# ------------------------------------------------------------------------------------------------ overlap

STOP_EN = frozenset("""
a an the and or but if of to in on at by for with from into onto about as is are was were be been being am do does did
done have has had having i me my mine we us our ours you your yours he him his she her hers it its they them their what
which who whom whose when where why how this that these those there here not no nor so than too very can could will
would shall should may might must just now then again also still up down out off over under any all both each few more
most other some such only own same s t don let's i'm i've i'd we're we've it's that's what's who's where's when's
there's one two get got go going went new old please remind tell know days""".split())
#: common function pairs a question and a statement share without sharing a content word
STOP_ZH = frozenset("""我们 你们 他们 什么 一个 这个 那个 现在 时候 怎么 哪个 哪里 是什 么的 我的 的是 是哪 一下
我家 我在 在哪 我现 家的 是我""".split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_HAN = re.compile(r"[\u3400-\u9fff]+")


def stem(word: str) -> str:
    """Simple English suffix stripping (the overlap measure only; no retriever uses it)."""
    word = word.lower().strip("'-")
    for suffix in ("ing", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str, exempt: Iterable[str] = ()) -> set[str]:
    """English content words (stemmed, stop words out) and Chinese 2-character words (every character pair
    of a Han run, common function pairs out); ``exempt`` entity names do not count."""
    skip = {stem(w) for name in exempt for w in _WORD.findall(name)}
    pairs_skip = {run[i:i + 2] for name in exempt for run in _HAN.findall(name) for i in range(len(run) - 1)}
    words = {stem(w) for w in _WORD.findall(text) if w.lower() not in STOP_EN} - skip - {""}
    pairs = {run[i:i + 2] for run in _HAN.findall(text) for i in range(len(run) - 1)}
    return words | (pairs - STOP_ZH - pairs_skip)


def overlap(question: str, evidence: Sequence[str], exempt: Iterable[str] = ()) -> list[str]:
    exempt = list(exempt)
    shared = content_words(question, exempt) & set().union(*(content_words(e, exempt) for e in evidence))
    return sorted(shared)


# ------------------------------------------------------------------------------------------------ model


@dataclass
class Slot:
    """A planted turn: where it goes and what it says."""

    session: int
    user: str
    assistant: str
    turn_id: str = ""


@dataclass
class Conversation:
    """One conversation being generated: its dates and session lengths, the facts planted so far, and its rng."""

    id: str
    lang: str
    rng: random.Random
    tpl: ModuleType
    pools: dict[str, list[str]]
    dates: list[datetime]
    lengths: list[int]
    used: set[str] = field(default_factory=set)
    deck: list[tuple[str, str]] = field(default_factory=list)
    #: indexes of the questions to ask the easy way
    easy_at: frozenset[int] = frozenset()
    slots: list[Slot] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)

    def value(self, pool: str) -> str:
        choices = [v for v in self.pools[pool] if v not in self.used]
        chosen = self.rng.choice(choices)
        self.used.add(chosen)
        return chosen

    def plant(self, session: int, user: str, assistant: str) -> Slot:
        opener, closer = self.rng.choice(self.tpl.OPENERS), self.rng.choice(self.tpl.CLOSERS)
        slot = Slot(session, f"{opener}{user}{closer}", assistant)
        self.slots.append(slot)
        return slot

    def days(self, session: int) -> float:
        return (self.dates[session] - self.dates[0]).total_seconds() / 86400


def split_pools(module: ModuleType, half: int) -> dict[str, list[str]]:
    """Every pool's values of one half: alternate entries of the pool's English and Chinese lists together (English
    first), so each half gets about half of each pool and a value in both languages (a port, a time, a laptop)
    belongs to one half only. Numbers that read like years are left out: a block may show dates."""
    halves = {}
    for name, values in module.POOLS.items():
        union = list(dict.fromkeys([*templates_en.POOLS.get(name, ()), *templates_zh.POOLS.get(name, ())]))
        halves[name] = [v for v in values
                        if union.index(v) % 2 == half and not (v.isdigit() and 1900 <= int(v) <= 2100)]
    return halves


def needle(statement: str, value: str) -> str:
    """The distinctive text a hit must show: the value, with a neighbouring word when the value is short."""
    if len(value) >= 6 and not value.replace(":", "").isdigit():
        return value
    at = statement.index(value)
    before, after = statement[:at], statement[at + len(value):]
    han = "[\u3400-\u9fff]{1,2}"
    for pattern, text, join in ((r"([A-Za-z0-9]+) $", before, "{m} {v}"), (r"^ ([A-Za-z]+)", after, "{v} {m}"),
                                (f"({han})$", before, "{m}{v}"), (f"^({han})", after, "{v}{m}")):
        found = re.search(pattern, text)
        if found:
            return join.format(m=found.group(1), v=value)
    return value


# ------------------------------------------------------------------------------------------------ facts


def _ask(conv: Conversation, kind: dict[str, Any], evidence: Sequence[Slot], fmt: dict[str, str],
         candidates: Sequence[str] | None = None, exempt: Sequence[str] = ()) -> tuple[str, bool, list[str]]:
    """A question for ``kind``: the phrasing sharing most words with the evidence when this question is one of
    the conversation's easy ones, else the one sharing fewest (ties broken at random)."""
    texts = [f"{s.user} {s.assistant}" for s in evidence]
    easy = bool(kind.get("easy")) and len(conv.questions) in conv.easy_at
    pool = [q.format(**fmt) for q in ([*kind["easy"], *kind["ask"]] if easy else (candidates or kind["ask"]))]
    conv.rng.shuffle(pool)
    scored = [(len(overlap(q, texts, exempt)), q) for q in pool]
    text = (max if easy else min)(scored, key=lambda item: item[0])[1]
    return text, easy, overlap(text, texts, exempt)


def _question(conv: Conversation, qtype: str, kind: dict[str, Any], text: str, easy: bool, shared: list[str],
              evidence: Sequence[tuple[Slot, str]], **extra: Any) -> None:
    conv.questions.append({"type": qtype, "kind": kind["name"], "question": text, "easy": easy, "overlap": shared,
                           "evidence": [s for s, _ in evidence], "needles": [n for _, n in evidence],
                           "answer": list(extra.pop("values")), **extra})


def _free_session(conv: Conversation, low: int = 0, high: int | None = None) -> int:
    return conv.rng.randrange(low, len(conv.dates) if high is None else high)


def plant_simple(conv: Conversation, qtype: str, kind: dict[str, Any]) -> None:
    v = conv.value(kind["pool"])
    statement = conv.rng.choice(kind["say"]).format(v=v)
    slot = conv.plant(_free_session(conv), statement, conv.rng.choice(kind["reply"]))
    text, easy, shared = _ask(conv, kind, [slot], {})
    _question(conv, qtype, kind, text, easy, shared, [(slot, needle(statement, v))], values=[v], entities=[])


def plant_entity(conv: Conversation, kind: dict[str, Any]) -> None:
    if kind.get("person"):
        names = [conv.value("name"), conv.value("name")]
        say_names, ask_names = [(n,) for n in names], [(n,) for n in names]
    else:
        say_names, ask_names = [r[0] for r in kind["roles"]], [r[1] for r in kind["roles"]]
    asked = conv.rng.randrange(2)
    planted = []
    for i in range(2):
        v = conv.value(kind["pool"])
        statement = conv.rng.choice(kind["say"]).format(e=conv.rng.choice(say_names[i]), v=v)
        slot = conv.plant(_free_session(conv), statement, conv.rng.choice(kind["reply"]))
        planted.append((slot, needle(statement, v), v))
    slot, hit, v = planted[asked]
    fmt = {"e": conv.rng.choice(ask_names[asked])}
    exempt = [fmt["e"]] if kind.get("person") else []
    text, easy, shared = _ask(conv, kind, [slot], fmt, exempt=exempt)
    other = planted[1 - asked]
    _question(conv, "entity", kind, text, easy, shared, [(slot, hit)], values=[v], entities=exempt,
              distractors=[other[0]], distractor_needles=[other[1]])


def plant_update(conv: Conversation, kind: dict[str, Any]) -> None:
    sessions = len(conv.dates)
    first = _free_session(conv, 0, sessions - 2)
    second = _free_session(conv, first + 2)
    old, new = conv.value(kind["pool"]), conv.value(kind["pool"])
    said = conv.rng.choice(kind["say"]).format(v=old)
    stale = conv.plant(first, said, conv.rng.choice(kind["reply"]))
    updated = conv.rng.choice(kind["update"]).format(v=new)
    slot = conv.plant(second, updated, conv.rng.choice(kind["reply"]))
    text, easy, shared = _ask(conv, kind, [slot], {})
    _question(conv, "update", kind, text, easy, shared, [(slot, needle(updated, new))], values=[new], entities=[],
              stale=[stale], stale_needles=[needle(said, old)], stale_answer=[old])


def plant_temporal(conv: Conversation, kind: dict[str, Any]) -> bool:
    """False when this conversation's dates leave no (target, anchor, distractor) arrangement."""
    sessions = range(len(conv.dates))
    arrangements = [(t, a, d) for a in sessions for t in sessions if 3 <= conv.days(a) - conv.days(t) <= 9
                    for d in sessions if abs(conv.days(d) - conv.days(a)) >= 21]
    if not arrangements:
        return False
    target, anchor_session, distractor = conv.rng.choice(arrangements)
    anchor = conv.rng.choice(conv.tpl.ANCHORS)
    city = conv.value("city")
    conv.plant(anchor_session, conv.rng.choice(anchor["say"]).format(c=city), conv.rng.choice(anchor["reply"]))
    planted = []
    for session in (target, distractor):
        v = conv.value(kind["pool"])
        statement = conv.rng.choice(kind["say"]).format(v=v)
        planted.append((conv.plant(session, statement, conv.rng.choice(kind["reply"])), v))
    (slot, v), (other, other_v) = planted
    candidates = [frame.format(cat=cat, anchor=a.format(c=city)) for frame in conv.tpl.TEMPORAL_ASK
                  for cat in kind["cat"] for a in anchor["ask"]]
    text, easy, shared = _ask(conv, {**kind, "easy": ()}, [slot], {}, candidates, exempt=[city])
    _question(conv, "temporal", kind, text, easy, shared, [(slot, v)], values=[v], entities=[city], distractors=[other],
              distractor_needles=[other_v])
    return True


def plant_multi(conv: Conversation, kind: dict[str, Any]) -> None:
    city = conv.value("city")
    first, second = conv.rng.sample(range(len(conv.dates)), 2)
    v, v2 = conv.value(kind["pools"][0]), conv.value(kind["pools"][1])
    said = conv.rng.choice(kind["say"]).format(c=city, v=v)
    said2 = conv.rng.choice(kind["say2"]).format(c=city, v2=v2)
    one = conv.plant(first, said, conv.rng.choice(kind["reply"]))
    two = conv.plant(second, said2, conv.rng.choice(kind["reply"]))
    text, easy, shared = _ask(conv, kind, [one, two], {"c": city}, exempt=[city])
    _question(conv, "multi", kind, text, easy, shared,
              [(one, needle(said, v)), (two, needle(said2, v2))], values=[v, v2], entities=[city])


# ------------------------------------------------------------------------------------------------ layout


def _dates(rng: random.Random) -> list[datetime]:
    day = datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 600))
    days = [day]
    for _ in range(rng.randint(10, 30) - 1):
        days.append(days[-1] + timedelta(days=rng.randint(1, 7)))
    return [d + timedelta(hours=rng.randint(7, 22), minutes=rng.randint(0, 59)) for d in days]


def _temporal_possible(dates: list[datetime]) -> bool:
    days = [(d - dates[0]).total_seconds() / 86400 for d in dates]
    return any(3 <= a - t <= 9 and any(abs(d - a) >= 21 for d in days) for a in days for t in days)


def _filler(conv: Conversation, forbidden: Sequence[str]) -> tuple[str, str]:
    """A filler turn that shows no needle or answer of this conversation (a hit must come from the evidence)."""
    tpl, rng = conv.tpl, conv.rng
    names = [n for n in conv.pools["name"] if n not in conv.used]
    cities = [c for c in conv.pools["city"] if c not in conv.used]
    while True:
        if not conv.deck:  # every filler template once before any comes back: topics rarely repeat verbatim
            conv.deck = list(tpl.FILLER)
            rng.shuffle(conv.deck)
        user, reply = conv.deck.pop()
        values = {"n": rng.choice(names), "c": rng.choice(cities), "x": str(rng.randint(10_000, 65_000)),
                  **{k: rng.choice(v) for k, v in tpl.SLOTS.items()}}
        text = f"{rng.choice(tpl.OPENERS)}{user.format(**values)}{rng.choice(tpl.CLOSERS)}"
        answer = reply.format(**values)
        if not any(f in text or f in answer for f in forbidden):
            return text, answer


def conversation(split: str, index: int, lang: str, pools: dict[str, list[str]], rng: random.Random) -> dict[str, Any]:
    tpl = templates_zh if lang == "zh" else templates_en
    dates = _dates(rng)
    while not _temporal_possible(dates):
        dates = _dates(rng)
    conv = Conversation(f"{split}-{index:03d}-{lang}", lang, rng, tpl, pools, dates,
                        [rng.randint(4, 16) for _ in dates])
    conv.easy_at = frozenset(rng.sample(range(1, len(TYPES)), EASY_PER_CONVERSATION))  # 0: temporal, never easy
    plant_temporal(conv, rng.choice(tpl.TEMPORAL))
    for kind in rng.sample(tpl.SINGLE, 2):
        plant_simple(conv, "single", kind)
    plant_simple(conv, "preference", rng.choice(tpl.PREFERENCE))
    plant_entity(conv, rng.choice(tpl.ENTITY))
    plant_update(conv, rng.choice(tpl.UPDATE))
    plant_multi(conv, rng.choice(tpl.MULTI))
    return _render(conv)


def _render(conv: Conversation) -> dict[str, Any]:
    forbidden = sorted({n for q in conv.questions for n in (*q["needles"], *q.get("stale_needles", ()),
                                                            *q.get("distractor_needles", ()), *q["answer"])})
    by_session: dict[int, list[Slot]] = {}
    for slot in conv.slots:
        by_session.setdefault(slot.session, []).append(slot)
    sessions = []
    for s, date in enumerate(conv.dates):
        planted = by_session.get(s, [])
        length = max(conv.lengths[s], len(planted))
        places = dict(zip(conv.rng.sample(range(length), len(planted)), planted, strict=True))
        turns = []
        for t in range(length):
            turn_id = f"s{s:02d}t{t:02d}"
            if t in places:
                places[t].turn_id = turn_id
                user, assistant = places[t].user, places[t].assistant
            else:
                user, assistant = _filler(conv, forbidden)
            turns.append({"id": turn_id, "user": user, "assistant": assistant})
        sessions.append({"id": f"s{s:02d}", "date": date.isoformat(timespec="minutes"), "turns": turns})
    asked = conv.dates[-1] + timedelta(days=conv.rng.randint(1, 10), hours=conv.rng.randint(0, 5))
    questions = []
    for i, q in enumerate(conv.questions):
        q = {"id": f"{conv.id}-q{i}", "lang": conv.lang, "date": asked.isoformat(timespec="minutes"), **q}
        for key in ("evidence", "stale", "distractors"):
            if key in q:
                q[key] = [slot.turn_id for slot in q[key]]
        questions.append(q)
    return {"id": conv.id, "lang": conv.lang, "user_id": f"user-{conv.id}", "sessions": sessions,
            "questions": questions}


def generate(split: str) -> list[dict[str, Any]]:
    """Every conversation of ``split``, in order (the same every run)."""
    seed, half, count, chinese = SPLITS[split]
    rng = random.Random(seed)
    languages = ["zh"] * chinese + ["en"] * (count - chinese)
    rng.shuffle(languages)
    pools = {"en": split_pools(templates_en, half), "zh": split_pools(templates_zh, half)}
    return [conversation(split, i, lang, pools[lang], random.Random(f"{seed}/{i}")) for i, lang in enumerate(languages)]


def dump(conversations: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n" for c in conversations)


def load(split: str) -> list[dict[str, Any]]:
    """The committed conversations of ``split``."""
    with (DATA / f"{split}.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


# ------------------------------------------------------------------------------------------------ statistics


def statistics(conversations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    questions = [q for c in conversations for q in c["questions"]]
    turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])

    def buckets(items: Sequence[dict[str, Any]]) -> dict[str, int]:
        counted = Counter(min(len(q["overlap"]), 3) for q in items)
        return {"0": counted[0], "1": counted[1], "2": counted[2], "3+": counted[3]}

    return {
        "conversations": Counter(c["lang"] for c in conversations),
        "sessions": sum(len(c["sessions"]) for c in conversations), "turns": turns,
        "questions": Counter(f"{q['type']}/{q['lang']}" for q in questions),
        "easy": sum(q["easy"] for q in questions), "total": len(questions),
        "overlap all": buckets(questions),
        "overlap paraphrase": buckets([q for q in questions if not q["easy"]]),
        "overlap easy": buckets([q for q in questions if q["easy"]]),
        "overlap en": buckets([q for q in questions if q["lang"] == "en"]),
        "overlap zh": buckets([q for q in questions if q["lang"] == "zh"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when data/ differs from a fresh generation")
    args = parser.parse_args(argv)
    DATA.mkdir(exist_ok=True)
    stale = []
    for split in SPLITS:
        conversations = generate(split)
        text, path = dump(conversations), DATA / f"{split}.jsonl"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
        print(f"{split}: {json.dumps(statistics(conversations), ensure_ascii=False)}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run without --check)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
