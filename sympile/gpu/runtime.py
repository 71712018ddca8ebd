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

`Runtime.capture()` records a step's launches without running them, for replay as one
launch (a CUDA Graph on a GPU; on the emulated device the recorded list of launches, which
keeps a GPU's rules: nothing runs while a step is captured, and a transfer or a wait there
is a CaptureError). A kernel that reports errors gets a slot of the capture's flags instead
of a flag read at once: sympile.gpu.graphs reads them after the step.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from sympile.config import config, require_cupy
from sympile.gpu.emulation import emulated_launcher
from sympile.gpu.nvrtc import OPTIONS
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel

__all__ = ["EMULATED", "CaptureError", "EmulatedArray", "Runtime", "StepCapture", "emulate",
           "is_context", "placement_target", "runtime", "target_context"]

EMULATED = "emulated"
# The exceptions a kernel's error flag can report, by their C name.
_EXCEPTIONS = {"PyExc_ValueError": ValueError, "PyExc_IndexError": IndexError}


class CaptureError(RuntimeError):
    """An operation that a captured step cannot hold: a transfer between host and device or
    a wait (nothing runs while a step is captured, so no value can be read), or more error
    slots than the capture has."""


class StepCapture:
    """What one capture recorded: `graph` (its replay: graph.launch()), the device arrays it
    must keep alive (`kept`), and its error flags: an int32 device array, [0] the first
    failing slot + 1 (0: none), [1] that slot's code, [2] the replay it failed in, [3] the
    replays so far, [4 + i] slot i's code this replay (sympile/gpu/step_flags.cu); `slots`
    lists (kernel, node) for each slot used, `node` is the node being captured."""

    def __init__(self, flags: Any, capacity: int):
        self.flags = flags
        self.capacity = capacity
        self.slots: list[tuple[CudaKernel, Any]] = []
        self.node: Any = None
        self.kept: list[Any] = []
        self.work: list[Callable[[], Any]] = []  # the emulated device's recorded work
        self.graph: Any = None

    def error_slot(self, kernel: CudaKernel) -> Any:
        """The flag a reporting kernel launched now writes (a one-element view)."""
        index = len(self.slots)
        if index >= self.capacity:
            raise CaptureError(f"the capture has {self.capacity} error slots; "
                               f"{kernel.name} needs one more")
        self.slots.append((kernel, self.node))
        return self.flags[4 + index:5 + index]


def kernel_error(kernel: CudaKernel, code: int) -> Exception:
    """The exception of the first error `code` (a kernel's flag) reports."""
    for bit, exception, message in kernel.errors:
        if code & bit:
            return _EXCEPTIONS[exception](message)
    return RuntimeError(f"{kernel.name} reported error code {code}")


class Runtime:
    """What the GPU ops need of a device: arrays (shape, dtype, strides in bytes, views by
    transpose and reshape), transfers, allocation and kernel launches."""

    context: str
    # Launches of kernels that report errors, counted (a capture's slots are sized by it).
    reporting_launches = 0
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
        capture = self.capturing()
        if capture is not None:
            # The step holds every array whose address a launch of it was given (one made
            # before the capture, as a cached constant, included), for as long as it lives.
            capture.kept.extend(a for a in arguments if self.is_device_array(a))
        if not kernel.reports_errors:
            self._launch(kernel, size, arguments)
            return
        self.reporting_launches += 1
        if capture is not None:
            self._launch(kernel, size, [*arguments, capture.error_slot(kernel)])
            return
        flag = self.to_device(np.zeros(1, dtype=np.int32))
        self._launch(kernel, size, [*arguments, flag])
        code = int(self.to_host(flag)[0])
        if code:
            raise kernel_error(kernel, code)

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        raise NotImplementedError

    def load(self, kernel: CudaKernel) -> None:
        """Compile and load `kernel` now (not first while a step is captured)."""

    def synchronize(self) -> None:
        """Wait for every launched kernel."""

    def write(self, target: Any, array: np.ndarray) -> None:
        """target[...] = array: host values into a C-contiguous device array of their
        shape and dtype."""
        raise NotImplementedError

    def assign(self, target: Any, value: Any) -> None:
        """target[...] = value: a device array into another of its shape and dtype (any
        strides), by one library call."""
        raise NotImplementedError

    # Device copies of host constants an op computes at run time (constant()), the last
    # CONSTANTS of them.
    CONSTANTS = 16

    def constant(self, key: Any, make: Callable[[], np.ndarray]) -> Any:
        """A device copy of the host array make() gives, made once for each `key` (among
        the last CONSTANTS keys): no transfer where the same one is asked again, as inside
        a captured step."""
        constants = self.__dict__.setdefault("_constants", {})
        value = constants.pop(key, None)
        if value is None:
            value = self.to_device(make())
            while len(constants) >= self.CONSTANTS:
                constants.pop(next(iter(constants)))
        constants[key] = value
        return value

    def extent(self, value: Any) -> tuple[int, int]:
        """The device addresses [start, end) that `value`'s elements lie within."""
        start = end = self.pointer(value)
        for length, stride in zip(value.shape, value.strides):
            if length == 0:
                return start, start
            if stride < 0:
                start += (length - 1) * stride
            else:
                end += (length - 1) * stride
        return start, end + value.dtype.itemsize

    def pointer(self, value: Any) -> int:
        """The device address of `value`'s first element."""
        raise NotImplementedError

    # -- capture ----------------------------------------------------------------------------
    _local = threading.local()

    def capturing(self) -> StepCapture | None:
        """The capture this thread is recording on this runtime, if any."""
        return getattr(self._local, self.context, None)

    def _check_not_capturing(self, what: str) -> None:
        if self.capturing() is not None:
            raise CaptureError(f"{what} while a step is captured: nothing runs during a "
                               f"capture, so no value can cross between host and device")

    @contextlib.contextmanager
    def capture(self, slots: int = 0) -> Iterator[StepCapture]:
        """Record this thread's launches, copies and products on this runtime, without
        running them, into the StepCapture yielded (its graph is set on a clean exit); a
        reporting kernel gets one of `slots` error slots."""
        step = StepCapture(self.to_device(np.zeros(4 + slots, np.int32)), slots)
        setattr(self._local, self.context, step)
        try:
            with self._recording(step):
                yield step
        finally:
            setattr(self._local, self.context, None)

    def _recording(self, step: StepCapture) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def replay(self, step: StepCapture) -> None:
        """Launch the work `step` captured, as it was recorded."""
        step.graph.launch()

    def release(self, step: StepCapture) -> None:
        """Wait until the replays of `step` are done, before it is dropped."""


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
        self._check_not_capturing("a transfer to the device")
        return EmulatedArray(np.array(array, copy=True))

    def to_host(self, value: EmulatedArray) -> np.ndarray:
        self._check_not_capturing("a transfer to the host")
        return np.array(value._buffer, copy=True)

    def empty(self, shape: Sequence[int], dtype: str) -> EmulatedArray:
        return EmulatedArray(np.empty(tuple(shape), dtype=dtype))

    def copy(self, value: EmulatedArray) -> EmulatedArray:
        result = self.empty(value.shape, value.dtype)
        self._run(np.copyto, result._buffer, value._buffer)
        return result

    def matmul(self, a: EmulatedArray, b: EmulatedArray) -> EmulatedArray:
        # The device's BLAS library, emulated by numpy's: what the tests check around it
        # (placement, shapes, the elementwise kernels that scale and add) is sympile's.
        result = self.empty(_matmul_shape(a.shape, b.shape),
                            np.result_type(a.dtype, b.dtype).name)
        self._run(_matmul_into, a._buffer, b._buffer, result._buffer)
        return result

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        grid = min(math.ceil(size / self.BLOCK), self.MAX_GRID)
        values = [a.pointer if isinstance(a, EmulatedArray) else int(a) for a in arguments]
        self._run(emulated_launcher(kernel), grid, self.BLOCK, *values)

    def _run(self, work: Callable[..., Any], *arguments: Any) -> None:
        """Run `work` now, or record it in the step being captured."""
        capture = self.capturing()
        if capture is None:
            work(*arguments)
        else:
            capture.work.append(functools.partial(work, *arguments))

    def write(self, target: EmulatedArray, array: np.ndarray) -> None:
        self._check_not_capturing("a transfer to the device")
        np.copyto(target._buffer, array)

    def assign(self, target: EmulatedArray, value: EmulatedArray) -> None:
        self._run(np.copyto, target._buffer, value._buffer)

    def pointer(self, value: EmulatedArray) -> int:
        return value.pointer

    @contextlib.contextmanager
    def _recording(self, step: StepCapture) -> Iterator[None]:
        yield
        step.graph = _EmulatedGraph(tuple(step.work))


def _raised_by_cuda(error: BaseException | None) -> bool:
    """Whether `error`, or an error it was raised from, is CuPy's (CUDA's, cuBLAS's)."""
    while error is not None:
        if type(error).__module__.split(".")[0] in ("cupy", "cupy_backends"):
            return True
        error = error.__cause__
    return False


class _EmulatedGraph:
    """A captured step on the emulated device: its recorded work, run in order."""

    def __init__(self, work: tuple[Callable[[], Any], ...]):
        self.work = work

    def launch(self) -> None:
        for item in self.work:
            item()


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy.matmul's result shape for operands of shapes `a` and `b` (which the ops check
    before they multiply)."""
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return b[:-2] + b[-1:]
    return np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])


def _matmul_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(all="ignore"):  # inf and NaN give numpy's values, as on the host
        out[...] = np.matmul(a, b)


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
        self._check_not_capturing("a transfer to the device")
        with self.device:
            return self.cupy.asarray(array)

    def to_host(self, value: Any) -> np.ndarray:
        self._check_not_capturing("a transfer to the host")
        with self.device:
            return self.cupy.asnumpy(value)

    def write(self, target: Any, array: np.ndarray) -> None:
        self._check_not_capturing("a transfer to the device")
        with self.device:
            target.set(np.ascontiguousarray(array))

    def pointer(self, value: Any) -> int:
        return value.data.ptr

    def assign(self, target: Any, value: Any) -> None:
        with self.device:
            self.cupy.copyto(target, value)

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

    def load(self, kernel: CudaKernel) -> None:
        self._function(kernel)

    def _launch(self, kernel: CudaKernel, size: int, arguments: Sequence[Any]) -> None:
        grid = min(math.ceil(size / self.BLOCK), self.MAX_GRID)
        values = tuple(a if self.is_device_array(a) else np.int64(a) for a in arguments)
        with self.device:
            self._function(kernel)((grid,), (self.BLOCK,), values)

    def synchronize(self) -> None:
        self._check_not_capturing("a wait for the device")
        self.device.synchronize()

    @functools.cached_property
    def graph_stream(self) -> Any:
        """The stream steps are captured on and replayed on: a blocking one, so ordered
        with the work every other call puts on the default stream (capture cannot use
        that one itself)."""
        with self.device:
            return self.cupy.cuda.Stream()

    @contextlib.contextmanager
    def _recording(self, step: StepCapture) -> Iterator[None]:
        pool = self.cupy.get_default_memory_pool()

        def allocate(size: int) -> Any:
            # What the step allocates is its own for as long as it is replayed.
            memory = pool.malloc(size)
            step.kept.append(memory)
            return memory

        stream = self.graph_stream
        with self.device, stream, self.cupy.cuda.using_allocator(allocate):
            stream.begin_capture()
            try:
                yield
            except BaseException as error:
                with contextlib.suppress(Exception):
                    stream.end_capture()
                if _raised_by_cuda(error):
                    # What CUDA refuses to capture (a library call, an unsupported
                    # operation) runs uncaptured instead.
                    raise CaptureError(f"CUDA refused to capture: {error}") from error
                raise
            try:
                step.graph = stream.end_capture()
            except Exception as error:
                raise CaptureError(f"CUDA refused to capture: {error}") from error

    def replay(self, step: StepCapture) -> None:
        with self.device:
            step.graph.launch(stream=self.graph_stream)

    def release(self, step: StepCapture) -> None:
        self.graph_stream.synchronize()


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
