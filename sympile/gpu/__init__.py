"""The GPU backend (docs/architecture.md, "Where the GPU goes"): the device Type and its
transfers, the runtimes, the placement rewrite and the GPU ops that are not one family's.

  basic.py      GpuArrayType, its variables and shared variables; GpuFromHost, HostFromGpu
  runtime.py    the device runtimes: CuPy ('cuda0', ...) and the CPU emulation ('emulated')
  emulation.py  a CUDA kernel compiled as C and run over a serial grid (the emulation's launch)
  nvrtc.py      NVRTC through ctypes: kernels to PTX without a GPU
  placement.py  the rewrite that moves nodes to the device (the pipeline's gpu phase)
  elemwise.py   Elemwise, DimShuffle and the shape ops on the device
  extra_ops.py  cumsum, cumprod and repeat
  reduction.py  CAReduce and FusedCAReduce (passes of partial results), Argmax, Argmin
  blas.py       Dot through the device's BLAS; Gemm, Gemv, Ger as a product and a kernel
  conv.py       convolution and its gradients: im2col, the device's BLAS, col2im
  nnet.py       softmax, log-softmax, their gradient and the fused cross-entropy
  pool.py       2d pooling and its gradients
  subtensor.py  indexing: basic views and writes, rows taken and incremented by an array
  random.py     RandomStreams' uniform and bernoulli draws, the CPU's numbers
  scan.py       Scan with its loop's arrays on the device; IfElse of device values
  shape.py      Reshape, SpecifyShape, Join and Split of device arrays
  sort.py       sort and argsort (a bitonic network)
  graphs.py     a function's device work captured once and replayed (CUDA Graphs)

Importing sympile imports this package (it registers the placement rewrite); it imports
CuPy only when a CUDA context is used.
"""

from sympile.gpu import (  # noqa: F401 - they register their GPU implementations
    blas,
    conv,
    elemwise,
    extra_ops,
    graphs,
    nnet,
    placement,
    pool,
    random,
    reduction,
    scan,
    shape,
    sort,
    subtensor,
)
from sympile.gpu.basic import (
    GpuArrayConstant,
    GpuArraySharedVariable,
    GpuArrayType,
    GpuArrayVariable,
    GpuFromHost,
    HostFromGpu,
)
from sympile.gpu.placement import GpuHostOpsWarning, GpuPlacement, register_gpu
from sympile.gpu.runtime import emulate

__all__ = ["GpuArrayConstant", "GpuArraySharedVariable", "GpuArrayType", "GpuArrayVariable",
           "GpuFromHost", "GpuHostOpsWarning", "GpuPlacement", "HostFromGpu", "emulate",
           "register_gpu"]
