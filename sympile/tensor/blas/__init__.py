"""Dense products and the BLAS updates, as Theano's `theano.tensor.blas`.

- basic.py: Dot, MatMul, TensorDot and their builders (dot, matmul, tensordot, outer,
  batched_dot), also exported by sympile.tensor.
- gemm.py: the BLAS updates Gemm, Gemv, Ger that the rewrites in
  sympile.tensor.rewriting.blas make out of products and sums.
- blas_c.py, blas_*.c: the C the C backend runs for all of them (scipy's BLAS through
  function pointers, split among OpenMP threads above a size).
- skinny.py, skinny_*.c and skinny_declaration.h: sympile's own kernels for the skinny
  products of small-batch training.
"""

from sympile.tensor.blas.basic import *  # noqa: F403
from sympile.tensor.blas.basic import __all__ as _basic_all
from sympile.tensor.blas.gemm import *  # noqa: F403
from sympile.tensor.blas.gemm import __all__ as _gemm_all
from sympile.tensor.inplace import GemmInplace, GemvInplace, GerInplace

# Theano's Gemm, Gemv and Ger instances: into a new array, and written over z, y or a (a
# graph using those compiles with accept_inplace=True).
gemm_no_inplace = Gemm()  # noqa: F405
gemm_inplace = GemmInplace()
gemv_no_inplace = Gemv()  # noqa: F405
gemv_inplace = GemvInplace()
ger_destructive = GerInplace()

__all__ = [*_basic_all, *_gemm_all, "gemm_inplace", "gemm_no_inplace",  # noqa: PLE0604
           "gemv_inplace", "gemv_no_inplace", "ger_destructive"]
