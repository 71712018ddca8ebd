"""Theano's T.nnet.corr and corr3d (CorrMM, Corr3dMM and their gradients) against scipy's
correlation and the gradients of the forward op, with and without the gradients' shape
argument; FAST_RUN's lowering of the abstract convolutions to them; check_stack_trace."""

import numpy as np
import pytest
from scipy import signal

import sympile
import sympile.tensor as T
from sympile.gof.opt import check_stack_trace
from sympile.tensor.nnet.corr import CorrMM, CorrMM_gradInputs, CorrMM_gradWeights
from sympile.tensor.nnet.corr3d import Corr3dMM, Corr3dMM_gradInputs, Corr3dMM_gradWeights

RNG = np.random.default_rng(0)


def _correlate(images, filters, pad):
    padded = np.pad(images, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    return np.stack([np.stack([sum(signal.correlate2d(padded[b, c], filters[o, c], "valid")
                                   for c in range(images.shape[1]))
                               for o in range(filters.shape[0])])
                     for b in range(images.shape[0])])


@pytest.mark.parametrize("border_mode, pad", [("valid", (0, 0)), ((1, 2), (1, 2)),
                                              ("full", (2, 1)), ("half", (1, 1))])
def test_corrmm_and_its_gradients(border_mode, pad):
    x, w, top = T.dtensor4("x"), T.dtensor4("w"), T.dtensor4("top")
    images, filters = RNG.normal(size=(2, 3, 6, 7)), RNG.normal(size=(4, 3, 3, 2))
    out = CorrMM(border_mode=border_mode)(x, w)
    assert not out.owner.op.filter_flip
    expected = _correlate(images, filters, pad)
    np.testing.assert_allclose(sympile.function([x, w], out)(images, filters), expected,
                               rtol=1e-12)
    cost = (out * top).sum()
    gradients = sympile.function([x, w, top], sympile.grad(cost, [w, x]))
    gradient_top = RNG.normal(size=expected.shape)
    want_w, want_x = gradients(images, filters, gradient_top)
    explicit = [CorrMM_gradWeights(border_mode=border_mode)(x, top, (3, 2)),
                CorrMM_gradInputs(border_mode=border_mode)(w, top, (6, 7))]
    implied = [CorrMM_gradInputs(border_mode=border_mode)(w, top)]
    if border_mode != "half":
        implied.append(CorrMM_gradWeights(border_mode=border_mode)(x, top))
    f = sympile.function([x, w, top], explicit + implied, on_unused_input="ignore")
    got = f(images, filters, gradient_top)
    for value, want in zip(got, [want_w, want_x, want_x, want_w]):
        np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-12)


def test_shape_is_required_where_theano_required_it():
    x, top = T.dtensor4("x"), T.dtensor4("top")
    with pytest.raises(ValueError, match="shape .* must be given"):
        CorrMM_gradWeights(border_mode="half")(x, top)
    with pytest.raises(ValueError, match="shape .* must be given"):
        CorrMM_gradInputs(subsample=(2, 2))(x, top)
    with pytest.raises(ValueError, match="does not flip its filters"):
        CorrMM(filter_flip=True)


def _correlate3d(images, filters, pad):
    padded = np.pad(images, ((0, 0), (0, 0)) + tuple((p, p) for p in pad))
    return np.stack([np.stack([sum(signal.correlate(padded[b, c], filters[o, c], "valid")
                                   for c in range(images.shape[1]))
                               for o in range(filters.shape[0])])
                     for b in range(images.shape[0])])


@pytest.mark.parametrize("border_mode, pad", [("valid", (0, 0, 0)), ((1, 0, 2), (1, 0, 2)),
                                              ("full", (1, 2, 1)), ("half", (1, 1, 1))])
def test_corr3dmm_and_its_gradients(border_mode, pad):
    """Theano's T.nnet.corr3d: Corr3dMM against scipy's 3d correlation, its two gradient ops
    (shape given and implied) against the forward op's gradients."""
    x, w, top = T.dtensor5("x"), T.dtensor5("w"), T.dtensor5("top")
    images, filters = RNG.normal(size=(2, 2, 4, 5, 4)), RNG.normal(size=(3, 2, 2, 3, 2))
    out = Corr3dMM(border_mode=border_mode)(x, w)
    expected = _correlate3d(images, filters, pad)
    np.testing.assert_allclose(sympile.function([x, w], out)(images, filters), expected,
                               rtol=1e-12)
    gradients = sympile.function([x, w, top], sympile.grad((out * top).sum(), [w, x]))
    gradient_top = RNG.normal(size=expected.shape)
    want_w, want_x = gradients(images, filters, gradient_top)
    ops = [Corr3dMM_gradWeights(border_mode=border_mode)(x, top, (2, 3, 2)),
           Corr3dMM_gradInputs(border_mode=border_mode)(w, top, (4, 5, 4)),
           Corr3dMM_gradInputs(border_mode=border_mode)(w, top)]
    if border_mode != "half":
        ops.append(Corr3dMM_gradWeights(border_mode=border_mode)(x, top))
    got = sympile.function([x, w, top], ops, on_unused_input="ignore")(images, filters,
                                                                        gradient_top)
    for value, want in zip(got, [want_w, want_x, want_x, want_w]):
        np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="shape .* must be given"):
        Corr3dMM_gradInputs(subsample=(1, 2, 1))(w, top)
    # Theano's positional order: openmp before num_groups.
    assert Corr3dMM("valid", (1, 1, 1), (1, 1, 1), None, 2).num_groups == 2


@pytest.mark.parametrize("convdim", [2, 3])
@pytest.mark.parametrize("flip", [True, False])
def test_fast_run_lowers_abstract_convolutions_to_correlations(convdim, flip):
    """FAST_RUN's graph holds Theano's correlation ops where the abstract ones were (the
    filters reversed for a convolution), with the same values as the unlowered graph, and
    every lowered node still says where the user built it; excluding conv_gemm keeps the
    abstract ops."""
    tensor = T.dtensor4 if convdim == 2 else T.dtensor5
    x, w = tensor("x"), tensor("w")
    conv = T.nnet.conv2d if convdim == 2 else T.nnet.conv3d
    out = conv(x, w, filter_flip=flip, border_mode="half")
    outputs = [out, *sympile.grad((out ** 2).sum(), [x, w])]
    lowered = sympile.function([x, w], outputs, mode="FAST_RUN")
    kept = sympile.function([x, w], outputs,
                            mode=sympile.compile.mode.get_mode("FAST_RUN").excluding("conv_gemm"))
    classes = (CorrMM, CorrMM_gradWeights, CorrMM_gradInputs) if convdim == 2 else (
        Corr3dMM, Corr3dMM_gradWeights, Corr3dMM_gradInputs)
    lowered_ops = {type(node.op) for node in lowered.maker.fgraph.toposort()}
    assert set(classes) <= lowered_ops
    assert not set(classes) & {type(node.op) for node in kept.maker.fgraph.toposort()}
    for cls in classes:
        assert check_stack_trace(lowered, ops_to_check=cls)
    spatial = (5, 4) if convdim == 2 else (4, 3, 4)
    images = RNG.normal(size=(2, 3, *spatial))
    filters = RNG.normal(size=(2, 3) + (3,) * convdim)
    for got, want in zip(lowered(images, filters), kept(images, filters)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_check_stack_trace_selections_and_a_missing_trace():
    """check_stack_trace selects by 'last', 'all', class, instance or function, fails when a
    selected output has no trace, and raises, warns or ignores when it selects nothing."""
    x, w = T.dtensor4("x"), T.dtensor4("w")
    f = sympile.function([x, w], T.nnet.conv2d(x, w, filter_flip=False))
    corr_node = next(node for node in f.maker.fgraph.toposort()
                     if isinstance(node.op, CorrMM))
    assert check_stack_trace(f) and check_stack_trace(f, "all")
    assert check_stack_trace(f, ops_to_check=corr_node.op)
    assert check_stack_trace(f, ops_to_check=lambda node: node is corr_node)
    corr_node.outputs[0].tag.trace = None
    assert not check_stack_trace(f, ops_to_check=[CorrMM])
    assert not check_stack_trace(f.maker.fgraph, "last")
    with pytest.raises(ValueError, match="not in the graph"):
        check_stack_trace(f, ops_to_check=CorrMM_gradInputs)
    with pytest.warns(UserWarning, match="not in the graph"):
        assert check_stack_trace(f, ops_to_check=CorrMM_gradInputs, bug_print="warn")
    assert check_stack_trace(f, ops_to_check=CorrMM_gradInputs, bug_print="ignore")
    with pytest.raises(ValueError, match="'last' or 'all'"):
        check_stack_trace(f, "first")
