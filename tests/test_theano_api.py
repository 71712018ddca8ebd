"""Theano's deeper API, as libraries built on Theano and custom Ops use it (issue 36):
theano.gof (custom Ops with Theano's grad and infer_shape(node, shapes), gof.graph,
gof.opt's optimizers), theano.tensor.opt's register_* functions, theano.scan_module,
theano.compile's pfunc/io/sharedvalue/get_default_mode/DeepCopyOp/ViewOp, theano.dot,
theano.pprint, theano._asarray, T.blas.gemm_inplace and the sparse names."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import sympile as theano
import sympile.tensor as T
from sympile.gradient import verify_grad
from sympile.tensor.rewriting.canonicalize import canonicalize_db
from sympile.tensor.rewriting.specialize import specialize_db
from tests.link.c.utils import C_MODE, requires_compiler
from tests.utils import assert_like_numpy


class DoubleOp(theano.gof.Op):
    """Theano's "extending Theano" example, written as Theano 1.0 code: grad and a two-
    argument infer_shape."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return theano.gof.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def infer_shape(self, node, input_shapes):
        return input_shapes

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


def test_a_custom_op_written_for_theano_computes_differentiates_and_infers_shapes():
    x = T.dmatrix("x")
    double = DoubleOp()
    value = np.arange(6.0).reshape(2, 3)
    f = theano.function([x], [double(x), double(x).shape])
    result, shape = f(value)
    assert_like_numpy(result, value * 2)
    assert tuple(shape) == (2, 3)
    verify_grad(double, [value], rng=np.random.default_rng(0))
    assert isinstance(x, theano.gof.Variable) and isinstance(double, theano.gof.Op)
    assert isinstance(double(x).owner, theano.gof.graph.Apply)


def test_elementwise_functions_are_elemwise_op_instances():
    from sympile.tensor.elemwise import Elemwise

    x, y, z = T.dvectors("x", "y", "z")
    assert (x + y).owner.op == T.add and (x * y).owner.op == T.mul
    assert T.switch(x > 0, x, y).owner.op == T.switch
    assert all(isinstance(op, Elemwise) for op in (T.add, T.exp, T.maximum, T.switch))
    assert T.add.__name__ == "add" and "several inputs" in T.add.__doc__
    total, largest = theano.function([x, y, z], [T.add(x, y, z), T.maximum(x, y, z)])(
        [1.0], [2.0], [3.0])
    assert_like_numpy(total, np.array([6.0]))
    assert_like_numpy(largest, np.array([3.0]))
    with pytest.raises(TypeError, match="Elemwise{exp,no_inplace}: expected 1 input, got 2"):
        T.exp(x, y)


def test_is_same_graph_with_givens_in_either_direction():
    from sympile.gof.graph import is_same_graph

    x, y, z = T.dvectors("x", "y", "z")
    assert is_same_graph(T.exp(x) + y, T.exp(x) + y)
    assert not is_same_graph(x + y, y + x)
    assert is_same_graph(x * 2, z * 2, givens={x: z})
    assert is_same_graph(x * 2, z * 2, givens={z: x})
    assert not is_same_graph(x * 2, z * 2)
    with pytest.raises(TypeError, match="is_same_graph: expected two Variables"):
        is_same_graph(x, 3)


@pytest.fixture
def registered():
    """Names registered in the global databases during a test, removed after it."""
    names: list[tuple] = []
    yield names
    for database, name in names:
        database.unregister(name)


def _ops(f):
    return [type(node.op).__name__ + ":" + str(node.op) for node in f.maker.fgraph.toposort()]


def test_local_optimizer_in_theanos_one_argument_form_registered_in_canonicalize(registered):
    from sympile.gof.opt import local_optimizer
    from sympile.tensor.opt import register_canonicalize

    double = DoubleOp()

    @register_canonicalize
    @local_optimizer([double])
    def local_double_to_add(node):
        """double(x) -> x + x"""
        if node.op == double:
            return [node.inputs[0] + node.inputs[0]]
        return False

    registered.append((canonicalize_db, "local_double_to_add"))
    x = T.dvector("x")
    f = theano.function([x], double(x))
    assert not any("DoubleOp" in op for op in _ops(f))
    assert_like_numpy(f([1.0, 2.0]), [2.0, 4.0])
    # The decorated function still works on a node, as Theano code calls it.
    assert local_double_to_add(double(x).owner)[0].owner.inputs[0] is x


def test_local_optimizer_subclasses_and_the_graph_optimizers(registered):
    from sympile.gof.opt import (
        EquilibriumOptimizer,
        LocalOptimizer,
        OpSub,
        PatternSub,
        SeqOptimizer,
        TopoOptimizer,
        in2out,
        out2in,
    )
    from sympile.tensor.opt import register_specialize

    class ExpOfLog(LocalOptimizer):
        def tracks(self):
            return [T.exp(T.log(T.dscalar())).owner.op]

        def transform(self, node):
            inner = node.inputs[0].owner
            if inner is not None and inner.op == T.log(T.dscalar()).owner.op:
                return [inner.inputs[0]]
            return None

    x = T.dvector("x")
    graph = theano.FunctionGraph([x], [T.exp(T.log(x)) * 2])
    for optimizer in (TopoOptimizer(ExpOfLog()), in2out(ExpOfLog()), out2in(ExpOfLog()),
                      EquilibriumOptimizer([ExpOfLog()], max_use_ratio=5),
                      SeqOptimizer(in2out(ExpOfLog()))):
        fgraph = graph.clone()
        optimizer.optimize(fgraph)
        assert [str(node.op) for node in fgraph.toposort()] == ["Elemwise{mul,no_inplace}"]
    # Theano calls a LocalOptimizer's transform with the node alone.
    assert ExpOfLog().transform(T.exp(x).owner) is None

    double = DoubleOp()
    fgraph = theano.FunctionGraph([x], [double(x)])
    TopoOptimizer(OpSub(double, T.exp(x).owner.op)).optimize(fgraph)
    assert str(fgraph.outputs[0].owner.op) == "Elemwise{exp,no_inplace}"
    # A Python number in a pattern matches a constant of that value, broadcast or not.
    scalar = T.dscalar("s")
    fgraph = theano.FunctionGraph([scalar, x], [T.exp(scalar * 1.5), x * 1.5, x * 2.5])
    in2out(PatternSub((T.mul, "a", 1.5), "a")).optimize(fgraph)
    assert fgraph.outputs[0].owner.inputs[0] is fgraph.inputs[0]
    assert fgraph.outputs[1] is fgraph.inputs[1]
    assert str(fgraph.outputs[2].owner.op) == "Elemwise{mul,no_inplace}"

    class DoubleToAdd(LocalOptimizer):
        """PyTensor's form: transform(fgraph, node)."""

        def tracks(self):
            return [double]

        def transform(self, fgraph, node):
            assert isinstance(fgraph, theano.FunctionGraph)
            return [node.inputs[0] + node.inputs[0]]

    assert theano.function([x], double(x)).maker.fgraph.toposort()[0].op == double
    register_specialize(DoubleToAdd(), name="double_to_add_test")
    registered.append((specialize_db, "double_to_add_test"))
    f = theano.function([x], double(x))
    assert [str(node.op) for node in f.maker.fgraph.toposort()] == ["Elemwise{add,no_inplace}"]
    assert_like_numpy(f([1.5, -2.0]), [3.0, -4.0])
    with pytest.raises(NotImplementedError, match="ignore_newtrees=True is not supported"):
        TopoOptimizer(ExpOfLog(), ignore_newtrees=True)
    with pytest.raises(NotImplementedError, match="final_optimizers"):
        EquilibriumOptimizer([ExpOfLog()], final_optimizers=[ExpOfLog()])


def test_register_with_tags_first_returns_a_decorator(registered):
    from sympile.gof.opt import local_optimizer
    from sympile.tensor.opt import register_canonicalize

    @register_canonicalize("my_tag", name="tagged_rewrite_test")
    @local_optimizer(None)
    def tagged(fgraph, node):
        return None

    registered.append((canonicalize_db, "tagged_rewrite_test"))
    assert "my_tag" in canonicalize_db.tags_of("tagged_rewrite_test")
    assert "canonicalize" in canonicalize_db.tags_of("tagged_rewrite_test")


def test_consider_constant_idiom_with_view_op_and_op_remove(registered):
    """The idiom of libraries: a ViewOp subclass whose gradient is zero, removed from the
    compiled graph by an OpRemove registered in canonicalize."""
    from sympile.tensor.opt import register_canonicalize

    class ConsiderConstant(theano.compile.ViewOp):
        def grad(self, args, g_outs):
            return [T.zeros_like(g) for g in g_outs]

    consider_constant = ConsiderConstant()
    register_canonicalize(theano.gof.OpRemove(consider_constant), name="r_consider_constant")
    registered.append((canonicalize_db, "r_consider_constant"))
    x = T.dvector("x")
    cost = (consider_constant(x) * x).sum()
    f = theano.function([x], [cost, theano.grad(cost, x)])
    value, gradient = f([1.0, 2.0])
    assert value == 5.0
    assert_like_numpy(gradient, [1.0, 2.0])
    assert not any("ConsiderConstant" in op for op in _ops(f))


def test_scan_module_and_compile_paths():
    from sympile.compile.io import In, Out
    from sympile.compile.mode import get_default_mode
    from sympile.compile.ops import deep_copy_op
    from sympile.compile.pfunc import pfunc
    from sympile.compile.sharedvalue import SharedVariable, shared
    from sympile.scan_module import scan, until
    from sympile.scan_module.scan_op import Scan
    from sympile.scan_module.scan_utils import equal_computations

    assert until is theano.until and Scan is theano.scan_module.Scan
    # Submodules that Theano's compile package imports are its attributes after `import theano`.
    assert theano.compile.io.In is In and theano.compile.sharedvalue.shared is shared
    k = T.lscalar("k")
    powers, _ = scan(lambda previous: previous * 2, outputs_info=T.constant(1.0), n_steps=k)
    assert_like_numpy(theano.function([k], powers)(3), [2.0, 4.0, 8.0])
    assert any(isinstance(node.op, Scan) for node in theano.graph.basic.toposort(powers))
    assert equal_computations([T.exp(k)], [T.exp(k)])
    x = T.dvector("x")
    state = shared(np.zeros(2), name="state")
    assert isinstance(state, SharedVariable)
    f = pfunc([In(x)], [x * 2, x.sum()], updates=[(state, state + x)],
              output_keys=["double", "total"])
    result = f([1.0, 2.0])
    assert set(result) == {"double", "total"} and result["total"] == 3.0
    assert_like_numpy(state.get_value(), [1.0, 2.0])
    with pytest.raises(ValueError, match="output_keys names 1 outputs"):
        pfunc([x], [x, x], output_keys=["a"])
    assert Out(x).variable is x
    assert get_default_mode() is theano.compile.get_mode(None)
    copied = theano.function([x], deep_copy_op(x))
    value = np.array([1.0, 2.0])
    result = copied(value)
    assert_like_numpy(result, value) and not np.shares_memory(result, value)
    verify_grad(deep_copy_op, [value], rng=np.random.default_rng(2))


def test_dot_pprint_and_asarray():
    x = T.dmatrix("x")
    s = theano.sparse.csr_matrix("s", dtype="float64")
    dense = theano.function([x], theano.dot(x, x))(np.eye(2) * 3)
    assert_like_numpy(dense, np.eye(2) * 9)
    product = theano.function([s, x], theano.dot(s, x))(
        scipy.sparse.csr_matrix(np.eye(2)), np.ones((2, 2)))
    assert_like_numpy(np.asarray(product), np.ones((2, 2)))
    assert "x" in theano.pprint(x * 2)
    assert theano._asarray([1, 2], "floatX").dtype == np.dtype(theano.config.floatX)
    assert theano._asarray([1, 2], "int8").dtype == np.int8


def test_gemm_instances():
    from sympile.tensor.blas import gemm_inplace, gemm_no_inplace

    z, x, y = T.dmatrices("z", "x", "y")
    a = T.dscalar("a")
    values = [np.ones((2, 2)), np.eye(2), np.full((2, 2), 3.0), 2.0]
    expected = 2.0 * np.full((2, 2), 3.0) + 2.0 * np.ones((2, 2))
    assert_like_numpy(theano.function([z, x, y, a], gemm_no_inplace(z, a, x, y, a))(*values),
                      expected)
    target = np.ones((2, 2))
    f = theano.function([theano.In(z, mutable=True), x, y, a], gemm_inplace(z, a, x, y, a),
                        accept_inplace=True)
    f(target, *values[1:])
    assert_like_numpy(target, expected)
    with pytest.raises(TypeError, match="accept_inplace=True"):
        theano.function([theano.In(z, mutable=True), x, y, a], gemm_inplace(z, a, x, y, a))


def test_sparse_names():
    from sympile import sparse

    assert "float32" in sparse.all_dtypes and "float16" not in sparse.all_dtypes
    with pytest.raises(TypeError, match="float16 is not one"):
        sparse.csr_matrix("m", dtype="float16")
    data, indices, indptr, shape = (T.dvector(), T.ivector(), T.ivector(), T.lvector())
    matrix = sparse.CSC(data, indices, indptr, shape)
    dense = theano.function([data, indices, indptr, shape], sparse.dense_from_sparse(matrix))(
        [1.0, 2.0], [1, 0], [0, 1, 2], [2, 2])
    assert_like_numpy(dense, scipy.sparse.csc_matrix(
        (np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2)).toarray())
    # Theano's constructor keyword: structured=False gives the whole dense gradient.
    x = sparse.csr_matrix("x", dtype="float64")
    assert sparse.DenseFromSparse(structured=False).sparse_grad is False
    gradient = theano.grad(sparse.DenseFromSparse(structured=False)(x).sum(), x)
    structured = theano.grad(sparse.DenseFromSparse()(x).sum(), x)
    value = scipy.sparse.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
    gradients = theano.function([x], [gradient, structured])(value)
    assert_like_numpy(gradients[0].toarray(), np.ones((2, 2)))
    assert_like_numpy(gradients[1].toarray(), [[0.0, 1.0], [1.0, 0.0]])
    variable = sparse.shared(scipy.sparse.csr_matrix(np.eye(3)), name="w")
    assert variable.type.format == "csr"
    with pytest.raises(TypeError, match="sparse.shared: expected a scipy.sparse matrix"):
        sparse.shared(np.eye(3))


class TheanoCOp(DoubleOp):
    """DoubleOp with C code in Theano's contract, which sympile does not compile."""

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = NULL; {sub['fail']}"


@requires_compiler
def test_an_op_with_theanos_c_code_runs_its_perform_with_one_warning():
    x = T.dvector("x")
    op = TheanoCOp()
    with pytest.warns(UserWarning, match="TheanoCOp defines Theano's c_code"):
        f = theano.function([x], op(x) + 1, mode=C_MODE)
    assert_like_numpy(f([1.0, 2.0]), [3.0, 5.0])
    assert op.c_code(op(x).owner, None) is None


def test_old_module_paths_conv_and_downsample_with_one_deprecation_warning(monkeypatch):
    from sympile.tensor.nnet import conv
    from sympile.tensor.signal import downsample, pool

    monkeypatch.setattr(conv, "_warned", set())
    monkeypatch.setattr(downsample, "_warned", [])
    images, filters = T.tensor4("images"), T.tensor4("filters")
    rng = np.random.default_rng(5)
    image_values = rng.standard_normal((2, 3, 7, 6))
    filter_values = rng.standard_normal((4, 3, 3, 2))
    with pytest.warns(DeprecationWarning, match="Theano's old convolution"):
        old = conv.conv2d(images, filters, image_shape=(2, 3, 7, 6), border_mode="full")
    new = T.nnet.conv2d(images, filters, border_mode="full")
    old_value, new_value = theano.function([images, filters], [old, new])(image_values,
                                                                           filter_values)
    assert_like_numpy(old_value, new_value)
    with pytest.raises(ValueError, match="border_mode must be 'valid' or 'full'"):
        conv.conv2d(images, filters, border_mode="half")
    # ConvOp's loop-unrolling hints: accepted, said to be ignored once, the same values.
    with pytest.warns(UserWarning, match="unroll_batch, unroll_kern tuned Theano's ConvOp"):
        hinted = conv.conv2d(images, filters, border_mode="full", unroll_batch=2, unroll_kern=4)
    assert_like_numpy(theano.function([images, filters], hinted)(image_values, filter_values),
                      new_value)
    with pytest.raises(TypeError, match="unexpected keyword argument.*unroll_rows"):
        conv.conv2d(images, filters, unroll_rows=2)
    with pytest.warns(DeprecationWarning, match="Theano 0.7-0.9's name"):
        pooled = downsample.max_pool_2d(images, (2, 2))
    # ignore_border=None was False then: the partial last row of windows is pooled too.
    expected = pool.pool_2d(images, ws=(2, 2), ignore_border=False)
    old_value, new_value = theano.function([images], [pooled, expected])(image_values)
    assert old_value.shape == (2, 3, 4, 3)
    assert_like_numpy(old_value, new_value)


def test_max_pool_2d_same_size_keeps_each_windows_maximum():
    from sympile.tensor.signal.pool import max_pool_2d_same_size

    x = T.tensor4("x")
    value = np.array([[[[1.0, 5.0, 2.0, 0.0, 9.0],
                        [3.0, 4.0, 8.0, 1.0, 7.0],
                        [6.0, 0.5, -1.0, -2.0, 3.0]]]])
    expected = np.array([[[[0.0, 5.0, 0.0, 0.0, 0.0],
                           [0.0, 0.0, 8.0, 0.0, 0.0],
                           [0.0, 0.0, 0.0, 0.0, 0.0]]]])
    result = theano.function([x], max_pool_2d_same_size(x, (2, 2)))(value)
    assert_like_numpy(result, expected)


def test_theanos_inplace_module_overwrites_the_first_input():
    from sympile.tensor import inplace

    x, y = T.dvectors("x", "y")
    assert inplace.exp_inplace.inplace_pattern == ((0, 0),)
    assert "accept_inplace=True" in inplace.tanh_inplace.__doc__
    f = theano.function([theano.In(x, mutable=True), y],
                        inplace.add_inplace(inplace.exp_inplace(x), y), accept_inplace=True)
    value = np.zeros(2)
    assert_like_numpy(f(value, np.array([1.0, 2.0])), np.array([2.0, 3.0]))
    assert_like_numpy(value, np.array([2.0, 3.0]))
    with pytest.raises(TypeError, match="accept_inplace=True"):
        theano.function([x], inplace.exp_inplace(x))
    with pytest.raises(TypeError, match="true_div_inplace: output 0 cannot be written over"):
        inplace.true_div_inplace(T.lvector(), T.lvector())


def test_theano_module_paths_of_round_three():
    """The paths Theano's own tests and libraries import: gof.null_type, compile.config,
    sparse.enable_sparse, tensor.basic.NotScalarConstantError, tensor.elemwise's
    reductions, tensor.nnet.sigm."""
    import sympile as theano
    from sympile.gof.null_type import NullType
    from sympile.graph.gradient_types import NullType as GraphNullType
    from sympile.tensor.basic import NotScalarConstantError
    from sympile.tensor.constant_value import NotScalarConstantError as ConstantError

    assert NullType is GraphNullType and NotScalarConstantError is ConstantError
    assert theano.compile.config is theano.config
    assert theano.sparse.enable_sparse is True
    assert theano.tensor.elemwise.CAReduce is theano.tensor.CAReduce
    assert theano.tensor.nnet.sigm.ultra_fast_sigmoid is theano.tensor.nnet.ultra_fast_sigmoid


def test_optdb_queries_rewrite_a_graph_as_the_modes_do():
    """Theano's theano.compile.mode.optdb.query(OPT_FAST_RUN).optimize(fgraph), and
    gof.Query's selection by tags: FAST_RUN's rewrites turn exp(x) / sum(exp(x)) into a
    softmax; without the stabilize rewrites it stays, OPT_NONE changes nothing, and Theano's
    position-based options are refused."""
    from sympile.compile import mode

    x = T.dmatrix("x")
    ratio = T.exp(x) / T.exp(x).sum(axis=1, keepdims=True)

    def ops_after(query):
        fgraph = theano.FunctionGraph([x], [ratio])
        mode.optdb.query(query).optimize(fgraph)
        return [type(node.op).__name__ for node in fgraph.toposort()]

    assert ops_after(mode.OPT_FAST_RUN) == ["Softmax"]
    assert "Softmax" not in ops_after(theano.gof.Query(include=["fast_run"],
                                                       exclude=["stabilize"]))
    assert ops_after(mode.OPT_NONE) == ops_after(theano.gof.Query(include=[]))
    assert "Softmax" not in ops_after(mode.OPT_NONE)
    with pytest.raises(NotImplementedError, match="position_cutoff"):
        theano.gof.Query(include=["fast_run"], position_cutoff=1.5)
    with pytest.raises(TypeError, match="given whole"):
        mode.optdb.query(mode.OPT_FAST_RUN, exclude=["merge"])


def test_custom_scalar_ops_in_theanos_form():
    """A custom scalar op written as for Theano: a UnaryScalarOp / BinaryScalarOp subclass
    whose impl takes scalars, built with an output_types_preference and a name; Elemwise
    applies it element by element, alone and fused with other ops, on both backends."""
    import math

    from sympile import scalar

    class Gamma(scalar.UnaryScalarOp):
        def impl(self, x):
            return math.gamma(x)

    class Larger(scalar.BinaryScalarOp):
        def impl(self, a, b):
            return a if a > b else b

    gamma = T.Elemwise(Gamma(scalar.upgrade_to_float, name="gamma_by_hand"))
    larger = T.Elemwise(Larger(scalar.transfer_type(1)))
    i, f, d = T.ivector("i"), T.fvector("f"), T.dvector("d")
    assert str(gamma) == "Elemwise{gamma_by_hand,no_inplace}"
    assert (gamma(i).dtype, gamma(f).dtype, larger(d, i).dtype) == ("float64", "float32",
                                                                    "int32")
    i_value = np.array([1, 2, 5], "int32")
    f_value = np.array([0.5, 1.5, 3.0], "float32")
    d_value = np.array([1.5, -2.0, 7.0])
    want = [np.array([math.gamma(v) for v in i_value]),
            np.array([math.gamma(v) * 2 + 1 for v in f_value], "float32"),
            np.array([1, 2, 7], "int32")]
    for mode in ("FAST_RUN", "FAST_COMPILE", C_MODE):
        outputs = theano.function([i, f, d], [gamma(i), gamma(f) * 2 + 1, larger(d, i)],
                                  mode=mode)(i_value, f_value, d_value)
        for got, expected in zip(outputs, want):
            assert got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert Gamma(scalar.same_out) == Gamma(scalar.same_out)
    assert hash(Gamma(scalar.same_out)) == hash(Gamma(scalar.same_out))
    assert Gamma(scalar.same_out) != Gamma(scalar.upgrade_to_float)
    with pytest.raises(NotImplementedError, match="output_types_preference"):
        T.Elemwise(Gamma())(f)
    with pytest.raises(TypeError, match="must be a function"):
        Gamma("float64")


def test_theanos_output_types_preferences():
    from sympile import scalar

    def dtypes(preference, *names):
        return tuple(t.dtype for t in preference(*(scalar.get_scalar_type(n) for n in names)))

    assert dtypes(scalar.upcast_out, "int8", "float32") == ("float32",)
    assert dtypes(scalar.upcast_out_min8, "bool", "bool") == ("int8",)
    assert dtypes(scalar.upgrade_to_float, "int16") == ("float32",)
    assert dtypes(scalar.upgrade_to_float, "int32", "float32") == ("float64",)
    assert dtypes(scalar.upgrade_to_float, "float16") == ("float16",)
    assert dtypes(scalar.upgrade_to_float64, "int8") == ("float64",)
    assert dtypes(scalar.same_out, "uint16") == ("uint16",)
    assert dtypes(scalar.same_out_min8, "bool") == ("int8",)
    assert dtypes(scalar.int_out, "float32") == ("int64",)
    assert dtypes(scalar.float_out, "int8") == ("float64",)
    assert dtypes(scalar.transfer_type(1, None, "int16"), "int8", "float32") == (
        "float32", "float32", "int16")
    assert dtypes(scalar.specific_out(scalar.float32, "int8"), "float64") == ("float32",
                                                                              "int8")
    for refusing, argument in ((scalar.upcast_out_nobool, "bool"),
                               (scalar.same_out_nocomplex, "complex64"),
                               (scalar.upgrade_to_float_no_complex, "complex128")):
        with pytest.raises(TypeError, match="not supported"):
            dtypes(refusing, argument)
    with pytest.raises(TypeError, match="input index"):
        scalar.transfer_type(1.5)
