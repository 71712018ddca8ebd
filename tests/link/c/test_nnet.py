"""C code of the fused CrossentropySoftmax1Hot and CrossentropySoftmax1HotDx against the
Python backend: values, dtypes, strided inputs, and the same errors."""

import numpy as np
import pytest

import sympile.tensor as T
from sympile.tensor import nnet
from tests.link.c.utils import compare_backends, compile_c, requires_compiler

pytestmark = requires_compiler

rng = np.random.default_rng(11)


def _logits(dtype: str, layout: str) -> np.ndarray:
    if layout == "c":
        return rng.standard_normal((5, 4)).astype(dtype)
    if layout == "f":
        return np.asfortranarray(rng.standard_normal((5, 4)).astype(dtype))
    if layout == "strided":
        return rng.standard_normal((10, 8)).astype(dtype)[::2, ::2]
    if layout == "negative":
        return rng.standard_normal((5, 4)).astype(dtype)[::-1, ::-1]
    if layout == "extreme":
        return np.array([[1e4, 0, -np.inf, 3], [-np.inf] * 4, [np.inf, 1, 2, 3],
                         [-1e4, -1e4, 0, 1], [0, 0, 0, 0]], dtype=dtype)
    return np.zeros((0, 4), dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["c", "f", "strided", "negative", "extreme", "empty"])
@pytest.mark.parametrize("target_dtype", ["int64", "int32", "uint8"])
def test_crossentropy_softmax_matches_python_backend(dtype, layout, target_dtype):
    x = T.tensor(dtype=dtype, shape=(None, None))
    targets = T.tensor(dtype=target_dtype, shape=(None,))
    loss, probabilities = nnet.CrossentropySoftmax1Hot()(x, targets)
    values = _logits(dtype, layout)
    labels = rng.integers(0, 4, values.shape[0]).astype(target_dtype)[::-1]
    compare_backends([loss, probabilities], [x, targets], [values, labels])


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "float64"),
                                    ("float32", "float64"), ("float64", "float32")])
@pytest.mark.parametrize("layout", ["c", "f", "strided", "negative", "empty"])
def test_crossentropy_softmax_dx_matches_python_backend(dtypes, layout):
    loss_dtype, probability_dtype = dtypes
    loss_grad = T.tensor(dtype=loss_dtype, shape=(None,))
    probabilities = T.tensor(dtype=probability_dtype, shape=(None, None))
    targets = T.lvector("targets")
    output = nnet.CrossentropySoftmax1HotDx()(loss_grad, probabilities, targets)
    values = _logits(probability_dtype, layout)
    loss_values = rng.standard_normal(2 * values.shape[0]).astype(loss_dtype)[::2]
    labels = rng.integers(0, 4, values.shape[0]).astype("int64")
    result = compare_backends(output, [loss_grad, probabilities, targets],
                              [loss_values, values, labels])
    assert result.dtype == output.type.dtype


def test_fused_gradient_of_crossentropy_runs_c_code():
    x = T.dmatrix("x")
    targets = T.lvector("targets")
    loss, _ = nnet.CrossentropySoftmax1Hot()(x, targets)
    cost = loss.sum()
    gradient = T.grad(cost, x)
    compare_backends([cost, gradient], [x, targets],
                     [rng.standard_normal((6, 3)), np.array([0, 2, 1, 1, 0, 2])])


@pytest.mark.parametrize("op_inputs", ["forward", "dx"])
def test_bad_targets_raise_as_perform(op_inputs):
    x = T.dmatrix("x")
    targets = T.lvector("targets")
    dloss = T.dvector("dloss")
    if op_inputs == "forward":
        inputs, output = [x, targets], nnet.CrossentropySoftmax1Hot()(x, targets)[0]
        prefix = []
    else:
        inputs = [dloss, x, targets]
        output = nnet.CrossentropySoftmax1HotDx()(dloss, x, targets)
        prefix = [np.ones(3)]
    function = compile_c(inputs, output)
    with pytest.raises(IndexError, match=r"must be in \[0, 4\), got values from -1 to 2"):
        function(*prefix, np.ones((3, 4)), np.array([0, -1, 2]))
    with pytest.raises(IndexError, match=r"got values from 0 to 4"):
        function(*prefix, np.ones((3, 4)), np.array([0, 4, 2]))
    with pytest.raises(ValueError, match="2 targets for 3 rows"):
        function(*prefix, np.ones((3, 4)), np.array([0, 1]))


def test_dx_loss_length_mismatch_raises():
    dloss, sm, targets = T.dvector("dloss"), T.dmatrix("sm"), T.lvector("targets")
    function = compile_c([dloss, sm, targets],
                         nnet.CrossentropySoftmax1HotDx()(dloss, sm, targets))
    with pytest.raises(ValueError, match="dloss has 2 entries for 3 rows"):
        function(np.ones(2), np.ones((3, 4)), np.array([0, 1, 2]))
