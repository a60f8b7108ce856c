"""Benchmark: ``ctx-local`` recall, prefetch latency and write-behind throughput, side by side with hermes-agent
0.19.0's bundled local ``holographic`` memory provider, on the same generated conversations.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_recall.py                      # 1k, 10k, 100k stored turns
    PYTHONPATH=. .venv/bin/python benchmarks/bench_recall.py --sizes 1000 --runs 1   # a quick run

The generator (deterministic per seed) writes multi-session conversations for several users (at least 50
sessions each): everyday filler turns drawn from topic templates that reuse the facts' vocabulary in other
contexts (a neighbour's dog, a colleague's trip to Lisbon), and per user one planted fact of each kind (16 in
English, 6 in Chinese), each a user turn with a known turn id. Every question is a hand-written paraphrase of
its fact: it names the same thing with other words (synonyms, other inflections, other sentence shapes), never
the answer itself, and shares at most an entity name. Two of the eight users talk in Chinese. The questions
were written before any retrieval run and were not changed afterwards; ``--seed 1`` (the default) is the
development seed, ``--seed 2`` the held-out one (different names, values, filler and fact placement).

Measured per size, ``--runs`` times (medians reported):

* recall@1/5/10 and MRR: the answer turn's rank among each system's top 10 for the question, searching as the
  question's user. ctx-local: its ``ctx_memory_search`` ranking (the same as prefetch). holographic: its
  ``fact_store`` tool, ``action: search, limit: 10``. holographic has no user scope, so each user gets a store of
  their own (as hermes profiles would), which only helps it;
* prefetch latency p50/p95 over all questions, through each provider's ``prefetch``;
* write path: ctx-local ``sync_turn`` (the enqueue) p50/p99 and drain throughput (turns/s from the first enqueue
  until everything is stored); holographic: its ``fact_store add`` call p50/p99 (it has no turn sync: its
  ``sync_turn`` does nothing, facts come in through the tool) on the same turn texts.

holographic rebuilds a per-category HRR "memory bank" from every stored vector on each add, so its ingest is
quadratic (≈170 ms per add at 3,000 facts here). Beyond ``--holographic-exact`` turns per store the benchmark
defers that rebuild to one call per category after the last add: the rebuild is a pure function of all stored
vectors, so the database it queries is the same as if fed one by one; its add latency is then reported without the
rebuild (marked ``*``), which flatters it.
"""

# ruff: noqa: RUF001 - the Chinese conversations use Chinese punctuation
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_ctx_plugins.config import Config
from hermes_ctx_plugins.events import SessionInfo, Turn
from hermes_ctx_plugins.memory.local import LocalProvider
from hermes_ctx_plugins.storage import open_memory

USERS = 8
CHINESE_USERS = frozenset({6, 7})
MIN_SESSIONS = 50

# ------------------------------------------------------------------------------------------------ generator

NAMES = ["Maria", "Ana", "Tomas", "Ingrid", "Kofi", "Priya", "Mateo", "Yuki", "Lena", "Omar", "Sofia", "Ravi",
         "Elena", "Jonas", "Amara", "Diego", "Hana", "Felix", "Nadia", "Bruno", "Chloe", "Ivan", "Leila", "Marco"]
PETS = ["Biscuit", "Pepper", "Mochi", "Waffles", "Juniper", "Pickles", "Nugget", "Clementine", "Ziggy", "Tofu",
        "Maple", "Pretzel", "Sprocket", "Olive", "Gizmo", "Noodle"]
CITIES = ["Lisbon", "Valencia", "Porto", "Krakow", "Tallinn", "Ghent", "Bergen", "Leipzig", "Turin", "Seville",
          "Utrecht", "Graz", "Malmo", "Bilbao", "Brno", "Aarhus"]
COMPANIES = ["Northwind", "Helixa", "Quarry Labs", "Bluefin Systems", "Orbitly", "Cobalt Forge", "Tandem Health",
             "Lumen Grid", "Parcelwise", "Kestrel AI"]
LANGS = ["Portuguese", "Japanese", "Swahili", "Finnish", "Korean", "Greek", "Turkish", "Dutch", "Polish", "Hindi"]
CARS = ["Skoda Octavia", "Honda Jazz", "Volvo V60", "Mazda 3", "Kia Niro", "Toyota Yaris", "Subaru Outback",
        "Renault Zoe"]
COLORS = ["teal", "burgundy", "mustard yellow", "forest green", "navy", "coral", "charcoal", "lavender"]
BOOKS = ["The Overstory", "Piranesi", "Klara and the Sun", "The Dispossessed", "Middlemarch", "Stoner",
         "The Remains of the Day", "Pachinko", "Station Eleven", "A Gentleman in Moscow"]
FOODS = ["peanuts", "shellfish", "sesame", "gluten", "lactose", "kiwi", "soy", "mustard"]
DRUGS = ["metformin", "lisinopril", "levothyroxine", "sertraline", "atorvastatin", "omeprazole"]
TOOLS = ["Neovim", "Emacs", "Helix", "Sublime Text", "VS Code", "Zed", "IntelliJ", "Kakoune"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True)
class FactType:
    """One kind of planted fact: the user's turn, the assistant's answer and paraphrased questions."""

    fact: str
    reply: str
    questions: tuple[str, ...]


# {n} name, {p} pet, {c} city, {k} company, {l} language, {car}, {col} colour, {b} book, {f} food, {d} drug,
# {t} tool, {m} month, {w} weekday, {x} a number. Questions never contain the answer value.
FACTS_EN = (
    FactType("We finally adopted a beagle puppy last weekend and named her {p}.",
             "{p} is a lovely name for a beagle! Puppies need a lot of sleep in the first weeks.",
             ("What did we call the new dog?", "What's the name of the pup we rescued?",
              "Remind me what our doggy is called.")),
    FactType("My sister {n} just moved to {c} for her new job.",
             "Exciting for {n}! {c} is a great place to live.",
             ("Which city does {n} live in now?", "Where did my sibling relocate to?",
              "Where is {n} living these days?")),
    FactType("I started a new position at {k} as a backend engineer on Monday.",
             "Congratulations on joining {k}! How was the first day?",
             ("Which company do I work for now?", "Who is my current employer?", "Where did I get hired recently?")),
    FactType("I've been studying {l} every morning for about three months now.",
             "Consistency is key with {l}. Are you using an app or a tutor?",
             ("Which language am I learning?", "What tongue have I been practising daily?",
              "What language do I study in the mornings?")),
    FactType("We bought a used {car} last month, it's {col}.",
             "A {car} is a solid choice. Enjoy the new car!",
             ("What vehicle did we purchase?", "Which car model do we own now?", "What kind of auto did we get?")),
    FactType("Please note I'm severely allergic to {f}, so no recipes with it.",
             "Understood, I will keep {f} out of every recipe I suggest.",
             ("What am I allergic to?", "Which ingredient gives me an allergic reaction?",
              "What food should my recipes avoid because of my allergy?")),
    FactType("My doctor put me on {d}, one tablet every evening.",
             "Thanks for telling me. Take {d} as prescribed and ask your doctor about side effects.",
             ("Which medication was I prescribed?", "What medicine do I take at night?",
              "What did the physician prescribe me?")),
    FactType("The staging server listens on port {x} now, we changed it yesterday.",
             "Noted: staging is on port {x}.",
             ("Which port does staging use?", "What port is the staging box on?",
              "On what port do I reach the staging host?")),
    FactType("My favourite editor is {t}, I use it for everything.",
             "{t} is great. I can tailor keybinding tips for {t}.",
             ("Which text editor do I prefer?", "What's my preferred code editor?", "What IDE do I like best?")),
    FactType("Our wedding anniversary is on {m} {x2}.",
             "I'll remember {m} {x2}. Any plans for the anniversary this year?",
             ("When is our anniversary?", "What date did we get married?",
              "On which day do we celebrate our marriage?")),
    FactType("I just finished reading {b} and loved it.",
             "{b} is a wonderful novel. What did you like most about it?",
             ("Which book did I finish recently?", "What novel did I enjoy reading lately?",
              "What was the last book I read?")),
    FactType("My manager {n} prefers status updates on {w} mornings.",
             "Got it, {w} mornings for updates to {n}.",
             ("When does my boss want status reports?", "Which day does {n} want my updates?",
              "On what weekday should I send my supervisor an update?")),
    FactType("Our team standup moved to {x3} o'clock because of the new hires.",
             "Standup at {x3} o'clock, noted.",
             ("What time is the daily standup now?", "When does our team meeting happen?",
              "At what hour is our daily sync?")),
    FactType("My daughter's favourite colour is {col}, she wants her room painted that way.",
             "A {col} room sounds lovely for her.",
             ("What colour does my kid like most?", "Which paint colour did my daughter pick for her bedroom?",
              "What is my child's favorite color?")),
    FactType("The production database password rotates every {x4} days, the vault handles it.",
             "Good practice: a {x4}-day rotation through the vault.",
             ("How often do we rotate prod db credentials?", "What is the rotation period for the production "
              "database secret?", "After how many days is the prod DB password changed?")),
    FactType("My neighbour {n} is looking after our cat while we travel to {c}.",
             "That's kind of {n}. Have a great trip to {c}!",
             ("Who is feeding the kitty while we're away?", "Which neighbor is cat-sitting for us?",
              "Who takes care of our kitten when we travel?")),
)
FACTS_ZH = (
    FactType("我们上个周末领养了一只小狗，给它取名叫{p}。", "{p}这个名字真可爱！小狗刚到家要多休息。",
             ("我们家的狗狗叫什么名字？", "我们收养的宠物叫什么？", "新来的小狗名字是什么？")),
    FactType("我妹妹{n}刚搬到{c}去工作了。", "恭喜{n}！{c}是个好地方。",
             ("{n}现在住在哪个城市？", "我妹妹搬去了哪里？", "{n}最近在哪里生活？")),
    FactType("我下周一开始在{k}上班，做后端工程师。", "恭喜你加入{k}！",
             ("我现在在哪家公司工作？", "我的新雇主是谁？", "我最近入职了哪家公司？")),
    FactType("我对{f}严重过敏，做菜不要放。", "明白了，推荐的菜谱都不会含有{f}。",
             ("我对什么食物过敏？", "做菜时要避开哪种食材？", "哪种东西会让我过敏？")),
    FactType("医生让我每天晚上吃一片{d}。", "好的，请按医嘱服用{d}。",
             ("医生给我开了什么药？", "我每晚吃的药是什么？", "我在服用哪种药物？")),
    FactType("我们的测试服务器现在用{x}端口。", "记下了，测试环境在{x}端口。",
             ("测试服务器是哪个端口？", "测试环境的端口号是多少？", "我该用哪个端口连测试机？")),
)

FILLER_EN = (
    ("Can you help me plan meals for the week? Something with {veg} and {grain}.",
     "Sure: {veg} stir-fry on Monday, a {grain} bowl on Tuesday, and soup later in the week."),
    ("My neighbour's dog barked all night again, any tips for sleeping through noise?",
     "Earplugs, a white-noise machine, or talking to your neighbour kindly usually help."),
    ("I'm debugging a flaky test in the {svc} service, it times out on CI but not locally.",
     "Check for shared state, network calls without mocks, and CI's slower CPUs; add logging around the timeout."),
    ("What's a good stretching routine after running {km} kilometres?",
     "Calves, hamstrings, quads and hip flexors, thirty seconds each, then a short walk."),
    ("A colleague of mine flew to {c} for a conference last week.", "Nice, {c} hosts a lot of tech conferences."),
    ("Draft a polite email asking for the invoice for the {svc} subscription.",
     "Subject: Invoice request. Hello, could you send the invoice for our {svc} subscription? Thanks."),
    ("How do I rebase my feature branch onto main without losing commits?",
     "Fetch, then git rebase origin/main; resolve conflicts; git rebase --continue; push with --force-with-lease."),
    ("Recommend a movie for a rainy {w} evening.", "Try a cosy classic or a documentary about {topic}."),
    ("My friend's cat knocked over a plant, is {plant} toxic to cats?",
     "Some houseplants are toxic to cats; check the ASPCA list for {plant} to be sure."),
    ("Explain the difference between a process and a thread.",
     "Processes have separate memory; threads share their process's memory and are cheaper to create."),
    ("We are thinking about a weekend trip, maybe somewhere by the sea.",
     "A coastal town is great off-season: fewer crowds and cheaper hotels."),
    ("The {svc} deployment failed with a migration error on the orders table.",
     "Roll back, run the migration in a transaction on a staging copy, then redeploy."),
    ("How long should I boil an egg for a soft yolk?", "About six and a half minutes from boiling water."),
    ("Summarise the pros and cons of remote work for a small team.",
     "Pros: focus, hiring reach. Cons: slower feedback, harder onboarding, timezone friction."),
    ("My brother is thinking about buying a new car, maybe electric.",
     "Electric cars cost less to run; check charging at home and the range he needs."),
    ("What's the best way to learn touch typing?", "Daily fifteen-minute practice and never looking at the keys."),
    ("Our server logs are full of {svc} timeout warnings since the update.",
     "Compare the timeout settings before and after the update and look at latency percentiles."),
    ("I read an article about {topic} today, pretty interesting.", "{topic} is a fascinating subject."),
    ("Can you convert 3 cups of flour to grams?", "About 375 grams of all-purpose flour."),
    ("The doctor's office called to move my dentist appointment.",
     "Do you want me to add the new appointment time to your calendar?"),
    ("Any idea why my sourdough isn't rising?", "Your starter may be weak or the kitchen too cold; try a warmer spot."),
    ("Write a haiku about {topic}.", "Quiet {topic} hums / under the morning's grey light / coffee going cold"),
)
FILLER_ZH = (
    ("这周末天气怎么样？我想去{zh_place}走走。", "周末多云，适合去{zh_place}散步。"),
    ("帮我想想晚饭做什么，家里有{zh_veg}和鸡蛋。", "可以做{zh_veg}炒鸡蛋，再煮个汤。"),
    ("邻居家的狗昨晚一直叫，吵得睡不着。", "可以试试耳塞，或者和邻居好好沟通。"),
    ("我同事上周去{c}出差了。", "{c}是个很有意思的城市。"),
    ("测试一直失败，好像是超时的问题。", "先看看日志，检查网络请求和超时设置。"),
    ("推荐一本适合周末看的书吧。", "可以看看小说或者历史类的书。"),
    ("我哥哥想买一辆新车，电动车好不好？", "电动车用车成本低，但要考虑充电是否方便。"),
    ("怎么学好做面包？", "多练习，注意发酵的温度和时间。"),
)
# Two of these follow every filler turn, so that, as in real conversations, no two turns are the same text.
CLAUSES_EN = (
    "By the way, {n} says hi.", "I have a call with {n} at {x3}:30.", "It rained all day in {c}.",
    "Ticket {x} is still open.", "I'll be offline on {w}.", "The invoice total was {x} euros.",
    "Remind me later about the {svc} review.", "We might visit {c} in {m}.", "My train leaves at {x3}:15.",
    "{n} recommended a podcast about {topic}.", "The build number is {x}.", "I slept badly on {w} night.",
    "Coffee number {x3} today.", "Our {svc} dashboard shows {x} errors.", "{n} is out until {m}.",
    "The parcel from {c} arrived.", "I walked {km} kilometres this morning.", "Room {x} is booked for Friday.",
)
CLAUSES_ZH = (
    "顺便说一下，{n}向你问好。", "我{w}下午要开会。", "{c}今天下雨了。", "快递单号是{x}。", "{n}推荐了一本书。",
    "我今天走了{km}公里。", "晚上{x3}点还有个电话。", "发票金额是{x}元。",
)
SLOTS = {
    "veg": ["spinach", "broccoli", "zucchini", "kale", "carrots", "mushrooms"],
    "grain": ["quinoa", "rice", "farro", "couscous", "barley"],
    "svc": ["billing", "search", "checkout", "auth", "notifications", "reporting"],
    "km": ["5", "10", "15", "21"],
    "topic": ["octopuses", "volcanoes", "medieval cooking", "deep sea fish", "typography", "bridges"],
    "plant": ["pothos", "monstera", "aloe", "peace lily", "snake plant"],
    "zh_place": ["公园", "湖边", "山上", "老街", "海边"],
    "zh_veg": ["西红柿", "土豆", "青椒", "白菜", "茄子"],
}


@dataclass
class Question:
    user: int
    text: str
    answer: str  # the key of the turn that holds the fact
    chinese: bool


@dataclass
class Corpus:
    turns: list[tuple[int, str, int, str, str, str]] = field(default_factory=list)  # user, session, n, u, a, key
    questions: list[Question] = field(default_factory=list)


def generate(size: int, seed: int) -> Corpus:
    """About ``size`` turns over ``USERS`` users with planted facts and their paraphrased questions."""
    rng = random.Random(seed)
    per_user = max(size // USERS, MIN_SESSIONS)
    sessions = max(MIN_SESSIONS, per_user // 20)
    corpus = Corpus()
    for user in range(USERS):
        chinese = user in CHINESE_USERS
        facts, fillers = (FACTS_ZH, FILLER_ZH) if chinese else (FACTS_EN, FILLER_EN)
        lengths = [per_user // sessions + (s < per_user % sessions) for s in range(sessions)]
        total = sum(lengths)
        positions = set(rng.sample(range(total), len(facts)))
        planted = iter(range(len(facts)))
        position = -1
        for session, length in enumerate(lengths):
            for n in range(length):
                position += 1
                key = f"u{user}-s{session}-t{n}"
                if position in positions:
                    index = next(planted)
                    kind = facts[index]
                    values = _values(rng)
                    user_text = kind.fact.format(**values)
                    reply = kind.reply.format(**values)
                    question = rng.choice(kind.questions).format(**values)
                    corpus.questions.append(Question(user, question, key, chinese))
                else:
                    template = rng.choice(fillers)
                    values = {**_values(rng), **{k: rng.choice(v) for k, v in SLOTS.items()}}
                    clauses = " ".join(rng.sample(CLAUSES_ZH if chinese else CLAUSES_EN, 2))
                    user_text = f"{template[0]} {clauses}".format(**values)
                    reply = template[1].format(**values)
                corpus.turns.append((user, f"u{user}-s{session}", n, user_text, reply, key))
    return corpus


def _values(rng: random.Random) -> dict[str, str]:
    return {"n": rng.choice(NAMES), "p": rng.choice(PETS), "c": rng.choice(CITIES), "k": rng.choice(COMPANIES),
            "l": rng.choice(LANGS), "car": rng.choice(CARS), "col": rng.choice(COLORS), "b": rng.choice(BOOKS),
            "f": rng.choice(FOODS), "d": rng.choice(DRUGS), "t": rng.choice(TOOLS), "m": rng.choice(MONTHS),
            "w": rng.choice(WEEKDAYS), "x": str(rng.randint(2000, 9999)), "x2": str(rng.randint(1, 28)),
            "x3": str(rng.randint(8, 11)), "x4": str(rng.choice([30, 45, 60, 90]))}


# ------------------------------------------------------------------------------------------------ systems


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@dataclass
class Result:
    ranks: list[int | None]
    prefetch: list[float]
    write: list[float]
    drain_rate: float | None = None
    exact_writes: bool = True

    def recall(self, k: int, subset: Sequence[int] | None = None) -> float:
        ranks = [self.ranks[i] for i in subset] if subset is not None else self.ranks
        return sum(r is not None and r <= k for r in ranks) / len(ranks) if ranks else float("nan")

    def mrr(self) -> float:
        return statistics.fmean(1 / r if r else 0.0 for r in self.ranks)


def session_of(user: int, session: str = "bench-question") -> SessionInfo:
    return SessionInfo(session_id=session, user_id=f"user-{user}", platform="bench")


def run_ctx_local(corpus: Corpus, home: Path, config: Config | None = None) -> Result:
    provider = LocalProvider({"path": str(home / "ctx-local.db"), "drain_timeout_seconds": 600}, hermes_home=home,
                             config=config)
    provider.on_session_start(session_of(0))
    turns = [Turn(session=session_of(user, session), turn_number=n, user_text=u, assistant_text=a)
             for user, session, n, u, a, _ in corpus.turns]
    writes = []
    clock = time.perf_counter
    start = clock()
    for turn in turns:
        before = clock()
        provider.sync_turn(turn)
        writes.append(clock() - before)
    if not provider.flush(3600):
        raise RuntimeError("ctx-local did not drain")
    drain_rate = len(turns) / (clock() - start)
    keys = _ctx_local_keys(provider, corpus)
    ranks, prefetch = [], []
    for q in corpus.questions:
        session = session_of(q.user)
        before = clock()
        provider.prefetch(q.text, session=session)
        prefetch.append(clock() - before)
        found = json.loads(provider.handle_tool_call("ctx_memory_search", {"query": q.text, "limit": 10},
                                                     session=session)).get("results", [])
        ids = [r["id"] for r in found]
        ranks.append(ids.index(keys[q.answer]) + 1 if keys[q.answer] in ids else None)
    provider.shutdown()
    return Result(ranks, prefetch, writes, drain_rate)


def _ctx_local_keys(provider: LocalProvider, corpus: Corpus) -> dict[str, int]:
    """Planted turn key -> stored row id (by the turn's text, which is unique to the planted fact)."""
    wanted = {q.answer for q in corpus.questions}
    texts = {(session_of(user).user_id, u, a): key for user, _, _, u, a, key in corpus.turns if key in wanted}
    store = open_memory(provider.config, provider.path)
    try:
        return {texts[(m.user_id, m.user_text, m.assistant_text)]: m.id for m in store.memories()
                if (m.user_id, m.user_text, m.assistant_text) in texts}
    finally:
        store.close()


@dataclass
class Holographic:
    """holographic filled with a corpus: one provider (and store) per user."""

    providers: dict[int, Any]
    #: per user: a stored fact's content -> the corpus key of its turn
    content_key: dict[int, dict[str, str]]
    #: seconds per ``fact_store add``
    writes: list[float]
    #: every add rebuilt its category's bank (False: the rebuild was deferred to the end)
    exact: bool

    def shutdown(self) -> None:
        for provider in self.providers.values():
            provider.shutdown()


def holographic_provider(path: Path, user: int) -> Any:
    """hermes' holographic provider on the store at ``path``, initialised (None when hermes lacks it)."""
    try:
        from plugins.memory.holographic import HolographicMemoryProvider
    except ImportError:
        return None
    logging.getLogger("plugins.memory.holographic").setLevel(logging.ERROR)  # its SNR warning per add
    provider = HolographicMemoryProvider(config={"db_path": str(path)})
    provider.initialize(f"bench-{user}")
    return provider


def fill_holographic(corpus: Corpus, home: Path, exact_limit: int) -> Holographic | None:
    """Every turn of ``corpus`` added to its user's holographic store at ``home/holographic-<user>.db``
    (None when hermes lacks the provider)."""
    try:
        from plugins.memory.holographic.store import MemoryStore
    except ImportError:
        return None
    os.environ["HERMES_HOME"] = str(home)
    by_user: dict[int, list[tuple[str, str]]] = {}
    for user, _, _, u, a, key in corpus.turns:
        by_user.setdefault(user, []).append((f"User: {u}\nAssistant: {a}", key))
    filled = Holographic({}, {}, [], max(len(items) for items in by_user.values()) <= exact_limit)
    clock = time.perf_counter
    with _deferred_banks(MemoryStore, not filled.exact) as rebuild:
        for user, items in by_user.items():
            provider = filled.providers[user] = holographic_provider(home / f"holographic-{user}.db", user)
            keys = filled.content_key.setdefault(user, {})
            for content, key in items:
                before = clock()
                provider.handle_tool_call("fact_store", {"action": "add", "content": content})
                filled.writes.append(clock() - before)
                keys.setdefault(content.strip(), key)
            rebuild(provider._store)
    return filled


def run_holographic(corpus: Corpus, home: Path, exact_limit: int) -> Result | None:
    filled = fill_holographic(corpus, home, exact_limit)
    if filled is None:
        return None
    clock = time.perf_counter
    ranks, prefetch = [], []
    for q in corpus.questions:
        provider = filled.providers[q.user]
        before = clock()
        provider.prefetch(q.text)
        prefetch.append(clock() - before)
        found = json.loads(provider.handle_tool_call("fact_store", {"action": "search", "query": q.text,
                                                                    "limit": 10})).get("results", [])
        keys = [filled.content_key[q.user].get(r["content"]) for r in found]
        ranks.append(keys.index(q.answer) + 1 if q.answer in keys else None)
    filled.shutdown()
    return Result(ranks, prefetch, filled.writes, exact_writes=filled.exact)


@contextlib.contextmanager
def _deferred_banks(store_class: Any, defer: bool) -> Iterator[Callable[[Any], None]]:
    if not defer:
        yield lambda store: None
        return
    original = store_class._rebuild_bank
    store_class._rebuild_bank = lambda self, category: None
    try:
        def rebuild(store: Any) -> None:
            for (category,) in store._conn.execute("SELECT DISTINCT category FROM facts").fetchall():
                original(store, category)

        yield rebuild
    finally:
        store_class._rebuild_bank = original


# ------------------------------------------------------------------------------------------------ report


def median(values: Sequence[float]) -> float:
    values = [v for v in values if v == v]  # NaN: not measured
    return statistics.median(values) if values else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="stored turns per run, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="repetitions per size (medians are reported)")
    parser.add_argument("--seed", type=int, default=1, help="1 = development seed, 2 = held-out seed")
    parser.add_argument("--no-holographic", action="store_true", help="measure ctx-local only")
    parser.add_argument("--holographic-exact", type=int, default=2000,
                        help="per-user store size up to which holographic is fed exactly one add at a time")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be whole numbers separated by commas, got {args.sizes!r}")
    if not sizes or min(sizes) < USERS * MIN_SESSIONS or args.runs < 1:
        parser.error(f"--sizes must each be at least {USERS * MIN_SESSIONS} and --runs at least 1")

    rows = []
    for size in sizes:
        measured: dict[str, list[Result]] = {"ctx-local": [], "holographic": []}
        corpus = generate(size, args.seed)
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                measured["ctx-local"].append(run_ctx_local(corpus, Path(tmp)))
            if not args.no_holographic:
                with tempfile.TemporaryDirectory() as tmp:
                    result = run_holographic(corpus, Path(tmp), args.holographic_exact)
                    if result is not None:
                        measured["holographic"].append(result)
        en = [i for i, q in enumerate(corpus.questions) if not q.chinese]
        zh = [i for i, q in enumerate(corpus.questions) if q.chinese]
        for system, results in measured.items():
            if not results:
                continue
            star = "" if all(r.exact_writes for r in results) else "*"
            rows.append((
                f"{len(corpus.turns):,}", system,
                *(f"{median([r.recall(k) for r in results]):.1%}" for k in (1, 5, 10)),
                f"{median([r.recall(5, en) for r in results]):.1%}",
                f"{median([r.recall(5, zh) for r in results]):.1%}",
                f"{median([r.mrr() for r in results]):.3f}",
                f"{median([percentile(r.prefetch, 0.5) * 1e3 for r in results]):.2f}",
                f"{median([percentile(r.prefetch, 0.95) * 1e3 for r in results]):.2f}",
                f"{median([percentile(r.write, 0.5) * 1e3 for r in results]):.3f}{star}",
                f"{median([percentile(r.write, 0.99) * 1e3 for r in results]):.3f}{star}",
                f"{median([r.drain_rate for r in results if r.drain_rate]):,.0f}" if results[0].drain_rate else "-",
            ))
        print(f"size {size:,} done ({len(corpus.questions)} questions)", file=sys.stderr)
    header = ("turns", "system", "R@1", "R@5", "R@10", "R@5 en", "R@5 zh", "MRR", "prefetch p50 ms",
              "prefetch p95 ms", "write p50 ms", "write p99 ms", "drain turns/s")
    print(f"seed {args.seed}, {args.runs} run(s) per size, medians; write = ctx-local sync_turn (enqueue) / "
          "holographic fact_store add")
    print_table(header, rows)
    return 0


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``header``, each column right-aligned to its widest cell."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    sys.exit(main())
