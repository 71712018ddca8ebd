"""Every distribution of both streams, every dtype, both backends: the sample's moments and a
Kolmogorov-Smirnov (continuous) or chi-square (discrete) test against scipy.stats, at a
fixed seed (so a test that passes keeps passing; the p-value floor is 1e-3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import sympile
from sympile.tensor.random import MRG_RandomStreams, RandomStreams
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

N = 20_000
P_FLOOR = 1e-3

BACKENDS = [pytest.param(PYTHON_MODE, id="python"),
            pytest.param(C_MODE, id="c", marks=requires_compiler)]


def _draw(variable, mode):
    return sympile.function([], variable, mode=mode)()


def _chi_square(sample: np.ndarray, probabilities: np.ndarray) -> float:
    """The chi-square p-value of integer `sample` against `probabilities` over 0, 1, ...,
    pooling the categories expected fewer than 5 times into their neighbours."""
    counts = np.bincount(sample, minlength=len(probabilities))[:len(probabilities)]
    assert counts.sum() == len(sample), "a value outside the support"
    expected = probabilities * len(sample)
    pooled_counts, pooled_expected, count, mass = [], [], 0, 0.0
    for observed, wanted in zip(counts, expected):
        count, mass = count + observed, mass + wanted
        if mass >= 5:
            pooled_counts.append(count)
            pooled_expected.append(mass)
            count, mass = 0, 0.0
    pooled_counts[-1] += count
    pooled_expected[-1] += mass
    pooled_expected = np.array(pooled_expected) * np.sum(pooled_counts) / np.sum(pooled_expected)
    return stats.chisquare(pooled_counts, pooled_expected).pvalue


@pytest.mark.parametrize("mode", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_continuous_distributions(streams, dtype, mode):
    rng = streams(seed=1234)
    uniform = rng.uniform((N,), low=-2.0, high=3.0, dtype=dtype)
    normal = rng.normal((N,), avg=1.5, std=2.0, dtype=dtype)
    truncated = rng.truncated_normal((N,), avg=0.0, std=1.0, dtype=dtype)
    values = sympile.function([], [uniform, normal, truncated], mode=mode)()
    for value in values:
        assert value.dtype == dtype and value.shape == (N,)
    u, z, t = (np.asarray(v, np.float64) for v in values)
    assert -2.0 <= u.min() and u.max() < 3.0
    assert stats.kstest(u, stats.uniform(-2.0, 5.0).cdf).pvalue > P_FLOOR
    assert abs(z.mean() - 1.5) < 4 * 2.0 / np.sqrt(N) and abs(z.std() - 2.0) < 0.05
    assert stats.kstest(z, stats.norm(1.5, 2.0).cdf).pvalue > P_FLOOR
    # RandomStreams truncates a unit normal at +-2; MRG rescales it to unit variance.
    scale = 1.0 if streams is RandomStreams else 1.0 / 0.87962566103423978
    assert np.abs(t).max() <= 2 * scale * (1 + 1e-6)
    truncated_law = stats.truncnorm(-2.0, 2.0, scale=scale)
    assert stats.kstest(t, truncated_law.cdf).pvalue > P_FLOOR


@pytest.mark.parametrize("mode", BACKENDS)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_discrete_distributions(dtype, mode):
    rng = RandomStreams(seed=4321)
    cases = {
        "bernoulli": (rng.binomial((N,), n=1, p=0.3, dtype=dtype), stats.binom(1, 0.3)),
        "binomial small": (rng.binomial((N,), n=12, p=0.3, dtype=dtype), stats.binom(12, 0.3)),
        "binomial large": (rng.binomial((N,), n=400, p=0.7, dtype=dtype),
                           stats.binom(400, 0.7)),
        "poisson small": (rng.poisson((N,), lam=3.5, dtype=dtype), stats.poisson(3.5)),
        "poisson large": (rng.poisson((N,), lam=140.0, dtype=dtype), stats.poisson(140.0)),
        "random_integers": (rng.random_integers((N,), low=2, high=9, dtype=dtype),
                            stats.randint(2, 10)),
    }
    values = sympile.function([], [v for v, _ in cases.values()], mode=mode)()
    for (name, (_, law)), value in zip(cases.items(), values):
        assert value.dtype == dtype, name
        sample = np.asarray(value).astype(np.int64)
        assert abs(sample.mean() - law.mean()) < 5 * law.std() / np.sqrt(N), name
        support = np.arange(int(law.ppf(1 - 1e-12)) + 2)
        assert _chi_square(sample, law.pmf(support)) > P_FLOOR, name


@pytest.mark.parametrize("mode", BACKENDS)
def test_choice_permutation_multinomial(mode):
    rng = RandomStreams(seed=77)
    weights = np.array([0.1, 0.0, 0.5, 0.15, 0.25])
    with_p = rng.choice((N,), a=5, p=weights)
    uniform_choice = rng.choice((N,), a=7)
    permutations = rng.permutation((N // 10,), n=4)
    counts = rng.multinomial((N // 10,), n=30, pvals=[0.2, 0.3, 0.5])
    distinct = rng.choice((6,), a=6, replace=False)
    a, b, perms, multi, distinct_value = sympile.function(
        [], [with_p, uniform_choice, permutations, counts, distinct], mode=mode)()
    assert _chi_square(a, weights) > P_FLOOR and not (a == 1).any()
    assert _chi_square(b, np.full(7, 1 / 7)) > P_FLOOR
    assert (np.sort(perms, axis=1) == np.arange(4)).all()
    # Each of the 24 permutations equally likely.
    codes = perms @ (4 ** np.arange(4))
    _, frequencies = np.unique(codes, return_counts=True)
    assert len(frequencies) == 24
    assert stats.chisquare(frequencies).pvalue > P_FLOOR
    assert (multi.sum(axis=1) == 30).all()
    assert np.allclose(multi.mean(axis=0), [6.0, 9.0, 15.0], atol=0.3)
    assert sorted(distinct_value) == list(range(6))


@pytest.mark.parametrize("mode", BACKENDS)
def test_mrg_discrete_distributions(mode):
    rng = MRG_RandomStreams(seed=42)
    bernoulli = rng.binomial((N,), p=0.3)
    pvals = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype=sympile.config.floatX)
    counts = rng.multinomial(pvals=np.repeat(pvals, N // 20, axis=0), n=10)
    choices = rng.choice(size=2, replace=False, p=np.repeat(pvals, N // 20, axis=0))
    b, c, chosen = sympile.function([], [bernoulli, counts, choices], mode=mode)()
    assert abs(b.mean() - 0.3) < 5 * np.sqrt(0.21 / N)
    assert (c.sum(axis=1) == 10).all()
    assert np.allclose(c[: N // 20].mean(axis=0), [2, 3, 5], atol=0.25)
    assert (chosen[:, 0] != chosen[:, 1]).all() and chosen.min() >= 0 and chosen.max() <= 2
    # The first pick of row kind 0 follows its p.
    assert _chi_square(chosen[: N // 20, 0], pvals[0].astype(np.float64)) > P_FLOOR
