"""numpy.linalg's operations under Theano's and PyTensor's path `tensor.nlinalg` (the ops
live in sympile.tensor.linalg, by kind)."""

from sympile.tensor.extra_ops.ops import AllocDiag, ExtractDiag, diag, trace
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
from sympile.tensor.variable import as_tensor_variable


class _VectorAllocDiag(AllocDiag):
    """Theano's nlinalg.AllocDiag: a vector's square diagonal matrix only (the extra_ops op
    takes any rank)."""

    def make_node(self, v):
        v = as_tensor_variable(v, op="alloc_diag", argument="v")
        if v.type.ndim != 1:
            raise TypeError(f"alloc_diag: expected a vector, got {v.type} "
                            f"(T.extra_ops.AllocDiag takes any rank)")
        return super().make_node(v)


# Theano's nlinalg names for numpy.diag's two ops: the vector on a diagonal, the diagonal.
# (The op classes are importable here, as in Theano, and documented with extra_ops.)
alloc_diag = _VectorAllocDiag()
extract_diag = ExtractDiag()

__all__ = ["Det", "Eig", "Eigh", "Lstsq", "MatrixInverse", "QR", "SLogDet", "SVD",
           "alloc_diag", "det", "diag", "eig", "eigh", "extract_diag", "kron", "lstsq",
           "matrix_dot", "matrix_inverse", "matrix_power", "norm", "pinv", "qr", "slogdet",
           "svd", "tensorinv", "tensorsolve", "trace"]
