"""Tests of sympile/tensor/blas.py against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode
from sympile.gradient import DisconnectedType, Lop, Rop, disconnected_type, finite_differences, grad
from sympile.tensor.blas import Dot, MatMul, TensorDot
from tests.utils import (
    NUMERIC_DTYPES,
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
)

lengths = st.integers(0, 3)


def exact_values(draw, dtype: str, shape: tuple) -> np.ndarray:
    """Small integers as `dtype` (bool: nonzero), so that every dtype computes products and
    sums exactly and results can be compared with numpy's bit for bit."""
    values = draw(arrays("int8", shape, elements=st.integers(-3, 3)))
    if dtype == "bool":
        return values != 0
    if dtype.startswith("uint"):
        values = np.abs(values)
    return values.astype(dtype)


def symbolic(value: np.ndarray, static: bool | tuple = False, name: str = "x"):
    """A variable for `value`: static=True gives its full static shape, a tuple of booleans
    chooses per axis, False gives unknown lengths."""
    if isinstance(static, bool):
        static = (static,) * value.ndim
    shape = tuple(n if known else None for n, known in zip(value.shape, static))
    return T.tensor(value.dtype.name, shape=shape, name=name)


def run(build, values, static):
    variables = [symbolic(v, s, name) for v, s, name in zip(values, static, "ab")]
    output = build(*variables)
    return output, evaluate(output, variables, values)


def assert_static_shape_fits(output, value):
    assert output.type.ndim == value.ndim
    for static, actual in zip(output.type.shape, value.shape):
        assert static in (None, actual), f"static shape {output.type.shape} vs {value.shape}"


# -- dot ---------------------------------------------------------------------------------

@st.composite
def dot_cases(draw, max_dims=4):
    a_ndim = draw(st.integers(0, max_dims))
    b_ndim = draw(st.integers(0, max_dims))
    inner = draw(lengths)
    a_shape = tuple(draw(st.lists(lengths, min_size=max(a_ndim - 1, 0),
                                  max_size=max(a_ndim - 1, 0)))) + ((inner,) if a_ndim else ())
    if b_ndim == 1:
        b_shape = (inner,)
    else:
        b_free = draw(st.lists(lengths, min_size=b_ndim, max_size=b_ndim))
        b_shape = tuple(b_free[:-2]) + ((inner, b_free[-1]) if b_ndim >= 2 else ())
    dtypes = draw(st.lists(st.sampled_from(NUMERIC_DTYPES), min_size=2, max_size=2))
    values = [exact_values(draw, dtypes[0], a_shape), exact_values(draw, dtypes[1], b_shape)]
    return values, draw(st.booleans()), draw(st.booleans())


@given(case=dot_cases())
def test_dot_matches_numpy(case):
    (a, b), static_a, static_b = case
    output, actual = run(T.dot, [a, b], [static_a, static_b])
    assert_like_numpy(actual, np.dot(a, b))
    assert_static_shape_fits(output, actual)
    if static_a and static_b:
        assert output.type.shape == actual.shape


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((3, 4), (4,)), ((4,), (4, 2)),
                                    ((4,), (4,)), ((2, 3, 4), (5, 4, 2)), ((2, 3), (1, 3, 4))])
def test_dot_of_random_floats(dtype, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=s).astype(dtype) for s in shapes)
    if dtype.startswith("complex"):
        a = a + 1j * rng.normal(size=a.shape).astype(dtype)
    _, actual = run(T.dot, [a, b], [False, False])
    assert_like_numpy(actual, np.dot(a, b))


@pytest.mark.parametrize("dtypes", [("int8", "int8"), ("bool", "bool"), ("uint8", "int8"),
                                    ("float16", "float16"), ("int64", "float32"),
                                    ("complex64", "float64"), ("bool", "float16"),
                                    ("uint64", "int64"), ("int16", "uint32")])
def test_result_dtypes_are_numpys(dtypes):
    a = np.ones((2, 3), dtypes[0])
    b = np.ones((3, 2), dtypes[1])
    x, y = symbolic(a), symbolic(b)
    assert T.dot(x, y).type.dtype == np.dot(a, b).dtype
    assert T.matmul(x, y).type.dtype == np.matmul(a, b).dtype
    assert T.tensordot(x, y, 1).type.dtype == np.tensordot(a, b, 1).dtype
    assert T.outer(x, y).type.dtype == np.outer(a, b).dtype
    assert T.dot(x[0], y[:, 0]).type.dtype == np.dot(a[0], b[:, 0]).dtype


def test_integer_dot_wraps_like_numpy():
    a = np.full(4, 100, dtype="int8")
    _, actual = run(T.dot, [a, a], [False, False])
    assert_like_numpy(actual, np.dot(a, a))


def test_bool_dot_is_or_of_ands():
    a = np.array([[True, False], [False, False]])
    b = np.array([[False, True], [True, True]])
    _, actual = run(T.dot, [a, b], [False, False])
    assert_like_numpy(actual, np.dot(a, b))


def test_dot_with_python_scalars_and_lists():
    x = T.vector("x", dtype="int8")
    value = np.array([1, 2], dtype="int8")
    assert_like_numpy(evaluate(T.dot(2, x), [x], [value]), np.dot(2, value))
    assert_like_numpy(evaluate(T.dot(x, [1, 1]), [x], [value]), np.dot(value, [1, 1]))


def test_dot_uses_the_dot_op_for_matrices_and_vectors():
    matrix, vector = T.matrix("m"), T.vector("v")
    for a, b in [(matrix, matrix), (matrix, vector), (vector, matrix), (vector, vector)]:
        assert isinstance(T.dot(a, b).owner.op, Dot)
    assert isinstance(T.dot(T.tensor3("t"), matrix).owner.op, TensorDot)
    assert isinstance(T.tensordot(matrix, matrix, 1).owner.op, Dot)


def test_static_output_shapes():
    a = T.tensor("float32", shape=(2, 3))
    b = T.tensor("float32", shape=(3, None))
    assert T.dot(a, b).type.shape == (2, None)
    assert T.dot(a, T.tensor("float32", shape=(3,))).type.shape == (2,)
    assert T.dot(T.vector("v"), T.vector("w")).type.shape == ()
    assert T.dot(T.tensor("float32", shape=(4, 2, 3)), T.tensor("float32", shape=(5, 3, 6))) \
        .type.shape == (4, 2, 5, 6)
    assert T.dot(T.scalar("s"), a).type.shape == (2, 3)
    assert T.matmul(T.tensor("float64", shape=(1, 2, 3)),
                    T.tensor("float64", shape=(5, None, 3, 4))).type.shape == (5, None, 2, 4)
    assert T.matmul(T.tensor("float64", shape=(3,)), b).type.shape == (None,)
    assert T.matmul(a, T.tensor("float32", shape=(3,))).type.shape == (2,)
    assert T.tensordot(T.tensor("float64", shape=(2, 3, 4)),
                       T.tensor("float64", shape=(4, 3, 7)), [[1, 2], [1, 0]]).type.shape \
        == (2, 7)
    assert T.outer(T.tensor("float64", shape=(2, 3)), T.vector("v")).type.shape == (6, None)
    assert T.batched_dot(T.tensor("float64", shape=(5, 2, 3)),
                         T.tensor("float64", shape=(None, 3, 4))).type.shape == (5, 2, 4)


def test_method_and_operators():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3.0)
    x, y = symbolic(a, name="a"), symbolic(b, name="b")
    results = evaluate([x.dot(y), x @ y, [[1.0, 2.0]] @ x], [x, y], [a, b])
    for actual, expected in zip(results, [a.dot(b), a @ b, [[1.0, 2.0]] @ a]):
        assert_like_numpy(actual, expected)


# -- matmul ------------------------------------------------------------------------------

@st.composite
def matmul_cases(draw):
    batch = draw(st.lists(lengths, max_size=3))
    n, m, k = draw(lengths), draw(lengths), draw(lengths)
    operands = []
    for rows_or_columns in ("a", "b"):
        if draw(st.integers(0, 4)) == 0:
            shape, static = (m,), (draw(st.booleans()),)
        else:
            own = batch[draw(st.integers(0, len(batch))):]
            # A batch axis this operand broadcasts is length 1 and says so in its type.
            broadcast = [draw(st.booleans()) for _ in own]
            own = [1 if b else length for b, length in zip(broadcast, own)]
            core = (n, m) if rows_or_columns == "a" else (m, k)
            shape = tuple(own) + core
            static = tuple(b or draw(st.booleans()) for b in broadcast) + \
                (draw(st.booleans()), draw(st.booleans()))
        operands.append((shape, static))
    dtypes = draw(st.lists(st.sampled_from(NUMERIC_DTYPES), min_size=2, max_size=2))
    values = [exact_values(draw, dtype, shape) for dtype, (shape, _) in zip(dtypes, operands)]
    return values, [static for _, static in operands]


@given(case=matmul_cases())
def test_matmul_matches_numpy(case):
    values, static = case
    output, actual = run(T.matmul, values, static)
    assert_like_numpy(actual, np.matmul(*values))
    assert_static_shape_fits(output, actual)


def test_matmul_broadcasts_static_batch_axes():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(1, 3, 2, 4))
    b = rng.normal(size=(5, 1, 4, 2))
    output, actual = run(T.matmul, [a, b], [(True, False, False, False),
                                            (False, True, False, False)])
    assert output.type.shape == (None, None, None, None)
    assert_like_numpy(actual, np.matmul(a, b))


# -- tensordot ---------------------------------------------------------------------------

@st.composite
def tensordot_cases(draw):
    a_shape = tuple(draw(st.lists(lengths, max_size=4)))
    a_axes = draw(st.permutations(range(len(a_shape))))
    a_axes = a_axes[:draw(st.integers(0, len(a_axes)))]
    b_free = draw(st.lists(lengths, max_size=2))
    b_layout = draw(st.permutations([("paired", i) for i in range(len(a_axes))]
                                    + [("free", n) for n in b_free]))
    b_shape = tuple(a_shape[a_axes[i]] if kind == "paired" else i for kind, i in b_layout)
    b_axes = [b_layout.index(("paired", i)) for i in range(len(a_axes))]
    # Some axes counted from the end, as numpy allows.
    a_axes = [axis - len(a_shape) if draw(st.booleans()) else axis for axis in a_axes]
    dtypes = draw(st.lists(st.sampled_from(NUMERIC_DTYPES), min_size=2, max_size=2))
    values = [exact_values(draw, dtypes[0], a_shape), exact_values(draw, dtypes[1], b_shape)]
    return values, (a_axes, b_axes), draw(st.booleans())


@given(case=tensordot_cases())
def test_tensordot_matches_numpy(case):
    (a, b), axes, static = case
    output, actual = run(lambda x, y: T.tensordot(x, y, axes), [a, b], [static, static])
    assert_like_numpy(actual, np.tensordot(a, b, axes))
    if static:
        assert output.type.shape == actual.shape


@pytest.mark.parametrize("axes", [0, 1, 2])
def test_tensordot_with_an_int(axes):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 3, 4))
    b = rng.normal(size=(3, 4, 5)) if axes == 2 else rng.normal(size=(4, 5))
    _, actual = run(lambda x, y: T.tensordot(x, y, axes), [a, b], [False, False])
    assert_like_numpy(actual, np.tensordot(a, b, axes))
    _, default = run(T.tensordot, [a, rng.normal(size=(3, 4, 2))], [True, True])
    assert default.shape == (2, 2)


def test_tensordot_of_scalars():
    a, b = np.float32(2), np.float32(3)
    _, actual = run(lambda x, y: T.tensordot(x, y, 0), [np.asarray(a), np.asarray(b)],
                    [True, True])
    assert_like_numpy(actual, np.tensordot(a, b, 0))


# -- outer and batched_dot ---------------------------------------------------------------

@given(a=arrays("float64", st.lists(lengths, max_size=3).map(tuple)),
       b=arrays("int16", st.lists(lengths, max_size=2).map(tuple)), static=st.booleans())
def test_outer_matches_numpy(a, b, static):
    output, actual = run(T.outer, [a, b], [static, static])
    assert_like_numpy(actual, np.outer(a, b))
    if static:
        assert output.type.shape == actual.shape


@st.composite
def batched_dot_cases(draw):
    batch, inner = draw(st.integers(1, 3)), draw(lengths)
    a_ndim, b_ndim = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    a_free = max(a_ndim - 2, 0)
    a_shape = (batch,) + tuple(draw(st.lists(lengths, min_size=a_free, max_size=a_free))) \
        + ((inner,) if a_ndim >= 2 else ())
    if b_ndim == 1:
        b_shape = (batch,)
    elif b_ndim == 2:
        b_shape = (batch, inner) if a_ndim >= 2 else (batch, draw(lengths))
    else:
        free = tuple(draw(st.lists(lengths, min_size=b_ndim - 3, max_size=b_ndim - 3)))
        middle = inner if a_ndim >= 2 else draw(lengths)
        b_shape = (batch,) + free + (middle, draw(lengths))
    dtypes = draw(st.lists(st.sampled_from(NUMERIC_DTYPES), min_size=2, max_size=2))
    values = [exact_values(draw, dtypes[0], a_shape), exact_values(draw, dtypes[1], b_shape)]
    return values, draw(st.booleans())


@given(case=batched_dot_cases())
def test_batched_dot_is_dot_per_batch_element(case):
    (a, b), static = case
    output, actual = run(T.batched_dot, [a, b], [static, static])
    expected = np.stack([np.dot(a[i], b[i]) for i in range(a.shape[0])])
    assert_like_numpy(actual, expected)
    assert_static_shape_fits(output, actual)
    if static:
        assert output.type.shape == actual.shape


def test_batched_dot_documented_cases():
    rng = np.random.default_rng(3)
    cases = [((4, 2, 3), (4, 3, 5), (4, 2, 5)), ((4, 3), (4, 3), (4,)),
             ((4, 2, 3), (4, 3), (4, 2))]
    for a_shape, b_shape, result_shape in cases:
        a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
        _, actual = run(T.batched_dot, [a, b], [False, False])
        assert actual.shape == result_shape
        assert_like_numpy(actual, np.stack([np.dot(a[i], b[i]) for i in range(4)]))


# -- infer_shape -------------------------------------------------------------------------

@pytest.mark.parametrize("build, shapes", [
    (Dot(), [(2, 3), (3, 4)]),
    (Dot(), [(2, 3), (3,)]),
    (Dot(), [(3,), (3, 4)]),
    (Dot(), [(3,), (3,)]),
    (MatMul(), [(2, 1, 3, 4), (5, 4, 2)]),
    (MatMul(), [(4,), (2, 4, 3)]),
    (MatMul(), [(2, 3, 4), (4,)]),
    (MatMul(), [(4,), (4,)]),
    (TensorDot((0, 2), (1, 0)), [(2, 3, 4), (4, 2, 5)]),
    (TensorDot((), ()), [(2,), (3, 1)]),
    (T.batched_dot, [(2, 3, 4, 5), (2, 6, 5, 3)]),
    (T.outer, [(2, 3), (4,)]),
])
def test_infer_shape(build, shapes):
    rng = np.random.default_rng(4)
    values = [rng.normal(size=s) for s in shapes]
    # Length-1 batch axes of matmul broadcast only when the type says so.
    static = [tuple(n == 1 for n in s) for s in shapes]
    variables = [symbolic(v, s, name) for v, s, name in zip(values, static, "ab")]
    output = build(*variables)
    check_infer_shape(output, variables, values)
    node = output.owner
    while not isinstance(node.op, (Dot, MatMul, TensorDot)) and node.inputs[0].owner:
        node = node.inputs[0].owner
    if isinstance(node.op, (Dot, MatMul, TensorDot)):
        check_infer_shape(node.outputs[0], variables, values)


# -- errors ------------------------------------------------------------------------------

def test_dot_shape_errors():
    with pytest.raises(ValueError, match=r"Dot: shapes \(2, 3\) and \(4,\) are not aligned"):
        T.dot(T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4,)))
    with pytest.raises(ValueError, match=r"TensorDot.*shapes \(2, 3, 4\) and \(5, 6\)"):
        T.dot(T.tensor("float64", shape=(2, 3, 4)), T.tensor("float64", shape=(5, 6)))
    x, y = T.matrix("x"), T.vector("y")
    function_inputs = [np.ones((2, 3)), np.ones(4)]
    with pytest.raises(ValueError, match=r"Dot: shapes \(2, 3\) and \(4,\) are not aligned"):
        evaluate(T.dot(x, y), [x, y], function_inputs)
    with pytest.raises(TypeError, match="Dot: input a must be 1-d or 2-d"):
        Dot()(T.tensor3("t"), y)
    with pytest.raises(TypeError, match="dot, input a: cannot convert"):
        T.dot("text", y)


NO_REWRITE = Mode(rewriter=None, name="no rewrite")


def test_matmul_errors():
    with pytest.raises(ValueError, match="MatMul: input a .* is 0-d"):
        T.matmul(T.scalar("s"), T.matrix("m"))
    with pytest.raises(ValueError, match="MatMul: input b .* is 0-d"):
        T.matmul(T.vector("v"), 2.0)
    with pytest.raises(ValueError, match=r"MatMul: shapes \(2, 3\) and \(4, 5\) are not aligned"):
        T.matmul(T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4, 5)))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        T.matmul(T.tensor("float64", shape=(2, 3, 3)), T.tensor("float64", shape=(4, 3, 3)))
    x, y = T.tensor3("x"), T.tensor3("y")
    with pytest.raises(ValueError, match=r"MatMul: shapes \(1, 2, 3\) and \(4, 3, 5\) have batch "
                                         r"axes .*broadcasts only if its type says"):
        evaluate(T.matmul(x, y), [x, y], [np.ones((1, 2, 3)), np.ones((4, 3, 5))])
    a, b = T.matrix("a"), T.vector("b")
    with pytest.raises(ValueError, match=r"MatMul: shapes \(2, 3\) and \(2,\) are not aligned"):
        evaluate(T.matmul(a, b), [a, b], [np.ones((2, 3)), np.ones(2)], mode=NO_REWRITE)
    # FAST_RUN computes a matmul of a matrix and a vector as a Dot: its error names the line.
    product = T.matmul(a, b)
    with pytest.raises(ValueError, match=r"(?s)Dot: shapes \(2, 3\) and \(2,\) are not aligned"
                                         r".*created at .*test_basic.py"):
        evaluate(product, [a, b], [np.ones((2, 3)), np.ones(2)])


def test_tensordot_errors():
    a, b = T.matrix("a"), T.tensor3("b")
    with pytest.raises(ValueError, match="tensordot: axes=3 must be between 0 and"):
        T.tensordot(a, b, 3)
    with pytest.raises(ValueError, match="tensordot: axes=-1 must be between 0 and"):
        T.tensordot(a, b, -1)
    with pytest.raises(TypeError, match="tensordot: axes must be an int or a pair"):
        T.tensordot(a, b, "x")
    with pytest.raises(TypeError, match="tensordot: the axes of a must be ints"):
        T.tensordot(a, b, ([0.5], [0]))
    with pytest.raises(ValueError, match="tensordot: axis 2 is out of range for a"):
        T.tensordot(a, b, ([2], [0]))
    with pytest.raises(ValueError, match="tensordot: the axes of b, .*, repeat an axis"):
        T.tensordot(a, b, ([0, 1], [1, -2]))
    with pytest.raises(ValueError, match="tensordot: 2 axes of a cannot pair up with 1"):
        T.tensordot(a, b, ([0, 1], [0]))
    with pytest.raises(ValueError, match="TensorDot.*axis 1 of a has length 3, axis 0 of b has "
                                         "length 4"):
        T.tensordot(T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4, 2)),
                    ([1, 0], [0, 1]))
    with pytest.raises(ValueError, match="TensorDot.*has no axis 2"):
        TensorDot((2,), (0,))(a, b)
    with pytest.raises(ValueError, match="TensorDot: axes must be distinct"):
        TensorDot((0, 0), (0, 1))
    with pytest.raises(ValueError, match="TensorDot: .* do not pair up"):
        TensorDot((0,), (0, 1))
    x, y = T.matrix("x"), T.matrix("y")
    with pytest.raises(ValueError, match=r"TensorDot.*shapes \(2, 3\) and \(2, 2\) are not "
                                         r"aligned: axis 1 of a"):
        evaluate(T.tensordot(x, y, ([0, 1], [0, 1])), [x, y],
                 [np.ones((2, 3)), np.ones((2, 2))])


def test_batched_dot_errors():
    with pytest.raises(TypeError, match="batched_dot: input a .* is 0-d"):
        T.batched_dot(T.scalar("s"), T.matrix("m"))
    with pytest.raises(ValueError, match=r"batched_dot: shapes \(2, 3\) and \(4, 3\) are not "
                                         r"aligned: axis 0"):
        T.batched_dot(T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4, 3)))
    with pytest.raises(ValueError, match=r"batched_dot: .*axis 2 of a has length 3, axis 1 of "
                                         r"b has length 4"):
        T.batched_dot(T.tensor("float64", shape=(2, 5, 3)),
                      T.tensor("float64", shape=(2, 4, 6)))
    x, y = T.tensor3("x"), T.tensor3("y")
    with pytest.raises(ValueError, match="MatMul: .*batch axis 0 has lengths 2 and 3"):
        evaluate(T.batched_dot(x, y), [x, y], [np.ones((2, 1, 3)), np.ones((3, 3, 1))])


# -- gradients ---------------------------------------------------------------------------

# Until Elemwise's and DimShuffle's rules land (tensor/elemwise/ops.py), a case with an elementwise
# op or a DimShuffle on the path from input to output cannot be differentiated.
# outer flattens a matrix operand first: Reshape's rule (tensor/shape/ops.py) is needed too.


def product_case(function, *layouts, marks=(), name=None):
    """A GradCase for function(a, b, ...) at random operands whose shapes are `layouts`: one
    letter per axis, each letter a random length from 1 to 3 shared by every operand."""
    label = f"{name or function.__name__}({', '.join(layouts)})"

    def make_point(rng):
        lengths = {letter: int(rng.integers(1, 4)) for letter in sorted(set("".join(layouts)))}
        return [rng.standard_normal([lengths[letter] for letter in layout])
                for layout in layouts]

    case = GradCase(label, function, make_point)
    return pytest.param(case, marks=marks, id=label) if marks else case


def tensordot_over(axes):
    def contract(a, b):
        return T.tensordot(a, b, axes)

    contract.__name__ = f"tensordot[axes={axes}]"
    return contract


GRAD_CASES = [
    # Dot: every pairing of 1-d and 2-d operands.
    product_case(T.dot, "nk", "km"),
    product_case(T.dot, "nk", "k"),
    product_case(T.dot, "k", "km"),
    product_case(T.dot, "k", "k"),
    product_case(Dot(), "nk", "km", name="Dot"),
    # dot of higher ranks: a TensorDot over a's last and b's second-to-last axes.
    product_case(T.dot, "abk", "ckd"),
    product_case(T.dot, "abk", "k"),
    product_case(T.dot, "k", "ckd"),
    product_case(T.dot, "", "nk"),
    # MatMul: batches, operands of different ranks (broadcast over the missing leading
    # axes), and 1-d operands promoted and demoted.
    product_case(T.matmul, "nk", "km"),
    product_case(T.matmul, "bnk", "bkm"),
    product_case(T.matmul, "cbnk", "bkm"),
    product_case(T.matmul, "bnk", "cbkm"),
    product_case(T.matmul, "nk", "bkm"),
    product_case(T.matmul, "k", "bkm"),
    product_case(T.matmul, "bnk", "k"),
    product_case(T.matmul, "k", "km"),
    product_case(T.matmul, "k", "k"),
    product_case(MatMul(), "cbnk", "bkm", name="MatMul"),
    # TensorDot: no, one and several paired axes, in any order.
    product_case(tensordot_over(0), "nk", "m"),
    product_case(tensordot_over(1), "nk", "km"),
    product_case(tensordot_over(2), "abk", "bkc"),
    product_case(tensordot_over(((2, 0), (0, 1))), "abk", "kac"),
    product_case(tensordot_over(((1,), (2,))), "abc", "cdb"),
    product_case(tensordot_over(((0, 1), (1, 0))), "ab", "ba"),
    product_case(tensordot_over(((3, 0), (0, 2))), "abcd", "dxa"),
    product_case(TensorDot((2, 0, 1), (0, 2, 1)), "abc", "cba", name="TensorDot"),
    # Built with elementwise ops and DimShuffle.
    product_case(T.outer, "n", "m"),
    product_case(T.outer, "nk", "m"),
    product_case(T.batched_dot, "bnk", "bkm"),
    product_case(T.batched_dot, "bnk", "bk"),
    product_case(T.batched_dot, "bn", "bn"),
    product_case(T.batched_dot, "bcnk", "bdkm"),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def check_typed_derivatives(build, shapes, static, seed=0):
    """verify_grad's and verify_rop's checks (against finite differences) for operands whose
    types know some lengths, such as length-1 batch axes that broadcast, which GradCase's
    inputs of unknown shape cannot express. The Lop and Rop results must keep the types."""
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(shape) for shape in shapes]
    variables = [symbolic(v, s, name) for v, s, name in zip(values, static, "ab")]
    output = build(*variables)
    cotangent = T.tensor("float64", shape=(None,) * output.type.ndim, name="u")
    tangents = [T.tensor("float64", shape=(None,) * v.type.ndim) for v in variables]
    vjps = Lop(output, variables, cotangent)
    jvp = Rop(output, variables, tangents)
    for gradient, variable in zip(vjps, variables):
        assert gradient.type == variable.type
    assert jvp.type.shape == output.type.shape
    forward = sympile.function(variables, output)
    reference = forward(*values)
    weights = rng.standard_normal(reference.shape)
    directions = [rng.standard_normal(shape) for shape in shapes]
    compiled = sympile.function(variables + [cotangent] + tangents, list(vjps) + [jvp])
    *analytic, forward_mode = compiled(*values, weights, *directions)
    numeric = finite_differences(lambda *point: np.sum(forward(*point) * weights), values)
    for actual, expected in zip(analytic, numeric):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)
    step = 1e-6
    difference = (forward(*[v + step * d for v, d in zip(values, directions)])
                  - forward(*[v - step * d for v, d in zip(values, directions)])) / (2 * step)
    np.testing.assert_allclose(forward_mode, difference, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shapes, static", [
    # a's batch axis broadcasts over b's 4.
    (((1, 2, 3), (4, 3, 2)), ((True, False, False), (False, False, False))),
    # Each operand broadcasts along one batch axis of the other.
    (((3, 1, 2, 3), (1, 4, 3, 2)), ((False, True, False, False), (True, False, False, False))),
    # Broadcast batch axis and a missing leading one, with a 1-d operand.
    (((2, 1, 2, 3), (3,)), ((False, True, False, False), (False,))),
    (((3,), (2, 1, 3, 2)), ((False,), (False, True, False, False))),
    (((2, 3), (5, 1, 3, 4)), ((False, False), (False, True, False, False))),
    # Static lengths everywhere.
    (((1, 2, 3), (4, 3, 2)), ((True, True, True), (True, True, True))),
])
def test_matmul_gradient_sums_over_broadcast_batch_axes(shapes, static):
    check_typed_derivatives(T.matmul, shapes, static)


@pytest.mark.parametrize("build, shapes", [
    (T.dot, ((1, 3), (3, 2))),
    (T.dot, ((3, 1), (1, 2))),
    (T.dot, ((1, 3), (3,))),
    (T.dot, ((3,), (3, 1))),
    (T.dot, ((1,), (1,))),
    (tensordot_over(((1,), (0,))), ((1, 3, 1), (3, 2))),
    (tensordot_over(((0, 2), (2, 0))), ((1, 3, 2), (2, 4, 1))),
])
def test_gradients_keep_the_operands_static_types(build, shapes):
    # Every length known; the cotangent's and tangents' types know none of them.
    check_typed_derivatives(build, shapes, (True, True))


@pytest.mark.parametrize("build, shapes", [
    (T.dot, ((2, 3), (3, 4))),
    (T.dot, ((3,), (3,))),
    (T.matmul, ((2, 2, 3), (3,))),
    (tensordot_over(1), ((2, 3), (3, 4, 2))),
])
def test_gradients_have_the_operands_dtypes(build, shapes):
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(shapes[0]).astype("float32"), rng.standard_normal(shapes[1])]
    a, b = [symbolic(v, False, name) for v, name in zip(values, "ab")]
    output = build(a, b)
    assert output.type.dtype == "float64"
    gradient_a, gradient_b = grad(T.sum(output), [a, b])
    assert (gradient_a.type.dtype, gradient_b.type.dtype) == ("float32", "float64")
    actual_a, actual_b = evaluate([gradient_a, gradient_b], [a, b], values)
    # Finite differences of the same product with a float64 a.
    a64 = T.tensor("float64", shape=(None,) * a.type.ndim)
    forward = sympile.function([a64, b], T.sum(build(a64, b)))
    expected = finite_differences(forward, [values[0].astype("float64"), values[1]])
    np.testing.assert_allclose(actual_a, expected[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual_b, expected[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("build", [T.dot, T.matmul, tensordot_over(1)])
def test_integer_operands_get_no_gradient(build):
    values = [np.arange(6.0).reshape(2, 3), np.arange(12, dtype="int64").reshape(3, 4)]
    a, b = [symbolic(v, False, name) for v, name in zip(values, "ab")]
    output = build(a, b)
    node = output.owner
    gradients = node.op.L_op(node.inputs, node.outputs, [output.type()])
    assert isinstance(gradients[1].type, DisconnectedType)
    assert gradients[0].type == a.type
    actual = evaluate(grad(T.sum(output), a), [a, b], values)
    assert_like_numpy(actual, np.tile(values[1].sum(axis=1), (2, 1)).astype("float64"))
    # Forward mode through the float operand alone: the product of its tangent with b.
    tangent = T.dmatrix("v")
    direction = np.ones((2, 3))
    actual = evaluate(Rop(output, a, tangent), [a, b, tangent], values + [direction])
    assert_like_numpy(actual, np.dot(direction, values[1]).astype("float64"))


def test_disconnected_output_gradient_gives_disconnected_operands():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    for output in [T.dot(a, b), T.matmul(a, b), T.tensordot(a, b, 0)]:
        node = output.owner
        gradients = node.op.L_op(node.inputs, node.outputs, [disconnected_type()])
        assert all(isinstance(g.type, DisconnectedType) for g in gradients)
        assert node.op.R_op(node.inputs, [None, None]) == [None]
