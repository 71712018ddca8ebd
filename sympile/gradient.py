"""Symbolic differentiation: grad, Lop, Rop, Hessian- and Gauss-Newton-vector products,
gradient markers, and the numeric checker verify_grad (jacobian and hessian build a scan:
sympile/scan/derivatives.py, which sympile hands down to this module's namespace).

The rules live on the Ops (L_op for reverse mode, R_op for forward mode, docs/architecture.md);
this module only walks graphs.

Rules' conventions:

- L_op(inputs, outputs, output_grads) returns one gradient per input. An output that does not
  lead to the cost has a DisconnectedType gradient. An input the output does not depend on
  gets `disconnected_type()`; one where the gradient is not defined gets
  `grad_undefined(op, index, x)` or `grad_not_implemented(op, index, x)`, never a silent zero.
- R_op(inputs, eval_points) returns one tangent per output. eval_points[i] is None when input
  i does not depend on the variables Rop differentiates against; a None result means the
  output does not either.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sympile.compile.function import function
from sympile.config import config
from sympile.graph.basic import (
    Apply,
    Constant,
    Variable,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
)
from sympile.graph.fgraph import Feature, FunctionGraph
from sympile.graph.gradient_types import (
    DisconnectedType,
    NullType,
    disconnected_type,
    grad_not_implemented,
    grad_undefined,
)
from sympile.graph.gradient_types import (
    is_disconnected as _is_disconnected,
)
from sympile.graph.gradient_types import (
    is_null as _is_null,
)
from sympile.graph.op import Op, fill_test_values
from sympile.graph.rewriting.basic import node_rewriter
from sympile.graph.utils import MethodNotDefined
from sympile.scalar.basic import ScalarType
from sympile.scalar.basic import add as scalar_add
from sympile.tensor.basic.ops import ones_like, zeros_like
from sympile.tensor.math import cast, clip
from sympile.tensor.rewriting.basic import MergeRewriter
from sympile.tensor.rewriting.canonicalize import canonicalize_db
from sympile.tensor.rewriting.stabilize import stabilize_db
from sympile.tensor.shape.ops import PassThroughOp, declared_like
from sympile.tensor.type import TensorType, is_discrete, tensor_type
from sympile.tensor.variable import as_tensor_variable

__all__ = [
    "grad", "Lop", "Rop", "hessian_vector_product",
    "gauss_newton_vector_product", "verify_grad", "grad_undefined", "grad_not_implemented",
    "disconnected_type", "DisconnectedType", "NullType", "NullTypeGradError",
    "DisconnectedInputError", "GradientError", "zero_grad", "disconnected_grad",
    "consider_constant", "stop_gradient", "grad_clip", "grad_scale", "numeric_grad",
    "finite_differences",
    "verify_rop",
]


# ---------------------------------------------------------------------------------------------
# Special gradient types

class GradientError(ValueError):
    """An Op's gradient rule returned something inconsistent (wrong count, type or shape)."""


class NullTypeGradError(TypeError):
    """The gradient asked for goes through an input whose gradient is undefined."""


class DisconnectedInputError(ValueError):
    """grad was asked for a variable the cost does not depend on (disconnected_inputs='raise')."""


def _float_zeros_like(variable: Variable) -> Variable:
    dtype = variable.type.dtype if not is_discrete(variable) else config.floatX
    return zeros_like(variable, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Reverse mode

def grad(cost: Variable | None, wrt: Variable | Sequence[Variable],
         consider_constant: Sequence[Variable] | None = None,
         disconnected_inputs: str = "raise", add_names: bool = True,
         known_grads: dict[Variable, Any] | None = None, return_disconnected: str = "zero",
         null_gradients: str = "raise") -> Variable | list[Variable | None]:
    """d cost / d wrt, by reverse-mode accumulation.

    cost: a scalar (may be None when known_grads seeds the backward pass).
    wrt: a Variable or a list; the result has the same structure.
    consider_constant: variables whose gradient is not propagated (treated as constants).
    disconnected_inputs: 'raise' | 'warn' | 'ignore' when cost does not depend on a wrt.
    known_grads: {variable: its gradient}, seeds for the backward pass. As in Theano, a
    variable's given gradient is its whole gradient: what the cost (or another seed) would
    send back to it through the graph is not added (cost=x.sum() with known_grads={x: g}
    gives g, not g + 1).
    return_disconnected: 'zero' (zeros_like(wrt)), 'none' (None) or 'disconnected'
    (a DisconnectedType variable) for such a wrt.
    null_gradients: 'raise' a NullTypeGradError for an undefined gradient, or 'return' it.
    """
    return _grad(cost, wrt, consider_constant, disconnected_inputs, add_names, known_grads,
                 return_disconnected, null_gradients, known_is_whole=True)


def _grad(cost, wrt, consider_constant, disconnected_inputs, add_names, known_grads,
          return_disconnected, null_gradients, known_is_whole: bool):
    """grad's work; known_is_whole=False (Lop) adds to a seed what the other seeds send
    back to it (a vector-Jacobian product of outputs that depend on each other)."""
    for name, value, allowed in [("disconnected_inputs", disconnected_inputs,
                                  ("raise", "warn", "ignore")),
                                 ("return_disconnected", return_disconnected,
                                  ("zero", "none", "disconnected")),
                                 ("null_gradients", null_gradients, ("raise", "return"))]:
        if value not in allowed:
            raise ValueError(f"grad: {name} must be one of {allowed}, got {value!r}")
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    for index, variable in enumerate(wrt_list):
        if not isinstance(variable, Variable):
            raise TypeError(f"grad: wrt[{index}] is {variable!r}, expected a Variable")
        if isinstance(variable, Constant):
            raise TypeError(f"grad: wrt[{index}] is the constant {variable}; a gradient "
                            f"with respect to a constant is meaningless (make it a variable)")
        if _is_disconnected(variable) or _is_null(variable):
            raise TypeError(f"grad: wrt[{index}] ({variable}) is not a differentiable variable")

    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a Variable, got {cost!r}")
        if not isinstance(cost.type, TensorType) or cost.type.ndim != 0:
            raise TypeError(f"grad: cost must be a scalar (0-d tensor), got {cost} of type "
                            f"{cost.type}; sum or index it, or use Lop / known_grads")
        seeds[cost] = ones_like(cost, dtype=cost.type.dtype if not is_discrete(cost)
                                else config.floatX)
    elif not known_grads:
        raise TypeError("grad: cost is None and no known_grads are given: nothing to "
                        "differentiate")
    for variable, gradient in (known_grads or {}).items():
        if not isinstance(variable, Variable):
            raise TypeError(f"grad: known_grads key {variable!r} is not a Variable")
        if not _is_disconnected(gradient):
            gradient = _as_gradient_of(variable, gradient, "grad: known_grads")
        seeds[variable] = gradient

    gradients = _stable_backpropagate(seeds, wrt_list, consider_constant or (),
                                      known_is_whole and bool(known_grads))

    results: list[Variable | None] = []
    for variable, gradient in zip(wrt_list, gradients):
        if gradient is None:
            message = (f"grad: the cost does not depend on {variable} (created at "
                       f"{variable.creation_site()}); pass disconnected_inputs='ignore' or "
                       f"'warn' to get {return_disconnected!r} for it")
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(message)
            if disconnected_inputs == "warn":
                warnings.warn(message, stacklevel=2)
            if return_disconnected == "zero":
                gradient = _float_zeros_like(variable)
            elif return_disconnected == "disconnected":
                gradient = disconnected_type()
        elif _is_null(gradient) and null_gradients == "raise":
            raise NullTypeGradError(f"grad: {gradient.type.why_null}")
        if gradient is not None and add_names and variable.name and not _is_null(gradient) \
                and not _is_disconnected(gradient) and gradient.name is None:
            gradient.name = f"(d{_cost_name(cost)}/d{variable.name})"
        results.append(gradient)
    return results[0] if single else results


class _ChangeCounter(Feature):
    def __init__(self):
        self.changes = 0

    def on_change_input(self, fgraph, node, index, old, new, reason):
        self.changes += 1


def _stable_backpropagate(seeds: dict[Variable, Variable], wrt: list[Variable],
                          consider_constant: Sequence[Variable],
                          seeds_are_whole: bool) -> list[Variable | None]:
    """The gradients from `seeds` ({variable: its gradient}: the cost and known_grads),
    differentiated in the numerically stable form of the variables' graph.

    The forward graph is stabilized when compiled (log(exp(z) / sum(exp(z))) becomes
    log_softmax(z), log(1 + exp(x)) softplus(x), ...), but the gradient of the naive formula
    overflows to NaN where the stable one is finite. So a copy of the seeded variables'
    graph, cut at wrt and consider_constant (stand-ins take their place, so no pattern
    reaches across them), is merged and rewritten by the stabilize rewrites, then mapped back
    onto the user's graph: every node the rewrites left alone is the user's own (a random
    draw is not drawn twice), and only the stabilized part is new. That graph is
    differentiated (Lop and known_grads as grad of a cost). When no rewrite applies, the
    user's graph itself is. seeds_are_whole: each seed is its variable's whole gradient
    (grad's known_grads), nothing added to it.
    """
    roots = list(seeds)
    cut = list({id(v): v for v in (*wrt, *consider_constant) if v.owner is not None}.values())
    standins = {v: v.type() for v in cut}
    equiv = clone_get_equiv([], roots, copy_inputs=False, copy_orphans=False,
                            memo=dict(standins))
    originals = {id(copy): node for node, copy in equiv.items() if isinstance(node, Apply)}
    copies = [equiv[root] for root in roots]
    leaves = [v for v in graph_inputs(copies) if not isinstance(v, Constant)]
    counter = _ChangeCounter()
    fgraph = FunctionGraph(leaves, copies, features=[counter], clone=False)
    # The copy's nodes have no test values (config.compute_test_value): the rewrites run
    # without, and the stabilized graph gets them below.
    with config.change_flags(compute_test_value="off"):
        # Merged first: exp(z) / sum(exp(z)) written with two exp(z) nodes is a softmax too.
        MergeRewriter("merge")(fgraph)
        counter.changes = 0
        stabilize_db.query(include=("stabilize",))(fgraph)
    if not counter.changes:
        given = {id(root) for root in roots} if seeds_are_whole else set()
        return _backpropagate(seeds, wrt, consider_constant, given)
    back: dict[Variable, Variable] = {standin: v for v, standin in standins.items()}
    for node in fgraph.toposort():
        inputs = [back.get(v, v) for v in node.inputs]
        original = originals.get(id(node))
        if original is not None and len(inputs) == len(original.inputs) \
                and all(a is b for a, b in zip(inputs, original.inputs)):
            outputs = original.outputs
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            outputs = node.clone_with_new_inputs(inputs).outputs
        else:
            outputs = node.outputs
        back.update(zip(node.outputs, outputs))
    stable = [back.get(output, output) for output in fgraph.outputs]
    fill_test_values(stable)
    stable_seeds: dict[Variable, Variable] = {}
    for root, variable in zip(roots, stable):
        # Two seeded variables the rewrites made one: their seeds add up.
        seed = seeds[root]
        stable_seeds[variable] = seed if variable not in stable_seeds \
            else stable_seeds[variable] + seed
    given = {id(variable) for variable in stable} if seeds_are_whole else set()
    return _backpropagate(stable_seeds, wrt, consider_constant, given)


def _cost_name(cost: Variable | None) -> str:
    return cost.name if cost is not None and cost.name else "cost"


def _as_gradient_of(variable: Variable, gradient: Any, where: str) -> Variable:
    """`gradient` as a Variable with the ndim of `variable` and a float dtype."""
    try:
        gradient = as_tensor_variable(gradient)
    except TypeError as error:
        raise TypeError(f"{where}: the gradient for {variable} is not a tensor: {error}") \
            from None
    if not isinstance(variable.type, TensorType):
        return gradient
    if gradient.type.ndim != variable.type.ndim:
        raise ValueError(f"{where}: the gradient for {variable} ({variable.type}) has "
                         f"{gradient.type.ndim} dimensions, expected {variable.type.ndim}")
    return gradient


def _backpropagate(seeds: dict[Variable, Variable], wrt: list[Variable],
                   consider_constant: Sequence[Variable],
                   given: set[int] = frozenset()) -> list[Variable | None]:
    """Accumulate gradients from `seeds` back to each of `wrt` (None: disconnected); the
    variables whose ids are in `given` keep their seed, nothing added to it."""
    constant_ids = {id(v) for v in consider_constant}
    wrt_ids = {id(v) for v in wrt}
    nodes = io_toposort(graph_inputs(list(seeds), blockers=wrt), list(seeds))
    # Forward: which variables depend on some wrt (through differentiable paths).
    depends: set[int] = set(wrt_ids)
    for node in nodes:
        for index, variable in enumerate(node.inputs):
            if id(variable) in depends and id(variable) not in constant_ids \
                    and any(_connected(node, index, out) for out in range(len(node.outputs))):
                for out_index, output in enumerate(node.outputs):
                    if _connected(node, index, out_index):
                        depends.add(id(output))
    contributions: dict[int, list[Variable]] = {}
    for variable, gradient in seeds.items():
        if id(variable) in depends:
            contributions.setdefault(id(variable), []).append(gradient)
    totals: dict[int, Variable] = {}

    def total(variable: Variable) -> Variable | None:
        key = id(variable)
        if key in totals:
            return totals[key]
        parts = [p for p in contributions.get(key, []) if not _is_disconnected(p)]
        if not parts:
            return None
        nulls = [p for p in parts if _is_null(p)]
        if nulls:
            result = nulls[0]
        else:
            result = parts[0]
            for part in parts[1:]:
                # Scalar-typed variables (sympile.scalar) have no operators.
                result = scalar_add(result, part) if isinstance(result.type, ScalarType) \
                    else result + part
            if isinstance(variable.type, TensorType) and not is_discrete(variable) \
                    and result.type.dtype != variable.type.dtype:
                result = cast(result, variable.type.dtype)
        totals[key] = result
        return result

    for node in reversed(nodes):
        if not any(id(o) in contributions for o in node.outputs):
            continue
        active = [i for i, v in enumerate(node.inputs)
                  if id(v) in depends and id(v) not in constant_ids]
        if not active:
            continue
        output_grads = []
        for output in node.outputs:
            gradient = total(output)
            output_grads.append(disconnected_type() if gradient is None else gradient)
        nulls = [g for g in output_grads if _is_null(g)]
        if nulls:
            input_grads = [nulls[0]] * len(node.inputs)
        else:
            input_grads = _call_l_op(node, output_grads)
        for index in active:
            gradient = input_grads[index]
            if gradient is None or _is_disconnected(gradient):
                continue
            if id(node.inputs[index]) in given:
                continue
            if is_discrete(node.inputs[index]) and not _is_null(gradient):
                # An integer value moves in steps: its gradient is zero, and flows on as zero
                # (as in Theano) to the integer inputs it was computed from.
                gradient = _float_zeros_like(node.inputs[index])
            contributions.setdefault(id(node.inputs[index]), []).append(gradient)
    results = []
    for variable in wrt:
        gradient = total(variable)
        if gradient is not None and is_discrete(variable) and not _is_null(gradient):
            gradient = _float_zeros_like(variable)
        results.append(gradient)
    return results


def _connected(node: Apply, input_index: int, output_index: int) -> bool:
    pattern_of = getattr(node.op, "connection_pattern", None)
    if pattern_of is None:
        return True
    return bool(pattern_of(node)[input_index][output_index])


def _call_l_op(node: Apply, output_grads: list[Variable]) -> list[Variable]:
    op = node.op
    try:
        input_grads = op.L_op(node.inputs, node.outputs, output_grads)
    except MethodNotDefined:
        return [grad_not_implemented(op, i, x, "the op has no L_op")
                for i, x in enumerate(node.inputs)]
    if len(input_grads) != len(node.inputs):
        raise GradientError(f"{op}.L_op returned {len(input_grads)} gradients for "
                            f"{len(node.inputs)} inputs")
    checked = []
    for index, (variable, gradient) in enumerate(zip(node.inputs, input_grads)):
        if gradient is None or _is_disconnected(gradient) or _is_null(gradient):
            checked.append(gradient)
            continue
        if not isinstance(gradient, Variable):
            raise GradientError(f"{op}.L_op returned {gradient!r} for input {index}, expected "
                                f"a Variable")
        if isinstance(variable.type, TensorType) and gradient.type.ndim != variable.type.ndim:
            raise GradientError(f"{op}.L_op returned a gradient of {gradient.type.ndim} "
                                f"dimensions for input {index} of {variable.type.ndim}")
        checked.append(gradient)
    return checked


def Lop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable], consider_constant=None,
        disconnected_inputs: str = "raise") -> Variable | list[Variable]:
    """The vector-Jacobian product eval_pointsᵀ · d f / d wrt (one reverse sweep)."""
    f_list = [f] if isinstance(f, Variable) else list(f)
    points = [eval_points] if isinstance(eval_points, Variable) or not isinstance(
        eval_points, (list, tuple)) else list(eval_points)
    if len(points) != len(f_list):
        raise ValueError(f"Lop: {len(f_list)} outputs but {len(points)} eval_points")
    known = {}
    for index, (output, point) in enumerate(zip(f_list, points)):
        point = _check_eval_point(output, point, f"Lop: eval_points[{index}]")
        known[output] = declared_like(point, output)
    return _grad(None, wrt, consider_constant, disconnected_inputs, True, known, "zero",
                 "raise", known_is_whole=False)


def _check_eval_point(variable: Variable, point: Any, where: str) -> Variable:
    try:
        point = as_tensor_variable(point)
    except TypeError as error:
        raise TypeError(f"{where}: {error}") from None
    if point.type.ndim != variable.type.ndim:
        raise ValueError(f"{where} has {point.type.ndim} dimensions, but {variable} has "
                         f"{variable.type.ndim} ({variable.type})")
    for axis, (a, b) in enumerate(zip(point.type.shape, variable.type.shape)):
        if a is not None and b is not None and a != b:
            raise ValueError(f"{where} has length {a} on axis {axis}, but {variable} has {b}")
    if is_discrete(point) and not is_discrete(variable):
        raise TypeError(f"{where} has the discrete dtype {point.type.dtype}; tangents and "
                        f"cotangents of {variable.type.dtype} values must be floats")
    return point


# ---------------------------------------------------------------------------------------------
# Forward mode

def Rop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable], disconnected_outputs: str = "raise",
        return_disconnected: str = "zero") -> Variable | list[Variable | None]:
    """The Jacobian-vector product d f / d wrt · eval_points, by one forward sweep through the
    Ops' R_op rules (Pearlmutter's R-operator)."""
    if disconnected_outputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"Rop: disconnected_outputs must be 'raise', 'warn' or 'ignore', got "
                         f"{disconnected_outputs!r}")
    if return_disconnected not in ("zero", "none"):
        raise ValueError(f"Rop: return_disconnected must be 'zero' or 'none', got "
                         f"{return_disconnected!r}")
    single = isinstance(f, Variable)
    f_list = [f] if single else list(f)
    wrt_list = [wrt] if isinstance(wrt, Variable) else list(wrt)
    points = [eval_points] if isinstance(eval_points, Variable) or not isinstance(
        eval_points, (list, tuple)) else list(eval_points)
    if len(points) != len(wrt_list):
        raise ValueError(f"Rop: {len(wrt_list)} wrt variables but {len(points)} eval_points")
    tangents: dict[int, Variable] = {}
    for index, (variable, point) in enumerate(zip(wrt_list, points)):
        if not isinstance(variable, Variable):
            raise TypeError(f"Rop: wrt[{index}] is {variable!r}, expected a Variable")
        point = _check_eval_point(variable, point, f"Rop: eval_points[{index}]")
        tangents[id(variable)] = declared_like(point, variable)
    for node in io_toposort(wrt_list, f_list):
        input_points = [tangents.get(id(v)) for v in node.inputs]
        if all(p is None for p in input_points):
            continue
        for variable, point in zip(node.inputs, input_points):
            _raise_if_null_tangent(point, variable)
        try:
            output_points = node.op.R_op(node.inputs, input_points)
        except MethodNotDefined as error:
            raise NotImplementedError(f"Rop: {node.op} has no R_op rule (forward mode): {error}; "
                                      f"it is needed for {node.outputs[0]} created at "
                                      f"{node.outputs[0].creation_site()}") from None
        if len(output_points) != len(node.outputs):
            raise GradientError(f"{node.op}.R_op returned {len(output_points)} tangents for "
                                f"{len(node.outputs)} outputs")
        for output, point in zip(node.outputs, output_points):
            if point is None:
                continue
            if _is_null(point):
                tangents[id(output)] = point
                continue
            if point.type.ndim != output.type.ndim:
                raise GradientError(f"{node.op}.R_op returned a tangent of {point.type.ndim} "
                                    f"dimensions for an output of {output.type.ndim}")
            if isinstance(output.type, TensorType) and not is_discrete(output) \
                    and point.type.dtype != output.type.dtype:
                point = cast(point, output.type.dtype)
            tangents[id(output)] = point
    results: list[Variable | None] = []
    for output in f_list:
        point = tangents.get(id(output))
        _raise_if_null_tangent(point, output)
        if point is None:
            message = f"Rop: {output} does not depend on the wrt variables"
            if disconnected_outputs == "raise":
                raise ValueError(message + "; pass disconnected_outputs='ignore' to get zeros")
            if disconnected_outputs == "warn":
                warnings.warn(message, stacklevel=2)
            point = _float_zeros_like(output) if return_disconnected == "zero" else None
        results.append(None if point is None else _reading_inputs_of(point, output))
    return results[0] if single else results


def _raise_if_null_tangent(point: Variable | None, variable: Variable) -> None:
    """An op's R_op may give an output a null tangent (one that is not defined): an error
    where it is needed, as a null gradient is in grad."""
    if _is_null(point):
        raise NotImplementedError(f"Rop: the tangent of {variable} created at "
                                  f"{variable.creation_site()} is needed but "
                                  f"{point.type.why_null}")


def _reading_inputs_of(point: Variable, output: Variable) -> Variable:
    """`point`, reading every input `output` reads, as Theano's Rop result does.

    Theano gives each input outside wrt a zeros_like tangent, so Rop(dot(x, W), W, V) reads
    W through dot(zeros_like(x), W) and function([W, V, x], JV) is valid. Here such tangents
    are None (no product with zeros is built); RopInputs records the inputs instead, and
    the canonicalize rewrites remove it.
    """
    read = {id(v) for v in graph_inputs([point])}
    missing = [v for v in graph_inputs([output])
               if id(v) not in read and not isinstance(v, Constant)]
    return RopInputs(len(missing))(point, *missing) if missing else point


# ---------------------------------------------------------------------------------------------
# Second order

def hessian_vector_product(cost: Variable, wrt: Variable | Sequence[Variable],
                           v: Variable | Sequence[Variable]) -> Variable | list[Variable]:
    """H · v for H the Hessian of scalar `cost` with respect to wrt: forward mode (Rop)
    through the gradient graph, so it costs about two gradient evaluations."""
    gradients = grad(cost, wrt, disconnected_inputs="ignore")
    return Rop(gradients, wrt, v, disconnected_outputs="ignore")


def gauss_newton_vector_product(loss_of_outputs: Variable, outputs: Variable | Sequence[Variable],
                                params: Variable | Sequence[Variable],
                                v: Variable | Sequence[Variable]) -> Variable | list[Variable]:
    """G · v with G = Jᵀ H_L J, J the Jacobian of the model `outputs` with respect to params
    and H_L the Hessian of the scalar loss with respect to the outputs (Schraudolph's
    Gauss-Newton product for Hessian-free training): Rop through the model, then the loss's
    Hessian-vector product, then Lop back."""
    single_output = isinstance(outputs, Variable)
    output_list = [outputs] if single_output else list(outputs)
    jv = Rop(output_list, params, v, disconnected_outputs="ignore")
    hjv = hessian_vector_product(loss_of_outputs, output_list, jv)
    return Lop(output_list, params, hjv, disconnected_inputs="ignore")


# ---------------------------------------------------------------------------------------------
# Gradient markers: identity in the forward pass, special in the backward pass

class _GradientMarker(PassThroughOp):
    """Forward: the identity (a view). Subclasses say what happens to gradients."""

    view_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]


class ZeroGrad(_GradientMarker):
    """zero_grad(x): the gradient through x is zero (forward-mode tangents too)."""

    def L_op(self, inputs, outputs, output_grads):
        return [_float_zeros_like(inputs[0])]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else _float_zeros_like(inputs[0])]


class DisconnectedGrad(_GradientMarker):
    """disconnected_grad(x): x is treated as a constant; what depends only through it is
    disconnected."""

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]

    def R_op(self, inputs, eval_points):
        return [None]

    def connection_pattern(self, node):
        return [[False]]


class GradClip(_GradientMarker):
    """grad_clip(x, lower, upper): the gradient flowing back through x is clipped."""

    __props__ = ("lower", "upper")

    def __init__(self, lower: float, upper: float):
        if not lower <= upper:
            raise ValueError(f"grad_clip: lower bound {lower} is above upper bound {upper}")
        self.lower, self.upper = float(lower), float(upper)

    def L_op(self, inputs, outputs, output_grads):
        return [clip(output_grads[0], self.lower, self.upper)]


class GradScale(_GradientMarker):
    """grad_scale(x, factor): the gradient flowing back through x is multiplied by factor."""

    __props__ = ("factor",)

    def __init__(self, factor: float):
        self.factor = float(factor)

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0] * self.factor]


class RopInputs(Op):
    """RopInputs(n)(tangent, *inputs): the tangent (a view), also reading the n graph inputs
    that the function Rop differentiated reads and the tangent does not (see Rop). Their
    gradients are zero, as through Theano's dot(zeros_like(x), W)."""

    __props__ = ("n_inputs",)
    view_map = {0: [0]}

    def __init__(self, n_inputs: int):
        self.n_inputs = n_inputs

    def make_node(self, tangent, *inputs):
        if len(inputs) != self.n_inputs:
            raise TypeError(f"RopInputs: expected {self.n_inputs} inputs after the tangent, "
                            f"got {len(inputs)}")
        return Apply(self, [tangent, *inputs], [tangent.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0], *(_float_zeros_like(v) if not is_discrete(v)
                                   else disconnected_type() for v in inputs[1:])]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]


@node_rewriter([_GradientMarker, RopInputs])
def local_remove_gradient_marker(fgraph, node):
    """zero_grad(x), disconnected_grad(x), grad_clip(x, ...), grad_scale(x, f),
    RopInputs(x, ...) -> x. They act when graphs are differentiated; a compiled function only
    computes x (Theano's remove_zero_grad, remove_grad_clip, ...)."""
    return [node.inputs[0]]


canonicalize_db.register(local_remove_gradient_marker.name, local_remove_gradient_marker,
                         "canonicalize", "fast_run")

_zero_grad = ZeroGrad()
_disconnected_grad = DisconnectedGrad()


def zero_grad(x: Any) -> Variable:
    """x, whose gradient is zero: grad flows no further back (JAX's stop_gradient)."""
    return _zero_grad(x)


def disconnected_grad(x: Any) -> Variable:
    """x, treated as a constant by grad: what depends only through it is disconnected."""
    return _disconnected_grad(x)


def consider_constant(x: Any) -> Variable:
    """Theano's consider_constant: the same as zero_grad."""
    return _zero_grad(x)


stop_gradient = zero_grad


def grad_clip(x: Any, lower_bound: float, upper_bound: float) -> Variable:
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x: Any, multiplier: float) -> Variable:
    return GradScale(multiplier)(x)


# ---------------------------------------------------------------------------------------------
# Numeric checks

# Central-difference steps: truncation error O(step**2), rounding error O(ulp / step).
_EPS = {"float64": 1e-6, "float32": 3e-4, "float16": 1e-1}
_TOLERANCE = {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}


def finite_differences(function: Callable[..., Any], point: Sequence[np.ndarray],
                       eps: float | None = None) -> list[np.ndarray]:
    """Central finite differences of the scalar `function` at `point` (list of arrays)."""
    gradients = []
    for index, value in enumerate(point):
        step = eps if eps is not None else _EPS.get(value.dtype.name, 1e-6)
        gradient = np.zeros(value.shape, dtype="float64")
        flat = gradient.reshape(-1)
        for position in range(value.size):
            shifted = [p.copy() for p in point]
            original = shifted[index].reshape(-1)[position]
            shifted[index].reshape(-1)[position] = original + step
            upper = float(function(*shifted))
            shifted[index].reshape(-1)[position] = original - step
            lower = float(function(*shifted))
            flat[position] = (upper - lower) / (2 * step)
        gradients.append(gradient)
    return gradients


class numeric_grad:
    """Theano's numeric_grad: the gradient of `f` (a Python function of numpy arrays
    returning a scalar, such as a compiled function) at `pt` (a list of arrays, or one
    array), by central finite differences of step `eps` (by dtype: float64 1e-6, float32
    3e-4, float16 0.1). `gf` holds it (a list, or one array for one array pt), in float64;
    max_err compares an analytic gradient with it."""

    def __init__(self, f: Callable[..., Any], pt: Any, eps: float | None = None):
        single = not isinstance(pt, (list, tuple))
        point = [np.array(p) for p in ([pt] if single else pt)]
        for index, value in enumerate(point):
            if value.dtype.kind != "f":
                raise TypeError(f"numeric_grad: pt[{index}] has dtype {value.dtype}; "
                                f"gradients are estimated at floating-point points")
        gradients = finite_differences(f, point, eps)
        self.gf = gradients[0] if single else gradients

    @staticmethod
    def abs_rel_err(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        """The absolute and the relative error of a against b (relative to abs(a) + abs(b),
        at least 1e-8)."""
        absolute = np.abs(np.asarray(a, "float64") - np.asarray(b, "float64"))
        return absolute, absolute / np.maximum(np.abs(a) + np.abs(b), 1e-8)

    def abs_rel_errors(self, g_pt: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """abs_rel_err of each analytic gradient in g_pt against gf."""
        numeric = self.gf if isinstance(self.gf, list) else [self.gf]
        analytic = g_pt if isinstance(g_pt, (list, tuple)) else [g_pt]
        if len(analytic) != len(numeric):
            raise ValueError(f"numeric_grad.abs_rel_errors: {len(analytic)} gradients for "
                             f"{len(numeric)} inputs")
        for index, (a, n) in enumerate(zip(analytic, numeric)):
            if np.shape(a) != n.shape:
                raise ValueError(f"numeric_grad.abs_rel_errors: gradient {index} has shape "
                                 f"{np.shape(a)}, the input {n.shape}")
        return [self.abs_rel_err(a, n) for a, n in zip(analytic, numeric)]

    def max_err(self, g_pt: Any, abs_tol: float, rel_tol: float):
        """(input index, flat position, absolute error, relative error) where
        min(abs_err / abs_tol, rel_err / rel_tol) is largest: the worst disagreement."""
        worst = []
        for absolute, relative in self.abs_rel_errors(g_pt):
            scaled = np.minimum(absolute / abs_tol, relative / rel_tol).ravel()
            position = int(np.argmax(scaled)) if scaled.size else 0
            worst.append((scaled[position] if scaled.size else -np.inf, position,
                          absolute.ravel()[position] if scaled.size else 0.0,
                          relative.ravel()[position] if scaled.size else 0.0))
        index = int(np.argmax([w[0] for w in worst]))
        return index, worst[index][1], worst[index][2], worst[index][3]


def _symbolic_point(pt: Sequence[Any], who: str) -> tuple[list[np.ndarray], list[Variable]]:
    point = [np.array(p) for p in pt]
    if not point:
        raise ValueError(f"{who}: pt must contain at least one input value")
    for index, value in enumerate(point):
        if value.dtype.kind != "f":
            raise TypeError(f"{who}: pt[{index}] has dtype {value.dtype}; derivatives are "
                            f"checked at floating-point points")
    # As Theano's: an axis of length 1 is broadcastable (the type as_tensor_variable gives
    # the value), so a (3, 1) point broadcasts against a (3, 4) one.
    inputs = [tensor_type(v.dtype, tuple(1 if n == 1 else None for n in v.shape))(f"input_{i}")
              for i, v in enumerate(point)]
    return point, inputs


def _checked_output(fun: Callable[..., Variable], inputs: list[Variable], who: str) -> Variable:
    output = fun(*inputs)
    if not isinstance(output, Variable):
        raise TypeError(f"{who}: fun must return one Variable, got {output!r}")
    if output.type.dtype[:5] != "float":
        raise TypeError(f"{who}: fun returns {output.type}; only floating-point outputs have "
                        f"derivatives to check")
    return output


def _compare(who: str, what: str, analytic: np.ndarray, numeric: np.ndarray, dtype: str,
             abs_tol: float | None, rel_tol: float | None) -> None:
    """Raise GradientError where both the absolute and the relative error are too large."""
    analytic, numeric = np.asarray(analytic, "float64"), np.asarray(numeric, "float64")
    tolerance = _TOLERANCE.get(dtype, 1e-4)
    absolute = np.abs(analytic - numeric)
    relative = absolute / np.maximum(np.abs(analytic) + np.abs(numeric), 1e-8)
    failing = (absolute > (abs_tol if abs_tol is not None else tolerance)) & \
        (relative > (rel_tol if rel_tol is not None else tolerance))
    failing |= np.isnan(analytic) != np.isnan(numeric)
    if np.any(failing):
        scores = np.where(failing, np.nan_to_num(absolute, nan=1e300), -1)
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(scores)), analytic.shape))
        raise GradientError(
            f"{who}: {what} is wrong.\n"
            f"  largest difference at index {worst}: analytic {analytic[worst]!r}, numeric "
            f"{numeric[worst]!r} (abs error {absolute[worst]:.3g}, rel error "
            f"{relative[worst]:.3g})\n  analytic:\n{analytic}\n  numeric:\n{numeric}")


def verify_grad(fun: Callable[..., Variable], pt: Sequence[Any], n_tests: int = 2,
                rng: np.random.Generator | int | None = None, eps: float | None = None,
                abs_tol: float | None = None, rel_tol: float | None = None,
                mode: Any = None) -> None:
    """Check the reverse-mode derivative of `fun` (a Python function of symbolic inputs
    returning one Variable) at the point `pt` (a list of arrays) against finite differences.

    The output is projected on random weights u in [0.5, 1.5): the symbolic Lop(out, x, u) is
    compared with central differences of sum(u * fun(x)), so any output shape works. The check
    fails only where both the absolute and the relative error exceed their tolerances (by
    dtype: float64 1e-4, float32 1e-2, float16 5e-2). Raises GradientError showing the
    analytic and numeric gradients and where they differ most. Random states stay put (no
    default updates): the derivative checked is that of one fixed draw.
    """
    point, inputs = _symbolic_point(pt, "verify_grad")
    output = _checked_output(fun, inputs, "verify_grad")
    rng = _generator(rng)
    forward = function(inputs, output, mode=mode, on_unused_input="ignore",
                       no_default_updates=True)
    for _ in range(n_tests):
        projection = rng.uniform(0.5, 1.5, size=np.shape(forward(*point))).astype(
            output.type.dtype)
        gradients = Lop(output, inputs, as_tensor_variable(projection),
                        disconnected_inputs="ignore")
        analytic = function(inputs, gradients, mode=mode, on_unused_input="ignore",
                            no_default_updates=True)(*point)

        def projected(*values: np.ndarray, projection=projection) -> float:
            return float(np.sum(np.asarray(forward(*values), "float64") * projection))

        numeric = finite_differences(projected, point, eps)
        for index, (a, n, value) in enumerate(zip(analytic, numeric, point)):
            _compare("verify_grad", f"the gradient with respect to input {index}", a, n,
                     value.dtype.name, abs_tol, rel_tol)


# Theano's name of the error verify_grad raises (`except verify_grad.E_grad:`).
verify_grad.E_grad = GradientError


def _generator(rng: Any) -> np.random.Generator:
    """A Generator from what the checks accept as `rng`: a Generator, a seed or None, a
    legacy RandomState, or the numpy.random module itself (Theano's tests pass it)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is np.random or isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(0, 2**31 - 1))
    return np.random.default_rng(rng)


def verify_rop(fun: Callable[..., Variable], pt: Sequence[Any], n_tests: int = 2,
               rng: np.random.Generator | int | None = None, eps: float | None = None,
               abs_tol: float | None = None, rel_tol: float | None = None,
               mode: Any = None) -> None:
    """Check the forward-mode derivative Rop(fun(x), x, v) at `pt` for random tangents v:
    against central differences (f(x + e v) - f(x - e v)) / 2e, and against Lop by the
    identity <J v, u> = <v, Jᵀ u> for a random cotangent u."""
    point, inputs = _symbolic_point(pt, "verify_rop")
    output = _checked_output(fun, inputs, "verify_rop")
    rng = _generator(rng)
    tangents = [v.type(f"tangent_{i}") for i, v in enumerate(inputs)]
    cotangent = output.type("cotangent")
    jvp = Rop(output, inputs, tangents, disconnected_outputs="ignore")
    vjp = Lop(output, inputs, cotangent, disconnected_inputs="ignore")
    forward = function(inputs, output, mode=mode, on_unused_input="ignore",
                       no_default_updates=True)
    compiled = function(inputs + tangents + [cotangent], [jvp] + list(vjp), mode=mode,
                        on_unused_input="ignore", no_default_updates=True)
    dtype = output.type.dtype
    for _ in range(n_tests):
        directions = [rng.standard_normal(v.shape).astype(v.dtype) for v in point]
        reference = np.asarray(forward(*point))
        weights = rng.standard_normal(reference.shape).astype(dtype)
        jv, *vjps = compiled(*point, *directions, weights)
        # The coarsest dtype involved sets the step: a float32 input perturbed by 1e-6 rounds.
        step = eps if eps is not None else max(_EPS.get(d, 1e-6) for d in
                                               [dtype, *(p.dtype.name for p in point)])
        upper = forward(*[(p + step * d).astype(p.dtype) for p, d in zip(point, directions)])
        lower = forward(*[(p - step * d).astype(p.dtype) for p, d in zip(point, directions)])
        numeric = (np.asarray(upper, "float64") - np.asarray(lower, "float64")) / (2 * step)
        _compare("verify_rop", "Rop (against finite differences)", jv, numeric, dtype,
                 abs_tol, rel_tol)
        left = np.sum(np.asarray(jv, "float64") * weights)
        right = sum(np.sum(np.asarray(g, "float64") * d) for g, d in zip(vjps, directions))
        _compare("verify_rop", "<Rop v, u> = <v, Lop u>", np.asarray(left), np.asarray(right),
                 dtype, abs_tol, rel_tol)
