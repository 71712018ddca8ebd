"""Tests of sympile/scalar/composite.py: Composite's graph equality, values (on scalars and,
through Elemwise, on arrays) against numpy, dtypes, errors and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import sympile.tensor as T
from sympile.scalar import basic as scalar
from sympile.scalar.basic import get_scalar_type
from sympile.scalar.composite import Composite
from sympile.tensor.elemwise import Elemwise
from tests.utils import (
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)


def gaussian_wave(dtype: str = "float64") -> Composite:
    """exp(-x * x) * sin(x) + tanh(y) * 0.5"""
    x, y = get_scalar_type(dtype)(), get_scalar_type(dtype)()
    half = get_scalar_type(dtype).make_constant(np.asarray(0.5, dtype=dtype)[()])
    out = scalar.add(scalar.mul(scalar.exp(scalar.mul(scalar.neg(x), x)), scalar.sin(x)),
                     scalar.mul(scalar.tanh(y), half))
    return Composite([x, y], [out])


def gaussian_wave_reference(x, y):
    return np.exp(-x * x) * np.sin(x) + np.tanh(y) * np.asarray(0.5, dtype=x.dtype)


def test_equal_graphs_give_equal_ops():
    assert gaussian_wave() == gaussian_wave()
    assert hash(gaussian_wave()) == hash(gaussian_wave())
    assert gaussian_wave("float32") != gaussian_wave()
    x = get_scalar_type("float64")()
    assert Composite([x], [scalar.exp(x)]) != Composite([x], [scalar.sin(x)])
    assert Composite([x], [scalar.add(x, 1.0)]) != Composite([x], [scalar.add(x, 2.0)])


def test_text_shows_the_graph():
    x, y = get_scalar_type("float64")(), get_scalar_type("float64")()
    assert str(Composite([x, y], [scalar.mul(scalar.exp(x), y)])) == \
        "composite{i0, i1 -> mul(exp(i0), i1)}"


def test_graph_is_copied():
    x = get_scalar_type("float64")()
    out = scalar.exp(x)
    op = Composite([x], [out])
    assert op.inputs[0] is not x and op.outputs[0] is not out
    assert op.outputs[0].owner.inputs[0] is op.inputs[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_impl_on_scalars_and_arrays(dtype):
    op = gaussian_wave(dtype)
    assert op.nin == 2 and op.nout == 1
    assert op.output_dtypes(dtype, dtype) == (dtype,)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=(1, 4)).astype(dtype)
    assert_like_numpy(np.asarray(op.impl(x, y)), gaussian_wave_reference(x, y))
    sx, sy = x[0, 0], y[0, 0]
    assert_like_numpy(np.asarray(op.impl(sx, sy)), gaussian_wave_reference(sx, sy))


def test_scalar_make_node_and_perform():
    op = gaussian_wave()
    a, b = get_scalar_type("float64")(), get_scalar_type("float64")()
    node = op.make_node(a, b)
    assert node.outputs[0].type == get_scalar_type("float64")
    storage = [[None]]
    op.perform(node, [np.float64(0.3), np.float64(-1.2)], storage)
    np.testing.assert_allclose(storage[0][0],
                               gaussian_wave_reference(np.float64(0.3), np.float64(-1.2)))


def test_mixed_dtypes_and_multiple_outputs():
    i, f = get_scalar_type("int8")(), get_scalar_type("float32")()
    total = scalar.add(i, f)
    op = Composite([i, f], [total, scalar.lt(i, f), f])
    assert op.output_dtypes("int8", "float32") == ("float32", "bool", "float32")
    xs, ys = np.array([1, -3], dtype="int8"), np.array([0.5, -4.0], dtype="float32")
    out_sum, out_lt, out_f = op.impl(xs, ys)
    assert_like_numpy(out_sum, xs + ys)
    assert_like_numpy(out_lt, xs < ys)
    assert_like_numpy(out_f, ys)


def test_constant_output():
    x = get_scalar_type("float64")()
    op = Composite([x], [get_scalar_type("int16").make_constant(np.int16(7))])
    assert op.output_dtypes("float64") == ("int16",)
    assert_like_numpy(np.asarray(op.impl(np.float64(1.0))), np.int16(7))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=15, deadline=None)
@given(data=shapes(min_dims=1, max_dims=3).flatmap(lambda s: arrays("float64", s)))
def test_elemwise_composite_matches_numpy(dtype, data):
    x = T.tensor(dtype=dtype, shape=(None,) * data.ndim)
    y = T.tensor(dtype=dtype, shape=(None,) * data.ndim)
    out = Elemwise(gaussian_wave(dtype))(x, y)
    assert out.type.dtype == dtype
    values = data.astype(dtype), (data * 0.5).astype(dtype)
    assert_like_numpy(evaluate(out, [x, y], values), gaussian_wave_reference(*values))


def test_elemwise_composite_broadcasts_and_infers_shape():
    row, matrix = T.row("r"), T.matrix("m")
    out = Elemwise(gaussian_wave())(row, matrix)
    assert out.type.shape == (None, None)
    r, m = np.linspace(-1, 1, 4).reshape(1, 4), np.arange(12.0).reshape(3, 4) / 10
    assert_like_numpy(evaluate(out, [row, matrix], [r, m]), gaussian_wave_reference(r, m))
    check_infer_shape(out, [row, matrix], [r, m])


def test_errors():
    x = get_scalar_type("float64")()
    with pytest.raises(TypeError, match=r"expected inputs of dtypes float64, float64, got "
                                        r"float32, float64"):
        gaussian_wave().output_dtypes("float32", "float64")
    with pytest.raises(TypeError, match="Composite: input 0 must be a scalar variable without "
                                        "owner"):
        Composite([scalar.exp(x)], [x])
    with pytest.raises(TypeError, match="Composite: input 0 must be a scalar variable"):
        Composite([T.dvector()], [x])
    with pytest.raises(ValueError, match="Composite: an input is listed twice"):
        Composite([x, x], [x])
    with pytest.raises(ValueError, match="Composite: expected at least one output"):
        Composite([x], [])
    other = get_scalar_type("float64")()
    with pytest.raises(ValueError, match="depend"):
        Composite([x], [scalar.add(x, other)])
    with pytest.raises(TypeError, match="Composite: output 0 must be a scalar variable"):
        Composite([x], [T.dvector()])


def _grad_point(*shapes_):
    return lambda rng: [rng.uniform(-1.5, 1.5, size=s) for s in shapes_]


def _nested() -> Composite:
    """A composite using a composite: gaussian_wave(x * y, x) / (1 + y * y)."""
    x, y = get_scalar_type("float64")(), get_scalar_type("float64")()
    inner = gaussian_wave().make_node(scalar.mul(x, y), x).outputs[0]
    return Composite([x, y], [scalar.true_div(inner, scalar.add(1.0, scalar.mul(y, y)))])


def _unused_input() -> Composite:
    x, y = get_scalar_type("float64")(), get_scalar_type("float64")()
    return Composite([x, y], [scalar.sqr(x)])


GRAD_CASES = [
    GradCase("gaussian_wave", lambda x, y: Elemwise(gaussian_wave())(x, y),
             _grad_point((3, 4), (3, 4))),
    GradCase("gaussian_wave_row", lambda x, y: Elemwise(gaussian_wave())(
        T.specify_shape(x, (1, 4)), y), _grad_point((1, 4), (3, 4))),
    GradCase("nested", lambda x, y: Elemwise(_nested())(x, y), _grad_point((5,), (5,))),
    GradCase("unused_input", lambda x, y: Elemwise(_unused_input())(x, y),
             _grad_point((4,), (4,))),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_gradient_matches_unfused_graph():
    x, y = T.dvector("x"), T.dvector("y")
    fused = Elemwise(gaussian_wave())(x, y).sum()
    unfused = (T.exp(-x * x) * T.sin(x) + T.tanh(y) * 0.5).sum()
    values = [np.linspace(-2, 2, 7), np.linspace(1, -1, 7)]
    for a, b in zip(evaluate(T.grad(fused, [x, y]), [x, y], values),
                    evaluate(T.grad(unfused, [x, y]), [x, y], values)):
        assert_like_numpy(a, b)
