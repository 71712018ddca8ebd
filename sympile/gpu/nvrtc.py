"""NVRTC, CUDA's run-time compiler, through ctypes: CUDA C to PTX with no GPU and no CUDA
toolkit, from the library of the `nvidia-cuda-nvrtc` wheel (the `cuda` and `test` extras), of
a CUDA install, or the one CuPy loaded. The test suite compiles every kernel the generators
emit with it, so a broken generator is caught on a machine without a GPU."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os

from sympile.cache import CompileError

__all__ = ["NvrtcError", "NvrtcUnavailable", "compile_ptx", "library", "version"]

# The options every kernel is compiled with: entities without an execution space are device
# functions (the scalar ops' static inline helpers), and C++17.
# --fmad=false: a * b + c rounds twice, as numpy and the CPU kernels (fp-contract=off)
# compute it; explicit fmaf calls still fuse.
OPTIONS = ("-default-device", "--std=c++17", "--fmad=false")


class NvrtcUnavailable(RuntimeError):
    """No NVRTC library could be found or loaded."""


class NvrtcError(CompileError):
    """NVRTC rejected a kernel's source."""


def _candidates() -> list[str]:
    found = []
    try:
        import nvidia
        for root in nvidia.__path__:
            found += sorted(glob.glob(os.path.join(root, "cu*", "lib", "libnvrtc.so*")),
                            reverse=True)
            found += sorted(glob.glob(os.path.join(root, "cuda_nvrtc", "lib", "libnvrtc.so*")),
                            reverse=True)
    except ImportError:
        pass
    found = [path for path in found if "builtins" not in os.path.basename(path)]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        found += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")), reverse=True)
    system = ctypes.util.find_library("nvrtc")
    if system:
        found.append(system)
    return found


@functools.cache
def library() -> ctypes.CDLL:
    """The NVRTC library, loaded once; NvrtcUnavailable naming where it looked."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as error:
            tried.append(f"{path} ({error})")
            continue
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        return lib
    raise NvrtcUnavailable(
        "sympile.gpu.nvrtc: no NVRTC library found"
        + (f" (tried {', '.join(tried)})" if tried else "")
        + "; install the nvidia-cuda-nvrtc wheel (pip install 'sympile[cuda]') or set CUDA_HOME")


def version() -> tuple[int, int]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(library().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def _check(status: int, call: str) -> None:
    if status != 0:
        message = library().nvrtcGetErrorString(status).decode()
        raise NvrtcError(f"sympile.gpu.nvrtc: {call} failed: {message}")


def _text(program: ctypes.c_void_p, size_call: str, get_call: str) -> bytes:
    lib = library()
    size = ctypes.c_size_t()
    _check(getattr(lib, size_call)(program, ctypes.byref(size)), size_call)
    buffer = ctypes.create_string_buffer(size.value)
    _check(getattr(lib, get_call)(program, buffer), get_call)
    return buffer.value


def compile_ptx(source: str, name: str, arch: str = "compute_90",
                options: tuple[str, ...] = OPTIONS) -> str:
    """The PTX of `source` (whose file name in messages is `name`) for the virtual
    architecture `arch`; NvrtcError with NVRTC's log when the source does not compile."""
    lib = library()
    program = ctypes.c_void_p()
    _check(lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0,
                                  None, None), "nvrtcCreateProgram")
    try:
        arguments = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options)]
        status = lib.nvrtcCompileProgram(program, len(arguments),
                                         (ctypes.c_char_p * len(arguments))(*arguments))
        if status != 0:
            log = _text(program, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog").decode()
            raise NvrtcError(f"sympile.gpu.nvrtc: {name} does not compile for {arch}:\n{log}")
        return _text(program, "nvrtcGetPTXSize", "nvrtcGetPTX").decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))
