"""Theano's op classes and helpers that its programs and tests construct by name (issue 36):
Tri, AllocEmpty, Tile, MaxAndArgmax, Mean, Rebroadcast, PermuteRowElements, NoneConst,
get_vector_length, extract_constant, ceil_intdiv, T._shared, rebuild_collect_shared,
theano.scalar.sharedvar, theano.gof.fg, theano.gpuarray, tensor.opt's MakeVector and
Shape_i, the linkers of theano.gof. Values against numpy, gradients numerically, shapes
without running the op."""

from __future__ import annotations

import numpy as np
import pytest

import sympile as theano
import sympile.gpuarray
import sympile.scalar.sharedvar
import sympile.tensor as T
from sympile.gradient import verify_grad
from sympile.graph.basic import toposort
from sympile.tensor.shape.ops import MakeVector, ShapeI
from tests.link.c.utils import C_MODE, requires_compiler

RNG = np.random.default_rng(36)
MODES = [None, pytest.param(C_MODE, marks=requires_compiler)]


def _shape_graph_lacks(op_class, inputs, output, values):
    """output.shape computes the output's shape without running `op_class`, and right."""
    shape_function = theano.function(inputs, output.shape, on_unused_input="ignore")
    nodes = shape_function.maker.fgraph.apply_nodes
    assert not any(isinstance(node.op, op_class) for node in nodes)
    expected = theano.function(inputs, output)(*values).shape
    assert tuple(shape_function(*values)) == expected


@pytest.mark.parametrize("mode", MODES)
def test_tri_and_alloc_empty(mode):
    n, m, k = T.iscalar("n"), T.iscalar("m"), T.iscalar("k")
    tri = T.Tri("int8")(n, m, k)
    empty = T.AllocEmpty("float32")(n, 3)
    f = theano.function([n, m, k], [tri, empty, T.tri(n, None, k)], mode=mode)
    for args in [(3, 4, 0), (4, 2, -1), (2, 5, 2), (0, 3, 0)]:
        got_tri, got_empty, square = f(*args)
        np.testing.assert_array_equal(got_tri, np.tri(*args, dtype="int8"))
        assert got_tri.dtype == np.int8
        assert got_empty.shape == (args[0], 3) and got_empty.dtype == np.float32
        np.testing.assert_array_equal(square, np.tri(args[0], args[0], args[2]))
    _shape_graph_lacks(T.Tri, [n, m, k], tri, [3, 5, 1])
    _shape_graph_lacks(T.AllocEmpty, [n], T.AllocEmpty("float64")(n, n + 1), [4])
    with pytest.raises(ValueError, match="negative"):
        f(-1, 2, 0)


@pytest.mark.parametrize("mode", MODES)
def test_tile_op_matches_numpy_and_its_gradient(mode):
    x, reps = T.dmatrix("x"), T.ivector("reps")
    tiled = T.Tile(3)(x, reps)
    f = theano.function([x, reps], tiled, mode=mode)
    value = RNG.random((2, 3))
    for counts in [(1, 2, 3), (2, 1, 1), (1, 0, 2)]:
        np.testing.assert_array_equal(f(value, np.array(counts, "int32")),
                                      np.tile(value, counts))
    _shape_graph_lacks(T.Tile, [x, reps], tiled, [value, np.array([2, 2, 3], "int32")])
    counts = np.array([2, 3, 2], "int32")
    verify_grad(lambda v: T.Tile(3)(v, counts), [value], rng=RNG)
    with pytest.raises(TypeError, match="reps must be an integer vector of 3"):
        T.Tile(3)(x, T.dvector())
    with pytest.raises(ValueError, match="reps must hold 3 lengths"):
        f(value, np.array([1, 2], "int32"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
def test_max_and_argmax_op(mode, axis):
    x = T.dmatrix("x")
    maximum, argmax = T.MaxAndArgmax(axis if axis != -1 else 1)(x)
    value = RNG.standard_normal((4, 5))
    got = theano.function([x], [maximum, argmax], mode=mode)(value)
    np_axis = None if axis in (None, (0, 1)) else axis
    np.testing.assert_array_equal(got[0], np.max(value, axis=np_axis))
    np.testing.assert_array_equal(got[1], np.argmax(value, axis=np_axis))
    assert got[1].dtype == np.int64
    _shape_graph_lacks(T.MaxAndArgmax, [x], maximum, [value])
    verify_grad(lambda v: T.MaxAndArgmax(axis if axis != -1 else 1)(v)[0], [value], rng=RNG)


def test_mean_op_dtypes_values_and_gradient():
    x, i = T.dtensor3("x"), T.imatrix("i")
    value = RNG.random((2, 3, 4))
    for axis in [None, 0, (0, 2), 2]:
        got = theano.function([x], T.Mean(axis)(x))(value)
        np.testing.assert_allclose(got, np.mean(value, axis=axis), rtol=1e-15)
        verify_grad(lambda v, axis=axis: T.Mean(axis)(v), [value], rng=RNG)
    assert T.Mean(1)(i).dtype == "float64"
    integers = np.arange(6, dtype="int32").reshape(2, 3)
    np.testing.assert_array_equal(theano.function([i], T.Mean(1)(i))(integers),
                                  integers.mean(axis=1))
    _shape_graph_lacks(T.Mean, [x], T.Mean((0, 2))(x), [value])


def test_rebroadcast_declares_checks_and_passes_the_gradient():
    x, v = T.dmatrix("x"), T.dvector("v")
    row = T.Rebroadcast((0, True), (1, False))(x)
    assert row.type.shape == (1, None)
    assert T.Rebroadcast((1, False))(T.row()).type.shape == (1, None)
    f = theano.function([x, v], [row + v, T.grad((row * v).sum(), x)])
    total, gradient = f(np.ones((1, 3)), np.arange(3.0))
    np.testing.assert_array_equal(total, [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(gradient, [[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="axis 0 has length 2, not 1"):
        f(np.ones((2, 3)), np.arange(3.0))
    with pytest.raises(ValueError, match="has length 3, not 1"):
        T.Rebroadcast((0, True))(T.tensor("float64", shape=(3, None)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("inverse", [0, 1])
def test_permute_row_elements_op(mode, inverse):
    op = T.PermuteRowElements()
    x, y = T.dmatrix("x"), T.ivector("y")
    v, rows = T.dvector("v"), T.imatrix("rows")
    value = RNG.random((3, 5))
    permutation = RNG.permutation(5).astype("int32")
    permutations = np.array([RNG.permutation(5) for _ in range(4)], dtype="int32")
    f = theano.function([x, y, v, rows], [op(x, y, inverse), op(v, rows, inverse),
                                          T.permute_row_elements(x, y, inverse)], mode=mode)
    by_one, by_rows, reference = f(value, permutation, value[0], permutations)
    np.testing.assert_array_equal(by_one, reference)
    if inverse:
        expected = np.empty((4, 5))
        np.put_along_axis(expected, permutations, np.broadcast_to(value[0], (4, 5)), axis=1)
    else:
        expected = value[0][permutations]
    np.testing.assert_array_equal(by_rows, expected)
    verify_grad(lambda a: op(a, permutation, inverse), [value], rng=RNG)
    # x broadcast over y's rows: its gradient sums over them.
    verify_grad(lambda a: op(a, permutations, inverse), [value[0]], rng=RNG)
    _shape_graph_lacks(T.PermuteRowElements, [v, rows], op(v, rows, inverse),
                       [value[0], permutations])
    with pytest.raises(ValueError, match="not a permutation"):
        f(value, np.zeros(5, "int32"), value[0], permutations)


def test_none_const_and_constant_axes():
    x = T.dmatrix("x")
    value = RNG.random((3, 4))
    outputs = [*T.max_and_argmax(x, T.NoneConst.clone()), *T.max_and_argmax(x, T.constant(0)),
               x.sum(axis=T.constant(1)), T.mean(x, axis=T.NoneConst)]
    got = theano.function([x], outputs)(value)
    expected = [value.max(), value.argmax(), value.max(0), value.argmax(0), value.sum(1),
                value.mean()]
    for result, reference in zip(got, expected):
        np.testing.assert_allclose(result, reference, rtol=1e-15)
    with pytest.raises(TypeError, match="axis must be known when the graph is built"):
        x.sum(axis=T.iscalar())
    with pytest.raises(TypeError, match="expected None"):
        T.NoneConst.type.filter(0)


def test_get_vector_length_and_extract_constant():
    x = T.dtensor3()
    assert T.get_vector_length(x.shape) == 3
    assert T.get_vector_length(T.stack([T.iscalar(), T.iscalar()])) == 2
    assert T.get_vector_length(np.arange(4)) == 4
    assert T.get_vector_length(T.tensor("int64", shape=(5,))) == 5
    with pytest.raises(ValueError, match="not known before the function runs"):
        T.get_vector_length(T.lvector())
    with pytest.raises(TypeError, match="expected a vector"):
        T.get_vector_length(T.lmatrix())
    constant = T.constant(3)
    extracted = T.extract_constant(constant)
    extracted += 1
    assert T.extract_constant(constant) == 3 and constant.data == 3
    assert T.extract_constant(T.constant(2.0) * 3) == 6.0
    variable = T.dscalar()
    assert T.extract_constant(variable) is variable


def test_ceil_intdiv_matches_numpy():
    a, b = T.ivector(), T.ivector()
    left = np.array([7, -7, 6, 0, 5, -9], dtype="int32")
    right = np.array([2, 2, 3, 4, -2, -4], dtype="int32")
    got = theano.function([a, b], T.ceil_intdiv(a, b))(left, right)
    np.testing.assert_array_equal(got, -(-left // right))
    assert got.dtype == np.int32


def test_theano_shared_constructors():
    host = T._shared(np.zeros(3, "float32"), name="w")
    assert isinstance(host, T.sharedvar.TensorSharedVariable) and host.type.dtype == "float32"
    counter = theano.scalar.sharedvar.shared(1, "i")
    assert counter.type == theano.scalar.get_scalar_type("int64")
    f = theano.function([], T.tensor_from_scalar(counter) * 2,
                        updates=[(counter, T.scalar_from_tensor(T.tensor_from_scalar(counter)
                                                                + 1))])
    assert f() == 2 and f() == 4 and counter.get_value() == 3
    with pytest.raises(TypeError, match="expected a number"):
        theano.scalar.sharedvar.shared("one")
    assert theano.compile.get_default_mode() is theano.compile.mode.get_default_mode()


def test_rebuild_collect_shared():
    from sympile.compile.pfunc import rebuild_collect_shared

    x, z = T.dvector("x"), T.dvector("z")
    weight = theano.shared(2.0, "weight")
    stepped = theano.shared(0.0, "stepped")
    stepped.default_update = stepped + 1
    output = x * weight + stepped
    inputs, copied, (clone_d, update_d, update_expr, shared_inputs) = rebuild_collect_shared(
        output, [x], updates=[(weight, weight * 2)])
    assert inputs == [x] and copied is not output and clone_d[output] is copied
    assert set(shared_inputs) == {weight, stepped}
    assert [target for target, _ in update_expr] == [weight, stepped]
    assert update_d[weight] is dict(update_expr)[weight]
    inputs, copied, _ = rebuild_collect_shared([output], [z], replace={x: z},
                                               no_default_updates=True)
    assert theano.function(inputs, copied)(np.array([1.0, 2.0]))[0].tolist() == [2.0, 4.0]
    inputs, _, _ = rebuild_collect_shared(output, [x], copy_inputs_over=False)
    assert inputs[0] is not x and inputs[0].type == x.type
    with pytest.raises(TypeError, match="cannot be an explicit input"):
        rebuild_collect_shared(output, [weight])
    with pytest.raises(TypeError, match="must be Variables or Out"):
        rebuild_collect_shared([output, 3], [x])


def test_module_paths():
    assert theano.gof.fg.FunctionGraph is theano.gof.FunctionGraph
    assert theano.gof.fg.MissingInputError is theano.gof.MissingInputError
    assert theano.gpuarray.GpuFromHost is theano.gpu.GpuFromHost
    assert T.opt.Shape_i is ShapeI and T.opt.MakeVector is MakeVector
    nodes = toposort(T.opt.Shape_i(1)(T.dmatrix()))
    assert str(nodes[-1].op) == "Shape_i{1}"


def test_rng_mrg_names():
    from sympile.sandbox import rng_mrg
    from sympile.tensor.random.op import MRGUniform

    streams = rng_mrg.MRG_RandomStreams(seed=3)
    streams.uniform(size=(4,))
    streams.uniform(size=(4,))
    (first, draw, *_), (second, *_) = streams.state_updates
    assert isinstance(draw.owner.op, rng_mrg.mrg_uniform) and rng_mrg.mrg_uniform is MRGUniform
    # Theano's stream layout: each random variable starts 2^134 steps after the one before.
    np.testing.assert_array_equal(rng_mrg.ff_2p134(first.get_value()[0]),
                                  second.get_value()[0])


@pytest.mark.parametrize("linker", [theano.gof.PerformLinker,
                                    pytest.param(theano.gof.CLinker, marks=requires_compiler),
                                    pytest.param(theano.gof.OpWiseCLinker,
                                                 marks=requires_compiler)])
def test_theano_linkers_run_the_graph_as_it_stands(linker):
    x, y = T.dmatrix("x"), T.drow("y")
    total = x + y
    single = linker().accept(theano.gof.FunctionGraph([x, y], [total])).make_function()
    both = linker().accept(theano.gof.FunctionGraph([x, y], [total, T.exp(x)])).make_function()
    left, right = RNG.random((2, 3)), RNG.random((1, 3))
    np.testing.assert_array_equal(single(left, right), left + right)
    first, second = both(left, right)
    np.testing.assert_array_equal(first, left + right)
    np.testing.assert_allclose(second, np.exp(left), rtol=1e-15)
    # An inplace op of the graph runs as it stands (Theano's linkers accept them).
    inplace = T.inplace.exp_inplace(x)
    result = linker().accept(theano.gof.FunctionGraph([x], [inplace])).make_function()(
        left.copy())
    np.testing.assert_allclose(result, np.exp(left), rtol=1e-15)
    with pytest.raises(ValueError, match="call accept"):
        linker().make_function()


@requires_compiler
def test_dual_linker_compares_the_backends():
    x, y = T.fscalars("xy")
    floor, remainder = divmod(x, y)
    fn = theano.gof.DualLinker().accept(
        theano.gof.FunctionGraph([x, y], [floor, remainder])).make_function()
    for a, b in [(5, 3), (-5, 3), (5, -3), (-5, -3), (0, -1)]:
        assert tuple(float(v) for v in fn(a, b)) == divmod(a, b)
    disagree = theano.gof.DualLinker(checker=lambda left, right: False).accept(
        theano.gof.FunctionGraph([x, y], [x % y])).make_function()
    with pytest.raises(AssertionError, match="output 0 .* differs"):
        disagree(1, 2)
    # A linker that holds a graph accepts another as a copy of itself, options kept.
    strict = theano.gof.DualLinker(checker=lambda left, right: False)
    first = strict.accept(theano.gof.FunctionGraph([x, y], [x % y]))
    second = strict.accept(theano.gof.FunctionGraph([x, y], [x * y]))
    assert first is strict and second is not strict and second.checker is strict.checker
    with pytest.raises(AssertionError, match="differs"):
        second.make_function()(1, 2)
    with pytest.raises(NotImplementedError, match="profile"):
        theano.gof.PerformLinker().accept(theano.gof.FunctionGraph([x], [x]), profile=True)


@pytest.mark.parametrize("mode", MODES)
def test_advanced_subtensor1_and_its_writes(mode):
    x, rows, y = T.dmatrix("x"), T.ivector("rows"), T.dmatrix("y")
    picked = x[rows]
    assert isinstance(picked.owner.op, T.AdvancedSubtensor1)
    assert type(x[T.imatrix()].owner.op) is T.AdvancedSubtensor
    added = T.inc_subtensor(x[rows], y)
    assert isinstance(added.owner.op, T.AdvancedIncSubtensor1)
    outputs = [picked, added, T.set_subtensor(x[rows], y), T.AdvancedSubtensor1()(x, rows),
               T.advanced_inc_subtensor1(x, y, rows), T.advanced_set_subtensor1(x, y, rows),
               T.AdvancedIncSubtensor1()(x, y, rows)]
    f = theano.function([x, rows, y], outputs, mode=mode)
    value, index = RNG.random((4, 3)), np.array([2, 0, 2], "int32")
    update = RNG.random((3, 3))
    incremented, assigned = value.copy(), value.copy()
    np.add.at(incremented, index, update)
    assigned[index] = update
    expected = [value[index], incremented, assigned, value[index], incremented, assigned,
                incremented]
    for got, reference in zip(f(value, index, update), expected):
        np.testing.assert_allclose(got, reference, rtol=1e-15)
    verify_grad(lambda v: v[index] ** 2, [value], rng=RNG)
    verify_grad(lambda v, u: T.inc_subtensor(v[index], u), [value, update], rng=RNG)
    with pytest.raises(TypeError, match="must be an integer vector"):
        T.AdvancedSubtensor1()(x, T.imatrix())
    with pytest.raises(NotImplementedError, match="inplace rewrite"):
        T.AdvancedIncSubtensor1(inplace=True)


@pytest.mark.parametrize("mode", MODES)
def test_advanced_boolean_subtensor_and_its_writes(mode):
    x, mask, rows = T.dmatrix("x"), T.bmatrix("mask"), T.bvector("rows")
    picked = x[mask > 0]
    assert isinstance(picked.owner.op, T.AdvancedBooleanSubtensor)
    outputs = [picked, T.AdvancedBooleanSubtensor()(x, rows > 0, 1),
               T.inc_subtensor(x[rows > 0], 1.0),
               T.AdvancedBooleanIncSubtensor(set_instead_of_inc=True)(x, 5.0, rows > 0),
               T.advanced_set_subtensor(x, 0.0, rows > 0, slice(1, None))]
    assert isinstance(outputs[2].owner.op, T.AdvancedBooleanIncSubtensor)
    f = theano.function([x, mask, rows], outputs, mode=mode)
    value = RNG.random((3, 4))
    mask_value = (RNG.random((3, 4)) > 0.5).astype("int8")
    rows_value = np.array([1, 0, 1], "int8")
    chosen = rows_value > 0
    plus_one, fives, zeroed = value.copy(), value.copy(), value.copy()
    plus_one[chosen] += 1
    fives[chosen] = 5
    zeroed[chosen, 1:] = 0
    expected = [value[mask_value > 0], value[chosen, 1], plus_one, fives, zeroed]
    for got, reference in zip(f(value, mask_value, rows_value), expected):
        np.testing.assert_array_equal(got, reference)
    verify_grad(lambda v: v[mask_value > 0] ** 2, [value], rng=RNG)


def test_theano_module_names_of_subtensor():
    assert T.basic.DimShuffle is T.DimShuffle
    x, indices = T.dtensor3("x"), T.ivector("i")
    value, index = RNG.random((3, 4, 2)), np.array([3, 1], "int32")
    f = theano.function([x, indices], T.advanced_inc_subtensor(x, 1.0, slice(None), indices))
    expected = value.copy()
    expected[:, index] += 1
    np.testing.assert_array_equal(f(value, index), expected)


def test_theano_type_and_dtype_groups():
    scalar = theano.scalar
    assert [str(t) for t in scalar.all_types] == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128"]
    assert scalar.float32 == scalar.get_scalar_type("float32")
    assert scalar.discrete_types + scalar.continuous_types == scalar.all_types
    sparse = theano.sparse
    assert sparse.integer_dtypes == sparse.discrete_dtypes == sparse.int_dtypes + \
        sparse.uint_dtypes
    assert set(sparse.continuous_dtypes + sparse.discrete_dtypes) == set(sparse.all_dtypes)
    assert theano.gradient.verify_grad.E_grad is theano.gradient.GradientError


def test_rint_and_sparse_elementwise_names():
    import scipy.sparse

    x = T.dvector()
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5])
    np.testing.assert_array_equal(theano.function([x], T.rint(x))(values), np.rint(values))
    matrix = theano.sparse.csr_matrix()
    stored = scipy.sparse.csr_matrix(np.array([[0.0, 1.5], [-2.5, 0.0]]))
    f = theano.function([matrix], [theano.sparse.rint(matrix), theano.sparse.abs_(matrix),
                                   theano.sparse.conj(matrix)])
    rounded, absolute, conjugate = (result.toarray() for result in f(stored))
    np.testing.assert_array_equal(rounded, np.rint(stored.toarray()))
    np.testing.assert_array_equal(absolute, np.abs(stored.toarray()))
    np.testing.assert_array_equal(conjugate, stored.toarray())


def test_cov_matches_numpy():
    m, v, y = T.dmatrix("m"), T.dvector("v"), T.dmatrix("y")
    data, more, single = RNG.random((3, 5)), RNG.random((2, 5)), RNG.random(5)
    outputs = [T.cov(m), T.cov(m, rowvar=False), T.cov(v), T.cov(m, y, bias=True),
               T.cov(m, ddof=0)]
    expected = [np.cov(data), np.cov(data, rowvar=False), np.cov(single),
                np.cov(data, more, bias=True), np.cov(data, ddof=0)]
    for got, reference in zip(theano.function([m, v, y], outputs)(data, single, more),
                              expected):
        assert np.shape(got) == np.shape(reference)
        np.testing.assert_allclose(got, reference, rtol=1e-13)
    verify_grad(lambda a: T.cov(a), [data], rng=RNG)
    with pytest.raises(NotImplementedError, match="fweights and aweights"):
        T.cov(m, fweights=np.ones(5))


def test_theano_aliases_and_apply_as_tensor():
    assert T.Tensor is T.TensorType and T.scal is theano.scalar
    x = T.dvector()
    assert T.as_tensor_variable(T.exp(x).owner).owner.op == T.exp
    with pytest.raises(TypeError, match="has 2 outputs and no default_output"):
        T.as_tensor_variable(T.topk_and_argtopk(x, 1)[0].owner)


def test_op_call_return_list():
    x = T.dvector()
    (single,) = T.Elemwise(theano.scalar.exp)(x, return_list=True)
    assert single.owner.op == T.exp
    both = T.TopKOp()(x, 1, return_list=True)
    assert len(both) == 2 and both[0].owner is both[1].owner


def test_more_theano_names():
    import scipy.sparse

    assert theano.tensor.nnet.abstract_conv.imported_scipy_signal is True
    dense = theano.sparse.as_sparse_or_tensor_variable(np.ones((2, 2)))
    assert isinstance(dense.type, T.TensorType)
    stored = theano.sparse.as_sparse_or_tensor_variable(scipy.sparse.eye(2, format="csr"))
    assert isinstance(stored.type, theano.sparse.SparseTensorType)
    number = theano.scalar.constant(56)
    assert number.type == theano.scalar.int64 and T.get_scalar_constant_value(number) == 56
    with pytest.raises(TypeError, match="expected a number"):
        theano.scalar.constant([1, 2])
    probabilities, classes = T.dmatrix(), T.ivector()
    value = np.array([[0.2, 0.8], [0.6, 0.4]])
    got = theano.function([probabilities, classes], T.nnet.crossentropy_categorical_1hot(
        probabilities, classes))(value, np.array([1, 0], "int32"))
    np.testing.assert_allclose(got, -np.log([0.8, 0.6]), rtol=1e-15)
    with pytest.raises(TypeError, match="true_one_of_n must be an integer vector"):
        T.nnet.crossentropy_categorical_1hot(probabilities, T.dmatrix())
