"""numpy.linalg's operations under Theano's and PyTensor's path `tensor.nlinalg` (the ops
live in sympile.tensor.linalg, by kind)."""

from sympile.tensor.linalg.decompositions import QR, SVD, Eig, Eigh, eig, eigh, qr, svd
from sympile.tensor.linalg.matrix_functions import (
    MatrixInverse,
    kron,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    pinv,
    tensorinv,
)
from sympile.tensor.linalg.solvers import Lstsq, lstsq, tensorsolve
from sympile.tensor.linalg.summaries import Det, SLogDet, det, norm, slogdet

__all__ = ["Det", "Eig", "Eigh", "Lstsq", "MatrixInverse", "QR", "SLogDet", "SVD", "det",
           "eig", "eigh", "kron", "lstsq", "matrix_dot", "matrix_inverse", "matrix_power",
           "norm", "pinv", "qr", "slogdet", "svd", "tensorinv", "tensorsolve"]
