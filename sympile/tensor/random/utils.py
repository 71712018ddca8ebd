"""What both random streams need: the `size` argument as an int64 vector, parameter checks
at graph-building time (constants) and at run time (CheckParameter, where the sampler does
not check itself), the output dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from sympile.config import config
from sympile.graph.basic import Constant, Variable
from sympile.scalar.basic import upcast
from sympile.tensor.basic import stack
from sympile.tensor.random.distributions import PVALS_TOLERANCE
from sympile.tensor.random.op import CheckParameter
from sympile.tensor.reduction import all as all_
from sympile.tensor.variable import as_tensor_variable, constant

__all__ = ["normalize_size", "float_dtype", "check_constant", "checked",
           "check_constant_rows", "checked_rows", "as_parameter"]

_INTEGER_KINDS = "iu"


def normalize_size(size: Any, ndim: int | None, label: str) -> tuple[Variable | None, int | None]:
    """(size as an int64 vector variable, its length), or (None, None) for size=None.

    size: an int, a tuple or list of ints and integer scalars, or an integer vector (whose
    length is its static length, else `ndim`). Entries must not be negative."""
    if size is None:
        return None, None
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    if isinstance(size, (tuple, list)):
        entries = []
        for position, entry in enumerate(size):
            if isinstance(entry, Variable):
                entry = as_tensor_variable(entry, op=label, argument="size")
                if entry.type.ndim != 0 or np.dtype(entry.type.dtype).kind not in _INTEGER_KINDS:
                    raise TypeError(f"{label}: size[{position}] must be an integer scalar, got "
                                    f"{entry.type}")
                entries.append(entry.astype("int64"))
            elif isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
                if entry < 0:
                    raise ValueError(f"{label}: size must have no negative entry, got "
                                     f"{tuple(size)}")
                entries.append(constant(int(entry), dtype="int64"))
            else:
                raise TypeError(f"{label}: size must hold ints or integer scalars, got "
                                f"{entry!r} at position {position}")
        if ndim is not None and ndim != len(entries):
            raise ValueError(f"{label}: ndim={ndim} does not match size {tuple(size)}")
        if not entries:
            return constant(np.zeros(0, np.int64)), 0
        if all(isinstance(entry, Constant) for entry in entries):
            return constant(np.array([entry.data for entry in entries], np.int64)), len(entries)
        return stack(entries), len(entries)
    if isinstance(size, Variable):
        size = as_tensor_variable(size, op=label, argument="size")
        if size.type.ndim == 0:
            return normalize_size((size,), ndim, label)
        if size.type.ndim != 1 or np.dtype(size.type.dtype).kind not in _INTEGER_KINDS:
            raise TypeError(f"{label}: size must be an integer vector, got {size.type}")
        length = size.type.shape[0]
        if length is None:
            if ndim is None:
                raise ValueError(f"{label}: the length of size {size} is not known; pass ndim")
            length = ndim
        elif ndim is not None and ndim != length:
            raise ValueError(f"{label}: ndim={ndim} does not match size of length {length}")
        return size.astype("int64"), length
    raise TypeError(f"{label}: size must be None, an int, a tuple of ints or an integer "
                    f"vector, got {size!r}")


def as_parameter(value: Any, label: str, name: str) -> Variable:
    """A distribution parameter as a tensor variable; Python numbers become constants of
    their own kind that do not raise the output's precision (floats are floatX)."""
    if isinstance(value, Variable):
        return as_tensor_variable(value, op=label, argument=name)
    array = np.asarray(value)
    if array.dtype.kind == "f" and not isinstance(value, np.ndarray):
        array = array.astype(config.floatX)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{label}: {name} must be a number or a numeric tensor, got {value!r}")
    return constant(array)


def float_dtype(dtype: Any, parameters: list[Variable], label: str) -> str:
    """The output dtype of a continuous distribution: `dtype`, else floatX upcast with the
    parameters' float dtypes (Theano's rule)."""
    if dtype is None:
        dtype = upcast(config.floatX, *(p.type.dtype for p in parameters
                                        if p.type.dtype.startswith("float")))
    dtype = str(np.dtype(dtype))
    if dtype not in ("float16", "float32", "float64"):
        raise TypeError(f"{label}: dtype must be a float dtype, got {dtype}")
    return dtype


def check_constant(value: Variable, holds, label: str, requirement: str) -> None:
    """If `value` is a constant, check now that it satisfies `holds` (a function of an array
    giving a bool of the same shape); a variable is left to the run-time checks."""
    if isinstance(value, Constant):
        data = np.asarray(value.data)
        if not np.all(holds(data)):
            bad = np.asarray(data)[~np.asarray(holds(data), bool)].reshape(-1)
            raise ValueError(f"{label}: {requirement}, got {bad[0] if len(bad) else data}")


def checked(value: Variable, holds, label: str, requirement: str) -> Variable:
    """`value`, checked to satisfy `holds` (a function of a variable or an array giving a
    bool of the same shape): now if it is a constant, else when the function runs."""
    check_constant(value, holds, label, requirement)
    if isinstance(value, Constant):
        return value
    return CheckParameter(f"{label}: {requirement}")(value, all_(holds(value)))


def _rows_requirement(name: str) -> str:
    return f"each row of {name} must be non-negative and sum to 1"


def check_constant_rows(pvals: Variable, label: str, name: str) -> None:
    """If pvals is a constant, check now that it is non-negative with rows (its last axis)
    summing to 1 within PVALS_TOLERANCE."""
    if isinstance(pvals, Constant):
        data = np.asarray(pvals.data, np.float64)
        sums = data.sum(axis=-1)
        if (data < 0).any() or (np.abs(sums - 1.0) > PVALS_TOLERANCE).any():
            raise ValueError(f"{label}: {_rows_requirement(name)}, got row sums "
                             f"{np.ravel(sums)[:4]}")


def checked_rows(pvals: Variable, label: str, name: str) -> Variable:
    """pvals, checked as check_constant_rows says: now if it is a constant, else when the
    function runs."""
    check_constant_rows(pvals, label, name)
    if isinstance(pvals, Constant):
        return pvals
    sums = pvals.sum(axis=-1)
    holds = all_(pvals >= 0) & all_(abs(sums - 1.0) <= PVALS_TOLERANCE)
    return CheckParameter(f"{label}: {_rows_requirement(name)}")(pvals, holds)
