"""Batch normalization (Theano's T.nnet.bn), built from tensor operations, so that its
derivatives, Rop and C code are those of the operations (the mean and variance are
reductions, the rest an elementwise expression the fusion rewrite compiles into one loop).

    out, mean, invstd = batch_normalization_train(x, gamma, beta, axes='spatial')
    out, mean, invstd, running_mean, running_var = batch_normalization_train(
        x, gamma, beta, running_mean=rm, running_var=rv)      # also the new running values
    out = batch_normalization_test(x, gamma, beta, rm, rv)

axes: 'per-activation' (0,), 'spatial' (0, 2, 3, ...) or a tuple of axes, the ones the
statistics are taken over. gamma, beta, the running statistics and the returned mean and
invstd have the input's shape with those axes of length 1, or those axes left out.
"""

from __future__ import annotations

from typing import Any

from sympile.tensor import math
from sympile.tensor.reduction import mean as tensor_mean
from sympile.tensor.reduction import var as tensor_var
from sympile.tensor.shape import specify_shape
from sympile.tensor.variable import as_tensor_variable

__all__ = ["batch_normalization", "batch_normalization_train", "batch_normalization_test"]


def _axes(axes: Any, ndim: int, label: str) -> tuple[int, ...]:
    if axes == "per-activation":
        return (0,)
    if axes == "spatial":
        return (0, *range(2, ndim))
    if isinstance(axes, (tuple, list)) and all(isinstance(a, int) for a in axes):
        normalized = tuple(sorted({a % ndim for a in axes if -ndim <= a < ndim}))
        if len(normalized) != len(axes):
            raise ValueError(f"{label}: axes {tuple(axes)} are not distinct axes of a {ndim}-d "
                             f"input")
        return normalized
    raise ValueError(f"{label}: axes must be 'per-activation', 'spatial' or a tuple of ints, "
                     f"got {axes!r}")


def _parameter(value: Any, name: str, ndim: int, axes: tuple[int, ...], label: str):
    """(the parameter broadcastable against the input, whether it was given with the axes
    left out)."""
    variable = as_tensor_variable(value, op=label, argument=name)
    if variable.type.ndim == ndim:
        # Length 1 along the normalized axes, checked at run time: they broadcast.
        return specify_shape(variable, tuple(1 if axis in axes else None
                                             for axis in range(ndim))), False
    if variable.type.ndim == ndim - len(axes):
        pattern, kept = [], iter(range(variable.type.ndim))
        for axis in range(ndim):
            pattern.append("x" if axis in axes else next(kept))
        return variable.dimshuffle(*pattern), True
    raise ValueError(f"{label}: {name} must have {ndim} dimensions (the axes {axes} of length "
                     f"1) or {ndim - len(axes)} (those axes left out), got {variable.type}")


def _like_parameter(variable, axes: tuple[int, ...], skipped: bool):
    """A statistic (axes kept) in the form the parameters were given in."""
    if not skipped:
        return variable
    return variable.dimshuffle(*[axis for axis in range(variable.type.ndim) if axis not in axes])


def batch_normalization_train(inputs, gamma, beta, axes="per-activation", epsilon=1e-4,
                              running_average_factor=0.1, running_mean=None, running_var=None):
    """(out, mean, invstd), plus (new running_mean, new running_var) when those are given:
    out = (x - mean) * invstd * gamma + beta with mean and var the statistics of x over
    `axes` and invstd = 1 / sqrt(var + epsilon); the running mean moves by
    running_average_factor towards the mean, the running variance towards the unbiased
    variance (var m / (m - 1), m the number of values per statistic)."""
    label = "batch_normalization_train"
    inputs = as_tensor_variable(inputs, op=label, argument="inputs")
    ndim = inputs.type.ndim
    axes = _axes(axes, ndim, label)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{label}: give running_mean and running_var together, or neither")
    gamma, skipped = _parameter(gamma, "gamma", ndim, axes, label)
    beta, _ = _parameter(beta, "beta", ndim, axes, label)
    mean = tensor_mean(inputs, axis=axes, keepdims=True)
    variance = tensor_var(inputs, axis=axes, keepdims=True)
    invstd = math.reciprocal(math.sqrt(variance + epsilon))
    out = (inputs - mean) * (gamma * invstd) + beta
    results = [out, _like_parameter(mean, axes, skipped), _like_parameter(invstd, axes, skipped)]
    if running_mean is not None:
        running_mean_b, _ = _parameter(running_mean, "running_mean", ndim, axes, label)
        running_var_b, _ = _parameter(running_var, "running_var", ndim, axes, label)
        count = inputs.shape[axes[0]]
        for axis in axes[1:]:
            count = count * inputs.shape[axis]
        count = count.astype(inputs.type.dtype)
        factor = running_average_factor
        new_mean = running_mean_b * (1 - factor) + mean * factor
        unbiased = variance * count / (count - 1)
        new_var = running_var_b * (1 - factor) + unbiased * factor
        results += [_like_parameter(new_mean, axes, skipped),
                    _like_parameter(new_var, axes, skipped)]
    return tuple(results)


def batch_normalization_test(inputs, gamma, beta, mean, var, axes="per-activation",
                             epsilon=1e-4):
    """(x - mean) * gamma / sqrt(var + epsilon) + beta with given statistics (the running
    averages at test time)."""
    label = "batch_normalization_test"
    inputs = as_tensor_variable(inputs, op=label, argument="inputs")
    ndim = inputs.type.ndim
    axes = _axes(axes, ndim, label)
    gamma, _ = _parameter(gamma, "gamma", ndim, axes, label)
    beta, _ = _parameter(beta, "beta", ndim, axes, label)
    mean, _ = _parameter(mean, "mean", ndim, axes, label)
    var, _ = _parameter(var, "var", ndim, axes, label)
    return (inputs - mean) * (gamma / math.sqrt(var + epsilon)) + beta


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """Theano's older form: (inputs - mean) * (gamma / std) + beta, every argument
    broadcastable against inputs. mode ('low_mem' or 'high_mem') chose Theano's
    implementation; here both compile to one fused loop."""
    if mode not in ("low_mem", "high_mem"):
        raise ValueError(f"batch_normalization: mode must be 'low_mem' or 'high_mem', got "
                         f"{mode!r}")
    label = "batch_normalization"
    inputs = as_tensor_variable(inputs, op=label, argument="inputs")
    return (inputs - mean) * (gamma / std) + beta
