"""The CPU emulation of a CUDA launch: a kernel's source (which elemwise.cu's prelude makes
plain C when NVRTC is not compiling it) compiled by the C compiler into a small extension
module whose `launch(grid, block, *arguments)` calls the kernel once per (block, thread) of
a one-dimensional grid, blockIdx and threadIdx set, in order. Arguments are Python ints:
int64 parameters as they are, pointers as addresses."""

from __future__ import annotations

import functools
from collections.abc import Callable

from sympile import cache
from sympile.link.c.cmodule import compile_flags
from sympile.tensor.elemwise.elemwise_cuda import CudaKernel

__all__ = ["emulated_launcher", "launcher_source"]


def launcher_source(kernel: CudaKernel) -> str:
    """The extension module's C: the kernel, then its serial launcher."""
    count = len(kernel.parameters)
    arguments = ", ".join(f"(void *)(intptr_t)a{i}" if "*" in declaration else f"a{i}"
                          for i, declaration in enumerate(kernel.parameters))
    addresses = "".join(f", &a{i}" for i in range(count))
    declarations = " ".join(f"long long a{i};" for i in range(count))
    return f"""#include <Python.h>
{kernel.source}
static PyObject *launch(PyObject *self, PyObject *args)
{{
    unsigned int grid, block;
    {declarations}
    if (!PyArg_ParseTuple(args, "II{'L' * count}", &grid, &block{addresses}))
        return NULL;
    gridDim.x = grid; gridDim.y = gridDim.z = 1;
    blockDim.x = block; blockDim.y = blockDim.z = 1;
    blockIdx.y = blockIdx.z = threadIdx.y = threadIdx.z = 0;
    for (blockIdx.x = 0; blockIdx.x < grid; blockIdx.x++)
        for (threadIdx.x = 0; threadIdx.x < block; threadIdx.x++)
            {kernel.name}({arguments});
    Py_RETURN_NONE;
}}

static PyMethodDef methods[] = {{
    {{"launch", launch, METH_VARARGS, "run the kernel over a serial grid"}},
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, SYMPILE_MODULE_NAME, NULL, -1,
                                     methods}};

PyMODINIT_FUNC SYMPILE_PYINIT(void)
{{
    return PyModule_Create(&module);
}}
"""


@functools.cache
def emulated_launcher(kernel: CudaKernel) -> Callable[..., None]:
    """launch(grid, block, *arguments) of `kernel`, compiled through sympile's cache."""
    return cache.load(launcher_source(kernel), compile_flags()).module.launch
