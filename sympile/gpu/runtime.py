"""The device runtimes: where a GPU value lives and how a kernel is launched on it.

A context name picks one (it is part of each GpuArrayType):

- 'cuda0', 'cuda1', ...: an NVIDIA GPU through CuPy (arrays are cupy.ndarray; kernels
  compiled by CuPy's NVRTC and cached on disk by CuPy, keyed by the source and the device's
  compute capability).
- 'emulated': the CPU emulation that tests the GPU backend where there is no GPU. Its arrays
  are EmulatedArray (a numpy buffer that host code cannot read by mistake: only to_host
  does), and its kernels are the same CUDA sources compiled by the C compiler, launched as a
  serial loop over the grid's blocks and threads (sympile.gpu.emulation). It checks the
  kernels' index and broadcast logic, the launch arguments, placement and transfers.

`target_context()` is the context the placement rewrite moves nodes to: the innermost
`placement_target(context)` (`emulate()` is the emulated one's), else config.device when
it names a GPU, else None (nothing is placed).
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sympile.config import config, require_cupy
from sympile.gpu.emulation import emulated_launcher
from sympile.gpu.nvrtc import OPTIONS
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel

__all__ = ["EMULATED", "EmulatedArray", "Runtime", "emulate", "is_context", "placement_target",
           "runtime", "target_context"]

EMULATED = "emulated"
# The exceptions a kernel's error flag can report, by their C name.
_EXCEPTIONS = {"PyExc_ValueError": ValueError, "PyExc_IndexError": IndexError}


class Runtime:
    """What the GPU ops need of a device: arrays (shape, dtype, strides in bytes, views by
    transpose and reshape), transfers, allocation and kernel launches."""

    context: str
    # A reduction's first pass uses about this many threads in all (enough to fill the
    # device), each folding at least REDUCTION_MIN_VALUES values.
    REDUCTION_THREADS = 1 << 16
    REDUCTION_MIN_VALUES = 32

    def is_device_array(self, value: Any) -> bool:
        raise NotImplementedError

    def to_device(self, array: np.ndarray) -> Any:
        raise NotImplementedError

    def to_host(self, value: Any) -> np.ndarray:
        raise NotImplementedError

    def empty(self, shape: Sequence[int], dtype: str) -> Any:
        raise NotImplementedError

    def copy(self, value: Any) -> Any:
        """A new device array holding `value`'s elements."""
        raise NotImplementedError

    def matmul(self, a: Any, b: Any) -> Any:
        """numpy.matmul of two device arrays of one float dtype, by the device's BLAS."""
        raise NotImplementedError

    def contiguous(self, value: Any) -> Any:
        """`value`, or a C-contiguous copy of it."""
        expected, stride = [], value.dtype.itemsize
        for length in reversed(value.shape):
            expected.insert(0, stride)
            stride *= length
        return value if all(length == 1 or a == b for a, b, length in
                            zip(value.strides, expected, value.shape)) else self.copy(value)

    def launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        """Run `kernel` with `size` threads' work; `arguments`: ints (int64 parameters) and
        device arrays (pointers to their first element), without the error flag: a kernel
        that reports errors gets one, and the error it reports is raised here (as the CPU
        loops raise it). No work (size 0) launches nothing: a grid of no block is an error on a
        GPU."""
        if size <= 0:
            return
        if not kernel.reports_errors:
            self._launch(kernel, size, arguments)
            return
        flag = self.to_device(np.zeros(1, dtype=np.int32))
        self._launch(kernel, size, [*arguments, flag])
        code = int(self.to_host(flag)[0])
        for bit, exception, message in kernel.errors:
            if code & bit:
                raise _EXCEPTIONS[exception](message)

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for every launched kernel."""


class EmulatedArray:
    """A device array of the emulated runtime: shape, dtype, strides, views."""

    __slots__ = ("_buffer",)

    def __init__(self, buffer: np.ndarray):
        self._buffer = buffer

    shape = property(lambda self: self._buffer.shape)
    dtype = property(lambda self: self._buffer.dtype)
    strides = property(lambda self: self._buffer.strides)
    ndim = property(lambda self: self._buffer.ndim)
    size = property(lambda self: self._buffer.size)

    @property
    def pointer(self) -> int:
        return self._buffer.ctypes.data

    def __getitem__(self, index) -> EmulatedArray:
        view = self._buffer[index]
        if not isinstance(view, np.ndarray):
            # An element: a 0-d view of it, as CuPy's indexing gives (never a host scalar).
            view = self._buffer[(*(index if isinstance(index, tuple) else (index,)), ...)]
        return EmulatedArray(view)

    def transpose(self, axes: Sequence[int]) -> EmulatedArray:
        return EmulatedArray(self._buffer.transpose(axes))

    def reshape(self, shape: Sequence[int]) -> EmulatedArray:
        return EmulatedArray(self._buffer.reshape(shape))

    def __repr__(self) -> str:
        return f"EmulatedArray(shape={self.shape}, dtype={self.dtype})"


class EmulatedRuntime(Runtime):
    context = EMULATED
    # Few blocks of few threads: every thread's grid-stride loop takes several steps, as on
    # a GPU with large arrays, and the serial loop calls the kernel few times.
    BLOCK = 32
    MAX_GRID = 3
    # Reductions split into few partial results of few values each: several passes even
    # on small arrays.
    REDUCTION_THREADS = 8
    REDUCTION_MIN_VALUES = 2

    def is_device_array(self, value: Any) -> bool:
        return isinstance(value, EmulatedArray)

    def to_device(self, array: np.ndarray) -> EmulatedArray:
        return EmulatedArray(np.array(array, copy=True))

    def to_host(self, value: EmulatedArray) -> np.ndarray:
        return np.array(value._buffer, copy=True)

    def empty(self, shape: Sequence[int], dtype: str) -> EmulatedArray:
        return EmulatedArray(np.empty(tuple(shape), dtype=dtype))

    def copy(self, value: EmulatedArray) -> EmulatedArray:
        return EmulatedArray(value._buffer.copy())

    def matmul(self, a: EmulatedArray, b: EmulatedArray) -> EmulatedArray:
        # The device's BLAS library, emulated by numpy's: what the tests check around it
        # (placement, shapes, the elementwise kernels that scale and add) is sympile's.
        with np.errstate(all="ignore"):  # inf and NaN give numpy's values, as on the host
            return EmulatedArray(np.asarray(np.matmul(a._buffer, b._buffer)))

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        grid = min(math.ceil(size / self.BLOCK), self.MAX_GRID)
        values = [a.pointer if isinstance(a, EmulatedArray) else int(a) for a in arguments]
        emulated_launcher(kernel)(grid, self.BLOCK, *values)


class CupyRuntime(Runtime):
    """An NVIDIA GPU through CuPy (imported here only, when a CUDA context is used)."""

    BLOCK = 256
    MAX_GRID = 65535

    def __init__(self, index: int):
        self.cupy = require_cupy(index)
        self.index = index
        self.context = f"cuda{index}"
        self.device = self.cupy.cuda.Device(index)
        self._functions: dict[str, Any] = {}

    def is_device_array(self, value: Any) -> bool:
        return isinstance(value, self.cupy.ndarray)

    def to_device(self, array: np.ndarray) -> Any:
        with self.device:
            return self.cupy.asarray(array)

    def to_host(self, value: Any) -> np.ndarray:
        with self.device:
            return self.cupy.asnumpy(value)

    def empty(self, shape: Sequence[int], dtype: str) -> Any:
        with self.device:
            return self.cupy.empty(tuple(shape), dtype=dtype)

    def copy(self, value: Any) -> Any:
        with self.device:
            return value.copy()

    def matmul(self, a: Any, b: Any) -> Any:
        with self.device:
            return self.cupy.matmul(a, b)

    def _function(self, kernel: CudaKernel) -> Any:
        function = self._functions.get(kernel.name)
        if function is None:
            with self.device:
                module = self.cupy.RawModule(code=kernel.source, options=OPTIONS,
                                             backend="nvrtc")
                function = module.get_function(kernel.name)
            self._functions[kernel.name] = function
        return function

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        grid = min(math.ceil(size / self.BLOCK), self.MAX_GRID)
        values = tuple(a if self.is_device_array(a) else np.int64(a) for a in arguments)
        with self.device:
            self._function(kernel)((grid,), (self.BLOCK,), values)

    def synchronize(self) -> None:
        self.device.synchronize()


_targets = threading.local()


@functools.cache
def _emulated_runtime() -> EmulatedRuntime:
    return EmulatedRuntime()


@functools.cache
def _cuda_runtime(index: int) -> CupyRuntime:
    return CupyRuntime(index)


def is_context(name: str) -> bool:
    """Whether `name` names a device context: 'emulated' or 'cudaN'."""
    return name == EMULATED or (name.startswith("cuda") and name[4:].isdigit())


def runtime(context: str) -> Runtime:
    """The runtime of `context` ('emulated' or 'cudaN')."""
    if context == EMULATED:
        return _emulated_runtime()
    if is_context(context):
        return _cuda_runtime(int(context[4:]))
    raise ValueError(f"sympile.gpu: unknown device context {context!r}; expected 'emulated' "
                     f"or 'cuda0', 'cuda1', ...")


def target_context() -> str | None:
    """Where the placement rewrite moves nodes: see the module's docstring."""
    stack = getattr(_targets, "stack", None)
    if stack:
        return stack[-1]
    device = config.device
    if device == "cuda":
        return "cuda0"
    return device if device.startswith("cuda") else None


@contextlib.contextmanager
def placement_target(context: str) -> Iterator[None]:
    """Functions compiled inside place their GPU nodes in `context`, whatever config.device
    says; shared variables made inside live there."""
    runtime(context)
    _targets.stack = [*getattr(_targets, "stack", []), context]
    try:
        yield
    finally:
        _targets.stack.pop()


def emulate() -> contextlib.AbstractContextManager[None]:
    """Functions compiled inside place their GPU nodes on the CPU emulation of a device
    (tests of the GPU backend without a GPU)."""
    return placement_target(EMULATED)
