"""sort and argsort against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sympile
import sympile.tensor as T
from sympile.compile.mode import Mode, get_mode
from sympile.gradient import DisconnectedInputError, DisconnectedType, Lop, Rop, grad, verify_grad
from sympile.tensor.sort import (
    ArgSortOp,
    PermuteAlongAxis,
    SortOp,
    argsort,
    argtopk,
    sort,
    topk,
    topk_and_argtopk,
)
from tests.link.c.utils import C_MODE, PYTHON_MODE, compare_backends, requires_compiler
from tests.utils import (
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)

DTYPES = ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64"]


def symbolic(value):
    return T.tensor(value.dtype, shape=(None,) * value.ndim)


@st.composite
def array_and_axis(draw, dtypes=DTYPES, min_dims=1):
    dtype = draw(st.sampled_from(dtypes))
    value = draw(arrays(dtype, shapes(min_dims=min_dims, max_dims=3)))
    axis = draw(st.none() | st.integers(-value.ndim, value.ndim - 1))
    return value, axis


# Few distinct values, so that ties (and -0.0 == 0.0) are common; NaNs and infinities too.
SPECIAL_FLOATS = st.sampled_from([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.0, 1.5])


def tie_arrays(dtype):
    if np.dtype(dtype).kind == "f":
        elements = SPECIAL_FLOATS
    else:
        elements = st.integers(0, 3)
    return hnp.arrays(dtype, shapes(min_dims=1, max_dims=3), elements=elements)


@given(array_and_axis())
def test_sort_like_numpy(case):
    value, axis = case
    x = symbolic(value)
    output = sort(x, axis=axis)
    assert output.type.dtype == value.dtype.name
    assert_like_numpy(evaluate(output, [x], [value]), np.sort(value, axis=axis))


@given(array_and_axis())
def test_argsort_like_numpy_stable(case):
    value, axis = case
    x = symbolic(value)
    output = argsort(x, axis=axis)
    assert output.type.dtype == "int64"
    assert_like_numpy(evaluate(output, [x], [value]), np.argsort(value, axis=axis, kind="stable"))


@given(st.sampled_from(["int8", "float16", "float64"]).flatmap(tie_arrays), st.data())
def test_ties_nans_and_signed_zeros(value, data):
    axis = data.draw(st.none() | st.integers(-value.ndim, value.ndim - 1))
    x = symbolic(value)
    sorted_value, indices = evaluate([sort(x, axis, kind="stable"), argsort(x, axis)], [x],
                                     [value])
    expected = np.sort(value, axis=axis, kind="stable")
    assert_like_numpy(sorted_value, expected)
    # Signed zeros are equal for assert_like_numpy; their order must match numpy's too.
    np.testing.assert_array_equal(np.signbit(sorted_value), np.signbit(expected))
    assert_like_numpy(indices, np.argsort(value, axis=axis, kind="stable"))


def test_nans_sorted_last():
    value = np.array([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf])
    x = T.dvector("x")
    sorted_value, indices = evaluate([sort(x), argsort(x)], [x], [value])
    assert_like_numpy(sorted_value, [-np.inf, -1.0, 3.0, np.inf, np.nan, np.nan])
    assert_like_numpy(indices, [5, 2, 0, 3, 1, 4])


@pytest.mark.parametrize("kind", ["quicksort", "mergesort", "heapsort", "stable"])
def test_sort_kinds(kind):
    value = np.random.default_rng(0).normal(size=(4, 50)).astype("float32")
    x = T.fmatrix("x")
    output = sort(x, axis=0, kind=kind)
    assert output.owner.op == SortOp(0, kind)
    assert_like_numpy(evaluate(output, [x], [value]), np.sort(value, axis=0, kind=kind))


def test_argsort_accepts_every_kind_and_stays_stable():
    value = np.array([1, 0, 1, 0, 1, 0, 1, 0] * 4, dtype="int16")
    x = T.wvector("x")
    for kind in ["quicksort", "mergesort", "heapsort", "stable"]:
        result = evaluate(argsort(x, kind=kind), [x], [value])
        assert_like_numpy(result, np.argsort(value, kind="stable"))


def test_zero_dimensional_input():
    x = T.dscalar("x")
    assert_like_numpy(evaluate(sort(x, axis=None), [x], [2.5]), np.sort(np.float64(2.5), None))
    for axis in (0, -1, None):
        output = argsort(x, axis=axis)
        assert output.type.shape == (1,)
        assert_like_numpy(evaluate(output, [x], [2.5]), np.argsort(np.float64(2.5), axis=axis))
    with pytest.raises(ValueError, match="sort: axis -1 is out of bounds for 0 dimensions"):
        sort(x)
    with pytest.raises(ValueError, match="argsort: axis 1 is out of bounds for 1 dimensions"):
        argsort(x, axis=1)


def test_static_output_types():
    x = T.tensor("int32", shape=(2, None, 3))
    assert sort(x).type == T.tensor_type("int32", (2, None, 3))
    assert sort(x, axis=None).type == T.tensor_type("int32", (None,))
    assert argsort(x, axis=1).type == T.tensor_type("int64", (2, None, 3))
    known = T.tensor("float32", shape=(2, 4, 3))
    assert sort(known, axis=None).type.shape == (24,)
    assert argsort(known, axis=None).type.shape == (24,)
    empty = T.tensor("float32", shape=(None, 0))
    assert sort(empty, axis=None).type.shape == (0,)
    constant = T.constant([[3, 1], [2, 0]])
    assert sort(constant).type.shape == (2, 2)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_infer_shape(axis):
    x = T.tensor("float64", shape=(None, 3, None))
    value = np.random.default_rng(1).normal(size=(2, 3, 4))
    check_infer_shape([sort(x, axis=axis), argsort(x, axis=axis)], [x], [value])


def test_methods_and_op_identity():
    x = T.dmatrix("x")
    value = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    assert_like_numpy(evaluate(x.sort(axis=0), [x], [value]), np.sort(value, axis=0))
    assert_like_numpy(evaluate(x.argsort(), [x], [value]), np.argsort(value, kind="stable"))
    assert sort(x).owner.op == SortOp(1, "quicksort")
    assert hash(ArgSortOp(0)) == hash(ArgSortOp(0))
    assert ArgSortOp(0) != ArgSortOp(1)
    assert sort(x, axis=-2).owner.op == sort(x, axis=0).owner.op


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_symbolic_axis(mode):
    """Theano's sort and argsort take the axis as a scalar variable (an integer, or a float
    holding an integer, as Theano's tests pass), chosen when the function runs; the
    gradient follows the chosen axis."""
    rng = np.random.default_rng(3)
    value = rng.standard_normal((3, 4, 2))
    x, axis, float_axis = T.dtensor3("x"), T.lscalar("axis"), T.dscalar("axis")
    sort_f = sympile.function([x, float_axis], T.sort(x, float_axis, "mergesort"), mode=mode)
    argsort_f = sympile.function([x, axis], T.argsort(x, axis), mode=mode)
    gradient = grad((T.sort(x, axis) * T.arange(24).reshape((3, 4, 2))).sum(), x)
    gradient_f = sympile.function([x, axis], gradient, mode=mode)
    for a in (0, 1, 2, -1, -3):
        np.testing.assert_array_equal(sort_f(value, float(a)), np.sort(value, a))
        np.testing.assert_array_equal(argsort_f(value, a), np.argsort(value, a, kind="stable"))
        fixed = grad((T.sort(x, a) * T.arange(24).reshape((3, 4, 2))).sum(), x)
        np.testing.assert_array_equal(gradient_f(value, a),
                                      sympile.function([x], fixed, mode=mode)(value))
    for bad in (3, -4):
        with pytest.raises(AssertionError, match=r"argsort: axis must be an integer in "
                                                 r"\[-3, 3\)"):
            argsort_f(value, bad)
    with pytest.raises(AssertionError, match="sort: axis must be an integer"):
        sort_f(value, 0.5)
    # A constant scalar is read now: one sort op.
    assert isinstance(T.sort(x, T.constant(1)).owner.op, SortOp)
    assert T.argsort(x, T.constant(2.0)).owner.op == ArgSortOp(2)
    with pytest.raises(ValueError, match="sort: axis must be an integer, got the constant 1.5"):
        T.sort(x, T.constant(1.5))
    with pytest.raises(TypeError, match="sort: axis must be an int or a numeric scalar"):
        T.sort(x, T.lvector())
    with pytest.raises(ValueError, match="a 0-d x has no axis to choose"):
        T.sort(T.dscalar(), axis)


def test_bad_inputs():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match=r"sort: axis 2 is out of bounds for 2 dimensions"):
        sort(x, axis=2)
    with pytest.raises(ValueError, match=r"argsort: axis -3 is out of bounds"):
        argsort(x, axis=-3)
    with pytest.raises(TypeError, match="sort: axis must be an int, got 1.0"):
        sort(x, axis=1.0)
    with pytest.raises(TypeError, match=r"argsort: axis must be an int, got \(0, 1\)"):
        argsort(x, axis=(0, 1))
    with pytest.raises(ValueError, match="sort: kind must be one of .* got 'bubble'"):
        sort(x, kind="bubble")
    with pytest.raises(ValueError, match="argsort: kind must be one of"):
        argsort(x, kind="fast")
    with pytest.raises(ValueError, match=r"SortOp: axis must be >= 0 \(normalized\), got -1"):
        SortOp(-1)
    with pytest.raises(TypeError, match="ArgSortOp: axis must be an int or None, got 'last'"):
        ArgSortOp("last")
    with pytest.raises(ValueError, match=r"ArgSortOp\{axis=3\}: axis 3 is out of bounds"):
        ArgSortOp(3)(x)
    with pytest.raises(TypeError, match="sort, input x: cannot convert"):
        sort("abc")


# ---------------------------------------------------------------------------------------------
# Gradients

TABLE_RNG = np.random.default_rng(20240601)


def random_shape(ndim):
    return tuple(int(n) for n in TABLE_RNG.integers(2, 5, size=ndim))


def distinct_values(shape):
    """Values at least 0.3 apart (a shuffled grid, jittered), so the sorting permutation is
    unique and stays the same under the finite-difference steps."""
    size = int(np.prod(shape, dtype=int))

    def make_point(rng):
        grid = rng.permutation(size) * 0.3 + rng.uniform(-0.05, 0.05, size) - size * 0.15
        return [grid.reshape(shape)]

    return make_point


def sort_case(ndim, axis, kind="quicksort"):
    shape = random_shape(ndim)
    return GradCase(f"sort({shape}, axis={axis}, kind={kind})",
                    lambda x: sort(x, axis=axis, kind=kind), distinct_values(shape))


def permute_case(ndim, axis, inverse):
    shape = random_shape(ndim)
    permutation = np.argsort(TABLE_RNG.uniform(size=shape), axis=axis)
    return GradCase(f"PermuteAlongAxis({shape}, axis={axis}, inverse={inverse})",
                    lambda x: PermuteAlongAxis(axis, inverse)(x, permutation),
                    lambda rng: [rng.standard_normal(shape)])


GRAD_CASES = [
    sort_case(1, -1),
    sort_case(1, 0, kind="stable"),
    sort_case(1, None),
    sort_case(0, None),
    sort_case(2, 0),
    sort_case(2, -1, kind="heapsort"),
    sort_case(2, None),
    sort_case(3, 1, kind="mergesort"),
    sort_case(3, -3),
    sort_case(3, None),
    permute_case(1, 0, False),
    permute_case(2, 1, True),
    permute_case(3, 0, False),
    permute_case(3, 2, True),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def test_sort_gradient_follows_the_permutation():
    value = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    weights = np.array([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    x, u = T.dmatrix("x"), T.dmatrix("u")
    gradient = Lop(sort(x, axis=1), x, u)
    # Row 0 sorts to [1, 2, 3]: x[0, 1] gets u[0, 0], x[0, 2] gets u[0, 1], x[0, 0] u[0, 2].
    assert_like_numpy(evaluate(gradient, [x, u], [value, weights]),
                      [[30.0, 10.0, 20.0], [2.0, 1.0, 3.0]])
    tangent = evaluate(Rop(sort(x, axis=None), x, u), [x, u], [value, weights])
    assert_like_numpy(tangent, weights.reshape(-1)[np.argsort(value, axis=None)])


def test_gradient_types_match_the_inputs():
    x = T.tensor("float64", shape=(3, None, 1))
    for axis in (0, 1, 2, None):
        output = sort(x, axis=axis)
        cotangent = T.tensor("float64", shape=(None,) * output.type.ndim)
        assert Lop(output, x, cotangent).type == x.type
        tangent = Rop(output, x, T.tensor("float64", shape=(None,) * 3))
        assert tangent.type.ndim == output.type.ndim
    vector = T.dvector("v")
    permutation = T.lvector("p")
    scattered = PermuteAlongAxis(0, True)(T.tensor("float64", shape=(4,)), permutation)
    assert scattered.type == T.tensor_type("float64", (4,))
    assert Lop(PermuteAlongAxis(0)(vector, permutation), vector, T.dvector()).type == \
        vector.type


def test_argsort_is_disconnected():
    x = T.dmatrix("x")
    indices = argsort(x, axis=0)
    assert indices.owner.op.connection_pattern(indices.owner) == [[False]]
    (gradient,) = ArgSortOp(0).L_op([x], [indices], [T.dmatrix()])
    assert isinstance(gradient.type, DisconnectedType)
    with pytest.raises(DisconnectedInputError, match="the cost does not depend on x"):
        grad(T.sum(T.cast(indices, "float64")), x)
    with pytest.raises(ValueError, match="does not depend on the wrt variables"):
        Rop(indices, x, T.dmatrix())
    # The permutation a sort's gradient goes through is disconnected too.
    p = T.lmatrix("p")
    node = PermuteAlongAxis(1)(x, p).owner
    assert node.op.connection_pattern(node) == [[True], [False]]


def test_permute_along_axis_like_numpy():
    rng = np.random.default_rng(3)
    value = rng.normal(size=(3, 4, 2))
    permutation = np.argsort(rng.uniform(size=value.shape), axis=1)
    x, p = T.dtensor3("x"), T.tensor("int64", shape=(None, None, None))
    gathered = PermuteAlongAxis(1)(x, p)
    scattered = PermuteAlongAxis(1, inverse=True)(x, p)
    result, inverse = evaluate([gathered, scattered], [x, p], [value, permutation])
    assert_like_numpy(result, np.take_along_axis(value, permutation, axis=1))
    expected = np.empty_like(value)
    np.put_along_axis(expected, permutation, value, axis=1)
    assert_like_numpy(inverse, expected)
    assert_like_numpy(evaluate(PermuteAlongAxis(1, True)(gathered, p), [x, p],
                               [value, permutation]), value)
    check_infer_shape([gathered, scattered], [x, p], [value, permutation])
    assert PermuteAlongAxis(1) != PermuteAlongAxis(1, True)
    assert PermuteAlongAxis(0, True) == PermuteAlongAxis(0, inverse=True)


def test_permute_along_axis_bad_inputs():
    x = T.dmatrix("x")
    p = T.lmatrix("p")
    with pytest.raises(TypeError, match="PermuteAlongAxis: axis must be an int >= 0, got -1"):
        PermuteAlongAxis(-1)
    with pytest.raises(ValueError, match=r"PermuteAlongAxis\{.*\}: axis 2 is out of bounds"):
        PermuteAlongAxis(2)(x, p)
    with pytest.raises(TypeError, match="permutation must be an integer tensor of x's 2 dim"):
        PermuteAlongAxis(0)(x, T.dmatrix())
    with pytest.raises(TypeError, match="permutation must be an integer tensor"):
        PermuteAlongAxis(0)(x, T.lvector())
    with pytest.raises(ValueError, match="differ in length on axis 1"):
        PermuteAlongAxis(0)(T.tensor("float64", shape=(2, 3)), T.tensor("int64", shape=(2, 4)))
    value = np.zeros((2, 3))
    gathered = PermuteAlongAxis(1)(x, p)
    with pytest.raises(ValueError, match="is not a permutation along axis 1"):
        evaluate(gathered, [x, p], [value, np.array([[0, 1, 1], [2, 1, 0]])])
    with pytest.raises(ValueError, match=r"entries must lie in \[0, 3\)"):
        evaluate(gathered, [x, p], [value, np.array([[0, 1, 3], [2, 1, 0]])])
    with pytest.raises(ValueError, match=r"permutation has shape \(2, 2\), x has \(2, 3\)"):
        evaluate(gathered, [x, p], [value, np.array([[0, 1], [1, 0]])])


# -- topk, argtopk, topk_and_argtopk (Theano's) -------------------------------------------

def _numpy_topk(value, kth, axis):
    """The reference: the kth largest (largest first) or -kth smallest (smallest first)."""
    order = np.argsort(value, axis=axis, kind="stable")
    length = value.shape[axis]
    positions = length - 1 - np.arange(kth) if kth > 0 else np.arange(-kth)
    indices = np.take(order, positions, axis=axis)
    return np.take_along_axis(value, indices, axis=axis), indices


@requires_compiler
@pytest.mark.parametrize("kth, axis", [(2, -1), (-2, -1), (1, 0), (-3, 0), (4, 1)])
def test_topk_and_argtopk_are_numpys_on_both_backends(kth, axis):
    x = T.dmatrix("x")
    value = np.array([[3.0, np.nan, 2.0, -1.0], [0.0, 5.0, 5.0, -np.inf], [7.0, -0.0, 1.0, 2.0]])
    values, indices = compare_backends(list(topk_and_argtopk(x, kth, axis)), [x], [value])
    expected_values, expected_indices = _numpy_topk(value, kth, axis)
    assert_like_numpy(values, expected_values)
    assert_like_numpy(indices, expected_indices)
    assert_like_numpy(evaluate(topk(x, kth, axis), [x], [value]), expected_values)
    small = evaluate(argtopk(x, kth, axis, idx_dtype="int32"), [x], [value])
    assert small.dtype == np.int32


def test_topk_with_a_symbolic_kth_and_its_gradient():
    x, k = T.dmatrix("x"), T.lscalar("k")
    value = np.random.default_rng(3).standard_normal((3, 5))
    for kth in (3, -2):
        expected, _ = _numpy_topk(value, kth, 1)
        assert_like_numpy(evaluate(topk(x, k, 1), [x, k], [value, kth]), expected)
        verify_grad(lambda a, kth=kth: topk(a, kth, 1), [value], rng=np.random.default_rng(4))
    tangent = T.dmatrix("t")
    rop = evaluate(Rop(topk(x, 2), x, tangent), [x, tangent], [value, value * 10])
    assert_like_numpy(rop, _numpy_topk(value, 2, 1)[0] * 10)


def test_topk_errors_name_the_function_and_argument():
    with pytest.raises(ValueError, match="topk: x must have at least one axis"):
        topk(T.dscalar(), 1)
    with pytest.raises(ValueError, match="kth must be nonzero"):
        topk(T.dvector(), 0)
    with pytest.raises(ValueError, match="at most the length of axis 0"):
        argtopk(T.tensor("float64", shape=(3,)), 4)
    with pytest.raises(TypeError, match="argtopk: kth must be an integer scalar"):
        argtopk(T.dvector(), T.dscalar())


@requires_compiler
def test_topk_op_is_one_node_with_theano_s_options():
    x, k = T.dtensor3("x"), T.iscalar("k")
    value = np.random.default_rng(5).standard_normal((2, 3, 4))
    # axis=None works on the flattened x, as in Theano.
    flat = compare_backends(T.topk(x, 3, axis=None), [x], [value])
    assert_like_numpy(flat, np.sort(value, axis=None)[::-1][:3])
    values, indices = T.topk_and_argtopk(x, k, axis=1, idx_dtype="int16")
    assert values.owner is indices.owner and isinstance(values.owner.op, T.TopKOp)
    got_values, got_indices = compare_backends([values, indices], [x, k],
                                               [value, np.int32(-2)])
    order = np.argsort(value, axis=1, kind="stable")[:, :2]
    assert_like_numpy(got_indices, order.astype("int16"))
    assert_like_numpy(got_values, np.take_along_axis(value, order, 1))
    only_indices = T.TopKOp(axis=0, return_values=False)(x, 1)
    assert_like_numpy(compare_backends(only_indices, [x], [value]),
                      np.argsort(value, axis=0, kind="stable")[-1:])
    for mode in (C_MODE, PYTHON_MODE):
        function = sympile.function([x, k], values, mode=mode)
        for symbolic_kth in (0, 4, -4):
            with pytest.raises(ValueError, match="kth must be nonzero and at most the length "
                                                 "of axis 1 \\(3\\)"):
                function(value, np.int32(symbolic_kth))
    with pytest.raises(TypeError, match="idx_dtype must be an integer dtype"):
        T.TopKOp(idx_dtype="float32")


def test_an_unused_topk_output_is_not_computed():
    x = T.dmatrix("x")
    value = np.random.default_rng(6).standard_normal((3, 4))
    recording = Mode(get_mode("FAST_RUN").rewriter, record_history=True)
    for output, kept in [(T.topk(x, 2), (True, False)), (T.argtopk(x, -2), (False, True)),
                         (list(T.topk_and_argtopk(x, 2)), (True, True))]:
        f = sympile.function([x], output, mode=recording)
        (node,) = [node for node in f.maker.fgraph.toposort() if isinstance(node.op, T.TopKOp)]
        assert (node.op.return_values, node.op.return_indices) == kept
        assert ("local_useless_topk" in f.maker.fgraph.rewrite_history.names()) == (
            kept != (True, True))
    np.testing.assert_array_equal(sympile.function([x], T.argtopk(x, -2))(value),
                                  np.argsort(value, axis=-1, kind="stable")[:, :2])
