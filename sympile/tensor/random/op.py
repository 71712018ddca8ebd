"""The random ops: RandomDraw (RandomStreams' Philox draws), MRGUniform (MRG_RandomStreams'
generator), the deterministic MultinomialFromUniform and ChoiceFromUniform that turn MRG
uniforms into Theano's multinomial and choice, and CheckParameter, which validates a
distribution's parameter at run time.

A draw is a function of the stream's state: the op takes the state and returns the next one
with the sample, and the streams make the state a shared variable whose default_update is
that next state. Samples are disconnected from every input (a derivative through the state
or a count is meaningless); the continuous distributions are differentiable in their
parameters because the streams build them outside the op, as avg + std * eps (the
reparameterisation). Random ops are never merged or constant-folded (`is_random`): two
equal draws in one graph are two draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.graph.basic import Apply, Variable
from sympile.graph.gradient_types import NonDifferentiable, disconnected_type
from sympile.graph.op import Op
from sympile.tensor.random import mrg, philox
from sympile.tensor.random.distributions import DISTRIBUTIONS, PVALS_TOLERANCE
from sympile.tensor.random.random_c import (
    check_parameter_c_code,
    choice_from_uniform_c_code,
    mrg_uniform_c_code,
    multinomial_from_uniform_c_code,
    random_draw_c_code,
)
from sympile.tensor.type import tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = ["RandomDraw", "MRGUniform", "MultinomialFromUniform", "ChoiceFromUniform",
           "CheckParameter", "STATE_TYPE"]

# A RandomStreams state: [key, number of draws so far].
STATE_TYPE = tensor_type("uint64", (2,))

# Distributions whose sample has one more axis than `size` (its last).
_EXTRA_AXIS = ("permutation", "multinomial")
_FLOAT_OUTPUT = ("uniform", "normal", "truncated_normal")


class _RandomOp(NonDifferentiable, Op):
    """What every random op shares: never merged, never folded; no derivative."""

    is_random = True

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

    def R_op(self, inputs, eval_points) -> list[None]:
        return [None] * 2  # the next state and the sample


def _size_input(size, op_label: str, length: int) -> Variable:
    size = as_tensor_variable(size, op=op_label, argument="size")
    if size.type.ndim != 1 or size.type.dtype not in ("int8", "int16", "int32", "int64",
                                                      "uint8", "uint16", "uint32"):
        raise TypeError(f"{op_label}: size must be an integer vector, got {size.type}")
    if size.type.shape[0] is not None and size.type.shape[0] != length:
        raise ValueError(f"{op_label}: size has {size.type.shape[0]} entries, expected {length}")
    if size.type.dtype != "int64":
        size = size.astype("int64")
    return size


def shape_of_size(size: np.ndarray, label: str) -> tuple[int, ...]:
    shape = tuple(int(entry) for entry in size)
    if any(entry < 0 for entry in shape):
        raise ValueError(f"{label}: size must have no negative entry, got {shape}")
    return shape


class RandomDraw(_RandomOp):
    """A draw of RandomStreams' `distribution` (see DISTRIBUTIONS and philox.py) of
    `dtype`, with `ndim` dimensions: inputs `(state, size, *parameters)`, outputs (new state,
    sample). Parameters of kind "element" are scalars or have the sample's shape (the
    streams broadcast them)."""

    __props__ = ("distribution", "dtype", "ndim")

    def __init__(self, distribution: str, dtype: str, ndim: int):
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"RandomDraw: unknown distribution {distribution!r}")
        self.distribution = distribution
        self.dtype = dtype
        self.ndim = ndim

    @property
    def label(self) -> str:
        return f"RandomStreams.{DISTRIBUTIONS[self.distribution][0]}"

    @property
    def size_length(self) -> int:
        return self.ndim - 1 if self.distribution in _EXTRA_AXIS else self.ndim

    def __str__(self):
        return f"RandomDraw{{{self.distribution}, {self.dtype}}}"

    def make_node(self, state, size, *parameters):
        state = as_tensor_variable(state, op=self.label, argument="state")
        if state.type.dtype != "uint64" or state.type.ndim != 1:
            raise TypeError(f"{self.label}: the state must be a uint64 vector [key, draws], "
                            f"got {state.type}")
        size = _size_input(size, self.label, self.size_length)
        specs = DISTRIBUTIONS[self.distribution][1]
        if len(parameters) != len(specs):
            raise TypeError(f"{self.label}: expected {len(specs)} parameters, got "
                            f"{len(parameters)}")
        converted = []
        for value, (name, dtype, kind) in zip(parameters, specs):
            value = as_tensor_variable(value, op=self.label, argument=name)
            allowed = {"element": (0, self.size_length), "vector": (1,), "scalar": (0,),
                       "rows": (1, self.ndim)}[kind]
            if value.type.ndim not in allowed:
                raise TypeError(f"{self.label}: {name} must have {' or '.join(map(str, allowed))} "
                                f"dimensions, got {value.type}")
            converted.append(value if value.type.dtype == dtype else value.astype(dtype))
        sample = tensor_type(self.dtype, (None,) * self.ndim)()
        return Apply(self, [state, size, *converted], [STATE_TYPE(), sample])

    def infer_shape(self, fgraph, node, input_shapes):
        size = node.inputs[1]
        shape = [size[index] for index in range(self.size_length)]
        if self.distribution == "permutation":
            shape.append(node.inputs[2])
        elif self.distribution == "multinomial":
            shape.append(input_shapes[3][-1])
        return [(2,), tuple(shape)]

    def perform(self, node, inputs, output_storage):
        state, size, *parameters = inputs
        key, calls = int(state[0]), int(state[1])
        shape = shape_of_size(size, self.label)
        sample = _draw(self, shape, parameters, key, calls)
        output_storage[0][0] = np.array([key, (calls + 1) % 2**64], dtype=np.uint64)
        output_storage[1][0] = np.asarray(sample).astype(self.dtype, copy=False)

    def c_code(self, node, names):
        return random_draw_c_code(self, node, names)


def _check_count(label: str, count: int) -> None:
    if count > philox.MAX_STREAM_INDEX:
        raise ValueError(f"{label}: a draw of {count} elements is too large; draw at most "
                         f"{philox.MAX_STREAM_INDEX} at once")


def _elementwise(parameter, shape):
    return np.broadcast_to(parameter, shape).reshape(-1)


def _draw(op: RandomDraw, shape: tuple[int, ...], parameters: list, key: int, calls: int):
    """The sample of `op` (numpy reference; see philox.py)."""
    label, count = op.label, int(np.prod(shape, dtype=np.int64))
    distribution = op.distribution
    if distribution in _FLOAT_OUTPUT:
        dtype = op.dtype if op.dtype in ("float32", "float64") else "float64"
        if distribution == "uniform":
            return philox.uniform(count, dtype, key, calls).reshape(shape)
        if distribution == "normal":
            return philox.standard_normal(count, dtype, key, calls).reshape(shape)
        _check_count(label, count)
        return philox.truncated_normal(count, key, calls).reshape(shape)
    if distribution == "permutation":
        n = int(parameters[0])
        if n < 0:
            raise ValueError(f"{label}: n must be >= 0, got {n}")
        _check_count(label, count)
        return philox.permutation(count, n, key, calls).reshape(shape + (n,))
    if distribution == "multinomial":
        n, pvals = parameters
        rows = pvals if pvals.ndim > 1 else np.broadcast_to(pvals, shape + pvals.shape)
        categories = rows.shape[-1]
        if tuple(rows.shape[:-1]) != shape:
            raise ValueError(f"{label}: pvals has shape {pvals.shape}, which does not match "
                             f"size {shape}")
        _check_probabilities(label, "pvals", rows)
        n = _elementwise(n, shape)
        if (n < 0).any():
            raise ValueError(f"{label}: n must be >= 0, got {n.min()}")
        _check_count(label, count)
        flat = np.ascontiguousarray(rows, np.float64).reshape(count, categories)
        return philox.multinomial(n, flat, key, calls).reshape(shape + (categories,))
    if distribution == "bernoulli":
        p = float(parameters[0])
        if not 0 <= p <= 1:
            raise ValueError(f"{label}: p must be in [0, 1], got {p}")
        return philox.bernoulli(count, p, key, calls).reshape(shape)
    if distribution == "binomial":
        n, p = (_elementwise(value, shape) for value in parameters)
        if (n < 0).any():
            raise ValueError(f"{label}: n must be >= 0, got {n.min()}")
        if not ((p >= 0) & (p <= 1)).all():
            raise ValueError(f"{label}: p must be in [0, 1], got {p[~((p >= 0) & (p <= 1))][0]}")
        _check_count(label, count)
        return philox.binomial(n, p, np.arange(count), 0, key, calls)[0].reshape(shape)
    if distribution == "poisson":
        lam = _elementwise(parameters[0], shape)
        if not ((lam >= 0) & (lam < 1e15)).all():
            raise ValueError(f"{label}: lam must be in [0, 1e15), got "
                             f"{lam[~((lam >= 0) & (lam < 1e15))][0]}")
        _check_count(label, count)
        return philox.poisson(lam, np.arange(count), key, calls).reshape(shape)
    if distribution == "integers":
        low, high = (_elementwise(value, shape) for value in parameters)
        if (low > high).any():
            raise ValueError(f"{label}: low must be <= high, got low={low[low > high][0]} > "
                             f"high={high[low > high][0]}")
        _check_count(label, count)
        return philox.integers(low, high, np.arange(count), key, calls).reshape(shape)
    if distribution == "choice_uniform":
        a = int(parameters[0])
        if count > a or a < 0:
            raise ValueError(f"{label}: cannot take {count} distinct values out of a={a} "
                             f"without replacement")
        return philox.choice_without_replacement(a, count, None, key, calls).reshape(shape)
    weights = np.asarray(parameters[0], np.float64)
    _check_weights(label, weights)
    if distribution == "categorical":
        _check_count(label, count)
        return philox.categorical(np.cumsum(weights), count, key, calls).reshape(shape)
    if count > np.count_nonzero(weights):
        raise ValueError(f"{label}: cannot take {count} distinct values without replacement: "
                         f"p has {np.count_nonzero(weights)} nonzero entries")
    return philox.choice_without_replacement(len(weights), count, weights, key,
                                             calls).reshape(shape)


def _check_weights(label: str, weights: np.ndarray) -> None:
    if len(weights) == 0 or not (np.isfinite(weights).all() and (weights >= 0).all()
                                 and weights.sum() > 0):
        raise ValueError(f"{label}: p must be finite, non-negative and not all zero, got "
                         f"{weights}")
    if abs(weights.sum() - 1.0) > 1e-6:
        raise ValueError(f"{label}: p must sum to 1 (within 1e-6), got {weights.sum()}")


def _check_probabilities(label: str, name: str, rows: np.ndarray) -> None:
    sums = rows.sum(axis=-1)
    if not ((rows >= 0).all() and (np.abs(sums - 1.0) <= PVALS_TOLERANCE).all()):
        bad = sums.reshape(-1)[~(np.abs(sums - 1.0) <= PVALS_TOLERANCE).reshape(-1)]
        raise ValueError(f"{label}: each row of {name} must be non-negative and sum to 1, got "
                         f"{bad[0] if len(bad) else sums.reshape(-1)[0]}")


class CheckParameter(Op):
    """x itself, after checking at run time that `condition` (a bool scalar) holds; else a
    ValueError with `message`. The distributions' parameters pass through it (std >= 0,
    p in [0, 1], ...); the derivative is the identity."""

    __props__ = ("message",)
    view_map = {0: [0]}

    def __init__(self, message: str):
        self.message = message

    def make_node(self, x, condition):
        x = as_tensor_variable(x)
        condition = as_tensor_variable(condition)
        return Apply(self, [x, condition], [x.type()])

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def perform(self, node, inputs, output_storage):
        x, condition = inputs
        if not bool(condition):
            raise ValueError(self.message)
        output_storage[0][0] = x

    def connection_pattern(self, node) -> list[list[bool]]:
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads) -> list[Variable]:
        return [output_grads[0], disconnected_type()]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]

    def c_code(self, node, names):
        return check_parameter_c_code(self, node, names)


class MRGUniform(_RandomOp):
    """MRG_RandomStreams' generator: uniforms in (0, 1) of `dtype` from the MRG31k3p streams
    in the rows of the int32 state (n_streams, 6), element i from stream i mod n_streams
    (Theano's mrg_uniform, bit for bit: see mrg.py). Outputs (new state, sample)."""

    __props__ = ("dtype", "ndim")

    def __init__(self, dtype: str, ndim: int):
        if dtype not in ("float32", "float64"):
            raise TypeError(f"MRG_RandomStreams.uniform: dtype must be float32 or float64, got "
                            f"{dtype!r}")
        self.dtype = dtype
        self.ndim = ndim

    def __str__(self):
        return f"MRGUniform{{{self.dtype}}}"

    def make_node(self, state, size):
        label = "MRG_RandomStreams.uniform"
        state = as_tensor_variable(state, op=label, argument="state")
        if state.type.dtype != "int32" or state.type.ndim != 2:
            raise TypeError(f"{label}: the state must be an int32 matrix (n_streams, 6), got "
                            f"{state.type}")
        size = _size_input(size, label, self.ndim)
        return Apply(self, [state, size], [state.type(),
                                           tensor_type(self.dtype, (None,) * self.ndim)()])

    def infer_shape(self, fgraph, node, input_shapes):
        size = node.inputs[1]
        return [input_shapes[0], tuple(size[index] for index in range(self.ndim))]

    @staticmethod
    def checked_shape(state_shape: tuple[int, ...], size: Any) -> tuple[tuple[int, ...], int]:
        """The sample's shape and element count, after checking them and the state's shape
        (the host's perform and the device's share these checks)."""
        shape = shape_of_size(size, "MRG_RandomStreams.uniform")
        count = int(np.prod(shape, dtype=np.int64))
        if count > mrg.M1:
            raise ValueError(f"MRG_RandomStreams.uniform: at most 2**31 - 1 samples at once, "
                             f"got {count}")
        if tuple(state_shape[1:]) != (6,) or state_shape[0] == 0:
            raise ValueError(f"MRG_RandomStreams.uniform: the state must have shape "
                             f"(n_streams, 6), got {tuple(state_shape)}")
        return shape, count

    def perform(self, node, inputs, output_storage):
        state, size = inputs
        shape, count = self.checked_shape(state.shape, size)
        new_state, sample = mrg.uniform(state, count, self.dtype)
        output_storage[0][0] = new_state
        output_storage[1][0] = sample.reshape(shape)

    def c_code(self, node, names):
        return mrg_uniform_c_code(self, node, names)


class MultinomialFromUniform(NonDifferentiable, Op):
    """Theano's MultinomialFromUniform: counts (rows of pvals, categories) of n draws per row,
    draw c of row r choosing the first category whose running probability exceeds
    unis[c * rows + r]. Deterministic in its inputs; the uniforms come from MRG."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str = "int64"):
        self.dtype = dtype

    def make_node(self, pvals, uniforms, n):
        label = "MRG_RandomStreams.multinomial"
        pvals = as_tensor_variable(pvals, op=label, argument="pvals")
        uniforms = as_tensor_variable(uniforms, op=label, argument="uniforms")
        n = as_tensor_variable(n, op=label, argument="n")
        if pvals.type.ndim != 2 or uniforms.type.ndim != 1 or n.type.ndim != 0:
            raise TypeError(f"{label}: expected pvals a matrix, uniforms a vector and n a "
                            f"scalar, got {pvals.type}, {uniforms.type}, {n.type}")
        if n.type.dtype != "int64":
            n = n.astype("int64")
        return Apply(self, [pvals, uniforms, n], [tensor_type(self.dtype, (None, None))()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def perform(self, node, inputs, output_storage):
        pvals, uniforms, n = inputs
        output_storage[0][0] = mrg.multinomial_from_uniform(pvals, uniforms, int(n)) \
            .astype(self.dtype)

    def c_code(self, node, names):
        return multinomial_from_uniform_c_code(self, node, names)


class ChoiceFromUniform(MultinomialFromUniform):
    """Theano's ChoiceFromUniform without replacement: (rows, n) indices, draw c of row r
    choosing by unis[c * rows + r] among the row's probabilities, the chosen one then set to
    zero and the row renormalised."""

    def make_node(self, pvals, uniforms, n):
        node = super().make_node(pvals, uniforms, n)
        return Apply(self, node.inputs, [tensor_type(self.dtype, (None, None))()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], node.inputs[2])]

    def perform(self, node, inputs, output_storage):
        pvals, uniforms, n = inputs
        output_storage[0][0] = mrg.choice_from_uniform(pvals, uniforms, int(n)) \
            .astype(self.dtype)

    def c_code(self, node, names):
        return choice_from_uniform_c_code(self, node, names)
