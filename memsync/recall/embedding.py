"""Search by meaning, offline: texts as unit vectors from a static embedding model whose weights ship
inside a package on the package index (the ``semantic`` extra: ``wordllama``, MIT, a 19 MB wheel whose
``l2_supercat`` model is 32,000 token vectors of 256 dimensions with its tokenizer, no torch). Nothing is
downloaded, ever: the weights and the tokenizer are read from the installed package's files (the
weights mapped from their safetensors file, the tokenizer with ``tokenizers``, its dependency), and the
package itself is never imported: its loader would fetch a tokenizer it fails to find in its own wheel,
and its import configures logging.

A text's vector is the mean of its tokens' vectors (as the package computes it), scaled to unit length.

Without the extra, ``available()`` is False and recall stays lexical; ``embed`` then raises MemsyncError.
numpy and the model are loaded on first use only, so importing this module costs nothing.

Vectors are float32, unit length (a text without a known token gives the zero vector, similar to
nothing), so cosine similarity is a dot product; ``to_blob``/``from_blobs`` store them in four bits per
component.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsync.errors import MemsyncError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

    Matrix = NDArray[np.float32]
else:
    Matrix = Any

# Stored beside the vectors: vectors of another model (or version of it) are recomputed, never compared.
MODEL = "wordllama/l2_supercat-256d-int4"
# All the model's dimensions: cut to 128 (its leading half stands alone), recall@5 of search by meaning
# alone on bench/recall_eval.py fell from 0.761 to 0.716, and to 0.648 at 64.
DIMENSIONS = 256
# A long curated note is embedded by its start: a static model averages its tokens, so the tail of a
# long plan would only blur what the note is about.
MAX_CHARS = 2000
INSTALL_HINT = "pip install 'memsync[semantic]'"
# A stored vector's components are four-bit levels from -_LEVELS to _LEVELS (the largest one's is
# _LEVELS); the byte of two zero components is _ZERO.
_LEVELS = 7
_ZERO = b"\x88"
_PACKAGE = "wordllama"
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_DEPENDENCIES = ("numpy", "tokenizers")
# The safetensors file's element types (little-endian, as its format stores them).
_DTYPES = {"F16": "<f2", "F32": "<f4"}


def _folder() -> Path | None:
    spec = importlib.util.find_spec(_PACKAGE)
    return Path(spec.origin).parent if spec is not None and spec.origin is not None else None


@functools.cache
def available() -> bool:
    """Whether the ``semantic`` extra is installed (the model's package and what reads it), without
    importing it. Looked up once per process (an extra installed meanwhile is seen by the next one): the
    lookup scans the import path for three packages, 0.2 ms, and a hybrid recall asked twice."""
    return _folder() is not None and all(importlib.util.find_spec(name) is not None for name in _DEPENDENCIES)


def loaded() -> bool:
    """Whether this process has loaded the model (``embed`` then reads no file of it)."""
    return _model.cache_info().currsize > 0


@functools.cache
def _model() -> tuple[Tokenizer, Matrix]:
    """The tokenizer and the token vectors (``_weights``), loaded once per process."""
    from tokenizers import Tokenizer

    folder = _folder()
    if folder is None:
        raise FileNotFoundError(f"the package {_PACKAGE} is not installed")
    tokenizer = Tokenizer.from_file(str(folder.joinpath(*_TOKENIZER)))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, _weights(folder.joinpath(*_WEIGHTS))


def _weights(path: Path) -> Matrix:
    """The token vectors of the safetensors file ``path`` (its ``embedding.weight``, one row per token),
    mapped read-only as the file stores them: a process reads the pages of the tokens it embeds, instead
    of reading and widening the whole 16 MB before its first query. Raises ValueError (KeyError,
    TypeError) when the file holds no such tensor of at least ``DIMENSIONS`` columns."""
    import numpy as np

    # The format: the header's length (8 bytes, little-endian), the header (JSON), then the data.
    with path.open("rb") as file:
        length = int.from_bytes(file.read(8), "little")
        tensor = json.loads(file.read(length))["embedding.weight"]
    dtype = np.dtype(_DTYPES[tensor["dtype"]])
    rows, columns = tensor["shape"]
    start, end = tensor["data_offsets"]
    if columns < DIMENSIONS or end - start != rows * columns * dtype.itemsize:
        raise ValueError(f"{path}: embedding.weight is not {DIMENSIONS} wide or not its stated size")
    matrix: Matrix = np.memmap(path, dtype=dtype, mode="r", offset=8 + length + start, shape=(rows, columns))
    return matrix


def embed(texts: Sequence[str]) -> Matrix:
    """The unit vectors of ``texts``, one row each (shape ``(len(texts), DIMENSIONS)``, float32).

    Raises MemsyncError when the extra is not installed or the model's files are missing or unusable."""
    if not available():
        raise MemsyncError(f"search by meaning: the semantic extra is not installed. Run {INSTALL_HINT}")
    import numpy as np

    matrix = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return matrix
    try:
        tokenizer, vectors = _model()
        encoded = tokenizer.encode_batch([text[:MAX_CHARS] for text in texts], add_special_tokens=False)
    # tokenizers (Rust) raises a plain Exception for a missing or torn file.
    except Exception as exc:
        raise MemsyncError(
            f"search by meaning: the model's files are unusable ({exc}). Run {INSTALL_HINT}"
        ) from None
    for row, tokens in enumerate(encoded):
        if tokens.ids:
            rows = vectors[np.asarray(tokens.ids, dtype=np.intp) % len(vectors), :DIMENSIONS]
            matrix[row] = rows.astype(np.float32).mean(axis=0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return unit


def to_blob(vector: Matrix) -> bytes:
    """One vector (a row of ``embed``) as the bytes stored for it: each component scaled so the largest
    is ``_LEVELS``, rounded, and kept in four bits (two per byte, offset by 8): an eighth of float32's
    size, so 256 dimensions add 128 bytes per document (the index stays within twice the memory it
    covers) and bench/recall_eval.py's recall is what float32 vectors give. Any finite vector keeps its
    direction, however small; the zero vector, and a vector with a NaN or infinite component (it has no
    direction: ``embed`` never gives one), are stored as the zero vector, similar to nothing."""
    import numpy as np

    row = np.asarray(vector, dtype=np.float64).reshape(-1)
    largest = float(np.abs(row).max(initial=0.0))
    if largest > 0 and np.isfinite(row).all():
        # Divided first: _LEVELS / largest overflows for the smallest components (float32's below 2e-38).
        levels = np.rint(row / largest * _LEVELS)
    else:
        levels = np.zeros_like(row)
    nibbles = (levels + 8).astype(np.uint8)
    return (nibbles[0::2] << 4 | nibbles[1::2]).tobytes()


def from_blobs(blobs: Sequence[bytes]) -> Matrix:
    """The matrix of stored vectors (``to_blob``), one row each, unit length again; a blob of the wrong
    size (another model, a torn write) gives the zero vector, similar to nothing."""
    import numpy as np

    size = DIMENSIONS // 2
    whole = b"".join(blob if len(blob) == size else _ZERO * size for blob in blobs)
    packed = np.frombuffer(whole, dtype=np.uint8).reshape(len(blobs), size)
    # One matrix, scaled in place: a server's first recall reads 10,000 of them, and two more arrays of
    # its size (a quotient and its copy) were as much time again, in page faults.
    unit: Matrix = np.empty((len(blobs), DIMENSIONS), dtype=np.float32)
    np.subtract(packed >> 4, 8, out=unit[:, 0::2], dtype=np.float32)
    np.subtract(packed & 0x0F, 8, out=unit[:, 1::2], dtype=np.float32)
    # Each squared norm is a sum of small integers, exact in float32 in any order.
    norms = np.sqrt(np.einsum("ij,ij->i", unit, unit))
    unit /= np.where(norms > 0, norms, 1.0)[:, None]
    return unit


def nearest(query: Matrix, matrix: Matrix, limit: int) -> list[tuple[int, float]]:
    """The rows of ``matrix`` most similar to the vector ``query``, best first, as (row, cosine); rows of
    similarity 0 or less are left out (nothing in common). Ties keep row order."""
    import numpy as np

    if len(matrix) == 0 or limit <= 0:
        return []
    # einsum, not ``@``: a matrix-vector product through BLAS starts its threads, which on a loaded
    # machine made this 10x slower (40 ms against 4 ms for 10,000 rows at load 17).
    scores = np.einsum("ij,j->i", matrix, query.reshape(-1))
    count = min(limit, len(scores))
    top = np.argpartition(-scores, count - 1)[:count]
    top = top[np.lexsort((top, -scores[top]))]
    return [(int(row), float(scores[row])) for row in top if scores[row] > 0]


def similar_pairs(matrix: Matrix, threshold: float) -> list[tuple[int, int, float]]:
    """The pairs of rows ``(i, j)``, i < j, whose cosine is at least ``threshold``, most similar first.
    Compared in blocks of rows, so memory stays bounded by a block times the row count."""
    import numpy as np

    pairs: list[tuple[int, int, float]] = []
    block = 512
    for start in range(0, len(matrix), block):
        scores = matrix[start : start + block] @ matrix.T
        rows, cols = np.nonzero(scores >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + row
            if i < col:
                pairs.append((i, col, float(scores[row, col])))
    pairs.sort(key=lambda pair: (-pair[2], pair[0], pair[1]))
    return pairs
