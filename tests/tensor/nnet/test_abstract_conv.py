"""conv2d, conv3d and their gradients: values against a direct loop over every output and tap
(independent of the window-and-tensordot implementation), numeric gradients in float64,
grad of grad, Rop against finite differences and Lop, shapes, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor.nnet import abstract_conv
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.utils import GradCase, check_grad_case


def reference_conv(x, w, border_mode="valid", subsample=None, filter_flip=True,
                   filter_dilation=None, num_groups=1, unshared=False):
    """The convolution by its definition: a loop over outputs and taps (unshared: the
    filter of each output position)."""
    convdim = x.ndim - 2
    subsample = subsample or (1,) * convdim
    dilation = filter_dilation or (1,) * convdim
    kernel = w.shape[-convdim:]
    dilated = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if border_mode == "valid":
        pad = (0,) * convdim
    elif border_mode == "full":
        pad = tuple(k - 1 for k in dilated)
    elif border_mode == "half":
        pad = tuple(k // 2 for k in dilated)
    elif isinstance(border_mode, int):
        pad = (border_mode,) * convdim
    else:
        pad = tuple(border_mode)
    padded = np.pad(x, [(0, 0), (0, 0)] + [p if isinstance(p, tuple) else (p, p) for p in pad])
    if filter_flip:
        w = w[(Ellipsis,) + (slice(None, None, -1),) * convdim]
    out_spatial = [(n - k) // s + 1 for n, k, s in zip(padded.shape[2:], dilated, subsample)]
    per_channel, per_filter = w.shape[-convdim - 1], w.shape[0] // num_groups
    out = np.zeros((x.shape[0], w.shape[0], *out_spatial))
    for n, f in itertools.product(range(x.shape[0]), range(w.shape[0])):
        group = f // per_filter
        for position in itertools.product(*map(range, out_spatial)):
            total = 0.0
            for c in range(per_channel):
                for tap in itertools.product(*map(range, kernel)):
                    source = tuple(o * s + t * d for o, s, t, d in
                                   zip(position, subsample, tap, dilation))
                    weight = w[(f, *position, c) + tap] if unshared else w[(f, c) + tap]
                    total += padded[(n, group * per_channel + c) + source] * weight
            out[(n, f) + position] = total
    return out


OPTIONS = [
    dict(),
    dict(border_mode="full"),
    dict(border_mode="half", subsample=(2, 1)),
    dict(border_mode=1, filter_flip=False),
    dict(border_mode=(2, 0), subsample=(2, 3), filter_dilation=(2, 1)),
    dict(border_mode="half", filter_dilation=(2, 2), filter_flip=False),
    dict(num_groups=2, subsample=(1, 2)),
    dict(border_mode="full", num_groups=2, filter_dilation=(1, 2), filter_flip=False),
    dict(border_mode=((1, 2), (0, 3)), subsample=(2, 1)),
    dict(border_mode=((2, 0), 1), filter_dilation=(1, 2), num_groups=2, filter_flip=False),
]


def _values(rng, x_shape, w_shape):
    return rng.standard_normal(x_shape), rng.standard_normal(w_shape)


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_conv2d_values(options, mode):
    rng = np.random.default_rng(0)
    groups = options.get("num_groups", 1)
    x_value, w_value = _values(rng, (2, 2 * groups, 7, 6), (2 * groups, 2, 3, 2))
    x, w = T.dtensor4("x"), T.dtensor4("w")
    output = T.nnet.conv2d(x, w, **options)
    value = sympile.function([x, w], output, mode=mode)(x_value, w_value)
    expected = reference_conv(x_value, w_value, **options)
    assert value.shape == expected.shape
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    # infer_shape: the shape graph gives the same lengths without computing the output.
    shape = sympile.function([x, w], output.shape, mode=mode)(x_value, w_value)
    assert tuple(shape) == expected.shape


@given(batch=st.integers(1, 2), channels=st.integers(1, 3), filters=st.integers(1, 3),
       rows=st.integers(3, 7), columns=st.integers(3, 7), kernel=st.integers(1, 3),
       stride=st.integers(1, 2), dilation=st.integers(1, 2),
       border=st.sampled_from(["valid", "full", "half", 1]), flip=st.booleans())
def test_conv2d_random_shapes(batch, channels, filters, rows, columns, kernel, stride, dilation,
                              border, flip):
    if border == "valid" and (kernel - 1) * dilation + 1 > min(rows, columns):
        return
    rng = np.random.default_rng(1)
    x_value, w_value = _values(rng, (batch, channels, rows, columns),
                               (filters, channels, kernel, kernel))
    options = dict(border_mode=border, subsample=(stride, stride),
                   filter_dilation=(dilation, dilation), filter_flip=flip)
    x, w = T.dtensor4("x"), T.dtensor4("w")
    value = sympile.function([x, w], T.nnet.conv2d(x, w, **options))(x_value, w_value)
    np.testing.assert_allclose(value, reference_conv(x_value, w_value, **options),
                               rtol=1e-12, atol=1e-12)


def test_conv3d_values():
    rng = np.random.default_rng(2)
    x_value, w_value = _values(rng, (1, 2, 4, 5, 4), (3, 2, 2, 3, 2))
    x, w = T.tensor("float64", shape=(None,) * 5), T.tensor("float64", shape=(None,) * 5)
    for options in (dict(), dict(border_mode="half", subsample=(1, 2, 1), filter_flip=False),
                    dict(border_mode="full", filter_dilation=(2, 1, 1))):
        value = sympile.function([x, w], T.nnet.conv3d(x, w, **options))(x_value, w_value)
        np.testing.assert_allclose(value, reference_conv(x_value, w_value, **options),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_conv2d_gradients_and_rop(options):
    rng = np.random.default_rng(3)
    groups = options.get("num_groups", 1)
    x_value, w_value = _values(rng, (2, 2 * groups, 6, 5), (2 * groups, 2, 3, 2))

    def conv(x, w):
        return T.nnet.conv2d(x, w, **options)

    verify_grad(conv, [x_value, w_value], rng=0)
    verify_rop(conv, [x_value, w_value], rng=0)


@pytest.mark.parametrize("options", [OPTIONS[2], OPTIONS[4], OPTIONS[7]], ids=str)
def test_grad_of_grad(options):
    """The gradient ops' own gradients: d/dx and d/dw of a function of the gradients."""
    rng = np.random.default_rng(4)
    groups = options.get("num_groups", 1)
    x_value, w_value = _values(rng, (1, 2 * groups, 5, 6), (2 * groups, 2, 2, 3))

    def gradient_norm(x, w):
        cost = (T.nnet.conv2d(x, w, **options) ** 2).sum()
        gx, gw = sympile.grad(cost, [x, w])
        return (gx ** 2).sum() + (gw ** 3).sum()

    verify_grad(gradient_norm, [x_value, w_value], rng=0)
    verify_rop(lambda x, w: sympile.grad((T.nnet.conv2d(x, w, **options) ** 2).sum(), x),
               [x_value, w_value], rng=0)


def test_gradient_functions_and_transpose():
    rng = np.random.default_rng(5)
    options = dict(border_mode=1, subsample=(2, 2), filter_dilation=(1, 2))
    x_value, w_value = _values(rng, (2, 3, 7, 8), (4, 3, 3, 2))
    x, w = T.dtensor4("x"), T.dtensor4("w")
    output = T.nnet.conv2d(x, w, **options)
    gy = T.dtensor4("gy")
    gy_value = rng.standard_normal(sympile.function([x, w], output)(x_value, w_value).shape)
    gx, gw = sympile.grad((output * gy).sum(), [x, w])
    by_grad = sympile.function([x, w, gy], [gx, gw])(x_value, w_value, gy_value)
    wrt_inputs = abstract_conv.conv2d_grad_wrt_inputs(gy, w, x_value.shape, **options)
    wrt_weights = abstract_conv.conv2d_grad_wrt_weights(x, gy, w_value.shape, **options)
    by_function = sympile.function([x, w, gy], [wrt_inputs, wrt_weights])(x_value, w_value,
                                                                         gy_value)
    for a, b in zip(by_grad, by_function):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert wrt_inputs.type.shape[2:] == (7, 8) and wrt_weights.type.shape[2:] == (3, 2)
    transposed = T.nnet.conv2d_transpose(gy, w, output_shape=x_value.shape,
                                         border_mode=1, input_dilation=(2, 2),
                                         filter_dilation=(1, 2))
    np.testing.assert_allclose(sympile.function([w, gy], transposed)(w_value, gy_value),
                               by_grad[0], rtol=1e-12, atol=1e-12)


def test_static_shapes_and_hints():
    x = T.tensor("float32", shape=(None, 3, 28, 28))
    w = T.tensor("float32", shape=(6, 3, 5, 5))
    assert T.nnet.conv2d(x, w).type.shape == (None, 6, 24, 24)
    assert T.nnet.conv2d(x, w, border_mode="full", subsample=(2, 2)).type.shape == \
        (None, 6, 16, 16)
    y, v = T.ftensor4("y"), T.ftensor4("v")
    hinted = T.nnet.conv2d(y, v, input_shape=(None, 1, 8, 8), filter_shape=(2, 1, 3, 3))
    assert hinted.type.shape == (None, 2, 6, 6)
    f = sympile.function([y, v], hinted)
    assert f(np.zeros((4, 1, 8, 8), "float32"), np.zeros((2, 1, 3, 3), "float32")).shape == \
        (4, 2, 6, 6)
    with pytest.raises(Exception, match="shape"):
        f(np.zeros((4, 1, 9, 8), "float32"), np.zeros((2, 1, 3, 3), "float32"))


@pytest.mark.parametrize("mode", [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)])
def test_hints_smaller_than_the_filter_fail_at_run_time_not_when_built(mode):
    """Theano checks only the number of dimensions when the graph is built: a model built
    with placeholder sizes must build."""
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = T.nnet.conv2d(x, w, input_shape=(None, 1, 2, 2), filter_shape=(3, 1, 5, 5))
    assert y.type.shape == (None, 3, None, None)
    f = sympile.function([x, w], y, mode=mode)
    assert f(np.ones((1, 1, 6, 6)), np.ones((3, 1, 5, 5))).shape == (1, 3, 2, 2)
    with pytest.raises(ValueError, match="conv2d: the filter .* is larger than the padded "
                                         "input"):
        f(np.ones((1, 1, 2, 2)), np.ones((3, 1, 5, 5)))
    # The hints' other lengths still hold.
    with pytest.raises(ValueError, match="expected shape"):
        f(np.ones((1, 2, 6, 6)), np.ones((3, 2, 5, 5)))
    # The graph's own static shapes still make it certain when built; hints do not.
    small, large = T.tensor("float64", shape=(None, 1, 2, 2)), T.tensor("float64",
                                                                       shape=(3, 1, 5, 5))
    with pytest.raises(ValueError, match="conv2d: the filter .* is larger than the padded"):
        T.nnet.conv2d(small, large, input_shape=(None, 1, None, None))
    assert T.nnet.conv2d(small, w, filter_shape=(3, 1, 5, 5)).type.shape == \
        (None, 3, None, None)


def test_bad_input():
    x = T.tensor("float64", shape=(None, 3, 8, 8))
    with pytest.raises(ValueError, match="conv2d: the input has 3 channels but the filters "
                                         "expect 2"):
        T.nnet.conv2d(x, T.tensor("float64", shape=(4, 2, 3, 3)))
    with pytest.raises(ValueError, match="conv2d: the filter .* is larger than the padded"):
        T.nnet.conv2d(x, T.tensor("float64", shape=(4, 3, 9, 3)))
    with pytest.raises(TypeError, match="conv2d: input must be a 4-d tensor"):
        T.nnet.conv2d(T.dmatrix(), T.dtensor4())
    with pytest.raises(ValueError, match="border_mode must be"):
        T.nnet.conv2d(T.dtensor4(), T.dtensor4(), border_mode="same")
    with pytest.raises(ValueError, match="subsample must be >= 1"):
        T.nnet.conv2d(T.dtensor4(), T.dtensor4(), subsample=(0, 1))


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_c_gemm_matches_perform(options, dtype):
    """The im2col + gemm C code of the three ops against perform(), every option."""
    rng = np.random.default_rng(6)
    groups = options.get("num_groups", 1)
    x_value, w_value = (v.astype(dtype) for v in _values(rng, (3, 2 * groups, 7, 6),
                                                         (2 * groups, 2, 3, 2)))
    x, w = T.tensor(dtype, shape=(None,) * 4), T.tensor(dtype, shape=(None,) * 4)
    output = T.nnet.conv2d(x, w, **options)
    outputs = [output, *sympile.grad((output ** 2).sum(), [x, w])]
    c_function = sympile.function([x, w], outputs, mode=C_MODE)
    assert c_function._vm.fallback_nodes == []
    python_values = sympile.function([x, w], outputs, mode=PYTHON_MODE)(x_value, w_value)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for c_value, reference in zip(c_function(x_value, w_value), python_values):
        assert c_value.dtype == reference.dtype and c_value.shape == reference.shape
        np.testing.assert_allclose(c_value, reference, rtol=tolerance,
                                   atol=tolerance * np.abs(reference).max())


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_run_time_errors(mode):
    """The same errors at run time, with the shapes unknown when the graph was built, from
    perform() and from the C code."""
    a, b = T.dtensor4("a"), T.dtensor4("b")
    f = sympile.function([a, b], T.nnet.conv2d(a, b), mode=mode)
    with pytest.raises(ValueError, match="conv2d: the input has 3 channels but the filters "
                                         "expect 2"):
        f(np.zeros((1, 3, 5, 5)), np.zeros((2, 2, 3, 3)))
    with pytest.raises(ValueError, match="conv2d: the filter .* is larger than the padded "
                                         "input"):
        f(np.zeros((1, 2, 2, 5)), np.zeros((2, 2, 3, 3)))


def _conv_point(x_shape, w_shape):
    return lambda rng: [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]


# The op table's rows (tests/link/c/test_op_table.py runs them on the C backend).
GRAD_CASES = [
    GradCase("conv2d valid", lambda x, w: T.nnet.conv2d(x, w),
             _conv_point((2, 3, 6, 5), (4, 3, 3, 2))),
    GradCase("conv2d half strided flipped", lambda x, w: T.nnet.conv2d(
        x, w, border_mode="half", subsample=(2, 1)), _conv_point((1, 2, 7, 6), (3, 2, 3, 3))),
    GradCase("conv2d full dilated groups", lambda x, w: T.nnet.conv2d(
        x, w, border_mode="full", filter_dilation=(1, 2), num_groups=2, filter_flip=False),
        _conv_point((2, 4, 5, 6), (4, 2, 2, 2))),
    GradCase("conv2d_grad_wrt_inputs", lambda gy, w: abstract_conv.conv2d_grad_wrt_inputs(
        gy, w, (2, 3, 6, 5), border_mode=1, subsample=(2, 2)),
        _conv_point((2, 4, 3, 3), (4, 3, 3, 2))),
    GradCase("conv2d_grad_wrt_weights", lambda x, gy: abstract_conv.conv2d_grad_wrt_weights(
        x, gy, (4, 3, 3, 2), border_mode="valid"), _conv_point((2, 3, 6, 5), (2, 4, 4, 4))),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=repr)
def test_grad_cases(case):
    check_grad_case(case)


@requires_compiler
@pytest.mark.parametrize("options", [dict(), dict(border_mode="half", subsample=(1, 2, 1)),
                                     dict(border_mode=(1, 0, 2), filter_dilation=(2, 1, 1),
                                          filter_flip=False, num_groups=2)], ids=str)
def test_c_gemm_3d_matches_perform(options):
    rng = np.random.default_rng(7)
    groups = options.get("num_groups", 1)
    x_value, w_value = _values(rng, (2, 2 * groups, 5, 6, 4), (2 * groups, 2, 2, 3, 2))
    x, w = T.tensor("float64", shape=(None,) * 5), T.tensor("float64", shape=(None,) * 5)
    output = T.nnet.conv3d(x, w, **options)
    outputs = [output, *sympile.grad((output ** 2).sum(), [x, w])]
    c_function = sympile.function([x, w], outputs, mode=C_MODE)
    assert c_function._vm.fallback_nodes == []
    expected = reference_conv(x_value, w_value, **options)
    c_values = c_function(x_value, w_value)
    np.testing.assert_allclose(c_values[0], expected, rtol=1e-12, atol=1e-12)
    for c_value, reference in zip(c_values, sympile.function([x, w], outputs,
                                                             mode=PYTHON_MODE)(x_value, w_value)):
        np.testing.assert_allclose(c_value, reference, rtol=1e-12, atol=1e-12)


# -- Theano's op classes and bilinear_upsampling ----------------------------------------------

THEANO_CLASSES = {2: (abstract_conv.AbstractConv2d, abstract_conv.AbstractConv2d_gradWeights,
                      abstract_conv.AbstractConv2d_gradInputs),
                  3: (abstract_conv.AbstractConv3d, abstract_conv.AbstractConv3d_gradWeights,
                      abstract_conv.AbstractConv3d_gradInputs)}


@pytest.mark.parametrize("mode", [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)])
@pytest.mark.parametrize("convdim", [2, 3])
def test_theano_classes_compute_the_functions_values(mode, convdim):
    forward, grad_weights, grad_inputs = THEANO_CLASSES[convdim]
    rng = np.random.default_rng(7)
    spatial, kernel = (5,) * convdim, (3,) * convdim
    x_value = rng.normal(size=(2, 2, *spatial))
    w_value = rng.normal(size=(3, 2, *kernel))
    options = dict(border_mode=1, subsample=(2,) + (1,) * (convdim - 1))
    x, w = T.tensor("float64", shape=(None,) * (convdim + 2)), \
        T.tensor("float64", shape=(None,) * (convdim + 2))
    op = forward(imshp=(None, 2, *spatial), kshp=(3, 2, *kernel), **options)
    y = op(x, w)
    assert isinstance(y.owner.op, forward) and y.type.shape[1:] == \
        abstract_conv.get_conv_output_shape((None, 2, *spatial), (3, 2, *kernel),
                                            (1,) * convdim, options["subsample"])[1:]
    function = abstract_conv.conv2d if convdim == 2 else abstract_conv.conv3d
    reference = function(x, w, **options)
    assert isinstance(reference.owner.op, forward)
    gy = T.tensor("float64", shape=(None,) * (convdim + 2))
    gy_value = rng.normal(size=sympile.function([x, w], y, mode=mode)(x_value, w_value).shape)
    outputs = [y, grad_weights(imshp=(None, 2, *spatial), **options)(x, gy, kernel),
               grad_inputs(kshp=(3, 2, *kernel), **options)(w, gy, spatial)]
    expected = [reference, *sympile.grad(None, [w, x], known_grads={reference: gy})]
    values = [x_value, w_value, gy_value]
    got = sympile.function([x, w, gy], outputs, mode=mode)(*values)
    wanted = sympile.function([x, w, gy], expected, mode=PYTHON_MODE)(*values)
    for actual, reference_value in zip(got, wanted):
        np.testing.assert_allclose(actual, reference_value, rtol=1e-10, atol=1e-10)
    # The gradients of Theano's classes are Theano's classes.
    gx, gw = sympile.grad(y.sum(), [x, w])
    assert isinstance(gx.owner.op, grad_inputs) and isinstance(gw.owner.op, grad_weights)
    # The hints are checked when the function runs.
    f = sympile.function([x, w], y, mode=mode)
    with pytest.raises(ValueError, match="expected shape"):
        f(rng.normal(size=(2, 2, *(6,) * convdim)), w_value)


def test_theano_classes_arguments():
    with pytest.raises(ValueError, match="unshared .* 2d only"):
        abstract_conv.AbstractConv3d(unshared=True)
    with pytest.raises(TypeError, match="border_mode's padding must be an int or a tuple of "
                                        "2 ints"):
        abstract_conv.AbstractConv2d(border_mode=((1, 2, 3), 0))
    with pytest.raises(ValueError, match=r"border_mode's padding must be >= 0, got \(1, -1\)"):
        abstract_conv.AbstractConv2d(border_mode=((1, -1), 0))
    # An equal pair is its int: the same op.
    assert abstract_conv.AbstractConv2d(border_mode=((1, 1), (2, 0))) == \
        abstract_conv.AbstractConv2d(border_mode=(1, (2, 0)))
    with pytest.raises(ValueError, match="imshp must be None or 4 entries"):
        abstract_conv.AbstractConv2d(imshp=(1, 2, 3))
    with pytest.raises(ValueError, match="kshp entries must be None or constant ints"):
        abstract_conv.AbstractConv2d(kshp=(1, 2, 3, T.lscalar()))
    op = abstract_conv.AbstractConv2d(imshp=[None, T.constant(3), 8, 8])
    assert op.imshp == (None, 3, 8, 8)
    assert op == abstract_conv.AbstractConv2d(imshp=(None, 3, 8, 8))
    assert op != abstract_conv.AbstractConv2d()
    with pytest.raises(ValueError, match="contradicts"):
        op(T.tensor("float64", shape=(None, 4, None, None)), T.dtensor4())


def bilinear_reference(images: np.ndarray, ratio: int) -> np.ndarray:
    """Theano's definition, one axis at a time: the border rows repeated once outside, each
    padded row scattered at stride `ratio` with the kernel 1, ..., ratio, ..., 1 (over
    ratio), the result cropped by the padding."""
    kernel = np.concatenate([np.arange(1, ratio + 1), np.arange(ratio - 1, 0, -1)]) / ratio
    pad = 2 * ratio - (ratio - 1) // 2 - 1
    result = images
    for axis in (2, 3):
        padded = np.concatenate([result.take([0], axis), result, result.take([-1], axis)],
                                axis)
        length = result.shape[axis] * ratio
        scattered = np.zeros(padded.shape[:axis] + (length + 2 * pad,) + padded.shape[axis + 1:])
        for row in range(padded.shape[axis]):
            for tap, weight in enumerate(kernel):
                position = row * ratio + tap
                if position < scattered.shape[axis]:
                    index = [slice(None)] * 4
                    index[axis] = position
                    source = [slice(None)] * 4
                    source[axis] = row
                    scattered[tuple(index)] += weight * padded[tuple(source)]
        crop = [slice(None)] * 4
        crop[axis] = slice(pad, pad + length)
        result = scattered[tuple(crop)]
    return result


@pytest.mark.parametrize("mode", [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)])
@pytest.mark.parametrize("ratio", [1, 2, 3, 4])
@pytest.mark.parametrize("use_1D_kernel", [True, False])
def test_bilinear_upsampling(mode, ratio, use_1D_kernel):
    x = T.dtensor4("x")
    value = np.random.default_rng(ratio).normal(size=(2, 3, 4, 5))
    up = abstract_conv.bilinear_upsampling(x, ratio, use_1D_kernel=use_1D_kernel)
    result = sympile.function([x], up, mode=mode)(value)
    assert result.shape == (2, 3, 4 * ratio, 5 * ratio)
    np.testing.assert_allclose(result, bilinear_reference(value, ratio), rtol=1e-12,
                               atol=1e-12)
    # A constant image stays constant; the interior interpolates linearly.
    flat = sympile.function([x], up, mode=mode)(np.full((1, 1, 3, 3), 2.5))
    np.testing.assert_allclose(flat, 2.5)


def test_bilinear_upsampling_arguments_and_gradient():
    x = T.dtensor4("x")
    up = abstract_conv.bilinear_upsampling(x, T.constant(2), batch_size=2,
                                           num_input_channels=3)
    f = sympile.function([x], up)
    assert f(np.zeros((2, 3, 2, 2))).shape == (2, 3, 4, 4)
    with pytest.raises(ValueError, match="expected shape"):
        f(np.zeros((1, 3, 2, 2)))
    with pytest.raises(TypeError, match="ratio must be a constant int"):
        abstract_conv.bilinear_upsampling(x, T.lscalar())
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        abstract_conv.bilinear_upsampling(x, 0)
    with pytest.raises(TypeError, match="input must be a 4-d float tensor"):
        abstract_conv.bilinear_upsampling(T.dmatrix(), 2)
    np.testing.assert_allclose(abstract_conv.bilinear_kernel_1D(3).data,
                               [1 / 3, 2 / 3, 1, 2 / 3, 1 / 3])
    np.testing.assert_allclose(abstract_conv.bilinear_kernel_2D(2, normalize=False).data,
                               [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    verify_grad(lambda a: abstract_conv.bilinear_upsampling(a, 2),
                [np.random.default_rng(0).normal(size=(1, 2, 3, 3))], rng=0)


@given(length=st.integers(1, 19), kernel=st.integers(1, 9),
       border=st.sampled_from(["valid", "half", "full", (0, 0), (2, 1)]),
       step=st.integers(1, 3), dilation=st.integers(1, 3))
def test_theano_shape_functions_invert_the_output_shape(length, kernel, border, step,
                                                        dilation):
    """Theano's get_conv_gradinputs_shape and get_conv_gradweights_shape give back the
    image's and the filters' shapes from the output's where the geometry decides them (None
    where it does not), and check_conv_gradinputs_shape accepts exactly the output shape
    the convolution gives (and None or symbolic lengths)."""
    image, filters = (5, 6, length, length + 1), (7, 6, kernel, kernel)
    dilations = (dilation, dilation)
    output = abstract_conv.get_conv_output_shape(image, filters, border, (1, 1), dilations)
    if min(output[2:]) < 1:
        return
    assert abstract_conv.get_conv_gradinputs_shape(filters, output, border, (1, 1),
                                                   dilations) == image
    weights = abstract_conv.get_conv_gradweights_shape(image, output, border, (1, 1),
                                                       dilations)
    assert weights == (filters[:2] + (None, None) if border == "half" else filters)
    assert abstract_conv.get_conv_gradinputs_shape(filters, output, border, (2, 1),
                                                   dilations) == image[:2] + (None, image[3])
    strided = abstract_conv.get_conv_output_shape(image, filters, border, (step, step),
                                                  dilations)
    check = abstract_conv.check_conv_gradinputs_shape
    assert check(image, filters, strided, border, (step, step), dilations)
    assert check(image, filters, (None, None, strided[2], T.iscalar()), border,
                 (step, step), dilations)
    assert not check(image, filters, (1,) + strided[1:], border, (step, step), dilations)
    for offset in (-2, 1):
        assert not check(image, filters, strided[:3] + (strided[3] + offset,), border,
                         (step, step), dilations)


def test_assert_conv_shape_and_assert_shape():
    """Theano's assert_conv_shape: batch and channels >= 0, spatial lengths > 0, checked
    when the function runs (AssertionError) or at once for constants (ValueError);
    assert_shape: the given lengths checked when the function runs."""
    shape = tuple(T.iscalar() for _ in range(4))
    f = sympile.function(list(shape), list(abstract_conv.assert_conv_shape(shape)))
    assert [int(v) for v in f(1, 2, 3, 4)] == [1, 2, 3, 4]
    assert [int(v) for v in f(0, 0, 1, 1)] == [0, 0, 1, 1]
    for bad in ((3, 3, 3, 0), (3, 3, -1, 3), (3, -1, 3, 3)):
        with pytest.raises(AssertionError, match="invalid shape"):
            f(*bad)
    with pytest.raises(ValueError, match=r"dim\[2\] must be > 0"):
        abstract_conv.assert_conv_shape((1, 2, 0, 3))
    x, rows, cols = T.tensor4("x"), T.iscalar("rows"), T.iscalar("cols")
    g = sympile.function([x, rows, cols],
                         abstract_conv.assert_shape(x, [None, rows, cols, None], "bad x"))
    value = np.ones((3, 5, 7, 11))
    np.testing.assert_array_equal(g(value, 5, 7), value)
    for bad in ((5, 0), (0, 7), (7, 7)):
        with pytest.raises(AssertionError, match="bad x"):
            g(value, *bad)
    assert abstract_conv.assert_shape(x, [None] * 4) is x


@pytest.mark.parametrize("convdim, options", [
    (2, dict()), (2, dict(border_mode="half", subsample=(2, 1), filter_flip=False)),
    (2, dict(border_mode=1, filter_dilation=(2, 1))), (3, dict()),
    (3, dict(border_mode="full", filter_flip=False))])
def test_separable_convolutions(convdim, options):
    """Theano's separable_conv2d and separable_conv3d: each channel convolved by its own
    depthwise filters (two per channel here), then the pointwise filters mixing them,
    against the convolutions' definition; with the shape hints given, the same values."""
    rng = np.random.default_rng(11)
    spatial = (7, 6) if convdim == 2 else (4, 5, 4)
    x_value = rng.standard_normal((2, 3, *spatial))
    depthwise = rng.standard_normal((6, 1) + (3,) * convdim)
    pointwise = rng.standard_normal((4, 6) + (1,) * convdim)
    expected = reference_conv(reference_conv(x_value, depthwise, num_groups=3, **options),
                              pointwise, filter_flip=options.get("filter_flip", True))
    tensor = T.dtensor4 if convdim == 2 else T.dtensor5
    x, d, p = tensor("x"), tensor("d"), tensor("p")
    separable = (abstract_conv.separable_conv2d if convdim == 2
                 else abstract_conv.separable_conv3d)
    plain = separable(x, d, p, 3, **options)
    hinted = separable(x, d, p, 3, input_shape=x_value.shape,
                       depthwise_filter_shape=depthwise.shape,
                       pointwise_filter_shape=pointwise.shape, **options)
    f = sympile.function([x, d, p], [plain, hinted])
    for value in f(x_value, depthwise, pointwise):
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-10)


UNSHARED = [
    dict(),
    dict(border_mode="full", subsample=(2, 2), filter_flip=False),
    dict(border_mode=((1, 0), 2), subsample=(2, 1), num_groups=2),
    dict(border_mode="half", filter_dilation=(2, 1)),
]


def _unshared_values(rng, options, x_shape=(2, 4, 5, 4), kernel=(3, 2)):
    """x and unshared filters (3 x groups filters) for the output x and kernel give."""
    groups = options.get("num_groups", 1)
    x_value = rng.standard_normal(x_shape)
    spatial = abstract_conv.get_conv_output_shape(
        x_shape, (None, None, *kernel), abstract_conv._border_mode(
            options.get("border_mode", "valid"), 2, "test"),
        options.get("subsample", (1, 1)), options.get("filter_dilation", (1, 1)))[2:]
    w_value = rng.standard_normal((3 * groups, *spatial, x_shape[1] // groups, *kernel))
    return x_value, w_value


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
@pytest.mark.parametrize("options", UNSHARED, ids=str)
def test_unshared_conv2d(options, mode):
    """A locally connected layer: one filter per output position, against the definition,
    its three ops' shapes, and the numeric gradients (which check the two transposes)."""
    rng = np.random.default_rng(11)
    x_value, w_value = _unshared_values(rng, options)
    x, w = T.dtensor4("x"), T.tensor("float64", shape=(None,) * 6, name="w")
    output = T.nnet.conv2d(x, w, unshared=True, **options)
    gx, gw = sympile.grad((output ** 2).sum(), [x, w])
    f = sympile.function([x, w], [output, gx, gw, output.shape, gw.shape], mode=mode)
    value, gx_value, gw_value, shape, gw_shape = f(x_value, w_value)
    expected = reference_conv(x_value, w_value, unshared=True, **options)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert tuple(shape) == expected.shape and tuple(gw_shape) == w_value.shape
    assert gx_value.shape == x_value.shape and gw_value.shape == w_value.shape

    def conv(x, w):
        return T.nnet.conv2d(x, w, unshared=True, **options)

    verify_grad(conv, [x_value, w_value], rng=0)
    verify_rop(conv, [x_value, w_value], rng=0)


def test_unshared_gradient_functions_and_errors():
    rng = np.random.default_rng(12)
    x_value, w_value = _unshared_values(rng, dict(subsample=(1, 2)))
    x, w = T.dtensor4("x"), T.tensor("float64", shape=(None,) * 6, name="w")
    gy = T.dtensor4("gy")
    output = T.nnet.conv2d(x, w, subsample=(1, 2), unshared=True)
    gy_value = rng.standard_normal(sympile.function([x, w], output)(x_value, w_value).shape)
    expected = sympile.function([x, w, gy], sympile.grad(None, [x, w],
                                                          known_grads={output: gy}))(
        x_value, w_value, gy_value)
    gx = abstract_conv.conv2d_grad_wrt_inputs(gy, w, x_value.shape, subsample=(1, 2),
                                              unshared=True)
    gw = abstract_conv.conv2d_grad_wrt_weights(x, gy, w_value.shape, subsample=(1, 2),
                                               unshared=True)
    values = sympile.function([x, w, gy], [gx, gw], on_unused_input="ignore")(
        x_value, w_value, gy_value)
    for value, reference in zip(values, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-12)
    # The stride 2 leaves the columns' filter length undecided.
    assert abstract_conv.get_conv_gradweights_shape(
        x_value.shape, gy_value.shape, "valid", (1, 2), unshared=True) == \
        w_value.shape[:-1] + (None,)
    f = sympile.function([x, w], output)
    with pytest.raises(ValueError, match="hold .* output positions, the output has"):
        f(x_value, w_value[:, :, :1])
    with pytest.raises(TypeError, match="filters must be a 6-d tensor"):
        T.nnet.conv2d(x, T.dtensor4(), unshared=True)


@pytest.mark.parametrize("mode", [pytest.param(PYTHON_MODE, id="python"),
                                  pytest.param(C_MODE, id="c", marks=requires_compiler)])
def test_causal_conv1d(mode):
    """Theano's example (its test's precomputed output, dilation 2), the output at t
    against the input up to t only, and the gradients."""
    image = np.array([[[2, 4, 9, 5, 8], [0, 0, 4, 0, 5]],
                      [[2, 5, 8, 5, 5], [1, 3, 0, 7, 9]],
                      [[7, 0, 7, 1, 0], [0, 1, 4, 7, 2]]], dtype="float64")
    kernel = np.array([[[5, 3, 1], [3, 1, 0]], [[6, 4, 9], [2, 2, 7]]], dtype="float64")
    expected = np.array([[[10, 20, 63, 37, 88], [12, 24, 70, 46, 120]],
                         [[13, 34, 47, 64, 78], [14, 36, 58, 70, 105]],
                         [[35, 3, 68, 27, 38], [42, 2, 78, 22, 103]]], dtype="float64")
    x, w = T.dtensor3("x"), T.dtensor3("w")
    output = abstract_conv.causal_conv1d(x, w, kernel.shape, filter_dilation=2)
    f = sympile.function([x, w], output, mode=mode)
    np.testing.assert_array_equal(f(image, kernel), expected)
    # Causal: changing the input after t leaves the outputs up to t alone.
    changed = image.copy()
    changed[:, :, 3:] += 100
    np.testing.assert_array_equal(f(changed, kernel)[:, :, :3], expected[:, :, :3])
    verify_grad(lambda x, w: abstract_conv.causal_conv1d(x, w, kernel.shape, subsample=2),
                [image, kernel], rng=0)
    with pytest.raises(TypeError, match="filter_shape's filter length must be a constant"):
        abstract_conv.causal_conv1d(x, w, (2, 2, T.lscalar()))
