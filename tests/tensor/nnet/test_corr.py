"""Theano's T.nnet.corr (CorrMM and its gradients) against scipy's correlation and the
gradients of the forward op, with and without the gradients' shape argument."""

import numpy as np
import pytest
from scipy import signal

import sympile
import sympile.tensor as T
from sympile.tensor.nnet.corr import CorrMM, CorrMM_gradInputs, CorrMM_gradWeights

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
