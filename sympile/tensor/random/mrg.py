"""The numpy reference of MRG_RandomStreams' generator, Theano's MRG31k3p (L'Ecuyer and
Touzin, "Fast combined multiple recursive generators with multipliers of the form
a = +/- 2^d +/- 2^e", 2000) with Theano's stream layout, so that a ported program draws the
numbers it drew under Theano (Theano's theano/sandbox/rng_mrg.py defines it; this
is a re-implementation, checked against values computed with Theano's own functions in
tests/tensor/random/test_mrg.py). mrg.h is the C twin.

- A stream's state is 6 int32 (x11, x12, x13, x21, x22, x23); a sample is
  (x11 - x21 mod M1) times NORM, computed as Theano's C code does: the integer converted
  to the output dtype, times 4.6566126e-10f (float32, the largest float below 2**-31 that
  keeps every sample below 1) or 2**-31 (float64).
- A draw of n elements from a state of S streams takes element i from stream i mod S, each
  stream stepping once per element it gives.
- A new random variable gets S streams 2**72 steps apart, the first at the streams object's
  current position, which then jumps 2**134 steps (get_substream_rstates and inc_rstate).
- S is Theano's guess_n_streams: for a size of constant ints with product r, r // 6 when
  r > 6 (else r), at most 60 * 256; 60 * 256 for a symbolic size (normal draws
  uniforms of a symbolic size, so it always has 60 * 256 streams).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["M1", "M2", "uniform", "substreams", "jump_2p134", "guess_n_streams",
           "multinomial_from_uniform", "choice_from_uniform", "MAX_STREAMS"]

M1 = 2147483647
M2 = 2147462579
MAX_STREAMS = 60 * 256

_A1P72 = np.array([[1516919229, 758510237, 499121365],
                   [1884998244, 1516919229, 335398200],
                   [601897748, 1884998244, 358115744]], dtype=np.int64)
_A2P72 = np.array([[1228857673, 1496414766, 954677935],
                   [1133297478, 1407477216, 1496414766],
                   [2002613992, 1639496704, 1407477216]], dtype=np.int64)
_A1P134 = np.array([[1702500920, 1849582496, 1656874625],
                    [828554832, 1702500920, 1512419905],
                    [1143731069, 828554832, 102237247]], dtype=np.int64)
_A2P134 = np.array([[796789021, 1464208080, 607337906],
                    [1241679051, 1431130166, 1464208080],
                    [1401213391, 1178684362, 1431130166]], dtype=np.int64)


def _mat_vecs(matrix: np.ndarray, vectors: np.ndarray, modulus: int) -> np.ndarray:
    """matrix @ v mod modulus for each row v of `vectors` (int64; each product < 2**62)."""
    return ((matrix[None, :, :] * vectors[:, None, :]) % modulus).sum(axis=2) % modulus


def _mat_mat(left: np.ndarray, right: np.ndarray, modulus: int) -> np.ndarray:
    return ((left[:, :, None] * right[None, :, :]) % modulus).sum(axis=1) % modulus


def _jump(states: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    states = states.astype(np.int64)
    return np.concatenate([_mat_vecs(first, states[:, :3], M1),
                           _mat_vecs(second, states[:, 3:], M2)], axis=1)


def jump_2p134(state: np.ndarray) -> np.ndarray:
    """The 6-int32 state 2**134 steps ahead (the next random variable's start)."""
    return _jump(state[None, :], _A1P134, _A2P134)[0].astype(np.int32)


def substreams(state: np.ndarray, count: int) -> np.ndarray:
    """(count, 6) int32: `state`, then each row 2**72 steps after the one before it,
    computed by doubling (rows [k, 2k) are rows [0, k) jumped k * 2**72 steps)."""
    rows = np.asarray(state, np.int64)[None, :]
    first, second = _A1P72, _A2P72
    while len(rows) < count:
        rows = np.concatenate([rows, _jump(rows, first, second)])
        first, second = _mat_mat(first, first, M1), _mat_mat(second, second, M2)
    return rows[:count].astype(np.int32)


def guess_n_streams(size, warn: bool = False) -> int:
    """Theano's number of streams for `size` (a tuple of ints, or anything symbolic: then
    MAX_STREAMS, with a warning where `warn`)."""
    if isinstance(size, (tuple, list)) and all(
            isinstance(entry, (int, np.integer)) and not isinstance(entry, bool)
            for entry in size):
        product = int(np.prod(size, dtype=np.int64)) if size else 1
        if product > 6:
            product //= 6
        return max(1, min(product, MAX_STREAMS))
    if warn:
        warnings.warn(f"guess_n_streams: cannot tell the number of streams from size {size!r}"
                      f"; guessing {MAX_STREAMS}", stacklevel=2)
    return MAX_STREAMS


def _step(states: np.ndarray) -> np.ndarray:
    """Advance int32 states (rows of 6, in place, int32 wrap-around as in Theano's C) and
    return their (x11 - x21) mod M1, in [1, M1]."""
    x11, x12, x13, x21, x22, x23 = (states[:, column] for column in range(6))
    m1, m2 = np.int32(M1), np.int32(M2)
    with np.errstate(over="ignore"):
        y1 = (((x12 & 511) << 22) + (x12 >> 9) + ((x13 & 16777215) << 7) + (x13 >> 24))
        y1 = np.where((y1 < 0) | (y1 >= m1), y1 - m1, y1)
        y1 = y1 + x13
        y1 = np.where((y1 < 0) | (y1 >= m1), y1 - m1, y1)
        first_new = y1
        y1 = ((x21 & 65535) << 15) + np.int32(21069) * (x21 >> 16)
        y1 = np.where((y1 < 0) | (y1 >= m2), y1 - m2, y1)
        y2 = ((x23 & 65535) << 15) + np.int32(21069) * (x23 >> 16)
        y2 = np.where((y2 < 0) | (y2 >= m2), y2 - m2, y2)
        y2 = y2 + x23
        y2 = np.where((y2 < 0) | (y2 >= m2), y2 - m2, y2)
        y2 = y2 + y1
        y2 = np.where((y2 < 0) | (y2 >= m2), y2 - m2, y2)
        states[:, 2], states[:, 1], states[:, 0] = x12, x11, first_new
        states[:, 5], states[:, 4], states[:, 3] = x22, x21, y2
        difference = first_new - y2
        return np.where(first_new <= y2, difference + m1, difference)


def uniform(state: np.ndarray, count: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(the new state, `count` uniforms of `dtype`) from the int32 state (n_streams, 6)."""
    states = np.array(state, dtype=np.int32, copy=True)
    n_streams = len(states)
    integers = np.empty(count, np.int32)
    for start in range(0, count, n_streams):
        used = min(n_streams, count - start)
        stepped = states[:used].copy()
        integers[start:start + used] = _step(stepped)
        states[:used] = stepped
    if dtype == "float32":
        sample = integers.astype(np.float32) * np.float32(4.6566126e-10)
    else:
        sample = integers.astype(np.float64) * 4.656612873077392578125e-10
    return states, sample


def multinomial_from_uniform(pvals: np.ndarray, uniforms: np.ndarray, n: int) -> np.ndarray:
    """Theano's MultinomialFromUniform (see op.py): running sums in float64; a draw whose
    uniform no running sum exceeds counts nowhere."""
    rows, categories = pvals.shape
    _check_uniform_count("multinomial", uniforms, rows, n)
    counts = np.zeros((rows, categories), np.int64)
    running = np.cumsum(pvals, axis=1, dtype=np.float64)
    for draw in range(n):
        chosen = (running > uniforms[draw * rows:(draw + 1) * rows, None]).argmax(axis=1)
        found = running[np.arange(rows), chosen] > uniforms[draw * rows:(draw + 1) * rows]
        counts[np.arange(rows)[found], chosen[found]] += 1
    return counts


def choice_from_uniform(pvals: np.ndarray, uniforms: np.ndarray, n: int) -> np.ndarray:
    """Theano's ChoiceFromUniform without replacement (see op.py), renormalising each row in
    pvals' dtype as its C code does; an index whose draw no running sum exceeds stays -1."""
    rows, categories = pvals.shape
    if n > categories:
        raise ValueError(f"MRG_RandomStreams.choice: cannot take {n} samples without "
                         f"replacement from {categories} categories")
    _check_uniform_count("choice", uniforms, rows, n)
    weights = np.array(pvals, copy=True)
    result = np.full((rows, n), -1, np.int64)
    for draw in range(n):
        for row in range(rows):
            running = 0.0
            uniform_value = uniforms[draw * rows + row]
            for category in range(categories):
                running += float(weights[row, category])
                if running > uniform_value:
                    result[row, draw] = category
                    if draw < n - 1:
                        total = weights.dtype.type(running - float(weights[row, category]))
                        weights[row, category] = 0
                        for later in range(category, categories):
                            total = weights.dtype.type(total + weights[row, later])
                        weights[row] = weights[row] / total
                    break
    return result


def _check_uniform_count(method: str, uniforms: np.ndarray, rows: int, n: int) -> None:
    if len(uniforms) != rows * n:
        raise ValueError(f"MRG_RandomStreams.{method}: expected {rows * n} uniforms (rows of "
                         f"pvals times n), got {len(uniforms)}")
