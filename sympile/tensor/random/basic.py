"""RandomStreams (Theano's theano.tensor.shared_randomstreams.RandomStreams, PyTensor's
RandomStream): symbolic random variables whose states are shared variables.

    srng = RandomStreams(seed=234)
    mask = srng.binomial(size=h.shape, p=0.5, dtype=h.dtype)
    f = function([x], h * mask)          # each call draws a new mask

Each method creates a random variable with a state of its own, a shared variable [key,
draws] whose default_update is the state after the draw: function() applies it after every
call, so two calls draw different numbers (no_default_updates=True turns that off).
`seed(n)` puts every state this object made back to the start of the stream of seed n.
Draws are made by RandomDraw (op.py) with the counter-based Philox4x32-10 generator
(philox.py). The continuous distributions are built as low + (high - low) * u and
avg + std * eps, so their samples are differentiable in those parameters (the
reparameterisation); the samples are disconnected from the states.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Constant, Variable
from sympile.tensor.basic import alloc
from sympile.tensor.random.op import RandomDraw
from sympile.tensor.random.utils import (
    as_parameter,
    check_constant,
    check_constant_rows,
    checked,
    float_dtype,
    normalize_size,
)
from sympile.tensor.sharedvar import SharedVariable, shared
from sympile.tensor.sort import PermuteAlongAxis

__all__ = ["RandomStreams", "RandomStream"]

_LABEL = "RandomStreams"


def _stream_key(seed: int, index: int) -> int:
    """The Philox key of the `index`-th variable of streams seeded with `seed`."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


def _integer_dtype(dtype: Any, label: str) -> str:
    dtype = str(np.dtype(dtype))
    if np.dtype(dtype).kind not in "iufb":
        raise TypeError(f"{label}: dtype must be numeric, got {dtype}")
    return dtype


class RandomStreams:
    """Symbolic random variables, reproducible from `seed` (an int; None draws one from the
    operating system)."""

    def __init__(self, seed: int | None = None):
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**63)
        self.default_instance_seed = self._check_seed(seed)
        self._seed = self.default_instance_seed
        # (state shared variable, its next value), in creation order.
        self.state_updates: list[tuple[SharedVariable, Variable]] = []

    @staticmethod
    def _check_seed(seed: Any) -> int:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise TypeError(f"{_LABEL}: seed must be a non-negative int, got {seed!r}")
        return int(seed)

    def seed(self, seed: int | None = None) -> None:
        """Restart every stream this object made (and the next ones) from `seed` (by default
        the seed it was made with)."""
        self._seed = self.default_instance_seed if seed is None else self._check_seed(seed)
        for index, (state, _) in enumerate(self.state_updates):
            state.set_value(np.array([_stream_key(self._seed, index), 0], np.uint64),
                            borrow=True)

    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        """The (state, next state) pairs of every random variable made so far."""
        return list(self.state_updates)

    # -- building -------------------------------------------------------------------------
    def _draw(self, distribution: str, dtype: str, size: Variable, ndim: int,
              parameters: list[Variable]) -> Variable:
        index = len(self.state_updates)
        state = shared(np.array([_stream_key(self._seed, index), 0], np.uint64),
                       name=f"random_state_{index}", shape=(2,))
        state.tag.is_rng = True
        new_state, sample = RandomDraw(distribution, dtype, ndim)(state, size, *parameters)
        state.default_update = new_state
        self.state_updates.append((state, new_state))
        sample.rng = state
        sample.update = (state, new_state)
        return sample

    @staticmethod
    def _size_of(size: Any, ndim: int | None, parameters: list[Variable],
                 label: str) -> tuple[Variable, int]:
        """`size`, or the broadcast shape of the parameters when it is None."""
        size_variable, length = normalize_size(size, ndim, label)
        if size_variable is not None:
            return size_variable, length
        shaped = [p for p in parameters if p.type.ndim > 0]
        if not shaped:
            return normalize_size((), None, label)
        length = max(p.type.ndim for p in shaped)
        # The shape of a sum is the broadcast shape; shape rewrites drop the sum itself.
        total = shaped[0]
        for parameter in shaped[1:]:
            total = total + parameter
        return normalize_size(tuple(total.shape[axis] for axis in range(length)), length, label)

    @staticmethod
    def _broadcast(parameter: Variable, size: Variable, length: int) -> Variable:
        """A parameter the sampler can read: a scalar, or one value per sample."""
        if parameter.type.ndim == 0:
            return parameter
        return alloc(parameter, *(size[axis] for axis in range(length)))

    # -- continuous distributions -----------------------------------------------------------
    def uniform(self, size=None, low=0.0, high=1.0, ndim=None, dtype=None) -> Variable:
        """Uniform samples in [low, high): low + (high - low) * u, differentiable in low and
        high."""
        label = f"{_LABEL}.uniform"
        low, high = as_parameter(low, label, "low"), as_parameter(high, label, "high")
        dtype = float_dtype(dtype, [low, high], label)
        size, length = self._size_of(size, ndim, [low, high], label)
        unit = self._draw("uniform", dtype, size, length, [])
        return (low.astype(dtype) + (high.astype(dtype) - low.astype(dtype)) * unit)

    def normal(self, size=None, avg=0.0, std=1.0, ndim=None, dtype=None) -> Variable:
        """Normal samples: avg + std * eps, differentiable in avg and std (std >= 0)."""
        return self._location_scale("normal", size, avg, std, ndim, dtype)

    def truncated_normal(self, size=None, avg=0.0, std=1.0, ndim=None, dtype=None) -> Variable:
        """Normal samples truncated at two standard deviations: avg + std * eps with eps a
        standard normal conditioned on `|eps| <= 2` (as MRG_RandomStreams' truncated_normal,
        without its rescaling: here std is the scale of the normal before truncation)."""
        return self._location_scale("truncated_normal", size, avg, std, ndim, dtype)

    def _location_scale(self, distribution, size, avg, std, ndim, dtype) -> Variable:
        label = f"{_LABEL}.{distribution}"
        avg, std = as_parameter(avg, label, "avg"), as_parameter(std, label, "std")
        dtype = float_dtype(dtype, [avg, std], label)
        std = checked(std, lambda value: value >= 0, label, "std must be >= 0")
        size, length = self._size_of(size, ndim, [avg, std], label)
        eps = self._draw(distribution, dtype, size, length, [])
        return avg.astype(dtype) + std.astype(dtype) * eps

    # -- discrete distributions -------------------------------------------------------------
    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", prob=None) -> Variable:
        """Binomial(n, p) counts (n >= 0, 0 <= p <= 1); `prob` is Theano's old name of p."""
        label = f"{_LABEL}.binomial"
        if prob is not None:
            p = prob
        n, p = as_parameter(n, label, "n"), as_parameter(p, label, "p")
        check_constant(n, lambda value: value >= 0, label, "n must be >= 0")
        check_constant(p, lambda value: (value >= 0) & (value <= 1), label,
                       "p must be in [0, 1]")
        if (isinstance(n, Constant) and np.ndim(n.data) == 0 and int(n.data) == 1
                and p.type.ndim == 0 and size is not None):
            # A mask (dropout): one 32-bit word per sample.
            size, length = self._size_of(size, ndim, [p], label)
            return self._draw("bernoulli", _integer_dtype(dtype, label), size, length, [p])
        return self._elementwise("binomial", label, size, ndim, dtype, [n, p])

    def poisson(self, size=None, lam=1.0, ndim=None, dtype="int64") -> Variable:
        """Poisson(lam) counts, lam >= 0."""
        label = f"{_LABEL}.poisson"
        lam = as_parameter(lam, label, "lam")
        check_constant(lam, lambda value: (value >= 0) & (value < 1e15), label,
                "lam must be in [0, 1e15)")
        return self._elementwise("poisson", label, size, ndim, dtype, [lam])

    def random_integers(self, size=None, low=0, high=1, ndim=None, dtype="int64") -> Variable:
        """Uniform integers in [low, high], both included (Theano's random_integers)."""
        label = f"{_LABEL}.random_integers"
        low, high = as_parameter(low, label, "low"), as_parameter(high, label, "high")
        if isinstance(low, Constant) and isinstance(high, Constant) and np.any(
                np.asarray(low.data) > np.asarray(high.data)):
            raise ValueError(f"{label}: low must be <= high, got low={low.data}, "
                             f"high={high.data}")
        return self._elementwise("integers", label, size, ndim, dtype, [low, high])

    def integers(self, low, high=None, size=None, dtype="int64") -> Variable:
        """Uniform integers in [low, high), high excluded (PyTensor's and numpy's integers);
        integers(high) draws from [0, high)."""
        if high is None:
            low, high = 0, low
        return self.random_integers(size=size, low=low, high=as_parameter(
            high, f"{_LABEL}.integers", "high") - 1, dtype=dtype)

    def _elementwise(self, distribution, label, size, ndim, dtype, parameters) -> Variable:
        dtype = _integer_dtype(dtype, label)
        size, length = self._size_of(size, ndim, parameters, label)
        parameters = [self._broadcast(p, size, length) for p in parameters]
        return self._draw(distribution, dtype, size, length, parameters)

    def choice(self, size=None, a=2, replace=True, p=None, ndim=None, dtype="int64"):
        """Samples of range(a) (a an int) or of the entries of the vector a, with weights p
        (summing to 1) or uniformly, with replacement or without (then all the samples are
        distinct)."""
        label = f"{_LABEL}.choice"
        values = None
        if isinstance(a, Variable) or np.ndim(a) > 0:
            values = as_parameter(a, label, "a")
            if values.type.ndim != 1:
                raise TypeError(f"{label}: a must be an int or a vector, got {values.type}")
            count = values.shape[0]
        else:
            if int(a) < 0:
                raise ValueError(f"{label}: a must be >= 0, got {a}")
            count = as_parameter(int(a), label, "a")
        size, length = normalize_size(() if size is None else size, ndim, label)
        if p is not None:
            p = as_parameter(p, label, "p")
            if p.type.ndim != 1:
                raise TypeError(f"{label}: p must be a vector, got {p.type}")
            if isinstance(p, Constant):
                check_constant(p, lambda value: (value >= 0) & np.isfinite(value), label,
                               "p must be finite and non-negative")
                if abs(float(np.sum(p.data)) - 1.0) > 1e-6:
                    raise ValueError(f"{label}: p must sum to 1 (within 1e-6), got "
                                     f"{float(np.sum(p.data))}")
        if replace:
            if p is None:
                indices = self._draw("integers", "int64", size, length,
                                     [as_parameter(0, label, "a"), count - 1])
            else:
                indices = self._draw("categorical", "int64", size, length, [p])
        elif p is None:
            indices = self._draw("choice_uniform", "int64", size, length, [count])
        else:
            indices = self._draw("choice_weighted", "int64", size, length, [p])
        result = indices if values is None else values[indices]
        return result if result.type.dtype == dtype else result.astype(dtype)

    def permutation(self, size=None, n=1, ndim=None, dtype="int64") -> Variable:
        """Permutations of range(n): an array of shape size + (n,)."""
        label = f"{_LABEL}.permutation"
        n = as_parameter(n, label, "n")
        check_constant(n, lambda value: value >= 0, label, "n must be >= 0")
        size, length = normalize_size(() if size is None else size, ndim, label)
        result = self._draw("permutation", "int64", size, length + 1, [n])
        return result if dtype == "int64" else result.astype(dtype)

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64") -> Variable:
        """Multinomial(n, pvals) counts, of shape size + (len(pvals),); pvals is a vector of
        probabilities summing to 1 (or one per sample, of shape size + (k,)). size None:
        pvals' leading shape."""
        label = f"{_LABEL}.multinomial"
        if pvals is None:
            pvals = [0.5, 0.5]
        n, pvals = as_parameter(n, label, "n"), as_parameter(pvals, label, "pvals")
        if pvals.type.ndim == 0:
            raise TypeError(f"{label}: pvals must be a vector or more, got {pvals.type}")
        check_constant(n, lambda value: value >= 0, label, "n must be >= 0")
        check_constant_rows(pvals, label, "pvals")
        if size is None:
            size = tuple(pvals.shape[axis] for axis in range(pvals.type.ndim - 1)) \
                if pvals.type.ndim > 1 else ()
        size, length = normalize_size(size, ndim, label)
        n = self._broadcast(n, size, length)
        result = self._draw("multinomial", "int64", size, length + 1, [n, pvals])
        return result if dtype == "int64" else result.astype(dtype)

    def shuffle_row_elements(self, input) -> Variable:
        """`input` with the elements of each row (along the last axis) permuted, each row by
        a permutation of its own."""
        label = f"{_LABEL}.shuffle_row_elements"
        input = as_parameter(input, label, "input")
        if input.type.ndim == 0:
            raise TypeError(f"{label}: input must have at least one axis, got {input.type}")
        leading = tuple(input.shape[axis] for axis in range(input.type.ndim - 1))
        permutations = self.permutation(size=leading, n=input.shape[-1])
        return PermuteAlongAxis(input.type.ndim - 1)(input, permutations)


class RandomStream(RandomStreams):
    """PyTensor's RandomStream: the same streams, with PyTensor's (numpy Generator's)
    argument order, parameters first and size after (normal(loc, scale, size))."""

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None) -> Variable:
        return super().uniform(size=size, low=low, high=high, dtype=dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None) -> Variable:
        return super().normal(size=size, avg=loc, std=scale, dtype=dtype)

    def binomial(self, n, p, size=None, dtype="int64") -> Variable:
        return super().binomial(size=size, n=n, p=p, dtype=dtype)

    def poisson(self, lam=1.0, size=None, dtype="int64") -> Variable:
        return super().poisson(size=size, lam=lam, dtype=dtype)

    def choice(self, a, size=None, replace=True, p=None, dtype="int64") -> Variable:
        return super().choice(size=size, a=a, replace=replace, p=p, dtype=dtype)

    def permutation(self, x, dtype="int64") -> Variable:
        """A permutation of range(x) (x an int), or of the entries of the vector x."""
        if isinstance(x, Variable) or np.ndim(x) > 0:
            values = as_parameter(x, "RandomStream.permutation", "x")
            return values[super().permutation(n=values.shape[0])]
        return super().permutation(n=x, dtype=dtype)

    def multinomial(self, n, pvals, size=None, dtype="int64") -> Variable:
        return super().multinomial(size=size, n=n, pvals=pvals, dtype=dtype)
