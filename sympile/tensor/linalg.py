"""PyTensor's pytensor.tensor.linalg: the operations of nlinalg and slinalg under one name
(inv is matrix_inverse: T.inv stays Theano's elementwise reciprocal)."""

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
