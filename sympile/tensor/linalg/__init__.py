"""Linear algebra, one family (PyTensor's pytensor.tensor.linalg: every operation under one
name; inv is matrix_inverse, as T.inv stays Theano's elementwise reciprocal).

  common.py            input checks, output types, the calculus every solver shares
  solvers.py           solve, solve_triangular, cho_solve, lstsq, Lyapunov, tensorsolve
  decompositions.py    cholesky, eigh, eigvalsh, eig, svd, qr, lu, lu_factor, lu_solve
  matrix_functions.py  matrix_inverse, pinv, expm, matrix_power, matrix_dot, kron,
                       block_diag, tensorinv
  summaries.py         det, slogdet, norm
  lapack_c.py, lapack.c  the C of the ops that call LAPACK

Each module imports only common.py, lapack_c.py and those listed before it. Theano's and
PyTensor's paths sympile.tensor.nlinalg and sympile.tensor.slinalg name the same ops.
"""

from sympile.tensor.nlinalg import (
    det,
    eig,
    eigh,
    kron,
    lstsq,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    svd,
    tensorinv,
    tensorsolve,
)
from sympile.tensor.slinalg import (
    block_diag,
    cho_solve,
    cholesky,
    eigvalsh,
    expm,
    lu,
    lu_factor,
    lu_solve,
    solve,
    solve_continuous_lyapunov,
    solve_triangular,
)

inv = matrix_inverse

__all__ = ["block_diag", "cho_solve", "cholesky", "det", "eig", "eigh", "eigvalsh", "expm",
           "inv", "kron", "lstsq", "lu", "lu_factor", "lu_solve", "matrix_dot",
           "matrix_inverse", "matrix_power", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_continuous_lyapunov", "solve_triangular", "svd", "tensorinv", "tensorsolve"]
