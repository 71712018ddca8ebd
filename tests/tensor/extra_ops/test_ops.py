"""cumsum/cumprod, repeat, diag/diagonal/trace, triu/tril, fill_diagonal and searchsorted
against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import DisconnectedInputError, DisconnectedType, Lop, Rop, grad
from sympile.tensor.extra_ops import (
    AllocDiag,
    CumOp,
    EmbedDiag,
    ExtractDiag,
    FillDiagonal,
    GroupSum,
    Repeat,
    SearchsortedOp,
    Tril,
    Triu,
    cumprod,
    cumsum,
    diag,
    diagonal,
    fill_diagonal,
    repeat,
    searchsorted,
    trace,
    tril,
    triu,
)
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.utils import (
    GradCase,
    arrays,
    assert_like_numpy,
    check_grad_case,
    check_infer_shape,
    evaluate,
    shapes,
)

DTYPES = ["bool", "int8", "uint8", "int32", "uint64", "float16", "float32", "float64",
          "complex128"]
RNG = np.random.default_rng(42)


def symbolic(value):
    return T.tensor(value.dtype, shape=(None,) * value.ndim)


def array_of(dtypes, min_dims=0, max_dims=3, min_side=0):
    return st.sampled_from(dtypes).flatmap(
        lambda dtype: arrays(dtype, shapes(min_dims=min_dims, max_dims=max_dims,
                                           min_side=min_side)))


# ---------------------------------------------------------------------------------------------
# cumsum, cumprod

@given(array_of(DTYPES), st.data())
def test_cumsum_cumprod_like_numpy(value, data):
    axis = data.draw(st.none() | st.integers(-max(value.ndim, 1), max(value.ndim, 1) - 1))
    x = symbolic(value)
    outputs = [cumsum(x, axis), cumprod(x, axis)]
    with np.errstate(all="ignore"):
        expected = [np.cumsum(value, axis=axis), np.cumprod(value, axis=axis)]
    for output, result, wanted in zip(outputs, evaluate(outputs, [x], [value]), expected):
        assert output.type.dtype == wanted.dtype.name
        assert_like_numpy(result, wanted)


@pytest.mark.parametrize("dtype, expected", [("bool", "int64"), ("int8", "int64"),
                                             ("uint8", "uint64"), ("int32", "int64"),
                                             ("float16", "float16"), ("float32", "float32"),
                                             ("complex64", "complex64")])
def test_cumulative_dtypes(dtype, expected):
    x = T.tensor(dtype, shape=(None, None))
    assert cumsum(x).type.dtype == expected
    assert cumprod(x, axis=0).type.dtype == expected


def test_cumulative_static_types_and_methods():
    x = T.tensor("float64", shape=(2, None, 3))
    assert cumsum(x).type.shape == (None,)
    assert cumsum(x, axis=-1).type.shape == (2, None, 3)
    assert cumprod(T.tensor("float64", shape=(2, 5))).type.shape == (10,)
    assert cumsum(T.dscalar()).type.shape == (1,)
    assert cumsum(x, axis=1).owner.op == CumOp(1, "add")
    assert str(CumOp(None, "mul")) == "Cumprod{axis=None}"
    value = RNG.normal(size=(2, 4, 3))
    assert_like_numpy(evaluate(x.cumsum(axis=1), [x], [value]), np.cumsum(value, axis=1))
    assert_like_numpy(evaluate(x.cumprod(), [x], [value]), np.cumprod(value))


@pytest.mark.parametrize("axis", [None, 0, 2])
def test_cumulative_infer_shape(axis):
    x = T.dtensor3("x")
    value = RNG.normal(size=(2, 3, 4))
    check_infer_shape([cumsum(x, axis), cumprod(x, axis)], [x], [value])


def test_cumulative_bad_inputs():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="cumsum: axis 2 is out of bounds for 2 dimensions"):
        cumsum(x, axis=2)
    with pytest.raises(ValueError, match="cumprod: axis -3 is out of bounds"):
        cumprod(x, axis=-3)
    with pytest.raises(ValueError, match="cumsum: axis 1 is out of bounds for 1 dimensions"):
        cumsum(T.dscalar(), axis=1)
    with pytest.raises(TypeError, match="cumsum: axis must be an int, got 0.5"):
        cumsum(x, axis=0.5)
    with pytest.raises(ValueError, match="CumOp: mode must be 'add' or 'mul', got 'max'"):
        CumOp(0, "max")
    with pytest.raises(ValueError, match=r"Cumsum\{axis=2\}: axis 2 is out of bounds"):
        CumOp(2, "add")(x)


# ---------------------------------------------------------------------------------------------
# repeat

@given(array_of(DTYPES, max_dims=3), st.data())
def test_repeat_scalar_count_like_numpy(value, data):
    axis = data.draw(st.none() | st.integers(-value.ndim, value.ndim - 1)) if value.ndim \
        else None
    count = data.draw(st.integers(0, 3))
    x = symbolic(value)
    r = T.lscalar("r")
    constant_output = repeat(x, count, axis=axis)
    symbolic_output = repeat(x, r, axis=axis)
    expected = np.repeat(value, count, axis=axis)
    for result in evaluate([constant_output, symbolic_output], [x, r], [value, count]):
        assert_like_numpy(result, expected)


@given(array_of(DTYPES, min_dims=1, max_dims=3), st.data())
def test_repeat_vector_counts_like_numpy(value, data):
    axis = data.draw(st.none() | st.integers(-value.ndim, value.ndim - 1))
    length = value.size if axis is None else value.shape[axis]
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=length, max_size=length)),
                      dtype=data.draw(st.sampled_from(["int64", "int8", "uint32"])))
    x = symbolic(value)
    r = T.tensor(counts.dtype, shape=(None,))
    outputs = [repeat(x, counts, axis=axis), repeat(x, r, axis=axis)]
    expected = np.repeat(value, counts, axis=axis)
    for result in evaluate(outputs, [x, r], [value, counts]):
        assert_like_numpy(result, expected)


def test_repeat_broadcasts_a_length_one_vector():
    value = RNG.normal(size=(3, 2))
    x = T.dmatrix("x")
    r = T.tensor("int32", shape=(1,))
    output = repeat(x, r, axis=0)
    assert_like_numpy(evaluate(output, [x, r], [value, np.array([2], "int32")]),
                      np.repeat(value, [2], axis=0))
    assert_like_numpy(evaluate(repeat(x, [3]), [x], [value]), np.repeat(value, [3]))
    check_infer_shape(output, [x, r], [value, np.array([2], "int32")])


def test_repeat_static_types():
    x = T.tensor("float32", shape=(2, 3))
    assert repeat(x, 2, axis=1).type == T.tensor_type("float32", (2, 6))
    assert repeat(x, 2).type.shape == (12,)
    assert repeat(x, [1, 0, 4], axis=1).type.shape == (2, 5)
    assert repeat(x, [2], axis=0).type.shape == (4, 3)
    assert repeat(x, T.lscalar(), axis=0).type.shape == (None, 3)
    unknown = T.tensor("int8", shape=(None, 3))
    assert repeat(unknown, 0, axis=0).type.shape == (0, 3)
    assert repeat(unknown, 2, axis=0).type.shape == (None, 3)
    assert repeat(unknown, [1, 2, 3, 4], axis=0).type.shape == (10, 3)
    assert repeat(T.tensor("float32", shape=(0, None)), T.lscalar()).type.shape == (0,)
    assert repeat(x, 2, axis=-1).owner.op == Repeat(1)


def test_repeat_infer_shape():
    x = T.dtensor3("x")
    value = RNG.normal(size=(2, 3, 4))
    r = T.lscalar("r")
    counts = T.ivector("counts")
    check_infer_shape([repeat(x, r, axis=1), repeat(x, r)], [x, r], [value, 3])
    check_infer_shape([repeat(x, counts, axis=2)], [x, counts],
                      [value, np.array([0, 1, 2, 5], "int32")])
    check_infer_shape([repeat(x, counts)], [x, counts], [value, np.ones(24, "int32")])


def test_repeat_bad_inputs():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match="repeats must have an integer dtype, got "
                                        r"TensorType\(float64"):
        repeat(x, 2.0)
    with pytest.raises(TypeError, match="repeats must have an integer dtype"):
        repeat(x, T.bvector().astype("bool"))
    with pytest.raises(TypeError, match="repeats must be an integer scalar or vector"):
        repeat(x, T.lmatrix())
    with pytest.raises(ValueError, match="repeat: axis 2 is out of bounds for 2 dimensions"):
        repeat(x, 2, axis=2)
    with pytest.raises(ValueError, match="repeat: axis 0 is out of bounds for 0 dimensions"):
        repeat(T.dscalar(), 2, axis=0)
    with pytest.raises(ValueError, match="repeats must be >= 0"):
        repeat(x, -1)
    with pytest.raises(ValueError, match="repeats has 3 entries but the repeated axis has "
                                         "length 2"):
        repeat(T.tensor("float64", shape=(2, None)), [1, 2, 3], axis=0)
    r = T.lscalar("r")
    counts = T.lvector("counts")
    with pytest.raises(ValueError, match="repeat: repeats must be >= 0"):
        evaluate(repeat(x, r), [x, r], [np.zeros((2, 2)), -2])
    with pytest.raises(ValueError, match="repeats has 1 entries but the repeated axis has "
                                         "length 3; a repeats vector is broadcast only when"):
        evaluate(repeat(x, counts, axis=1), [x, counts], [np.zeros((2, 3)), np.array([2])])


def test_repeat_method():
    x = T.ivector("x")
    value = np.array([1, 2, 3], "int32")
    assert_like_numpy(evaluate(x.repeat(2), [x], [value]), np.repeat(value, 2))


# ---------------------------------------------------------------------------------------------
# diag, diagonal, trace

@given(array_of(DTYPES, min_dims=1, max_dims=1), st.integers(-3, 3))
def test_diag_of_vector_like_numpy(value, k):
    v = symbolic(value)
    output = diag(v, k)
    assert isinstance(output.owner.op, AllocDiag)
    assert_like_numpy(evaluate(output, [v], [value]), np.diag(value, k))
    check_infer_shape(output, [v], [value])


@given(array_of(DTYPES, min_dims=2, max_dims=2), st.integers(-4, 4))
def test_diag_of_matrix_like_numpy(value, k):
    x = symbolic(value)
    output = diag(x, k)
    assert isinstance(output.owner.op, ExtractDiag)
    assert_like_numpy(evaluate(output, [x], [value]), np.diag(value, k))
    check_infer_shape(output, [x], [value])


@st.composite
def diagonal_cases(draw):
    value = draw(array_of(DTYPES, min_dims=2, max_dims=4))
    axis1, axis2 = draw(st.lists(st.integers(-value.ndim, value.ndim - 1), min_size=2,
                                 max_size=2).filter(
        lambda axes: axes[0] % value.ndim != axes[1] % value.ndim))
    return value, draw(st.integers(-4, 4)), axis1, axis2


@given(diagonal_cases())
def test_diagonal_and_trace_like_numpy(case):
    value, offset, axis1, axis2 = case
    x = symbolic(value)
    output = diagonal(x, offset, axis1, axis2)
    total = trace(x, offset, axis1, axis2)
    result, result_trace = evaluate([output, total], [x], [value])
    assert_like_numpy(result, np.diagonal(value, offset, axis1, axis2))
    assert result.flags.writeable
    assert_like_numpy(result_trace, np.trace(value, offset, axis1, axis2))
    assert total.type.dtype == np.trace(value, offset, axis1, axis2).dtype.name
    check_infer_shape(output, [x], [value])


def test_diagonal_returns_a_copy():
    x = T.dmatrix("x")
    value = RNG.normal(size=(3, 3))
    result = evaluate(diagonal(x), [x], [value])
    assert not np.shares_memory(result, value)
    assert ExtractDiag().view_map == {}


def test_diagonal_static_types():
    x = T.tensor("float32", shape=(2, 5, 3))
    assert diagonal(x).type == T.tensor_type("float32", (3, 2))
    assert diagonal(x, 1, 1, 2).type.shape == (2, 2)
    assert diagonal(x, -1, 1, 2).type.shape == (2, 3)
    assert diagonal(x, 4, 0, 2).type.shape == (5, 0)
    assert diagonal(x, 0, 2, 0).type.shape == (5, 2)
    unknown = T.tensor("float32", shape=(None, 4))
    assert diagonal(unknown).type.shape == (None,)
    assert diagonal(unknown, 4).type.shape == (0,)
    assert diagonal(T.tensor("float32", shape=(0, None)), -1).type.shape == (0,)
    assert diag(T.tensor("int8", shape=(3,)), -2).type == T.tensor_type("int8", (5, 5))
    assert diag(T.bvector(), 1).type.shape == (None, None)
    assert diag(T.tensor("int8", shape=(3, 4)), 2).type.shape == (2,)
    assert diag(T.constant([[1, 2], [3, 4]])).type.shape == (2,)
    assert diagonal(x, np.int64(1)).owner.op == ExtractDiag(1, 0, 1)
    assert diag(T.dvector(), T.constant(2)).owner.op == AllocDiag(2)


@pytest.mark.parametrize("dtype, expected", [("int8", "int64"), ("uint8", "uint64"),
                                             ("bool", "int64"), ("float32", "float32")])
def test_trace_dtypes(dtype, expected):
    x = T.tensor(dtype, shape=(None, None))
    value = (RNG.uniform(0, 4, size=(3, 3))).astype(dtype)
    output = trace(x)
    assert output.type == T.tensor_type(expected, ())
    assert_like_numpy(evaluate(output, [x], [value]), np.trace(value))
    assert_like_numpy(evaluate(x.trace(offset=1), [x], [value]), np.trace(value, 1))


def test_diagonal_method():
    x = T.dtensor3("x")
    value = RNG.normal(size=(2, 3, 4))
    assert_like_numpy(evaluate(x.diagonal(1, 2, 1), [x], [value]),
                      np.diagonal(value, 1, 2, 1))


def test_diag_bad_inputs():
    with pytest.raises(ValueError, match="diag: expected a 1-d or 2-d input, got "
                                         r"TensorType\(float64, 3D\)"):
        diag(T.dtensor3())
    with pytest.raises(ValueError, match="diag: expected a 1-d or 2-d input"):
        diag(T.dscalar())
    with pytest.raises(TypeError, match="diag: k must be a constant int .* got the symbolic"):
        diag(T.dvector(), T.lscalar("k"))
    with pytest.raises(TypeError, match="diag: k must be an int, got 1.5"):
        diag(T.dvector(), 1.5)
    with pytest.raises(TypeError, match=r"AllocDiag\{offset=0, axis1=0, axis2=3\}: expected "
                                        r"a tensor of at least 3 axes"):
        AllocDiag(0, 0, 3)(T.dmatrix())
    with pytest.raises(ValueError, match="AllocDiag: axis1 and axis2 must be two different"):
        AllocDiag(0, 1, 1)


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_alloc_diag_on_any_axes(ndim, mode):
    """Theano's AllocDiag(offset, axis1, axis2): v's last axis on the diagonal of the output's
    axes (axis1, axis2), read back by numpy.diagonal; its shape graph and gradient."""
    value = RNG.normal(size=(4,) * ndim)
    x = T.tensor("float64", shape=(None,) * ndim)
    for offset, axis1, axis2 in [(0, 0, 1), (1, 0, 1), (-2, 0, 1), (0, 1, ndim),
                                 (-1, ndim, 0), (2, ndim - 1, ndim)]:
        if axis1 == axis2:
            continue
        op = AllocDiag(offset, axis1, axis2)
        output, shape = sympile.function([x], [op(x), op(x).shape], mode=mode)(value)
        assert_like_numpy(np.diagonal(output, offset, axis1, axis2), value)
        assert np.count_nonzero(output) == value.size and tuple(shape) == output.shape
        check_grad_case(GradCase(f"AllocDiag{(offset, axis1, axis2)}", op,
                                 lambda rng: [rng.normal(size=(3,) * ndim)]))


def test_diagonal_bad_inputs():
    x = T.dtensor3("x")
    with pytest.raises(ValueError, match="diagonal: expected an input with at least 2 dim"):
        diagonal(T.dvector())
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 must be different axes, "
                                         "got 0 and -3"):
        diagonal(x, 0, 0, -3)
    with pytest.raises(ValueError, match="diagonal: axis2 3 is out of bounds for 3 dimensions"):
        diagonal(x, 0, 0, 3)
    with pytest.raises(TypeError, match="diagonal: axis1 must be an int, got None"):
        diagonal(x, 0, None, 1)
    with pytest.raises(TypeError, match="diagonal: offset must be a constant int"):
        diagonal(x, T.iscalar())
    with pytest.raises(TypeError, match="diagonal: offset must be a constant int"):
        trace(x, T.iscalar())
    with pytest.raises(ValueError, match="diagonal: expected an input with at least 2"):
        trace(T.dvector())
    with pytest.raises(ValueError, match="ExtractDiag: axis1 and axis2 must be distinct"):
        ExtractDiag(0, 1, 1)
    with pytest.raises(ValueError, match=r"ExtractDiag\{.*\}: axes 0 and 2 are not both axes"):
        ExtractDiag(0, 0, 2)(T.dmatrix())


# ---------------------------------------------------------------------------------------------
# triu, tril

@given(array_of(DTYPES, min_dims=1, max_dims=4), st.integers(-3, 3))
def test_triu_tril_like_numpy(value, k):
    x = symbolic(value)
    k_variable = T.lscalar("k")
    outputs = [triu(x, k), tril(x, k), triu(x, k_variable), tril(x, k_variable)]
    expected = [np.triu(value, k), np.tril(value, k)] * 2
    for output, result, wanted in zip(outputs, evaluate(outputs, [x, k_variable], [value, k]),
                                      expected):
        assert output.type.dtype == wanted.dtype.name
        assert_like_numpy(result, wanted)
    check_infer_shape(outputs[:2], [x], [value])


def test_triangles_zero_nans_exactly():
    value = np.array([[np.nan, np.inf], [-np.inf, np.nan]])
    x = T.dmatrix("x")
    upper, lower = evaluate([triu(x), tril(x)], [x], [value])
    assert_like_numpy(upper, np.triu(value))
    assert_like_numpy(lower, np.tril(value))


def test_triangle_static_types():
    x = T.tensor("float32", shape=(2, None, 3))
    assert triu(x).type == x.type
    assert tril(x, -1).type == x.type
    assert triu(T.tensor("int16", shape=(4,))).type == T.tensor_type("int16", (4, 4))
    assert tril(T.wvector()).type.shape == (None, None)
    assert tril(x, 2).owner.op == Tril()
    assert triu(x).owner.op == Triu() != Tril()


def test_triangle_bad_inputs():
    with pytest.raises(ValueError, match="triu: expected an input with at least 1 dimension"):
        triu(T.dscalar())
    with pytest.raises(TypeError, match="tril: k must be an integer scalar, got "
                                        r"TensorType\(float64"):
        tril(T.dmatrix(), 1.0)
    with pytest.raises(TypeError, match="triu: k must be an integer scalar"):
        triu(T.dmatrix(), T.lvector())


# ---------------------------------------------------------------------------------------------
# fill_diagonal

@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (3, 3, 3), (2, 2, 2, 2), (0, 3)])
@pytest.mark.parametrize("dtype", ["int8", "float32", "complex64", "bool"])
def test_fill_diagonal_like_numpy(shape, dtype):
    value = RNG.normal(size=shape).astype(dtype)
    a = symbolic(value)
    fill = True if dtype == "bool" else 5
    expected = value.copy()
    np.fill_diagonal(expected, fill)
    output = fill_diagonal(a, fill)
    assert output.type == a.type
    original = value.copy()
    assert_like_numpy(evaluate(output, [a], [value]), expected)
    np.testing.assert_array_equal(value, original)
    check_infer_shape(output, [a], [value])


def test_fill_diagonal_symbolic_value():
    a = T.fmatrix("a")
    val = T.bscalar("val")
    value = RNG.normal(size=(3, 4)).astype("float32")
    expected = value.copy()
    np.fill_diagonal(expected, -3)
    assert_like_numpy(evaluate(fill_diagonal(a, val), [a, val], [value, -3]), expected)
    expected = value.copy()
    np.fill_diagonal(expected, 0.25)
    assert_like_numpy(evaluate(fill_diagonal(a, 0.25), [a], [value]), expected)
    assert isinstance(fill_diagonal(a, 0.25).owner.op, FillDiagonal)


def test_fill_diagonal_bad_inputs():
    with pytest.raises(TypeError, match="FillDiagonal: expected an input with at least 2 dim"):
        fill_diagonal(T.dvector(), 1.0)
    with pytest.raises(TypeError, match="FillDiagonal: val must be a scalar"):
        fill_diagonal(T.dmatrix(), T.dvector())
    with pytest.raises(TypeError, match="val 1.5 does not fit the dtype int32 of a"):
        fill_diagonal(T.imatrix(), 1.5)
    with pytest.raises(TypeError, match="val 300 does not fit the dtype int8 of a"):
        fill_diagonal(T.bmatrix(), 300)
    with pytest.raises(TypeError, match="does not fit the dtype int64 of a"):
        fill_diagonal(T.lmatrix(), 2**70)
    with pytest.raises(TypeError, match="val of dtype float64 cannot be stored in a of dtype "
                                        "float32 without losing precision"):
        fill_diagonal(T.fmatrix(), T.dscalar())
    with pytest.raises(ValueError, match="a 3-d input must have all its lengths equal"):
        fill_diagonal(T.tensor("float64", shape=(2, None, 3)), 1.0)
    a = T.dtensor3("a")
    with pytest.raises(ValueError, match=r"fill_diagonal: a 3-d input must have all its "
                                         r"lengths equal, got shape \(2, 2, 3\)"):
        evaluate(fill_diagonal(a, 1.0), [a], [np.zeros((2, 2, 3))])


# ---------------------------------------------------------------------------------------------
# searchsorted

SORTABLE_DTYPES = ["int8", "uint16", "int64", "float32", "float64"]


@given(st.sampled_from(SORTABLE_DTYPES), st.data())
def test_searchsorted_like_numpy(dtype, data):
    # Few distinct values, so that searched values often equal entries of a (left != right).
    elements = st.integers(0, 6)
    a_value = np.sort(data.draw(arrays(dtype, shapes(1, 1), elements=elements)))
    v_value = data.draw(arrays(dtype, shapes(0, 3), elements=elements))
    a = T.tensor(dtype, shape=(None,))
    v = symbolic(v_value)
    outputs = [searchsorted(a, v), searchsorted(a, v, side="right")]
    assert all(o.type == T.tensor_type("int64", (None,) * v_value.ndim) for o in outputs)
    left, right = evaluate(outputs, [a, v], [a_value, v_value])
    assert_like_numpy(left, np.searchsorted(a_value, v_value))
    assert_like_numpy(right, np.searchsorted(a_value, v_value, side="right"))
    check_infer_shape(outputs, [a, v], [a_value, v_value])


def test_searchsorted_with_sorter_and_nans():
    a_value = np.array([3.0, np.nan, 1.0, 2.0])
    sorter_value = np.argsort(a_value, kind="stable")
    v_value = np.array([[0.5, 2.0], [np.nan, 9.0]])
    a = T.dvector("a")
    v = T.dmatrix("v")
    sorter = T.lvector("sorter")
    output = searchsorted(a, v, side="right", sorter=sorter)
    assert isinstance(output.owner.op, SearchsortedOp)
    assert_like_numpy(evaluate(output, [a, v, sorter], [a_value, v_value, sorter_value]),
                      np.searchsorted(a_value, v_value, side="right", sorter=sorter_value))
    assert_like_numpy(evaluate(searchsorted(a, 2.5), [a], [np.array([1.0, 2.0, 3.0])]),
                      np.searchsorted([1.0, 2.0, 3.0], 2.5))
    assert searchsorted(T.constant([1, 2]), T.constant([[1, 2, 3]])).type.shape == (1, 3)


def test_searchsorted_bad_inputs():
    a = T.dvector("a")
    with pytest.raises(TypeError, match=r"SearchsortedOp\{side='left'\}: a must be a vector"):
        searchsorted(T.dmatrix(), 1.0)
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right', got "
                                         "'middle'"):
        searchsorted(a, 1.0, side="middle")
    with pytest.raises(ValueError, match="SearchsortedOp: side must be"):
        SearchsortedOp("up")
    with pytest.raises(TypeError, match="sorter must be an integer vector, got "
                                        r"TensorType\(float64"):
        searchsorted(a, 1.0, sorter=T.dvector())
    with pytest.raises(ValueError, match="sorter has 2 entries but a has 3"):
        searchsorted(T.constant([1.0, 2.0, 3.0]), 1.0, sorter=[0, 1])
    sorter = T.lvector("sorter")
    with pytest.raises(ValueError, match="searchsorted: sorter has 2 entries but a has 3"):
        evaluate(searchsorted(a, 1.0, sorter=sorter), [a, sorter],
                 [np.array([1.0, 2.0, 3.0]), np.array([0, 1])])


# ---------------------------------------------------------------------------------------------
# Gradients

TABLE_RNG = np.random.default_rng(20240602)


def random_shape(ndim, low=2, high=5):
    return tuple(int(n) for n in TABLE_RNG.integers(low, high, size=ndim))


def normal_point(*shapes):
    return lambda rng: [rng.standard_normal(shape) for shape in shapes]


def with_zeros(shape, axis):
    """Values of magnitude 0.5 to 1.5 in which line k along `axis` holds (k + 1) % 3 zeros at
    random places (for axis None the flattened array, with two): cumprod's products with one
    zero, several zeros and none."""
    def make_point(rng):
        values = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
        if axis is None:
            values.reshape(-1)[rng.permutation(values.size)[:2]] = 0
            return [values]
        lines = np.moveaxis(values, axis, -1).copy()
        flat = lines.reshape(-1, shape[axis])
        for index, line in enumerate(flat):
            line[rng.permutation(line.size)[:(index + 1) % 3]] = 0
        return [np.moveaxis(flat.reshape(lines.shape), -1, axis)]

    return make_point


def cumulative_case(function, ndim, axis, zeros=False):
    shape = random_shape(ndim)
    point = with_zeros(shape, axis) if zeros else normal_point(shape)
    label = f"{function.__name__}({shape}, axis={axis}{', zeros' if zeros else ''})"
    return GradCase(label, lambda x: function(x, axis), point)


def repeat_case(ndim, repeats, axis):
    shape = random_shape(ndim)
    if repeats == "vector":
        length = int(np.prod(shape)) if axis is None else shape[axis]
        repeats = TABLE_RNG.integers(0, 3, size=length)
    return GradCase(f"repeat({shape}, {repeats!r}, axis={axis})",
                    lambda x: repeat(x, repeats, axis), normal_point(shape))


def diagonal_case(ndim, offset, axis1, axis2, function=diagonal):
    shape = random_shape(ndim)
    return GradCase(f"{function.__name__}({shape}, {offset}, {axis1}, {axis2})",
                    lambda x: function(x, offset, axis1, axis2), normal_point(shape))


def triangle_case(function, ndim, k):
    shape = random_shape(ndim)
    return GradCase(f"{function.__name__}({shape}, k={k})", lambda x: function(x, k),
                    normal_point(shape))


def fill_diagonal_case(shape):
    return GradCase(f"fill_diagonal({shape})", fill_diagonal, normal_point(shape, ()))


GROUP_COUNTS = np.array([2, 0, 3, 1])
EMBED_LIKE = np.zeros((3, 2, 4))

GRAD_CASES = [
    cumulative_case(cumsum, 0, None),
    cumulative_case(cumsum, 1, 0),
    cumulative_case(cumsum, 2, None),
    cumulative_case(cumsum, 2, -1),
    cumulative_case(cumsum, 3, 1),
    cumulative_case(cumprod, 0, None),
    cumulative_case(cumprod, 1, -1),
    cumulative_case(cumprod, 2, 0),
    cumulative_case(cumprod, 3, None),
    # cumprod at zeros: lines with no zero, one zero, two zeros (Theano's rule gives NaN).
    cumulative_case(cumprod, 1, 0, zeros=True),
    cumulative_case(cumprod, 2, 0, zeros=True),
    cumulative_case(cumprod, 2, -1, zeros=True),
    cumulative_case(cumprod, 3, 1, zeros=True),
    cumulative_case(cumprod, 2, None, zeros=True),
    GradCase("cumprod(0.0)", cumprod, lambda rng: [np.array(0.0)]),
    repeat_case(1, 3, 0),
    repeat_case(2, 2, None),
    repeat_case(3, 2, -1),
    repeat_case(2, 0, 1),
    repeat_case(2, [3], 0),
    repeat_case(2, "vector", 1),
    repeat_case(3, "vector", -3),
    repeat_case(2, "vector", None),
    GradCase("GroupSum(axis=1)", lambda y: GroupSum(1)(y, GROUP_COUNTS, np.zeros((2, 4))),
             normal_point((2, 6))),
    GradCase("diag(vector, 0)", diag, normal_point(random_shape(1))),
    GradCase("diag(vector, 2)", lambda v: diag(v, 2), normal_point(random_shape(1))),
    GradCase("diag(vector, -1)", lambda v: diag(v, -1), normal_point(random_shape(1))),
    GradCase("diag(matrix, 0)", diag, normal_point(random_shape(2))),
    GradCase("diag(matrix, 1)", lambda x: diag(x, 1), normal_point(random_shape(2))),
    GradCase("diag(matrix, -2)", lambda x: diag(x, -2), normal_point(random_shape(2, 3, 6))),
    diagonal_case(3, 1, 2, 0),
    diagonal_case(3, -1, -1, 1),
    diagonal_case(4, 0, 1, 3),
    GradCase("EmbedDiag(1, 2, 0)", lambda d: EmbedDiag(1, 2, 0)(d, EMBED_LIKE),
             normal_point((2, 2))),
    diagonal_case(2, 0, 0, 1, function=trace),
    diagonal_case(2, -1, 1, 0, function=trace),
    diagonal_case(3, 1, 0, 2, function=trace),
    triangle_case(triu, 2, 0),
    triangle_case(triu, 2, 1),
    triangle_case(tril, 2, -1),
    triangle_case(tril, 1, 0),
    triangle_case(triu, 1, -1),
    triangle_case(tril, 3, 1),
    triangle_case(triu, 4, -2),
    fill_diagonal_case((3, 3)),
    fill_diagonal_case((4, 2)),
    fill_diagonal_case((2, 5)),
    fill_diagonal_case((3, 3, 3)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_gradients(case):
    check_grad_case(case)


def cumprod_jacobian(line):
    """d cumprod(line)_i / d line_j = prod_{k <= i, k != j} line_k for j <= i, by brute force."""
    n = line.size
    jacobian = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            jacobian[i, j] = np.prod(np.delete(line[:i + 1], j))
    return jacobian


@pytest.mark.parametrize("line", [[0.0, 2.0, 0.0, 3.0, -1.0], [2.0, 0.5, 0.0, 4.0],
                                  [1.5, -2.0, 0.5], [0.0, 0.0, 0.0]])
def test_cumprod_derivatives_exact_at_zeros(line):
    line = np.array(line)
    x, u = T.dvector("x"), T.dvector("u")
    backward = sympile.function([x, u], Lop(cumprod(x), x, u))
    forward = sympile.function([x, u], Rop(cumprod(x), x, u))
    jacobian = cumprod_jacobian(line)
    for basis in np.eye(line.size):
        assert_like_numpy(backward(line, basis), jacobian.T @ basis)
        assert_like_numpy(forward(line, basis), jacobian @ basis)


def test_gradient_types_match_the_inputs():
    x = T.tensor("float64", shape=(3, None, 1))
    cube = T.tensor("float64", shape=(3, None, 3))
    vector = T.tensor("float64", shape=(4,))
    cases = [(x, cumsum(x)), (x, cumprod(x, 1)), (x, cumsum(x, -1)), (x, repeat(x, 2, 1)),
             (x, repeat(x, [1, 2, 0], 0)), (x, repeat(x, 3)), (x, diagonal(x, 0, 0, 2)),
             (x, triu(x)), (cube, fill_diagonal(cube, 1.0)), (vector, diag(vector, 1)),
             (vector, tril(vector)), (x, trace(x, 0, 0, 1))]
    for variable, output in cases:
        cotangent = T.tensor("float64", shape=(None,) * output.type.ndim)
        assert Lop(output, variable, cotangent).type == variable.type, output.owner.op
        tangent = Rop(output, variable, T.tensor("float64", shape=(None,) * variable.type.ndim))
        assert tangent.type.ndim == output.type.ndim


def test_fill_diagonal_tangents():
    a, val = T.dmatrix("a"), T.dscalar("val")
    tangent_a, tangent_val = T.dmatrix("tangent_a"), T.dscalar("tangent_val")
    output = fill_diagonal(a, val)
    inputs = [a, val, tangent_a, tangent_val]
    values = [np.arange(6.0).reshape(2, 3), 2.0, np.ones((2, 3)), 5.0]
    # Only val moves: the diagonal moves with it. Only a moves: all but the diagonal.
    assert_like_numpy(evaluate(Rop(output, val, tangent_val), inputs, values),
                      [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]])
    assert_like_numpy(evaluate(Rop(output, a, tangent_a), inputs, values),
                      [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    assert_like_numpy(evaluate(Rop(output, [a, val], [tangent_a, tangent_val]), inputs, values),
                      [[5.0, 1.0, 1.0], [1.0, 5.0, 1.0]])
    gradient_a, gradient_val = evaluate(Lop(output, [a, val], tangent_a), inputs, values)
    assert_like_numpy(gradient_a, [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    assert_like_numpy(gradient_val, np.float64(2.0))


def test_integer_arguments_are_disconnected():
    x = T.dmatrix("x")
    r, k = T.lscalar("r"), T.lscalar("k")
    with pytest.raises(DisconnectedInputError, match="the cost does not depend on r"):
        grad(T.sum(repeat(x, r)), r)
    with pytest.raises(DisconnectedInputError, match="the cost does not depend on k"):
        grad(T.sum(triu(x, k)), k)
    a, v = T.dvector("a"), T.dvector("v")
    positions = searchsorted(a, v)
    for variable in (a, v):
        with pytest.raises(DisconnectedInputError, match="the cost does not depend on"):
            grad(T.sum(T.cast(positions, "float64")), variable)
    with pytest.raises(ValueError, match="does not depend on the wrt variables"):
        Rop(positions, v, T.dvector())
    patterns = {
        repeat(x, r): [[True], [False]], tril(x, k): [[True], [False]],
        searchsorted(a, v, sorter=T.lvector()): [[False], [False], [False]],
        GroupSum(0)(x, r, x): [[True], [False], [False]],
        EmbedDiag()(v, x): [[True], [False]],
    }
    for output, pattern in patterns.items():
        assert output.owner.op.connection_pattern(output.owner) == pattern
    gradients = SearchsortedOp().L_op([a, v], [positions], [T.lvector()])
    assert all(isinstance(g.type, DisconnectedType) for g in gradients)


@pytest.mark.parametrize("counts, axis", [([2, 0, 3, 1], 0), ([0, 0, 0, 0], 0), (2, 1),
                                          ([1], 1), (0, 0)])
def test_group_sum_is_the_transpose_of_repeat(counts, axis):
    rng = np.random.default_rng(5)
    like = np.zeros((4, 3))
    counts = np.array(counts)
    y_value = rng.normal(size=np.repeat(like, counts, axis=axis).shape)
    y, x = T.dmatrix("y"), T.dmatrix("x")
    repeats = T.tensor("int64", shape=(None,) * counts.ndim if counts.shape != (1,) else (1,))
    output = GroupSum(axis)(y, repeats, x)
    result = evaluate(output, [y, repeats, x], [y_value, counts, like])
    groups = like.shape[axis]
    per_group = np.broadcast_to(counts, (groups,))
    pieces = np.split(y_value, np.cumsum(per_group)[:-1], axis=axis)
    expected = np.stack([piece.sum(axis=axis) for piece in pieces], axis=axis)
    assert_like_numpy(result, expected)
    check_infer_shape(output, [y, repeats, x], [y_value, counts, like])
    assert output.type.shape == (None, None)
    assert GroupSum(1)(T.tensor("float64", shape=(2, 6)), GROUP_COUNTS,
                       T.tensor("float64", shape=(2, 4))).type.shape == (2, 4)


def test_group_sum_bad_inputs():
    y = T.dmatrix("y")
    with pytest.raises(ValueError, match=r"GroupSum\{axis=2\}: expected y and like with the "
                                         "same number of dimensions"):
        GroupSum(2)(y, 1, y)
    with pytest.raises(ValueError, match="expected y and like with the same number"):
        GroupSum(0)(y, 1, T.dvector())
    with pytest.raises(TypeError, match="repeats must be an integer scalar or vector, got "
                                        r"TensorType\(float64"):
        GroupSum(0)(y, 1.0, y)
    counts = T.lvector("counts")
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="GroupSum: 2 groups of repeats .* do not split the 3 "
                                         "entries of y along axis 0"):
        evaluate(GroupSum(0)(y, counts, x), [y, counts, x],
                 [np.zeros((3, 1)), np.array([1, 1]), np.zeros((2, 1))])


def test_embed_diag_is_the_transpose_of_extract_diag():
    rng = np.random.default_rng(6)
    like = np.zeros((3, 2, 5))
    for offset, axis1, axis2 in [(0, 0, 2), (2, 2, 0), (-1, 0, 1), (7, 0, 2)]:
        d_value = rng.normal(size=np.diagonal(like, offset, axis1, axis2).shape)
        d, x = T.tensor("float64", shape=(None,) * 2), T.dtensor3("x")
        output = EmbedDiag(offset, axis1, axis2)(d, x)
        result = evaluate(output, [d, x], [d_value, like])
        assert_like_numpy(np.diagonal(result, offset, axis1, axis2), d_value)
        assert np.count_nonzero(result) == np.count_nonzero(d_value)
        check_infer_shape(output, [d, x], [d_value, like])
    assert EmbedDiag(1, 0, 2)(T.dmatrix(), T.tensor("float64", shape=(3, None, 4))).type \
        .shape == (3, None, 4)


def test_embed_diag_bad_inputs():
    with pytest.raises(ValueError, match="EmbedDiag: axis1 and axis2 must be distinct"):
        EmbedDiag(0, 2, 2)
    with pytest.raises(ValueError, match=r"EmbedDiag\{.*\}: expected like with axes 0 and 1 "
                                         "and a diagonal of one dimension less"):
        EmbedDiag()(T.dmatrix(), T.dmatrix())
    with pytest.raises(TypeError, match="EmbedDiag: offset must be an int"):
        EmbedDiag(0.5)
    d, x = T.dvector("d"), T.dmatrix("x")
    with pytest.raises(ValueError, match=r"EmbedDiag: the diagonal has shape \(3,\), expected "
                                         r"\(2,\) for an input of shape \(2, 4\)"):
        evaluate(EmbedDiag()(d, x), [d, x], [np.zeros(3), np.zeros((2, 4))])


# ---------------------------------------------------------------------------------------------
# choose, compress

CHOOSE_MODES = ["raise", "wrap", "clip"]


@given(st.sampled_from(CHOOSE_MODES), st.integers(1, 4), st.data())
def test_choose_like_numpy(mode, count, data):
    shape = data.draw(shapes(min_dims=0, max_dims=3, min_side=1))
    low, high = (0, count - 1) if mode == "raise" else (-2 * count, 2 * count)
    index = data.draw(arrays("int64", shape).map(lambda a: np.clip(a, low, high)))
    dtypes = data.draw(st.lists(st.sampled_from(["int8", "int32", "float32", "float64"]),
                                min_size=count, max_size=count))
    # Each choice has the full shape, or lacks leading axes (numpy broadcasting).
    choices = [RNG.normal(size=shape[data.draw(st.integers(0, len(shape))):]).astype(dtype)
               * 10 for dtype in dtypes]
    a = symbolic(index)
    variables = [symbolic(c) for c in choices]
    output = T.choose(a, variables, mode=mode)
    values = [index, *choices]
    assert_like_numpy(evaluate(output, [a, *variables], values),
                      np.choose(index, choices, mode=mode))
    check_infer_shape(output, [a, *variables], values)


def test_choose_broadcasts_only_declared_axes_and_reports_bad_indices():
    a, c0, c1 = T.lvector("a"), T.dvector("c0"), T.dvector("c1")
    f = sympile.function([a, c0, c1], T.choose(a, [c0, c1]))
    with pytest.raises(ValueError, match="choose: .*there are 2 choices"):
        f(np.array([0, 2]), np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="type does not say the axis is broadcastable"):
        f(np.array([0, 1]), np.zeros(1), np.ones(2))
    column = T.col("column")
    g = sympile.function([a, column, c1], T.choose(a, [column, c1]))
    assert_like_numpy(g(np.array([0, 1]), np.array([[7.0], [8.0]]), np.ones(2)),
                      [[7.0, 1.0], [8.0, 1.0]])


def test_choose_arguments():
    a = T.lvector("a")
    stacked = T.tensor("float64", shape=(3, None))
    assert_like_numpy(evaluate(a.choose(stacked), [a, stacked],
                               [np.array([2, 0]), np.arange(6.0).reshape(3, 2)]),
                      np.choose([2, 0], np.arange(6.0).reshape(3, 2)))
    with pytest.raises(ValueError, match="choices must be a sequence or a tensor of at least "
                                         "one axis"):
        T.choose(a, T.dscalar())
    with pytest.raises(TypeError, match="choose: a must hold integers"):
        T.choose(T.dvector(), [T.dvector()])
    with pytest.raises(ValueError, match="mode must be"):
        T.choose(a, [T.dvector()], mode="nearest")
    with pytest.raises(ValueError, match="choices must not be empty"):
        T.choose(a, [])


@pytest.mark.parametrize("mode", CHOOSE_MODES)
def test_choose_from_a_tensor_of_any_length(mode):
    """numpy.choose(a, array): the choices along a tensor's first axis, its length unknown
    until the function runs; broadcasting, shape, errors and the gradient."""
    rng = np.random.default_rng(5)
    index = rng.integers(-3, 6, size=(4, 5)) if mode != "raise" else \
        rng.integers(0, 3, size=(4, 5))
    a, stacked, rows = T.lmatrix("a"), T.dtensor3("stacked"), T.dmatrix("rows")
    values = rng.normal(size=(3, 4, 5))
    f = sympile.function([a, stacked], [T.choose(a, stacked, mode=mode),
                                        a.choose(stacked, mode=mode).shape])
    chosen, shape = f(index, values)
    assert_like_numpy(chosen, np.choose(index, values, mode=mode))
    assert tuple(shape) == (4, 5)
    # The choices' items (5,) broadcast against a (4, 5).
    g = sympile.function([a, rows], T.choose(a, rows, mode=mode))
    assert_like_numpy(g(index, values[:, 0]), np.choose(index, values[:, 0], mode=mode))
    check_grad_case(GradCase(f"choose from a tensor {mode}", lambda c: T.choose(
        T.constant(index), c, mode=mode), lambda rng: [rng.normal(size=(3, 5))]))
    with pytest.raises(ValueError, match=r"choose: a of shape \(4, 5\) and choices of shape "
                                         r"\(4, 6\) cannot be broadcast"):
        f(index, rng.normal(size=(3, 4, 6)))
    if mode == "raise":
        with pytest.raises(ValueError, match="there are 2 choices"):
            f(index, values[:2])


@pytest.mark.parametrize("mode", CHOOSE_MODES)
def test_choose_gradients(mode):
    index = np.array([[0, 2, 1], [-1, 3, 0]]) if mode != "raise" else \
        np.array([[0, 2, 1], [1, 2, 0]])

    def fun(x, row, column):
        return T.choose(T.constant(index), [x, row.dimshuffle("x", 0),
                                            column.dimshuffle(0, "x")], mode=mode)

    check_grad_case(GradCase(f"choose {mode}", fun, lambda rng: [
        rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=2)]))
    a = T.lvector("a")
    x = T.dvector("x")
    assert isinstance(grad(T.choose(a, [x, x * 2]).sum(), [a, x],
                           disconnected_inputs="ignore", return_disconnected="disconnected")[0]
                      .type, DisconnectedType)


@given(array_of(DTYPES, min_dims=1, max_dims=3), st.data())
def test_compress_like_numpy(value, data):
    axis = data.draw(st.sampled_from([None, *range(value.ndim)]))
    length = value.size if axis is None else value.shape[axis]
    condition = np.array(data.draw(st.lists(st.booleans(), max_size=length)), dtype=bool)
    x, c = symbolic(value), T.bvector("condition")
    assert_like_numpy(evaluate(T.compress(c, x, axis=axis), [c, x], [condition, value]),
                      np.compress(condition, value, axis=axis))
    assert_like_numpy(evaluate(x.compress(c, axis=axis), [c, x], [condition, value]),
                      value.compress(condition, axis=axis))


def test_compress_bad_condition():
    with pytest.raises(ValueError, match="compress: condition must be 1-d"):
        T.compress(T.bmatrix(), T.dvector())
    c, x = T.bvector("c"), T.dvector("x")
    with pytest.raises(IndexError):
        evaluate(T.compress(c, x), [c, x], [np.array([0, 0, 1], dtype="int8"), np.zeros(2)])
