"""Sample matrices for the linear-algebra tests: well-conditioned general, positive
definite, triangular, tall and wide ones, one or a stack."""

from __future__ import annotations

import numpy as np


def general(rng, *batch, n=3):
    return rng.normal(size=(*batch, n, n)) + 3 * np.eye(n)


def positive(rng, *batch, n=3):
    m = rng.normal(size=(*batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def lower(rng, *batch, n=3):
    return np.tril(rng.normal(size=(*batch, n, n))) + 3 * np.eye(n)


def right(rng, *batch, n=3):
    return rng.normal(size=(*batch, n, 2))


def vector(rng, *batch, n=3):
    return rng.normal(size=(*batch, n))


def sym_lower(m):
    """The symmetric matrix a reading of m's lower triangle means."""
    return np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2)


def tall(rng, *batch):
    return rng.normal(size=(*batch, 5, 3))


def wide(rng, *batch):
    return rng.normal(size=(*batch, 3, 5))


def sum_of_scaled_products(u, s, vh):
    """u diag(c) vh (the first min(m, n) singular vectors) for fixed c, plus the values:
    the same whichever signs the singular vectors take."""
    k = 3
    return (u[..., :, :k] * np.array([1.0, -2.0, 0.5])) @ vh[..., :k, :] + s.sum()


# name: (function of symbolic inputs, numpy reference, input makers, differentiable)
