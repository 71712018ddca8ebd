"""nlinalg and slinalg: values against numpy/scipy on both backends, one matrix and a
stack; gradients and Rop checked numerically in float64; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor import linalg, nlinalg, slinalg
from sympile.tensor.linalg_common import matrix_transpose
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


def _general(rng, *batch, n=3):
    return rng.normal(size=(*batch, n, n)) + 3 * np.eye(n)


def _positive(rng, *batch, n=3):
    m = rng.normal(size=(*batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _lower(rng, *batch, n=3):
    return np.tril(rng.normal(size=(*batch, n, n))) + 3 * np.eye(n)


def _right(rng, *batch, n=3):
    return rng.normal(size=(*batch, n, 2))


def _vector(rng, *batch, n=3):
    return rng.normal(size=(*batch, n))


def _sym_lower(m):
    """The symmetric matrix a reading of m's lower triangle means."""
    return np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2)


def _tall(rng, *batch):
    return rng.normal(size=(*batch, 5, 3))


def _wide(rng, *batch):
    return rng.normal(size=(*batch, 3, 5))


def _sum_of_scaled_products(u, s, vh):
    """u diag(c) vh (the first min(m, n) singular vectors) for fixed c, plus the values:
    the same whichever signs the singular vectors take."""
    k = 3
    return (u[..., :, :k] * np.array([1.0, -2.0, 0.5])) @ vh[..., :k, :] + s.sum()


# name: (function of symbolic inputs, numpy reference, input makers, differentiable)
CASES = {
    "matrix_inverse": (nlinalg.matrix_inverse, np.linalg.inv, [_general], True),
    "det": (nlinalg.det, np.linalg.det, [_general], True),
    "slogdet": (lambda a: nlinalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
                [_general], True),
    "eigh values": (lambda a: nlinalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0],
                    [_positive], True),
    "eigh vectors (sign-free)": (
        lambda a: nlinalg.eigh(a)[1] ** 2, lambda a: np.linalg.eigh(a)[1] ** 2,
        [_positive], True),
    "eigvalsh": (slinalg.eigvalsh, lambda a: np.linalg.eigvalsh(a), [_positive], True),
    "cholesky": (slinalg.cholesky, np.linalg.cholesky, [_positive], True),
    "cholesky upper": (lambda a: slinalg.cholesky(a, lower=False),
                       lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2),
                       [_positive], True),
    "solve": (slinalg.solve, np.linalg.solve, [_general, _right], True),
    "solve vector": (slinalg.solve, lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
                     [_general, _vector], True),
    "solve pos": (lambda a, b: slinalg.solve(a, b, assume_a="pos"),
                  lambda a, b: np.linalg.solve(_sym_lower(np.swapaxes(a, -1, -2)), b),
                  [_positive, _right], True),
    "solve_triangular": (lambda a, b: slinalg.solve_triangular(a, b, lower=True),
                         lambda a, b: np.linalg.solve(np.tril(a), b), [_lower, _right], True),
    "solve_triangular trans unit": (
        lambda a, b: slinalg.solve_triangular(a, b, lower=True, trans=1, unit_diagonal=True),
        lambda a, b: np.linalg.solve(np.swapaxes(np.tril(a, -1) + np.eye(a.shape[-1]), -1, -2),
                                     b), [_lower, _right], True),
    "cho_solve": (lambda a, b: slinalg.cho_solve((slinalg.cholesky(a), True), b),
                  np.linalg.solve, [_positive, _right], True),
    "matrix_power 3": (lambda a: nlinalg.matrix_power(a, 3),
                       lambda a: np.linalg.matrix_power(a, 3), [_general], True),
    "matrix_power -2": (lambda a: nlinalg.matrix_power(a, -2),
                        lambda a: np.linalg.matrix_power(a, -2), [_general], True),
    "pinv": (nlinalg.pinv, np.linalg.pinv, [_general], True),
    "pinv tall": (nlinalg.pinv, np.linalg.pinv, [_tall], True),
    "solve_continuous_lyapunov": (
        slinalg.solve_continuous_lyapunov,
        lambda a, q: np.array(scipy.linalg.solve_continuous_lyapunov(a, q)) if a.ndim == 2
        else np.stack([scipy.linalg.solve_continuous_lyapunov(x, y) for x, y in zip(a, q)]),
        [lambda rng, *b: _general(rng, *b) - 6 * np.eye(3), _general], True),
    "expm": (slinalg.expm, scipy.linalg.expm, [lambda rng, *b: 0.3 * _general(rng, *b)], True),
    "lu l": (lambda a: slinalg.lu(a)[1], lambda a: scipy.linalg.lu(a)[1], [_general], True),
    "lu u": (lambda a: slinalg.lu(a)[2], lambda a: scipy.linalg.lu(a)[2], [_general], True),
    "lu permute_l": (lambda a: slinalg.lu(a, permute_l=True)[0],
                     lambda a: scipy.linalg.lu(a, permute_l=True)[0], [_general], True),
    "eig values (abs)": (lambda a: abs(nlinalg.eig(a)[0]).sum(axis=-1),
                         lambda a: np.abs(np.linalg.eig(a)[0]).sum(axis=-1), [_general],
                         False),
    "svd values": (lambda a: nlinalg.svd(a, compute_uv=False),
                   lambda a: np.linalg.svd(a, compute_uv=False), [_general], True),
    "svd values (from u, s, vh)": (lambda a: nlinalg.svd(a)[1],
                                   lambda a: np.linalg.svd(a)[1], [_general], True),
    "svd wide u s vh": (
        lambda a: _sum_of_scaled_products(*nlinalg.svd(a, full_matrices=False)),
        lambda a: _sum_of_scaled_products(*np.linalg.svd(a, full_matrices=False)), [_wide],
        True),
    "svd full_matrices u s vh": (
        lambda a: _sum_of_scaled_products(*nlinalg.svd(a)),
        lambda a: _sum_of_scaled_products(*np.linalg.svd(a)), [_general], False),
    "qr r only": (lambda a: nlinalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
                  [_tall], True),
}

# The vectors of svd (squared: their signs are arbitrary) and qr's factors, for square, tall
# and wide matrices.
for _label, _maker in (("", _general), ("tall ", _tall), ("wide ", _wide)):
    for _index, _name in ((0, "u"), (2, "vh")):
        CASES[f"svd {_label}{_name} (sign-free)"] = (
            lambda a, i=_index: nlinalg.svd(a, full_matrices=False)[i] ** 2,
            lambda a, i=_index: np.linalg.svd(a, full_matrices=False)[i] ** 2, [_maker], True)
    for _index, _name in ((0, "q"), (1, "r")):
        CASES[f"qr {_label}{_name}"] = (lambda a, i=_index: nlinalg.qr(a)[i],
                                        lambda a, i=_index: np.linalg.qr(a)[i], [_maker], True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "stack"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name, batch, mode):
    function, reference, makers, _ = CASES[name]
    rng = np.random.default_rng(0)
    values = [make(rng, *batch) for make in makers]
    inputs = [T.tensor("float64", shape=(None,) * v.ndim) for v in values]
    result = sympile.function(inputs, function(*inputs), mode=mode)(*values)
    np.testing.assert_allclose(result, reference(*values), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "stack"])
@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[3]))
def test_gradient_and_rop(name, batch):
    function, _, makers, _ = CASES[name]
    rng = np.random.default_rng(1)
    values = [make(rng, *batch) for make in makers]
    verify_grad(function, values, rng=np.random.default_rng(2))
    verify_rop(function, values, rng=np.random.default_rng(3))


def test_no_gradient_says_which_op():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    with pytest.raises(sympile.gradient.NullTypeGradError, match="Eig"):
        sympile.grad(abs(nlinalg.eig(a)[0]).sum(), a)
    with pytest.raises(sympile.gradient.NullTypeGradError, match="Lstsq"):
        sympile.grad(nlinalg.lstsq(a, b)[0].sum(), a)
    value = _general(np.random.default_rng(14))
    by_values = sympile.grad(nlinalg.svd(a)[1].sum(), a).eval({a: value})
    u, _, vh = np.linalg.svd(value)
    np.testing.assert_allclose(by_values, u @ vh, rtol=1e-10)  # d(sum s)/dA = U Vᴴ


def test_linalg_names_and_kron_matrix_dot():
    assert linalg.inv is nlinalg.matrix_inverse and linalg.solve is slinalg.solve
    a, b = T.dmatrices("a", "b")
    rng = np.random.default_rng(4)
    va, vb = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(nlinalg.kron(a, b).eval({a: va, b: vb}), np.kron(va, vb))
    np.testing.assert_allclose(nlinalg.matrix_dot(a, b, a).eval({a: va, b: vb}), va @ vb @ va)
    verify_grad(nlinalg.kron, [va, vb])


@pytest.mark.parametrize("mode", MODES)
def test_bad_input(mode):
    a = T.dmatrix("a")
    with pytest.raises(ValueError, match="cholesky: a must be a matrix"):
        slinalg.cholesky(T.dvector())
    with pytest.raises(ValueError, match="must be square"):
        nlinalg.det(T.tensor("float64", shape=(2, 3)))
    with pytest.raises(TypeError, match="must be float32 or float64"):
        nlinalg.det(T.lmatrix())
    with pytest.raises(ValueError, match="solve: b must have 1 or 2 dimensions"):
        slinalg.solve(a, T.dtensor3())
    with pytest.raises(ValueError, match="assume_a must be"):
        slinalg.solve(a, a, assume_a="banded")
    f = sympile.function([a], slinalg.cholesky(a), mode=mode)
    with pytest.raises(np.linalg.LinAlgError, match="while computing Cholesky"):
        f(-np.eye(2))
    g = sympile.function([a], nlinalg.matrix_inverse(a), mode=mode)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        g(np.zeros((2, 2)))


def test_gaussian_process_log_likelihood_gradient():
    """The GP use case: -log p(y) through cholesky and cho_solve, differentiated in the
    kernel's length scale, against finite differences."""
    rng = np.random.default_rng(5)
    points, targets = rng.normal(size=(8, 1)), rng.normal(size=8)
    x, y = T.dmatrix("x"), T.dvector("y")

    def negative_log_likelihood(scale):
        distances = ((x.dimshuffle(0, "x", 1) - x.dimshuffle("x", 0, 1)) ** 2).sum(axis=-1)
        kernel = T.exp(-0.5 * distances / scale ** 2) + 0.1 * T.eye(x.shape[0])
        factor = slinalg.cholesky(kernel)
        alpha = slinalg.cho_solve((factor, True), y)
        return 0.5 * T.dot(y, alpha) + T.log(T.diagonal(factor)).sum()

    scale = T.dscalar("scale")
    f = sympile.function([scale, x, y], [negative_log_likelihood(scale),
                                         sympile.grad(negative_log_likelihood(scale), scale)])
    value, gradient = f(1.3, points, targets)
    d2 = (points - points.T) ** 2
    kernel = np.exp(-0.5 * d2 / 1.3 ** 2) + 0.1 * np.eye(8)
    expected = 0.5 * targets @ scipy.linalg.solve(kernel, targets) \
        + np.log(np.diag(np.linalg.cholesky(kernel))).sum()
    np.testing.assert_allclose(value, expected)
    step = 1e-6
    numeric = (f(1.3 + step, points, targets)[0] - f(1.3 - step, points, targets)[0]) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6)


def _kinds(f):
    return {type(node.op).__name__ for node in f.maker.fgraph.apply_nodes}


def test_rewrite_inverse_product_to_solve():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    v = T.dvector("v")
    rng = np.random.default_rng(6)
    va, vb, vv = _general(rng), _right(rng), _vector(rng)
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
    value = _general(np.random.default_rng(7))
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
    values = [_positive(rng, 2, n=4), _right(rng, 2, n=4)]
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


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3])
def test_vector_norms(ord):
    v = T.dvector("v")
    value = np.array([3.0, -4.0, 0.0, 1.0])
    np.testing.assert_allclose(nlinalg.norm(v, ord).eval({v: value}),
                               np.linalg.norm(value, ord))
    if ord not in (0, np.inf, -np.inf):
        verify_grad(lambda x: nlinalg.norm(x, ord), [value])


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_spectral_norms_are_differentiable(ord):
    value = np.random.default_rng(15).normal(size=(3, 4))
    verify_grad(lambda x: nlinalg.norm(x, ord), [value])


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
def test_matrix_norms(ord):
    m = T.dtensor3("m")
    value = np.random.default_rng(8).normal(size=(2, 3, 4))
    for keepdims in (False, True):
        np.testing.assert_allclose(
            nlinalg.norm(m, ord, axis=(1, 2), keepdims=keepdims).eval({m: value}),
            np.linalg.norm(value, ord, axis=(1, 2), keepdims=keepdims), rtol=1e-12)


def test_block_diag_and_lstsq():
    a, b = T.dmatrices("a", "b")
    va, vb = np.ones((2, 3)), 2 * np.ones((1, 2))
    np.testing.assert_array_equal(slinalg.block_diag(a, b).eval({a: va, b: vb}),
                                  scipy.linalg.block_diag(va, vb))
    verify_grad(lambda x, y: slinalg.block_diag(x, y), [va, vb])
    rng = np.random.default_rng(9)
    design, target = rng.normal(size=(6, 3)), rng.normal(size=6)
    y = T.dvector("y")
    solution = nlinalg.lstsq(a, y)[0].eval({a: design, y: target})
    np.testing.assert_allclose(solution, np.linalg.lstsq(design, target, rcond=None)[0])


def test_cholesky_on_error_nan():
    a = T.dtensor3("a")
    good = _positive(np.random.default_rng(10))
    stack = np.stack([good, -np.eye(3)])
    factors = slinalg.cholesky(a, on_error="nan").eval({a: stack})
    np.testing.assert_allclose(factors[0], np.linalg.cholesky(good))
    assert np.isnan(factors[1]).all()
    with pytest.raises(ValueError, match="on_error must be"):
        slinalg.cholesky(a, on_error="ignore")


def test_arbitrary_basis_vectors_are_ignored_by_grad_and_have_no_tangent():
    """svd(full_matrices=True) and qr(mode='complete') of a tall matrix: the columns past
    min(m, n) are any basis of the complement; grad ignores them (as torch does), Rop
    raises."""
    rng = np.random.default_rng(12)
    tall = _tall(rng)
    verify_grad(lambda a: _sum_of_scaled_products(*nlinalg.svd(a)), [tall], rng=rng)
    verify_grad(lambda a: nlinalg.qr(a, mode="complete")[0][:, :3] +
                nlinalg.qr(a, mode="complete")[1][:3].sum(), [tall], rng=rng)
    a = T.dmatrix("a")
    full_u = nlinalg.svd(a)[0]
    np.testing.assert_allclose(sympile.grad(full_u[:, 3:].sum(), a).eval({a: tall}), 0.0)
    with pytest.raises(Exception, match="svd: with full_matrices=True"):
        sympile.gradient.Rop(nlinalg.svd(a)[0], a, T.dmatrix("da"))
    with pytest.raises(Exception, match="qr: in 'complete' mode"):
        sympile.gradient.Rop(nlinalg.qr(a, mode="complete")[0], a, T.dmatrix("da"))
    rectangular = T.tensor("float64", shape=(4, 3))
    with pytest.raises(ValueError, match="lu: the derivative is for square matrices"):
        sympile.grad(slinalg.lu(rectangular)[2].sum(), rectangular)


@pytest.mark.parametrize("trans", [0, 1])
@pytest.mark.parametrize("right", [_right, _vector], ids=["matrix", "vector"])
def test_lu_factor_and_lu_solve_gradients(trans, right):
    """Through lu_factor from the matrix, and from packed factors given as an input."""
    rng = np.random.default_rng(13)
    a, b = _general(rng, n=5), right(rng, n=5)
    factors, pivots = scipy.linalg.lu_factor(a)
    pivots = pivots.astype("int32")
    for function, values in (
            (lambda x, y: slinalg.lu_solve(slinalg.lu_factor(x), y, trans=trans), [a, b]),
            (lambda f, y: slinalg.lu_solve((f, pivots), y, trans=trans), [factors, b]),
            (lambda x: slinalg.lu_factor(x)[0], [a])):
        verify_grad(function, values, rng=rng)
        verify_rop(function, values, rng=rng)


def test_tensorinv_tensorsolve_lu_factor_solve():
    rng = np.random.default_rng(11)
    a4 = rng.normal(size=(4, 6, 8, 3)) + 0.0
    t = T.dtensor4("t")
    np.testing.assert_allclose(nlinalg.tensorinv(t, ind=2).eval({t: a4.reshape(4, 6, 8, 3)}),
                               np.linalg.tensorinv(a4, ind=2), rtol=1e-8)
    a3 = rng.normal(size=(6, 2, 3))
    b = rng.normal(size=6)
    t3, v = T.dtensor3("t3"), T.dvector("v")
    np.testing.assert_allclose(nlinalg.tensorsolve(t3, v).eval({t3: a3, v: b}),
                               np.linalg.tensorsolve(a3, b), rtol=1e-8)
    verify_grad(lambda x, y: nlinalg.tensorsolve(x, y), [a3, b])
    m, r = T.dmatrix("m"), T.dmatrix("r")
    square, right = _general(rng), _right(rng)
    factors, pivots = slinalg.lu_factor(m)
    for trans in (0, 1):
        solved = slinalg.lu_solve((factors, pivots), r, trans=trans).eval({m: square, r: right})
        np.testing.assert_allclose(solved, scipy.linalg.lu_solve(
            scipy.linalg.lu_factor(square), right, trans=trans), rtol=1e-10)


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
        va, vb = _positive(rng, 4).astype(dtype), _right(rng, 4).astype(dtype)
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
    values = _general(np.random.default_rng(13), 5)
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
        spd = _positive(rng, batch, n=6)
        # Different values in the triangle that is not read: each solve reads its own.
        skewed = (spd + np.triu(rng.normal(size=spd.shape), 1)).astype(dtype)
        right = rng.normal(size=(batch, 6, columns)).astype(dtype)
        results = f(skewed, right)
        lower, upper = _sym_lower(skewed), _sym_lower(np.swapaxes(skewed, -1, -2))
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
def test_lapack_code_is_clean_under_address_sanitizer(tmp_path):
    from tests.link.c.utils import assert_clean_under_address_sanitizer
    assert_clean_under_address_sanitizer(LAPACK_SANITIZER_SCRIPT, tmp_path)
