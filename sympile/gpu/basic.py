"""GpuArrayType: arrays in a device's memory (Theano's gpuarray type), its variables, and the
transfers between host and device (GpuFromHost, HostFromGpu).

A GpuArrayType has a TensorType's dtype and static shape plus the device context that holds
its values (sympile.gpu.runtime). Its variables support every tensor operator: an op that
takes a tensor receives HostFromGpu of the variable (`_as_TensorVariable`), which the
placement rewrite removes again when that op runs on the device too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sympile.gpu.runtime import is_context, runtime, target_context
from sympile.graph.basic import Apply, Constant, Variable
from sympile.graph.op import Op
from sympile.graph.type import Type
from sympile.graph.utils import bind_methods
from sympile.tensor.sharedvar import SharedVariable, shared_constructor, static_shape
from sympile.tensor.type import TensorType, tensor_type
from sympile.tensor.variable import TensorMethods, TensorVariable, as_tensor_variable

__all__ = ["GpuArrayConstant", "GpuArraySharedVariable", "GpuArrayType", "GpuArrayVariable",
           "GpuFromHost", "GpuWrapper", "HostFromGpu", "check_context", "kernel_cache"]


def kernel_cache(method: Callable) -> Callable:
    """functools.cache for an op's kernel method, kept on the op and keyed by the arguments
    only: a launch does not hash the op (its props, deeply) to find its kernel."""
    attribute = f"_{method.__name__}_cache"

    @functools.wraps(method)
    def cached(self, *arguments):
        cache = self.__dict__.setdefault(attribute, {})
        if arguments not in cache:
            cache[arguments] = method(self, *arguments)
        return cache[arguments]
    return cached


class GpuArrayType(Type):
    """Device arrays of `dtype` with static `shape` in `context` ('cuda0', 'emulated')."""

    __props__ = ("dtype", "shape", "context")

    def __init__(self, dtype: Any, shape: Sequence[int | None], context: str):
        host = tensor_type(dtype, shape)
        self.dtype, self.shape, self.ndim = host.dtype, host.shape, host.ndim
        self.context = context
        # Read at every launch (the broadcast check, the strides): computed once.
        self.broadcastable = host.broadcastable
        self.numpy_dtype = host.numpy_dtype

    @classmethod
    def of(cls, host: TensorType, context: str) -> GpuArrayType:
        return cls(host.dtype, host.shape, context)

    @property
    def host_type(self) -> TensorType:
        """The TensorType of the same arrays in host memory."""
        return tensor_type(self.dtype, self.shape)

    def clone(self, dtype: Any = None, shape: Sequence[int | None] | None = None):
        return GpuArrayType(dtype or self.dtype, self.shape if shape is None else shape,
                            self.context)

    def __str__(self):
        return f"GpuArrayType<{self.context}>{str(self.host_type)[len('TensorType'):]}"

    def is_super(self, other: Type) -> bool:
        return isinstance(other, GpuArrayType) and other.context == self.context \
            and self.host_type.is_super(other.host_type)

    def convert_variable(self, variable: Variable) -> Variable | None:
        """`variable` of this Type: itself, or a host tensor of the same dtype and number of
        dimensions moved to the device (an update of a GPU shared variable)."""
        if self.is_super(variable.type):
            return variable
        if isinstance(variable.type, TensorType) and variable.type.dtype == self.dtype \
                and variable.type.ndim == self.ndim:
            return GpuFromHost(self.context)(variable)
        return None

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        """A device array of this Type as it is; anything else (unless strict) converted as
        TensorType.filter converts it, then copied to the device."""
        device = runtime(self.context)
        if device.is_device_array(value):
            if value.dtype.name != self.dtype:
                raise TypeError(f"expected a device array of dtype {self.dtype}, got one of "
                                f"{value.dtype.name}")
            # TensorType's checks of the number of dimensions and the static lengths, on an
            # array of the value's shape that allocates nothing.
            self.host_type.filter(np.broadcast_to(np.zeros((), self.dtype), value.shape))
            return value
        if strict:
            raise TypeError(f"expected a device array of {self}, got {type(value).__name__}")
        return device.to_device(self.host_type.filter(value, allow_downcast=allow_downcast))

    def values_eq(self, a, b) -> bool:
        return self.host_type.values_eq(*self._hosts(a, b))

    def values_eq_approx(self, a, b, rtol=None, atol=None) -> bool:
        return self.host_type.values_eq_approx(*self._hosts(a, b), rtol=rtol, atol=atol)

    def _hosts(self, *values):
        device = runtime(self.context)
        return [device.to_host(v) if device.is_device_array(v) else v for v in values]

    def data_signature(self, data):
        return self.host_type.data_signature(runtime(self.context).to_host(data))

    def make_constant(self, value, name=None):
        return GpuArrayConstant(self, self.filter(value), name)


class _GpuMethods(TensorMethods):
    def _as_TensorVariable(self):
        return HostFromGpu()(self)


class GpuArrayVariable(_GpuMethods, Variable):
    """A symbolic device array."""


class GpuArrayConstant(_GpuMethods, Constant):
    """A device array fixed at compile time (moved to the device once)."""


GpuArrayType.variable_type = GpuArrayVariable
GpuArrayType.constant_type = GpuArrayConstant


class GpuArraySharedVariable(_GpuMethods, SharedVariable):
    """A shared variable whose value lives on the device. get_value() returns a numpy array
    (borrow=True with return_internal_type=True: the device array itself)."""

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        value = self.container.storage[0]
        if borrow and return_internal_type:
            return value
        return runtime(self.type.context).to_host(value)

    def _copy(self, data: Any) -> Any:
        return runtime(self.type.context).copy(data)


class GpuFromHost(Op):
    """A host tensor copied to the device of `context`."""

    __props__ = ("context",)

    def __init__(self, context: str):
        self.context = context

    def __str__(self):
        return f"GpuFromHost<{self.context}>"

    def make_node(self, x):
        x = as_tensor_variable(x, op=self)
        return Apply(self, [x], [GpuArrayType.of(x.type, self.context)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = runtime(self.context).to_device(inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes

    def L_op(self, inputs, outputs, output_grads):
        return [as_tensor_variable(output_grads[0])]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


class HostFromGpu(Op):
    """A device array copied to the host (a numpy array)."""

    __props__ = ()

    def make_node(self, x):
        if not isinstance(getattr(x, "type", None), GpuArrayType):
            raise TypeError(f"{self}: expected a device array variable, got {x!r}")
        return Apply(self, [x], [x.type.host_type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = runtime(node.inputs[0].type.context).to_host(inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes

    def L_op(self, inputs, outputs, output_grads):
        return [GpuFromHost(inputs[0].type.context)(output_grads[0])]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else self(eval_points[0])]


def check_context(op: Op, inputs, context: str) -> None:
    for index, variable in enumerate(inputs):
        if not isinstance(variable.type, GpuArrayType) or variable.type.context != context:
            raise TypeError(f"{op}: input {index} must be a device array of {context}, got "
                            f"{variable} of type {variable.type}")


class GpuWrapper(Op):
    """The host op `op` on device arrays of `context`: its first `device_inputs` inputs are
    device arrays (None: all of them), the others the host op's own (lengths, indices); its
    outputs are device arrays. perform is the host op's, for ops whose perform only views,
    reshapes or checks shapes (which device arrays do as numpy arrays do); subclasses that
    compute override it."""

    __props__ = ("op", "context")
    device_inputs: int | None = 1

    def __init__(self, op: Op, context: str):
        self.op = op
        self.context = context
        self.view_map = dict(getattr(op, "view_map", {}))

    def __str__(self):
        return f"Gpu{self.op}<{self.context}>"

    def make_node(self, *inputs):
        count = len(inputs) if self.device_inputs is None else self.device_inputs
        on_device = inputs[:count]
        check_context(self, on_device, self.context)
        host = self.op.make_node(*[v.type.host_type() for v in on_device], *inputs[count:])
        return Apply(self, [*on_device, *host.inputs[count:]],
                     [GpuArrayType.of(v.type, self.context)() for v in host.outputs])

    def perform(self, node, inputs, output_storage):
        self.op.perform(node, inputs, output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        return self.op.infer_shape(fgraph, node, input_shapes)


@shared_constructor
def gpu_shared_constructor(value: Any, name: str | None = None, strict: bool = False,
                           allow_downcast: bool | None = None, borrow: bool = False,
                           shape: Sequence[int | None] | None = None,
                           broadcastable: Sequence[bool] | None = None,
                           target: str | None = None, **kwargs: Any):
    """A shared variable on the device: of a device array, of any value given
    target='cudaN' (or 'emulated'), and of a float value when the placement target
    (config.device) is a GPU and target is None. None otherwise (the host's constructors
    take it)."""
    if target == "cpu" or isinstance(value, Variable):
        return None
    context = target or target_context()
    if context is None or (target is not None and not is_context(target)):
        return None
    device = runtime(context)
    on_device = device.is_device_array(value)
    if not on_device:
        value = np.asarray(value)
        if value.dtype.kind not in "biuf" or (target is None and value.dtype.kind != "f"):
            return None
    type_ = GpuArrayType(value.dtype.name, static_shape(shape, broadcastable, value.shape),
                         context)
    variable = GpuArraySharedVariable(type_, value, name=name, strict=strict,
                                      allow_downcast=allow_downcast, borrow=True)
    if not borrow and on_device and variable.container.storage[0] is value:
        variable.container.storage[0] = device.copy(value)
    return variable


class _DeviceOutput:
    """_as_device_variable(), bound onto TensorVariable: the tensor as a device array of the
    placement target (function(..., return_device_arrays=True) returns it so), or itself
    where nothing is placed."""

    def _as_device_variable(self):
        context = target_context()
        return self if context is None else GpuFromHost(context)(self)


bind_methods(TensorVariable, _DeviceOutput)
