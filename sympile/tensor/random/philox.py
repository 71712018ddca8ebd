"""The numpy reference of RandomStreams' generator and samplers; philox.h is their C twin and
must draw the same numbers (tests/tensor/random compares the two backends).

The generator is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
3", SC 2011): a keyed bijection of a 128-bit counter, so any element's random bits are a
function of (key, counter) alone. A stream's state is [key, calls]: every draw of an op
uses the counter words (c0, c1, calls_lo, calls_hi) and the op's new state is [key,
calls + 1]. Elements are computed independently of one another, hence identically by any
number of threads.

Two layouts of (c0, c1) are used:
- fixed-count samplers (uniform, normal, bernoulli): block b = (c0 | c1 << 32) gives four
  32-bit words, used in order by consecutive elements (a float32 or a Bernoulli sample takes
  one word, a float64 two, a pair of normals a pair of uniforms);
- per-element streams (everything with rejection or a search): element (or row) i draws its
  j-th block at (c0, c1) = (j, i); a block gives two float64 uniforms in [0, 1), ua from
  words 0-1 and ub from words 2-3. An op therefore draws for at most 2**32 elements.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from sympile.scalar.fastmath_numpy import fast_cosf, fast_logf, fast_sinf

__all__ = ["philox4x32", "uniform", "standard_normal", "bernoulli", "pair", "binomial", "poisson",
           "integers", "truncated_normal", "categorical", "permutation",
           "choice_without_replacement", "multinomial", "MAX_STREAM_INDEX"]

_MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_WEYL = (0x9E3779B9, 0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
MAX_STREAM_INDEX = 2**32 - 1
_TWO_PI = 6.283185307179586


def philox4x32(c0, c1, key: int, calls: int) -> tuple[np.ndarray, ...]:
    """The four uint32 words of Philox4x32-10 at counters (c0, c1, calls_lo, calls_hi) (c0,
    c1 uint32 arrays of one shape) under the 64-bit key."""
    c0 = np.asarray(c0, np.uint32)
    x = [c0, np.broadcast_to(np.asarray(c1, np.uint32), c0.shape),
         np.full(c0.shape, calls & 0xFFFFFFFF, np.uint32),
         np.full(c0.shape, (calls >> 32) & 0xFFFFFFFF, np.uint32)]
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for round_index in range(10):
        if round_index:
            k0, k1 = (k0 + _WEYL[0]) & 0xFFFFFFFF, (k1 + _WEYL[1]) & 0xFFFFFFFF
        product0 = x[0].astype(np.uint64) * _MULTIPLIERS[0]
        product1 = x[2].astype(np.uint64) * _MULTIPLIERS[1]
        x = [(product1 >> _SHIFT32).astype(np.uint32) ^ x[1] ^ np.uint32(k0),
             (product1 & _MASK32).astype(np.uint32),
             (product0 >> _SHIFT32).astype(np.uint32) ^ x[3] ^ np.uint32(k1),
             (product0 & _MASK32).astype(np.uint32)]
    return tuple(x)


def _float32_closed(word):
    """[0, 1): the word's top 24 bits."""
    return (word >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)


def _float32_open(word):
    """(0, 1]."""
    return ((word >> np.uint32(8)) + np.uint32(1)).astype(np.float32) * np.float32(2.0**-24)


def _float64_closed(high, low):
    """[0, 1): the top 53 bits of high:low."""
    bits = (high.astype(np.uint64) << _SHIFT32) | low.astype(np.uint64)
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _blocks(n_words: int, key: int, calls: int) -> np.ndarray:
    """The first n_words words of the fixed-count layout, in order."""
    count = (n_words + 3) // 4
    index = np.arange(count, dtype=np.uint64)
    words = philox4x32((index & _MASK32).astype(np.uint32), (index >> _SHIFT32).astype(np.uint32),
                       key, calls)
    return np.stack(words, axis=1).reshape(-1)[:n_words]


def uniform(count: int, dtype: str, key: int, calls: int) -> np.ndarray:
    """`count` uniforms in [0, 1) of float32 or float64."""
    if dtype == "float32":
        return _float32_closed(_blocks(count, key, calls))
    words = _blocks(2 * count, key, calls)
    return _float64_closed(words[0::2], words[1::2])


def standard_normal(count: int, dtype: str, key: int, calls: int) -> np.ndarray:
    """`count` standard normals by Box-Muller: each pair of uniforms (u1 in (0, 1], u2 in
    [0, 1)) gives r cos(2 pi u2), r sin(2 pi u2) with r = sqrt(-2 log u1), for consecutive
    elements. float32 works in float32 with sympile's fast logf and sincosf (their numpy
    twins: the C sampler's bits), float64 in float64."""
    pairs = (count + 1) // 2
    if dtype == "float32":
        words = _blocks(2 * pairs, key, calls)
        u1, u2 = _float32_open(words[0::2]), _float32_closed(words[1::2])
        radius = np.sqrt(np.float32(-2.0) * fast_logf(u1))
        angle = np.float32(_TWO_PI) * u2
        cosine, sine = fast_cosf(angle), fast_sinf(angle)
    else:
        words = _blocks(4 * pairs, key, calls)
        u1 = 1.0 - _float64_closed(words[0::4], words[1::4])
        u2 = _float64_closed(words[2::4], words[3::4])
        radius = np.sqrt(-2.0 * np.log(u1))
        angle = _TWO_PI * u2
        cosine, sine = np.cos(angle), np.sin(angle)
    result = np.empty((pairs, 2), dtype=dtype)
    result[:, 0] = radius * cosine
    result[:, 1] = radius * sine
    return result.reshape(-1)[:count]


def bernoulli(count: int, p: float, key: int, calls: int) -> np.ndarray:
    """`count` Bernoulli(p) samples (bool): element e is word e < floor(p 2**32)."""
    threshold = np.uint64(p * 4294967296.0)
    return _blocks(count, key, calls).astype(np.uint64) < threshold


def pair(index, draw, key: int, calls: int) -> tuple[np.ndarray, np.ndarray]:
    """The two float64 uniforms in [0, 1) of draw `draw` of per-element stream `index`."""
    w0, w1, w2, w3 = philox4x32(np.asarray(draw, np.uint32), np.asarray(index, np.uint32),
                                key, calls)
    return _float64_closed(w0, w1), _float64_closed(w2, w3)


def _words64(index, draw, key: int, calls: int) -> tuple[np.ndarray, np.ndarray]:
    w0, w1, w2, w3 = philox4x32(np.asarray(draw, np.uint32), np.asarray(index, np.uint32),
                                key, calls)
    return ((w0.astype(np.uint64) << _SHIFT32) | w1.astype(np.uint64),
            (w2.astype(np.uint64) << _SHIFT32) | w3.astype(np.uint64))


def binomial(n, p, index, draw, key: int, calls: int) -> tuple[np.ndarray, np.ndarray]:
    """Binomial(n, p) counts (int64) of streams `index`, starting at their draw `draw`, and
    the draw after the last one used. n q < 10 (q = min(p, 1 - p)): inversion, one draw;
    else Hormann's BTRS rejection ("The generation of binomial random variates", 1993),
    one draw per trial."""
    n = np.asarray(n, np.int64)
    p = np.asarray(p, np.float64)
    index = np.asarray(index, np.int64)
    draw = np.array(draw, np.int64)
    n, p, index, draw = (np.array(v) for v in np.broadcast_arrays(n, p, index, draw))
    flip = p > 0.5
    q = np.where(flip, 1.0 - p, p)
    result = np.zeros(n.shape, np.int64)
    trivial = (n == 0) | (q == 0.0)
    small = ~trivial & (n * q < 10.0)
    if small.any():
        qs, ns = q[small], n[small]
        ratio = qs / (1.0 - qs)
        scale = (ns + 1) * ratio
        mass = np.power(1.0 - qs, ns.astype(np.float64))
        u, _ = pair(index[small], draw[small], key, calls)
        draw[small] += 1
        k = np.zeros(ns.shape, np.int64)
        active = (u > mass) & (k < ns)
        while active.any():
            u[active] -= mass[active]
            k[active] += 1
            mass[active] *= scale[active] / k[active] - ratio[active]
            active &= (u > mass) & (k < ns)
        result[small] = k
    large = ~trivial & ~small
    if large.any():
        result[large], draw[large] = _btrs(n[large], q[large], index[large], draw[large],
                                           key, calls)
    result = np.where(flip, n - result, result)
    return result, draw


def _rejection(index, draw, key, calls, trial, source=None, dtype=np.int64):
    """Per-element rejection sampling: each pending element takes its next draw, (ua, ub)
    from `source` (pair, or _words64 for integers) of its stream (index, draw), and
    `trial(where, a, b)` gives (accepted mask, values) for the elements `where`; rejected
    ones draw again. Returns (values of `dtype`, the draws after the last)."""
    source = source or pair
    result = np.zeros(index.shape, dtype)
    pending = np.ones(index.shape, bool)
    while pending.any():
        where = np.flatnonzero(pending)
        first, second = source(index[where], draw[where], key, calls)
        draw[where] += 1
        with np.errstate(divide="ignore", invalid="ignore"):
            accept, values = trial(where, first, second)
        result[where[accept]] = values[accept].astype(dtype)
        pending[where[accept]] = False
    return result, draw


def _btrs(n, q, index, draw, key, calls):
    nf = n.astype(np.float64)
    spq = np.sqrt(nf * q * (1.0 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = nf * q + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = np.log(q / (1.0 - q))
    m = np.floor((nf + 1.0) * q)
    h = gammaln(m + 1.0) + gammaln(nf - m + 1.0)

    def trial(where, u, v):
        u = u - 0.5
        us = 0.5 - np.abs(u)
        kd = np.floor((2.0 * a[where] / us + b[where]) * u + c[where])
        inside = (kd >= 0) & (kd <= nf[where])
        quick = inside & (us >= 0.07) & (v <= v_r[where])
        log_v = np.log(v * alpha[where] / (a[where] / (us * us) + b[where]))
        bound = (h[where] - gammaln(kd + 1.0) - gammaln(nf[where] - kd + 1.0)
                 + (kd - m[where]) * lpq[where])
        return quick | (inside & (log_v <= bound)), kd

    return _rejection(index, draw, key, calls, trial)


def poisson(lam, index, key: int, calls: int) -> np.ndarray:
    """Poisson(lam) counts (int64) of streams `index`. lam < 10: inversion, one draw; else
    Hormann's PTRS rejection ("The transformed rejection method for generating Poisson
    random variables", 1993), one draw per trial."""
    lam = np.asarray(lam, np.float64)
    index = np.asarray(index, np.int64)
    lam, index = (np.array(v) for v in np.broadcast_arrays(lam, index))
    result = np.zeros(lam.shape, np.int64)
    small = (lam > 0) & (lam < 10.0)
    if small.any():
        ls = lam[small]
        u, _ = pair(index[small], np.zeros(ls.shape, np.int64), key, calls)
        mass = np.exp(-ls)
        cdf = mass.copy()
        k = np.zeros(ls.shape, np.int64)
        active = u > cdf
        while active.any():
            k[active] += 1
            mass[active] *= ls[active] / k[active]
            active &= mass > 0
            cdf[active] += mass[active]
            active &= u > cdf
        result[small] = k
    large = lam >= 10.0
    if large.any():
        result[large] = _ptrs(lam[large], index[large], key, calls)
    return result


def _ptrs(lam, index, key, calls):
    slam = np.sqrt(lam)
    log_lam = np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_inv_alpha = np.log(1.1239 + 1.1328 / (b - 3.4))
    v_r = 0.9277 - 3.6224 / (b - 2.0)

    def trial(where, u, v):
        u = u - 0.5
        us = 0.5 - np.abs(u)
        kd = np.floor((2.0 * a[where] / us + b[where]) * u + lam[where] + 0.43)
        valid = kd >= 0
        quick = valid & (us >= 0.07) & (v <= v_r[where])
        tested = valid & ~((us < 0.013) & (v > us))
        left = np.log(v) + log_inv_alpha[where] - np.log(a[where] / (us * us) + b[where])
        right = -lam[where] + kd * log_lam[where] - gammaln(kd + 1.0)
        return quick | (tested & (left <= right)), kd

    return _rejection(index, np.zeros(lam.shape, np.int64), key, calls, trial)[0]


def integers(low, high, index, key: int, calls: int) -> np.ndarray:
    """Uniform integers in [low, high] (int64, inclusive) of streams `index`: a 64-bit word x
    is kept when x >= 2**64 mod r (r = high - low + 1), which leaves a multiple of r values,
    and gives low + x mod r; each draw offers two words."""
    low = np.asarray(low, np.int64)
    high = np.asarray(high, np.int64)
    index = np.asarray(index, np.int64)
    low, high, index = (np.array(v) for v in np.broadcast_arrays(low, high, index))
    span = (high.astype(np.uint64) - low.astype(np.uint64)) + np.uint64(1)
    full = span == 0
    safe_span = np.where(full, np.uint64(1), span)
    threshold = np.where(full, np.uint64(0), (np.uint64(0) - safe_span) % safe_span)

    def trial(where, first, second):
        take_first = first >= threshold[where]
        word = np.where(take_first, first, second)
        offset = np.where(full[where], word, word % safe_span[where])
        return take_first | (second >= threshold[where]), low[where].astype(np.uint64) + offset

    draws = np.zeros(low.shape, np.int64)
    return _rejection(index, draws, key, calls, trial, _words64, np.uint64)[0].astype(np.int64)


def truncated_normal(count: int, key: int, calls: int) -> np.ndarray:
    """`count` standard normals truncated to [-2, 2] (float64), per-element streams: a draw
    gives a Box-Muller pair, its first member is kept if inside, else its second, else the
    element draws again."""
    def trial(where, ua, ub):
        radius = np.sqrt(-2.0 * np.log(1.0 - ua))
        angle = _TWO_PI * ub
        first, second = radius * np.cos(angle), radius * np.sin(angle)
        inside = np.abs(first) <= 2.0
        return inside | (np.abs(second) <= 2.0), np.where(inside, first, second)

    draws = np.zeros(count, np.int64)
    return _rejection(np.arange(count), draws, key, calls, trial, dtype=np.float64)[0]


def categorical(cdf: np.ndarray, count: int, key: int, calls: int) -> np.ndarray:
    """`count` indices drawn with the weights whose running sum is `cdf` (float64, last
    entry positive): the first index whose cdf entry exceeds ua * cdf[-1]."""
    ua, _ = pair(np.arange(count), np.zeros(count, np.int64), key, calls)
    found = np.searchsorted(cdf, ua * cdf[-1], side="right")
    return np.minimum(found, len(cdf) - 1).astype(np.int64)


def permutation(rows: int, n: int, key: int, calls: int) -> np.ndarray:
    """`rows` permutations of range(n) (int64, shape (rows, n)), row r by Durstenfeld's
    shuffle on stream r: for t = n - 1 down to 1, draw n - 1 - t picks s = floor(ua (t + 1))
    and swaps entries t and s."""
    result = np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    row_index = np.arange(rows)
    for t in range(n - 1, 0, -1):
        ua, _ = pair(row_index, np.full(rows, n - 1 - t, np.int64), key, calls)
        picks = np.minimum(np.floor(ua * (t + 1)).astype(np.int64), t)
        chosen = result[row_index, picks]
        result[row_index, picks] = result[:, t]
        result[:, t] = chosen
    return result


def choice_without_replacement(a: int, count: int, weights: np.ndarray | None, key: int,
                               calls: int) -> np.ndarray:
    """`count` distinct indices of range(a), on stream 0 (draw t for pick t). Without weights:
    a partial shuffle (pick t swaps entry t with entry t + floor(ua (a - t))); with weights:
    pick t takes the first remaining index whose running weight exceeds ua * (the remaining
    total), then its weight leaves."""
    ua, _ = pair(np.zeros(count, np.int64), np.arange(count), key, calls)
    if weights is None:
        pool = np.arange(a, dtype=np.int64)
        for t in range(count):
            pick = min(t + int(np.floor(ua[t] * (a - t))), a - 1)
            pool[t], pool[pick] = pool[pick], pool[t]
        return pool[:count].copy()
    remaining = np.array(weights, np.float64)
    result = np.zeros(count, np.int64)
    for t in range(count):
        running = np.cumsum(remaining)
        if not running[-1] > 0:
            raise ValueError(f"choice: p has fewer than {count} nonzero entries, too few to "
                             f"draw {count} without replacement")
        pick = min(int(np.searchsorted(running, ua[t] * running[-1], side="right")), a - 1)
        result[t] = pick
        remaining[pick] = 0.0
    return result


def multinomial(n, pvals: np.ndarray, key: int, calls: int) -> np.ndarray:
    """Multinomial(n[r], pvals[r]) counts (int64, pvals' shape (rows, k)), row r on stream r:
    conditional binomials, category c drawing Binomial(n left, pvals[c] / (the mass left))
    with the row's draws in sequence; the last category takes what is left."""
    rows, categories = pvals.shape
    n = np.broadcast_to(np.asarray(n, np.int64), (rows,)).copy()
    result = np.zeros((rows, categories), np.int64)
    mass_left = np.ones(rows)
    draw = np.zeros(rows, np.int64)
    row_index = np.arange(rows)
    for category in range(categories - 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = np.clip(pvals[:, category] / mass_left, 0.0, 1.0)
        probability = np.where(mass_left > 0, probability, 0.0)
        counts, draw = binomial(n, probability, row_index, draw, key, calls)
        result[:, category] = counts
        n -= counts
        mass_left -= pvals[:, category]
    result[:, categories - 1] = n
    return result
