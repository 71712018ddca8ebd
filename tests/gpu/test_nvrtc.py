"""Every kernel the generators emit compiles with NVRTC to PTX for sm_90 (the H100/H200),
without a GPU: the scalar op table in every dtype and the fused kernels of a training
step. NVRTC comes with the test extra (the nvidia-cuda-nvrtc wheel)."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import sympile
import sympile.tensor as T
from sympile.gpu import emulate
from sympile.gpu.elemwise import GpuElemwise
from sympile.gpu.graphs import step_commit_kernel, step_flags_kernel
from sympile.gpu.nvrtc import NvrtcError, compile_ptx, version
from sympile.scalar import basic as scalar
from sympile.scalar.basic import SCALAR_OPS
from sympile.tensor.elemwise.elemwise_cuda import computed_dtype, elemwise_cuda_kernel
from sympile.tensor.extra_ops.cumulative_cuda import cumulative_kernel
from sympile.tensor.nnet.conv_cuda import col2im_kernel, im2col_kernel
from sympile.tensor.nnet.crossentropy_cuda import crossentropy_dx_kernel, crossentropy_pick_kernel
from sympile.tensor.random.random_cuda import (
    DEVICE_DRAWS,
    mrg_uniform_kernel,
    philox_draw_kernel,
)
from sympile.tensor.reduction import CAReduce
from sympile.tensor.reduction.argreduce_cuda import argreduce_cuda_kernel
from sympile.tensor.reduction.careduce_cuda import careduce_cuda_kernel
from sympile.tensor.signal.pool_cuda import pool_backward_kernel, pool_forward_kernel
from sympile.tensor.sort.sort_cuda import (
    SORTABLE_DTYPES,
    permute_kernel,
    sort_start_kernel,
    sort_step_kernel,
)
from sympile.tensor.subtensor.rows_cuda import (
    ATOMIC_DTYPES,
    inc_rows_kernel,
    set_rows_kernel,
    take_rows_kernel,
)
from tests.gpu.test_elemwise import ALL_DTYPES, FAST_DTYPES, HOST_ONLY
from tests.gpu.test_reduction import DTYPES, FOLDS


def _kernels(dtypes, ndim):
    for name, op in sorted(SCALAR_OPS.items()):
        for dtype in dtypes:
            try:
                outputs = op.output_dtypes(*[dtype] * op.nin)
            except TypeError:
                continue
            if name not in HOST_ONLY:
                yield elemwise_cuda_kernel(op, [dtype] * op.nin, list(outputs), ndim)


def _compile(kernel):
    ptx = compile_ptx(kernel.source, kernel.name + ".cu")
    assert f".entry {kernel.name}(" in ptx


def _compile_all(kernels):
    """The number of kernels compiled, on one thread per core (NVRTC is thread-safe)."""
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return len(list(pool.map(_compile, kernels)))


def test_nvrtc_is_cuda_13():
    assert version()[0] == 13


def test_op_table_kernels_compile():
    assert _compile_all(_kernels(FAST_DTYPES, 2)) > 300


@pytest.mark.slow
def test_op_table_kernels_compile_all_dtypes_and_ranks():
    others = [d for d in ALL_DTYPES if d not in FAST_DTYPES]
    assert _compile_all(_kernels(others, 2)) > 300
    assert _compile_all(_kernels(ALL_DTYPES, 1)) > 600
    assert _compile_all(_kernels(ALL_DTYPES, 4)) > 600


def _reduction_kernels():
    for fold in FOLDS.values():
        for dtype in DTYPES:
            try:
                reduction = CAReduce(fold, (1,))
                node = reduction.make_node(T.tensor(dtype, (None, None)))
            except TypeError:
                continue
            out = node.outputs[0].type.dtype
            acc = out
            for kept, reduced in ((1, 1), (2, 3)):
                yield careduce_cuda_kernel(fold, None, [dtype], acc, out, kept, reduced)
            yield careduce_cuda_kernel(fold, None, [computed_dtype(acc)], computed_dtype(acc),
                                       out, 1, 1)


def test_reduction_kernels_compile():
    kernels = [kernel for kernel in _reduction_kernels() if kernel is not None]
    assert _compile_all(kernels) > 100
    fused = careduce_cuda_kernel(scalar.add, SCALAR_OPS["exp"], ["float16"], "float32",
                                 "float16", 1, 2)
    assert _compile_all([fused]) == 1
    arg = [argreduce_cuda_kernel(dtype, maximum, kept, reduced) for dtype in DTYPES
           for maximum in (True, False) for kept, reduced in ((1, 1), (2, 3))]
    assert _compile_all(arg) == len(arg)


def test_crossentropy_kernels_compile():
    kernels = []
    for dtype in ("float32", "float64"):
        for target in ("int32", "int64", "uint8"):
            kernels.append(crossentropy_pick_kernel(dtype, target))
            kernels.append(crossentropy_dx_kernel(dtype, "float32", dtype, target))
    assert _compile_all(kernels) == 12
    with_empty = careduce_cuda_kernel(scalar.maximum, None, ["float32"], "float32", "float32",
                                      1, 1, -np.inf)
    assert "-INFINITY" in with_empty.source and _compile_all([with_empty]) == 1


def test_row_indexing_kernels_compile():
    kernels = [take_rows_kernel(dtype, (index,), 2, inner) for dtype in ("float16", "float32",
                                                                           "int8", "float64")
               for index in ("int32", "int64", "uint8") for inner in (1, 3)]
    # Picks by two and three arrays broadcast together (x[arange(n), y], x[i, j, k]).
    kernels += [take_rows_kernel("float32", indices, broadcast, 1)
                for indices in (("int64", "int32"), ("int64", "int64", "uint8"))
                for broadcast in (1, 3)]
    kernels += [inc_rows_kernel(dtype, indices, 2, inner) for dtype in ATOMIC_DTYPES
                for indices, inner in ((("int64",), 1), (("int32", "int64"), 2))]
    kernels += [set_rows_kernel(dtype, ("int64", "int32"), 1, 2)
                for dtype in ("float16", "float32", "bool", "int64")]
    assert _compile_all(kernels) == 32 + 2 * len(ATOMIC_DTYPES)


def test_cumulative_kernels_compile():
    kernels = [cumulative_kernel(mode, dtype, out) for mode in ("add", "mul")
               for dtype, out in (("int8", "int64"), ("float16", "float16"),
                                  ("float32", "float32"), ("bool", "int64"))]
    assert _compile_all(kernels) == 8


def test_sort_kernels_compile():
    kernels = [make(dtype) for dtype in SORTABLE_DTYPES
               for make in (sort_start_kernel, sort_step_kernel)]
    kernels += [permute_kernel(dtype, "int64") for dtype in ("float16", "float64", "int32")]
    assert _compile_all(kernels) == 2 * len(SORTABLE_DTYPES) + 3


def test_random_kernels_compile():
    kernels = [philox_draw_kernel(distribution, dtype)
               for distribution, dtypes in DEVICE_DRAWS.items() for dtype in dtypes]
    kernels += [mrg_uniform_kernel(dtype) for dtype in ("float32", "float64")]
    assert _compile_all(kernels) == len(kernels) > 10


def test_conv_and_pool_kernels_compile():
    kernels = [make(dtype) for dtype in ("float32", "float64")
               for make in (im2col_kernel, col2im_kernel, pool_forward_kernel,
                            pool_backward_kernel)]
    assert _compile_all(kernels) == 8


def test_step_graph_kernels_compile():
    kernels = [step_flags_kernel(), step_commit_kernel("npy_uint32"),
               step_commit_kernel("npy_uint8")]
    assert _compile_all(kernels) == 3


def test_training_step_kernels_compile():
    """The fused kernels of an MLP's SGD step in float32 and float16."""
    for dtype in ("float32", "float16"):
        with emulate():
            W = sympile.shared(np.zeros((6, 4), dtype), name="W")
            x = T.tensor(dtype, (None, None), name="x")
            y = T.lvector("y")
            p = T.nnet.softmax(T.tanh(T.dot(x, W)))
            cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
            f = sympile.function([x, y], cost,
                                 updates=[(W, W - np.asarray(0.1, dtype) * sympile.grad(cost, W))])
        nodes = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, GpuElemwise)]
        assert nodes
        kernels = [node.op.kernel(tuple(v.type.dtype for v in node.inputs),
                                  tuple(v.type.dtype for v in node.outputs),
                                  max(node.outputs[0].type.ndim, 1)) for node in nodes]
        assert _compile_all(kernels) == len(nodes)


def test_a_broken_kernel_reports_nvrtc_log():
    with pytest.raises(NvrtcError, match="broken.cu.*undefined"):
        compile_ptx('extern "C" __global__ void k() { undefined_name(); }', "broken.cu")
