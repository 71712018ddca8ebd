"""C code of Softmax, LogSoftmax and SoftmaxGrad against the Python backend."""

import numpy as np
import pytest

import sympile.tensor as T
from sympile.tensor import nnet
from tests.link.c.utils import compare_backends, compile_c, requires_compiler

pytestmark = requires_compiler

rng = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_matches_python_backend(dtype):
    x = T.tensor(dtype=dtype, shape=(None, None, None))
    dy = T.tensor(dtype=dtype, shape=(None, None, None))
    outputs = [nnet.softmax(x), nnet.log_softmax(x, 0), nnet.softmax(x, 1),
               nnet.SoftmaxGrad(1)(dy, nnet.softmax(x, 1))]
    big = np.array([1e4, 0.0, -np.inf, 3.0] * 6, dtype=dtype).reshape(2, 3, 4)
    for values in (rng.standard_normal((2, 3, 4)).astype(dtype), big,
                   rng.standard_normal((4, 3, 2)).astype(dtype).transpose(2, 1, 0)[:, ::-1],
                   rng.standard_normal((2, 6, 4)).astype(dtype)[:, ::2],
                   np.zeros((2, 0, 3), dtype=dtype)):
        gradient = rng.standard_normal(values.shape).astype(dtype)
        compare_backends(outputs, [x, dy], [values, gradient])


def test_softmax_grad_shape_mismatch_raises():
    dy, sm = T.dmatrix("dy"), T.dmatrix("sm")
    function = compile_c([dy, sm], nnet.SoftmaxGrad(-1)(dy, sm))
    with pytest.raises(ValueError, match="same shape"):
        function(np.zeros((2, 3)), np.zeros((2, 4)))
