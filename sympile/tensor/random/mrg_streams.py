"""MRG_RandomStreams (Theano's theano.sandbox.rng_mrg.MRG_RandomStreams): the same numbers
as Theano's for the same seed, sizes, dtypes and order of calls, so a ported program
reproduces its old runs (mrg.py has the generator and the stream layout).

As in Theano, the continuous samples are graphs over MRGUniform's uniforms: uniform is
u * (high - low) + low, normal is Box-Muller on an even number of uniforms (first half
r cos(theta), second half r sin(theta)), binomial (n = 1) is u < p, multinomial and choice
go through MultinomialFromUniform and ChoiceFromUniform. Unlike Theano, uniform and normal
are differentiable in low, high, avg and std (reparameterisation; Theano made these
gradients undefined); the samples are disconnected from the states.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Constant, Variable
from sympile.tensor.basic import concatenate
from sympile.tensor.math import cos, log, sin, sqrt
from sympile.tensor.random import mrg
from sympile.tensor.random.op import (
    ChoiceFromUniform,
    MRGUniform,
    MultinomialFromUniform,
)
from sympile.tensor.random.utils import (
    as_parameter,
    checked,
    checked_rows,
    float_dtype,
    normalize_size,
)
from sympile.tensor.reduction import prod
from sympile.tensor.shape import reshape
from sympile.tensor.sharedvar import SharedVariable, shared
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["MRG_RandomStreams"]

_LABEL = "MRG_RandomStreams"


class MRG_RandomStreams:
    """Symbolic random variables from Theano's MRG31k3p streams. seed: an int in
    [1, 2147462579), or 6 ints (the first three below 2147483647 and not all 0, the last
    three below 2147462579 and not all 0)."""

    def __init__(self, seed: Any = 12345):
        self.state_updates: list[tuple[SharedVariable, Variable, Any, Any]] = []
        self.default_instance_seed = seed
        self.set_rstate(seed)

    def set_rstate(self, seed: Any) -> None:
        """Put the generator's position at `seed` (see the class docstring)."""
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if seed == 0:
                raise ValueError(f"{_LABEL}: seed must not be 0")
            if not 0 < seed < mrg.M2:
                raise ValueError(f"{_LABEL}: seed must be in [1, {mrg.M2}), got {seed}")
            self.rstate = np.array([seed] * 6, dtype=np.int32)
        elif isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == 6:
            values = [int(v) for v in seed]
            if all(v == 0 for v in values[:3]) or all(v == 0 for v in values[3:]):
                raise ValueError(f"{_LABEL}: the first 3 and the last 3 values of seed must "
                                 f"not be all 0, got {values}")
            if any(not 0 <= v < mrg.M1 for v in values[:3]) or any(
                    not 0 <= v < mrg.M2 for v in values[3:]):
                raise ValueError(f"{_LABEL}: the first 3 values of seed must be in [0, "
                                 f"{mrg.M1}) and the last 3 in [0, {mrg.M2}), got {values}")
            self.rstate = np.array(values, dtype=np.int32)
        else:
            raise TypeError(f"{_LABEL}: seed must be an int or 6 ints, got {seed!r}")

    def seed(self, seed: Any = None) -> None:
        """Restart from `seed` (by default the one given at construction) every random
        variable made so far, each with the streams it would have had if made after it."""
        self.set_rstate(self.default_instance_seed if seed is None else seed)
        for state, _, _, _ in self.state_updates:
            n_streams = state.get_value(borrow=True).shape[0]
            state.set_value(self.get_substream_rstates(n_streams), borrow=True)

    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        return [(state, new_state) for state, new_state, _, _ in self.state_updates]

    def inc_rstate(self) -> None:
        """Jump the generator's position 2**134 steps (to the next variable's start)."""
        self.rstate = mrg.jump_2p134(self.rstate)

    def get_substream_rstates(self, n_streams: int, dtype: str | None = None,
                              inc_rstate: bool = True) -> np.ndarray:
        """(n_streams, 6) int32 states 2**72 steps apart from the current position, which then
        jumps to the next variable's start (unless inc_rstate is False)."""
        if not 0 < n_streams < 2**72:
            raise ValueError(f"{_LABEL}: n_streams must be positive, got {n_streams}")
        states = mrg.substreams(self.rstate, n_streams)
        if inc_rstate:
            self.inc_rstate()
        return states

    def n_streams(self, size: Any) -> int:
        return mrg.guess_n_streams(size)

    @staticmethod
    def state_target() -> str | None:
        """Where a new draw's states live: None, the host; sympile.gpu binds the device
        functions are compiled for (its states then stay there, draws and updates alike)."""
        return None

    # -- building -------------------------------------------------------------------------
    def _uniform01(self, size: Any, ndim: int | None, dtype: str, nstreams: int | None,
                   label: str) -> Variable:
        if isinstance(size, (tuple, list)) and any(
                isinstance(entry, (int, np.integer)) and entry <= 0 for entry in size):
            raise ValueError(f"{label}: size must have positive entries, got {tuple(size)}")
        size_variable, length = normalize_size(size, ndim, label)
        if size_variable is None:
            raise TypeError(f"{label}: size is required")
        if nstreams is None:
            nstreams = self.n_streams(tuple(size) if isinstance(size, (tuple, list))
                                      else size)
        target = self.state_target()
        states = self.get_substream_rstates(int(nstreams), dtype)
        state = shared(states) if target is None else shared(states, target=target)
        state.tag.is_rng = True
        new_state, sample = MRGUniform(dtype, length)(state, size_variable)
        state.default_update = new_state
        self.state_updates.append((state, new_state, size, nstreams))
        sample.rstate = state
        sample.update = (state, new_state)
        return sample

    def uniform(self, size, low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None):
        """Uniform samples in (low, high): u * (high - low) + low."""
        label = f"{_LABEL}.uniform"
        low, high = as_parameter(low, label, "low"), as_parameter(high, label, "high")
        dtype = float_dtype(dtype, [low, high], label)
        low, high = low.astype(dtype), high.astype(dtype)
        unit = self._uniform01(size, ndim, dtype, nstreams, label)
        return unit * (high - low) + low

    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", nstreams=None):
        """Bernoulli samples (n = 1 only, as in Theano): u < p."""
        label = f"{_LABEL}.binomial"
        if not (isinstance(n, (int, np.integer)) and n == 1):
            raise NotImplementedError(f"{label}: only n=1 is implemented (as in Theano); use "
                                      f"RandomStreams.binomial for n > 1")
        p = checked(as_parameter(p, label, "p"), lambda value: (value >= 0) & (value <= 1),
                    label, "p must be in [0, 1]")
        unit = self._uniform01(size, ndim, config.floatX, nstreams, label)
        return (unit < p).astype(dtype)

    def normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None,
               truncate=False):
        """Normal samples by Box-Muller on MRG uniforms, avg + std * z; truncate=True keeps
        `|z| <= 2` by drawing the outliers' radii again (Theano's scheme)."""
        label = f"{_LABEL}.{'truncated_normal' if truncate else 'normal'}"
        size_variable, length = normalize_size(size, ndim, label)
        if size_variable is None:
            raise TypeError(f"{label}: size is required")
        avg, std = as_parameter(avg, label, "avg"), as_parameter(std, label, "std")
        dtype = float_dtype(dtype, [avg, std], label)
        std = checked(std, lambda value: value >= 0, label, "std must be >= 0")
        count = (constant(int(np.prod(size_variable.data, dtype=np.int64)), dtype="int64")
                 if isinstance(size_variable, Constant) else prod(size_variable))
        even = count + count % 2
        uniform = self._uniform01((even,), 1, dtype, nstreams, label)
        half = even // 2
        first, second = uniform[:half], uniform[half:]
        radius = sqrt(constant(np.asarray(-2.0, dtype)) * log(first))
        theta = constant(np.asarray(2.0 * np.pi, dtype)) * second
        cos_theta, sin_theta = cos(theta), sin(theta)
        z0, z1 = radius * cos_theta, radius * sin_theta
        if truncate:
            samples = self._truncate(z0, z1, cos_theta, sin_theta, dtype, nstreams, label)
        else:
            samples = concatenate([z0, z1])
        samples = reshape(samples[:count], size_variable, ndim=length)
        return samples * std.astype(dtype) + avg.astype(dtype)

    def _truncate(self, z0, z1, cos_theta, sin_theta, dtype, nstreams, label):
        outside0 = (z0 < -2.0) | (z0 > 2.0)
        outside1 = (z1 < -2.0) | (z1 > 2.0)
        valid0, valid1 = z0[~outside0], z1[~outside1]
        n_fix0 = outside0.sum(dtype="int64")
        n_fix = n_fix0 + outside1.sum(dtype="int64")
        lower = constant(np.asarray(1.0 / np.e**2, dtype))
        unit = self._uniform01((n_fix,), 1, dtype, nstreams, label)
        u_fix = unit * (constant(np.asarray(1.0, dtype)) - lower) + lower
        r_fix = sqrt(constant(np.asarray(-2.0, dtype)) * log(u_fix))
        fixed0 = r_fix[:n_fix0] * cos_theta[outside0]
        fixed1 = r_fix[n_fix0:] * sin_theta[outside1]
        return concatenate([valid0, fixed0, valid1, fixed1])

    def truncated_normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None):
        """Normal samples truncated at two standard deviations, std rescaled (divided by
        0.8796..., the standard deviation of a unit normal truncated there) so that the
        samples have standard deviation `std`, as in Theano."""
        label = f"{_LABEL}.truncated_normal"
        avg, std = as_parameter(avg, label, "avg"), as_parameter(std, label, "std")
        dtype = float_dtype(dtype, [avg, std], label)
        std = std.astype(dtype) / constant(np.asarray(0.87962566103423978, dtype))
        return self.normal(size, avg, std, ndim, dtype, nstreams, truncate=True)

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None):
        """Counts of n draws per row of pvals (a matrix), Theano's MultinomialFromUniform."""
        label = f"{_LABEL}.multinomial"
        if pvals is None:
            raise TypeError(f"{label}: pvals is required")
        if size is not None or ndim is not None:
            raise ValueError(f"{label}: size and ndim are not used (the shape is pvals')")
        pvals, uniforms, n_variable = self._rows_and_uniforms(pvals, "pvals", n, nstreams,
                                                              label)
        return MultinomialFromUniform(dtype)(pvals, uniforms, n_variable)

    def choice(self, size=1, a=None, replace=True, p=None, ndim=None, dtype="int64",
               nstreams=None):
        """`size` distinct indices per row of p (a matrix), without replacement (the only
        kind Theano's MRG has), Theano's ChoiceFromUniform."""
        label = f"{_LABEL}.choice"
        if replace:
            raise NotImplementedError(f"{label}: only replace=False is implemented (as in "
                                      f"Theano); use RandomStreams.choice for replace=True")
        if a is not None:
            raise TypeError(f"{label}: a must be None; the values are 0 .. p.shape[1] - 1")
        if p is None:
            raise TypeError(f"{label}: p is required")
        if ndim is not None:
            raise ValueError(f"{label}: ndim is not used")
        p, uniforms, size_variable = self._rows_and_uniforms(p, "p", size, nstreams, label)
        return ChoiceFromUniform(dtype)(p, uniforms, size_variable)

    def _rows_and_uniforms(self, rows, name: str, count, nstreams, label: str):
        """(rows, a matrix of probabilities, checked; rows.shape[0] * count uniforms of
        floatX; count), the inputs of MultinomialFromUniform and ChoiceFromUniform."""
        rows = as_tensor_variable(rows, op=label, argument=name)
        if rows.type.ndim != 2:
            raise NotImplementedError(f"{label}: {name} must be a matrix (as in Theano), got "
                                      f"{rows.type}")
        rows = checked_rows(rows, label, name)
        count = as_tensor_variable(count, op=label, argument="n" if name == "pvals" else "size")
        uniforms = self._uniform01((rows.shape[0] * count,), 1, config.floatX, nstreams, label)
        return rows, uniforms, count

    def multinomial_wo_replacement(self, size=None, n=1, pvals=None, ndim=None,
                                   dtype="int64", nstreams=None):
        """Deprecated in Theano: choice(size=n, replace=False, p=pvals)."""
        warnings.warn(f"{_LABEL}.multinomial_wo_replacement is deprecated; use choice",
                      DeprecationWarning, stacklevel=2)
        if size is not None:
            raise ValueError(f"{_LABEL}.multinomial_wo_replacement: size is not used")
        return self.choice(size=n, replace=False, p=pvals, ndim=ndim, dtype=dtype,
                           nstreams=nstreams)
