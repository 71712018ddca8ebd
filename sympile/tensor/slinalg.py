"""scipy.linalg's decompositions and solvers under Theano's and PyTensor's path
`tensor.slinalg` (the ops live in sympile.tensor.linalg, by kind)."""

from sympile.tensor.linalg.decompositions import (
    LU,
    Cholesky,
    Eigvalsh,
    cholesky,
    eigvalsh,
    lu,
    lu_factor,
    lu_solve,
)
from sympile.tensor.linalg.matrix_functions import Expm, ExpmFrechet, block_diag, expm, kron
from sympile.tensor.linalg.solvers import (
    Solve,
    SolveContinuousLyapunov,
    SolveTriangular,
    cho_solve,
    solve,
    solve_continuous_lyapunov,
    solve_triangular,
)

__all__ = ["Cholesky", "Eigvalsh", "Expm", "ExpmFrechet", "LU", "Solve",
           "SolveContinuousLyapunov", "SolveTriangular", "block_diag", "cho_solve", "cholesky",
           "eigvalsh", "expm", "kron", "lu", "lu_factor", "lu_solve", "solve",
           "solve_continuous_lyapunov", "solve_triangular"]
