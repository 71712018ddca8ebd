"""The LAPACK C of the linear-algebra ops (tensor/linalg/lapack_c.py, lapack.c): it runs
(no perform fallback) in float32 and float64, fails as perform does, and is clean under
AddressSanitizer."""

from __future__ import annotations

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.tensor import nlinalg, slinalg
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.tensor.linalg import samples

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


@requires_compiler
def test_lapack_c_code_runs_and_fails_as_perform():
    """cholesky, solve and solve_triangular run LAPACK from C (no perform), float32 too."""
    for dtype in ("float32", "float64"):
        a = T.tensor(dtype, shape=(None, None, None))
        b = T.tensor(dtype, shape=(None, None, None))
        outputs = [slinalg.cholesky(a), slinalg.cholesky(a, lower=False), slinalg.solve(a, b),
                   slinalg.solve_triangular(a, b, lower=True, trans=1, unit_diagonal=True)]
        f = sympile.function([a, b], outputs, mode=C_MODE)
        assert not f._vm.fallback_nodes
        rng = np.random.default_rng(12)
        va, vb = samples.positive(rng, 4).astype(dtype), samples.right(rng, 4).astype(dtype)
        low, up, solved, tri = f(va, vb)
        tolerance = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(low, np.linalg.cholesky(va), rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(up, np.swapaxes(low, -1, -2), rtol=tolerance)
        np.testing.assert_allclose(solved, np.linalg.solve(va, vb), rtol=tolerance,
                                   atol=tolerance)
        unit = np.tril(va, -1) + np.eye(3)
        np.testing.assert_allclose(tri, np.linalg.solve(np.swapaxes(unit, -1, -2), vb),
                                   rtol=tolerance, atol=tolerance)
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            f(-va, vb)
        with pytest.raises(ValueError, match="same batch shape"):
            f(va, vb[:2])
    m, v = T.dmatrix("m"), T.dvector("v")
    g = sympile.function([m, v], [slinalg.solve(m, v), slinalg.solve_triangular(m, v)],
                         mode=C_MODE)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        g(np.zeros((2, 2)), np.ones(2))
    assert g(np.empty((0, 0)), np.empty(0))[0].shape == (0,)
    # The LU family: inverse, det, slogdet (numpy's values for singular and empty matrices).
    stack = T.dtensor3("stack")
    h = sympile.function([stack], [nlinalg.matrix_inverse(stack), nlinalg.det(stack),
                                   *nlinalg.slogdet(stack)], mode=C_MODE)
    assert not h._vm.fallback_nodes
    values = samples.general(np.random.default_rng(13), 5)
    values[1] = -values[1]
    inverse, determinant, sign, log_abs = h(values)
    np.testing.assert_allclose(inverse, np.linalg.inv(values), rtol=1e-10)
    np.testing.assert_allclose(determinant, np.linalg.det(values), rtol=1e-10)
    np.testing.assert_array_equal(sign, np.linalg.slogdet(values)[0])
    np.testing.assert_allclose(log_abs, np.linalg.slogdet(values)[1], rtol=1e-12)
    singular = np.ones((1, 3, 3))
    d = sympile.function([stack], [nlinalg.det(stack), *nlinalg.slogdet(stack)], mode=C_MODE)
    assert d(singular)[0][0] == 0 and d(singular)[1][0] == 0 and d(singular)[2][0] == -np.inf
    np.testing.assert_array_equal(d(np.empty((2, 0, 0)))[0], [1.0, 1.0])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        h(singular)


@requires_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lapack_c_code_symmetric_solves_and_eigenproblems(dtype):
    """solve with assume_a 'pos' and 'sym' (either triangle), eigh and eigvalsh run LAPACK
    from C, on stacks and on one matrix with many right-hand sides."""
    a = T.tensor(dtype, shape=(None, None, None))
    b = T.tensor(dtype, shape=(None, None, None))
    outputs = [slinalg.solve(a, b, assume_a=kind, lower=lower)
               for kind in ("pos", "sym") for lower in (False, True)]
    outputs += [*nlinalg.eigh(a), *nlinalg.eigh(a, UPLO="U"), slinalg.eigvalsh(a)]
    f = sympile.function([a, b], outputs, mode=C_MODE)
    assert not f._vm.fallback_nodes
    rng = np.random.default_rng(15)
    tolerance = 2e-3 if dtype == "float32" else 1e-9
    for batch, columns in ((4, 2), (1, 40)):
        spd = samples.positive(rng, batch, n=6)
        # Different values in the triangle that is not read: each solve reads its own.
        skewed = (spd + np.triu(rng.normal(size=spd.shape), 1)).astype(dtype)
        right = rng.normal(size=(batch, 6, columns)).astype(dtype)
        results = f(skewed, right)
        lower, upper = samples.sym_lower(skewed), samples.sym_lower(np.swapaxes(skewed, -1, -2))
        for result, matrix in zip(results[:4], [upper, lower, upper, lower]):
            np.testing.assert_allclose(result, np.linalg.solve(matrix, right),
                                       rtol=tolerance, atol=tolerance)
        w, v, w_upper, v_upper, values = results[4:]
        np.testing.assert_allclose(w, np.linalg.eigvalsh(lower), rtol=tolerance,
                                   atol=tolerance)
        np.testing.assert_allclose(values, w, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(w_upper, np.linalg.eigvalsh(upper), rtol=tolerance,
                                   atol=tolerance)
        for matrix, vectors, eigenvalues in ((lower, v, w), (upper, v_upper, w_upper)):
            np.testing.assert_allclose(matrix @ vectors, vectors * eigenvalues[:, None, :],
                                       rtol=tolerance, atol=tolerance * 10)
    positive = sympile.function([a, b], slinalg.solve(a, b, assume_a="pos"), mode=C_MODE)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        positive(-np.eye(3, dtype=dtype)[None], np.ones((1, 3, 1), dtype=dtype))
    symmetric = sympile.function([a, b], slinalg.solve(a, b, assume_a="sym"), mode=C_MODE)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        symmetric(np.zeros((1, 3, 3), dtype=dtype), np.ones((1, 3, 1), dtype=dtype))


LAPACK_SANITIZER_SCRIPT = """
import numpy as np
import sympile.tensor as T
from sympile.tensor import slinalg
from tests.link.c.utils import compile_c

a, b = T.dtensor3("a"), T.dtensor3("b")
v = T.dmatrix("v")
from sympile.tensor import nlinalg
g = compile_c([a], [nlinalg.matrix_inverse(a), nlinalg.det(a), *nlinalg.slogdet(a)])
for shape in [(3, 4, 4), (1, 1, 1), (2, 0, 0), (0, 3, 3)]:
    g(np.random.default_rng(1).normal(size=shape) + 3 * np.eye(shape[-1]))
try:
    g(np.ones((2, 3, 3)))
except Exception:
    pass
f = compile_c([a, b, v], [slinalg.cholesky(a), slinalg.cholesky(a, lower=False),
                          slinalg.cholesky(a, on_error="nan"), slinalg.solve(a, b),
                          slinalg.solve(a, v), slinalg.solve_triangular(a, b, lower=True),
                          slinalg.solve_triangular(a, v, trans=1, unit_diagonal=True)])
assert not f._vm.fallback_nodes, f._vm.fallback_nodes
rng = np.random.default_rng(0)
for batch, n, k in [(3, 4, 2), (1, 1, 1), (2, 0, 3), (0, 3, 2), (2, 5, 0)]:
    m = rng.normal(size=(batch, n, n))
    spd = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    f(spd, rng.normal(size=(batch, n, k)), rng.normal(size=(batch, n)))
for bad in ([-np.eye(2)[None], np.ones((1, 2, 1)), np.ones((1, 2))],
            [np.eye(2)[None], np.ones((2, 2, 1)), np.ones((1, 2))]):
    try:
        f(*bad)
    except Exception:
        pass
s = compile_c([a, b], [slinalg.solve(a, b, assume_a="pos"),
                       slinalg.solve(a, b, assume_a="sym", lower=True),
                       *nlinalg.eigh(a), slinalg.eigvalsh(a)])
assert not s._vm.fallback_nodes, s._vm.fallback_nodes
for batch, n, k in [(3, 4, 2), (1, 6, 9), (1, 1, 1), (2, 0, 3), (0, 3, 2)]:
    m = rng.normal(size=(batch, n, n))
    s(m @ np.swapaxes(m, -1, -2) + n * np.eye(n), rng.normal(size=(batch, n, k)))
try:
    s(-np.eye(3)[None], np.ones((1, 3, 1)))
except Exception:
    pass
print("clean")
"""


@requires_compiler
@pytest.mark.slow
def test_lapack_code_is_clean_under_address_sanitizer():
    from tests.link.c.utils import assert_clean_under_address_sanitizer
    assert_clean_under_address_sanitizer(LAPACK_SANITIZER_SCRIPT)
