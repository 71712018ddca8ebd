"""The linear-algebra rewrites (tensor/rewriting/linalg.py): inverse products to solves, log
det to slogdet, structure of triangular and Cholesky factors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import sympile
import sympile.tensor as T
from sympile.tensor import nlinalg, slinalg
from sympile.tensor.linalg.common import matrix_transpose
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.tensor.linalg import samples

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


def _kinds(f):
    return {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}


def test_rewrite_inverse_product_to_solve():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    v = T.dvector("v")
    rng = np.random.default_rng(6)
    va, vb, vv = samples.general(rng), samples.right(rng), samples.vector(rng)
    for expression, inputs, values, reference in (
            (T.dot(nlinalg.matrix_inverse(a), b), [a, b], [va, vb], np.linalg.solve(va, vb)),
            (T.dot(nlinalg.matrix_inverse(a), v), [a, v], [va, vv], np.linalg.solve(va, vv)),
            (T.matmul(nlinalg.matrix_inverse(a), b), [a, b], [va, vb],
             np.linalg.solve(va, vb))):
        f = sympile.function(inputs, expression)
        assert "Solve" in _kinds(f) and "MatrixInverse" not in _kinds(f)
        np.testing.assert_allclose(f(*values), reference, rtol=1e-12)
    # Ill-conditioned: the rewritten form keeps the residual small.
    hilbert = scipy.linalg.hilbert(10)
    right = hilbert @ np.ones(10)
    solved = sympile.function([a, v], T.dot(nlinalg.matrix_inverse(a), v))(hilbert, right)
    naive = np.linalg.inv(hilbert) @ right
    assert np.abs(hilbert @ solved - right).max() < np.abs(hilbert @ naive - right).max()


def test_rewrite_log_det_to_slogdet():
    a = T.dmatrix("a")
    f = sympile.function([a], T.log(nlinalg.det(a)))
    assert "SLogDet" in _kinds(f) and "Det" not in _kinds(f)
    large = 1e3 * np.eye(200)  # det = 1e600 overflows; its log does not
    np.testing.assert_allclose(f(large), 200 * np.log(1e3))
    assert np.isnan(f(np.diag([-1.0, 2.0])))  # log of a negative determinant, as log does
    assert f(np.zeros((2, 2))) == -np.inf


def test_rewrite_inverse_of_inverse():
    a = T.dmatrix("a")
    f = sympile.function([a], nlinalg.matrix_inverse(nlinalg.matrix_inverse(a)) * 2)
    assert "MatrixInverse" not in _kinds(f)
    value = samples.general(np.random.default_rng(7))
    np.testing.assert_array_equal(f(value), 2 * value)


def _structure_cases():
    """(expression of a and b, the kinds it must compile to, the kinds it must not, the
    reference from a's and b's values): a is positive definite, b its right-hand sides."""
    a, b = T.dtensor3("a"), T.dtensor3("b")
    chol = slinalg.cholesky(a)
    gram = T.matmul(chol, matrix_transpose(chol))
    upper = slinalg.cholesky(a, lower=False)
    upper_gram = T.matmul(matrix_transpose(upper), upper)
    inverse = nlinalg.matrix_inverse(a)
    np_chol = np.linalg.cholesky
    return [a, b], [
        (nlinalg.det(chol), {"ExtractDiag"}, {"Det"},
         lambda x, y: np.linalg.det(np_chol(x))),
        (nlinalg.det(gram), {"ExtractDiag"}, {"Det", "MatMul"},
         lambda x, y: np.linalg.det(x)),
        (T.log(nlinalg.det(gram)), {"ExtractDiag"}, {"Det", "SLogDet", "MatMul"},
         lambda x, y: np.log(np.linalg.det(x))),
        (nlinalg.slogdet(upper)[1], {"ExtractDiag"}, {"SLogDet"},
         lambda x, y: np.linalg.slogdet(np_chol(x))[1]),
        (nlinalg.slogdet(upper_gram)[0], {"ExtractDiag"}, {"SLogDet"},
         lambda x, y: np.linalg.slogdet(x)[0]),
        (slinalg.solve(chol, b), {"SolveTriangular"}, {"Solve"},
         lambda x, y: np.linalg.solve(np_chol(x), y)),
        (slinalg.solve(T.triu(a), b), {"SolveTriangular"}, {"Solve"},
         lambda x, y: np.linalg.solve(np.triu(x), y)),
        (slinalg.solve(gram, b, assume_a="pos"), {"SolveTriangular"}, {"Solve", "MatMul"},
         lambda x, y: np.linalg.solve(x, y)),
        (slinalg.solve(upper_gram, b), {"SolveTriangular"}, {"Solve", "MatMul"},
         lambda x, y: np.linalg.solve(x, y)),
        (slinalg.solve(inverse, b), {"MatMul"}, {"Solve", "MatrixInverse"},
         lambda x, y: x @ y),
        (T.matmul(matrix_transpose(inverse), b), {"Solve"},
         {"MatrixInverse"}, lambda x, y: np.linalg.solve(np.swapaxes(x, -1, -2), y)),
    ]


def test_rewrites_of_triangular_and_cholesky_structure():
    inputs, cases = _structure_cases()
    rng = np.random.default_rng(8)
    values = [samples.positive(rng, 2, n=4), samples.right(rng, 2, n=4)]
    for expression, present, absent, reference in cases:
        f = sympile.function(inputs, expression, on_unused_input="ignore")
        kinds = set(_kinds(f))
        assert present <= kinds and not absent & kinds, (expression, kinds)
        np.testing.assert_allclose(f(*values), reference(*values), rtol=1e-10)


def test_rewrites_of_structure_leave_other_forms_alone():
    a, b = T.dmatrices("a", "b")
    upper = slinalg.cholesky(a, lower=False)
    for expression, kept in (
            (slinalg.solve(T.dot(upper, upper.T), b), "Solve"),  # U Uᵀ: not a Cholesky form
            (slinalg.solve(T.tril(a, 1), b), "Solve"),  # one diagonal above: not triangular
            (slinalg.solve(slinalg.cholesky(a), b, assume_a="sym"), "Solve"),
            (T.dot(nlinalg.matrix_inverse(a).T * 2, b), "MatrixInverse")):
        assert kept in _kinds(sympile.function([a, b], expression))


def test_log_det_of_a_cholesky_product_does_not_overflow():
    a = T.dmatrix("a")
    chol = slinalg.cholesky(a)
    f = sympile.function([a], T.log(nlinalg.det(T.dot(chol, chol.T))))
    np.testing.assert_allclose(f(1e3 * np.eye(200)), 200 * np.log(1e3))
