"""PyTensor's pytensor.tensor.linalg: the operations of nlinalg and slinalg under one name
(inv is matrix_inverse: T.inv stays Theano's elementwise reciprocal)."""

from sympile.tensor.nlinalg import (
    det,
    eigh,
    kron,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    pinv,
    qr,
    slogdet,
    svd,
)
from sympile.tensor.slinalg import (
    cho_solve,
    cholesky,
    eigvalsh,
    solve,
    solve_triangular,
)

inv = matrix_inverse

__all__ = ["cho_solve", "cholesky", "det", "eigh", "eigvalsh", "inv", "kron", "matrix_dot",
           "matrix_inverse", "matrix_power", "pinv", "qr", "slogdet", "solve",
           "solve_triangular", "svd"]
