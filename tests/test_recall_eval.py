"""The paraphrase recall benchmark's data (``benchmarks/recall_eval``): reproducible, honest, and scored right."""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


generate = _load("recall_eval_generate", BENCHMARKS / "recall_eval" / "generate.py")
SPLITS = {split: generate.load(split) for split in ("tune", "test")}


def _turns(conversation: dict[str, Any]) -> dict[str, tuple[datetime, str]]:
    return {t["id"]: (datetime.fromisoformat(s["date"]), f"{t['user']} {t['assistant']}")
            for s in conversation["sessions"] for t in s["turns"]}


def _questions(split: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(c, q) for c in SPLITS[split] for q in c["questions"]]


@pytest.mark.parametrize("split", ["tune", "test"])
def test_the_generator_is_deterministic_and_the_committed_data_is_its_output(split: str) -> None:
    first, second = generate.generate(split), generate.generate(split)
    assert generate.dump(first) == generate.dump(second)
    committed = (generate.DATA / f"{split}.jsonl").read_text(encoding="utf-8")
    assert generate.dump(first) == committed


def test_the_halves_share_no_conversation_user_or_answer_value() -> None:
    def values(split: str) -> set[str]:
        return {v for _, q in _questions(split) for v in (*q["answer"], *q.get("stale_answer", ()))}

    tune, test = SPLITS["tune"], SPLITS["test"]
    assert not {c["id"] for c in tune} & {c["id"] for c in test}
    assert not {c["user_id"] for c in tune} & {c["user_id"] for c in test}
    assert values("tune") and values("test")
    assert not values("tune") & values("test")
    for module in (generate.templates_en, generate.templates_zh):
        even, odd = generate.split_pools(module, 0), generate.split_pools(module, 1)
        assert all(even[name] and odd[name] and not set(even[name]) & set(odd[name]) for name in even)


@pytest.mark.parametrize("split", ["tune", "test"])
def test_no_question_gives_its_answer_away(split: str) -> None:
    for conversation, q in _questions(split):
        turns = _turns(conversation)
        asked = q["question"].lower()
        for value in (*q["answer"], *q.get("stale_answer", ())):
            # a word of its own ("Go" inside "algorithms" gives nothing away); Chinese has no word breaks
            assert not re.search(rf"(?<![a-z0-9]){re.escape(value.lower())}(?![a-z0-9])", asked), q["id"]
        for turn_id in q["evidence"]:
            assert asked not in turns[turn_id][1].lower(), q["id"]


@pytest.mark.parametrize("split", ["tune", "test"])
def test_every_evidence_turn_exists_before_its_question_and_alone_shows_its_needle(split: str) -> None:
    for conversation, q in _questions(split):
        turns = _turns(conversation)
        asked = datetime.fromisoformat(q["date"])
        pairs = [*zip(q["evidence"], q["needles"], strict=True),
                 *zip(q.get("stale", ()), q.get("stale_needles", ()), strict=True),
                 *zip(q.get("distractors", ()), q.get("distractor_needles", ()), strict=True)]
        assert len(q["evidence"]) == (2 if q["type"] == "multi" else 1)
        for turn_id, needle in pairs:
            assert turns[turn_id][0] < asked, q["id"]
            # the needle is in that turn and in no other: seeing it means the turn was shown
            assert [other for other, (_, body) in turns.items() if needle in body] == [turn_id], q["id"]
        if q["type"] == "update":
            assert turns[q["stale"][0]][0] < turns[q["evidence"][0]][0], q["id"]


@pytest.mark.parametrize("split", ["tune", "test"])
def test_most_questions_are_paraphrases_and_the_recorded_overlap_is_true(split: str) -> None:
    questions = _questions(split)
    for conversation, q in questions:
        turns = _turns(conversation)
        evidence = [turns[t][1] for t in q["evidence"]]
        assert generate.overlap(q["question"], evidence, q["entities"]) == q["overlap"], q["id"]
    shared = [q for _, q in questions if q["overlap"]]
    assert 0.05 <= len(shared) / len(questions) <= 0.3
    assert {q["type"] for _, q in questions} == {"single", "preference", "entity", "update", "temporal", "multi"}
    assert {q["lang"] for _, q in questions} == {"en", "zh"}


def test_the_overlap_measure_sees_shared_stems_and_chinese_words_but_not_entity_names() -> None:
    assert generate.overlap("Which cars did we buy?", ["We bought a car"]) == ["car"]
    assert generate.overlap("What vehicle do we own?", ["We bought a car"]) == []
    assert generate.overlap("我吃什么会过敏", ["香菜让我过敏"]) == ["过敏"]
    assert generate.overlap("王芳住在哪", ["王芳搬到成都了"], exempt=["王芳"]) == []
    assert generate.overlap("王芳住在哪", ["王芳搬到成都了"]) == ["王芳"]


@pytest.mark.parametrize("module", ["templates_en", "templates_zh"])
def test_every_fact_kind_has_many_phrasings(module: str) -> None:
    templates = getattr(generate, module)
    for kind in (*templates.SINGLE, *templates.PREFERENCE, *templates.ENTITY, *templates.UPDATE, *templates.MULTI):
        assert len(kind["ask"]) >= 6 and len(kind["say"]) >= 4, kind["name"]
        assert len(kind.get("update", kind.get("say2", kind["say"]))) >= 4, kind["name"]
    for kind in templates.TEMPORAL:
        assert len(kind["say"]) >= 4 and len(kind["cat"]) * len(templates.TEMPORAL_ASK) >= 6
    assert len(templates.TEMPORAL_ASK) >= 6


def test_a_hit_needs_every_needle_and_a_stale_value_shown_first_is_counted() -> None:
    bench = _load("bench_paraphrase", BENCHMARKS / "bench_paraphrase.py")
    multi = {"needles": ["Luna", "to Miso"]}
    assert bench.judge(multi, "- we named her Luna\n- adopted a second kitten, say hello to   Miso", 0.0).hit
    assert not bench.judge(multi, "- we named her Luna", 0.0).hit
    update = {"needles": ["Postgres 16"], "stale_needles": ["Postgres 14"]}
    newest_first = bench.judge(update, "- moved to Postgres 16\n- we run Postgres 14", 0.0)
    assert newest_first.hit and newest_first.stale_shown and not newest_first.stale_first
    stale_first = bench.judge(update, "- we run Postgres 14\n- moved to Postgres 16", 0.0)
    assert stale_first.hit and stale_first.stale_first
    assert bench.judge(update, "- we run Postgres 14", 0.0).stale_first


def test_long_turns_lengthen_every_answer_and_plant_no_needle_elsewhere() -> None:
    """``--long-turns``: every answer ~CHARS characters long with other conversations' answers of its language, the
    same every run, and no needle of a question lands in a turn that is not its evidence (a hit stays a hit)."""
    bench = _load("bench_paraphrase", BENCHMARKS / "bench_paraphrase.py")
    conversations = generate.load("tune")[:12]
    long = bench.lengthened(conversations, 1_500)
    assert long == bench.lengthened(conversations, 1_500) and conversations == generate.load("tune")[:12]
    for before, after in zip(conversations, long, strict=True):
        pairs = list(zip((t for s in before["sessions"] for t in s["turns"]),
                         (t for s in after["sessions"] for t in s["turns"]), strict=True))
        assert all(a["user"] == b["user"] and a["assistant"].startswith(b["assistant"])
                   and len(a["assistant"]) >= 1_500 for b, a in pairs)
        turns = {t["id"]: t for s in after["sessions"] for t in s["turns"]}
        for question in after["questions"]:
            for needle in question["needles"]:
                holders = {i for i, t in turns.items() if needle in t["user"] or needle in t["assistant"]}
                assert holders <= set(question["evidence"]), (needle, holders)


def test_the_coherent_set_shows_each_needle_in_its_turn_alone_before_its_question() -> None:
    """``coherent.jsonl`` (written by hand, not generated): every evidence and stale turn exists before its
    question, shows its needle and is the only turn that does (a needle seen means that turn was shown), an update's
    stale turn is older than its newest, and the recorded overlap is what the halves' measure says."""
    conversations = generate.load("coherent")
    assert len(conversations) == 6 and {c["lang"] for c in conversations} == {"en", "zh"}
    questions = [(c, q) for c in conversations for q in c["questions"]]
    assert len({q["id"] for _, q in questions}) == len(questions) == 124
    assert {q["type"] for _, q in questions} == {"single", "list", "temporal", "update", "context"}
    for conversation, q in questions:
        turns = _turns(conversation)
        dates = [datetime.fromisoformat(s["date"]) for s in conversation["sessions"]]
        assert dates == sorted(dates) and datetime.fromisoformat(q["date"]) > dates[-1], q["id"]
        assert q["lang"] == conversation["lang"]
        pairs = [*zip(q["evidence"], q["needles"], strict=True), *zip(q.get("stale", ()), q.get("stale_needles", ()),
                                                                       strict=True)]
        assert len(q["evidence"]) >= 2 if q["type"] == "list" else len(q["evidence"]) == 1 or q["type"] in (
            "temporal", "context"), q["id"]
        for turn_id, needle in pairs:
            assert [other for other, (_, body) in turns.items() if needle in body] == [turn_id], (q["id"], needle)
        if q["type"] == "update":
            assert turns[q["stale"][0]][0] < turns[q["evidence"][0]][0], q["id"]
        evidence = [turns[t][1] for t in q["evidence"]]
        assert generate.overlap(q["question"], evidence, q["entities"]) == q["overlap"], q["id"]
