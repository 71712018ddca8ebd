"""The ops of sympile.tensor.linalg (and its nlinalg/slinalg paths): values against
numpy/scipy on both backends, one matrix and a stack; gradients and Rop checked numerically
in float64; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import sympile
import sympile.tensor as T
from sympile.gradient import verify_grad, verify_rop
from sympile.tensor import linalg, nlinalg, slinalg
from tests.link.c.utils import C_MODE, PYTHON_MODE, requires_compiler
from tests.tensor.linalg import samples

MODES = [PYTHON_MODE, pytest.param(C_MODE, marks=requires_compiler)]


CASES = {
    "matrix_inverse": (nlinalg.matrix_inverse, np.linalg.inv, [samples.general], True),
    "det": (nlinalg.det, np.linalg.det, [samples.general], True),
    "slogdet": (lambda a: nlinalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
                [samples.general], True),
    "eigh values": (lambda a: nlinalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0],
                    [samples.positive], True),
    "eigh vectors (sign-free)": (
        lambda a: nlinalg.eigh(a)[1] ** 2, lambda a: np.linalg.eigh(a)[1] ** 2,
        [samples.positive], True),
    "eigvalsh": (slinalg.eigvalsh, lambda a: np.linalg.eigvalsh(a), [samples.positive], True),
    "cholesky": (slinalg.cholesky, np.linalg.cholesky, [samples.positive], True),
    "cholesky upper": (lambda a: slinalg.cholesky(a, lower=False),
                       lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2),
                       [samples.positive], True),
    "solve": (slinalg.solve, np.linalg.solve, [samples.general, samples.right], True),
    "solve vector": (slinalg.solve, lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
                     [samples.general, samples.vector], True),
    "solve pos": (lambda a, b: slinalg.solve(a, b, assume_a="pos"),
                  lambda a, b: np.linalg.solve(samples.sym_lower(np.swapaxes(a, -1, -2)), b),
                  [samples.positive, samples.right], True),
    "solve_triangular": (lambda a, b: slinalg.solve_triangular(a, b, lower=True),
                         lambda a, b: np.linalg.solve(np.tril(a), b),
                         [samples.lower, samples.right], True),
    "solve_triangular trans unit": (
        lambda a, b: slinalg.solve_triangular(a, b, lower=True, trans=1, unit_diagonal=True),
        lambda a, b: np.linalg.solve(np.swapaxes(np.tril(a, -1) + np.eye(a.shape[-1]), -1, -2),
                                     b), [samples.lower, samples.right], True),
    "cho_solve": (lambda a, b: slinalg.cho_solve((slinalg.cholesky(a), True), b),
                  np.linalg.solve, [samples.positive, samples.right], True),
    "matrix_power 3": (lambda a: nlinalg.matrix_power(a, 3),
                       lambda a: np.linalg.matrix_power(a, 3), [samples.general], True),
    "matrix_power -2": (lambda a: nlinalg.matrix_power(a, -2),
                        lambda a: np.linalg.matrix_power(a, -2), [samples.general], True),
    "pinv": (nlinalg.pinv, np.linalg.pinv, [samples.general], True),
    "pinv tall": (nlinalg.pinv, np.linalg.pinv, [samples.tall], True),
    "solve_continuous_lyapunov": (
        slinalg.solve_continuous_lyapunov,
        lambda a, q: np.array(scipy.linalg.solve_continuous_lyapunov(a, q)) if a.ndim == 2
        else np.stack([scipy.linalg.solve_continuous_lyapunov(x, y) for x, y in zip(a, q)]),
        [lambda rng, *b: samples.general(rng, *b) - 6 * np.eye(3), samples.general], True),
    "expm": (slinalg.expm, scipy.linalg.expm,
             [lambda rng, *b: 0.3 * samples.general(rng, *b)], True),
    "lu l": (lambda a: slinalg.lu(a)[1], lambda a: scipy.linalg.lu(a)[1], [samples.general], True),
    "lu u": (lambda a: slinalg.lu(a)[2], lambda a: scipy.linalg.lu(a)[2], [samples.general], True),
    "lu permute_l": (lambda a: slinalg.lu(a, permute_l=True)[0],
                     lambda a: scipy.linalg.lu(a, permute_l=True)[0], [samples.general], True),
    "eig values (abs)": (lambda a: abs(nlinalg.eig(a)[0]).sum(axis=-1),
                         lambda a: np.abs(np.linalg.eig(a)[0]).sum(axis=-1), [samples.general],
                         False),
    "svd values": (lambda a: nlinalg.svd(a, compute_uv=False),
                   lambda a: np.linalg.svd(a, compute_uv=False), [samples.general], True),
    "svd values (from u, s, vh)": (lambda a: nlinalg.svd(a)[1],
                                   lambda a: np.linalg.svd(a)[1], [samples.general], True),
    "svd wide u s vh": (
        lambda a: samples.sum_of_scaled_products(*nlinalg.svd(a, full_matrices=False)),
        lambda a: samples.sum_of_scaled_products(*np.linalg.svd(a, full_matrices=False)),
        [samples.wide], True),
    "svd full_matrices u s vh": (
        lambda a: samples.sum_of_scaled_products(*nlinalg.svd(a)),
        lambda a: samples.sum_of_scaled_products(*np.linalg.svd(a)), [samples.general], False),
    "qr r only": (lambda a: nlinalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
                  [samples.tall], True),
}

# The vectors of svd (squared: their signs are arbitrary) and qr's factors, for square, tall
# and wide matrices.
for _label, _maker in (("", samples.general), ("tall ", samples.tall), ("wide ", samples.wide)):
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
    value = samples.general(np.random.default_rng(14))
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


@pytest.mark.parametrize("shapes", [((2,), (6, 7)), ((2, 3, 4), (6,)), ((2, 3), (2, 1, 2)),
                                    ((), (3,)), ((2,), (3,))], ids=str)
def test_kron_of_any_ranks_is_numpys(shapes):
    rng = np.random.default_rng(5)
    values = [rng.normal(size=shape) for shape in shapes]
    x, y = (T.tensor("float64", shape=(None,) * len(shape)) for shape in shapes)
    got = sympile.function([x, y], nlinalg.kron(x, y))(*values)
    assert got.shape == np.kron(*values).shape
    np.testing.assert_allclose(got, np.kron(*values))
    verify_grad(nlinalg.kron, values)


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


def test_theano_infinity_spellings():
    """Theano's norm takes ord 'inf' and '-inf' (strings) for inf and -inf."""
    m, v = T.dmatrix("m"), T.dvector("v")
    value = np.random.default_rng(8).normal(size=(4, 4))
    for spelled, ord in (("inf", np.inf), ("-inf", -np.inf)):
        np.testing.assert_allclose(nlinalg.norm(m, spelled).eval({m: value}),
                                   np.linalg.norm(value, ord))
        np.testing.assert_allclose(nlinalg.norm(v, spelled).eval({v: value[0]}),
                                   np.linalg.norm(value[0], ord))


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
    good = samples.positive(np.random.default_rng(10))
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
    tall = samples.tall(rng)
    verify_grad(lambda a: samples.sum_of_scaled_products(*nlinalg.svd(a)), [tall], rng=rng)
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
@pytest.mark.parametrize("right", [samples.right, samples.vector], ids=["matrix", "vector"])
def test_lu_factor_and_lu_solve_gradients(trans, right):
    """Through lu_factor from the matrix, and from packed factors given as an input."""
    rng = np.random.default_rng(13)
    a, b = samples.general(rng, n=5), samples.right(rng, n=5)
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
    square, right = samples.general(rng), samples.right(rng)
    factors, pivots = slinalg.lu_factor(m)
    for trans in (0, 1):
        solved = slinalg.lu_solve((factors, pivots), r, trans=trans).eval({m: square, r: right})
        np.testing.assert_allclose(solved, scipy.linalg.lu_solve(
            scipy.linalg.lu_factor(square), right, trans=trans), rtol=1e-10)


def test_generalized_eigvalsh():
    """scipy.linalg.eigvalsh(a, b): values against scipy's, the lower triangles read, the
    gradients and Rop numerically, and a b that is not positive definite."""
    rng = np.random.default_rng(16)
    a_value = rng.normal(size=(4, 4))
    b_value = rng.normal(size=(4, 4))
    b_value = b_value @ b_value.T + 4 * np.eye(4)
    a, b = T.dmatrices("a", "b")
    f = sympile.function([a, b], slinalg.eigvalsh(a, b))
    expected = scipy.linalg.eigvalsh(a_value, b_value, lower=True)
    np.testing.assert_allclose(f(a_value, b_value), expected, rtol=1e-12)
    np.testing.assert_allclose(f(np.tril(a_value), np.tril(b_value)), expected, rtol=1e-12)
    verify_grad(slinalg.eigvalsh, [a_value, b_value])
    verify_rop(slinalg.eigvalsh, [a_value, b_value])
    with pytest.raises(np.linalg.LinAlgError, match="b must be positive definite"):
        f(a_value, -b_value)
    with pytest.raises(ValueError, match="the generalized problem takes matrices"):
        slinalg.eigvalsh(T.dtensor3(), T.dtensor3())
    # Theano's NoneConst for b: the standard problem.
    np.testing.assert_allclose(slinalg.eigvalsh(a, T.NoneConst).eval({a: a_value}),
                               np.linalg.eigvalsh(a_value), rtol=1e-12)
