"""Floats cast to integers on the C backend give numpy's values (float_to_int.h), also for
NaN, infinities and values out of the target's range, where C's own cast is undefined."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sympile.tensor as T
from tests.link.c.utils import compile_c, requires_compiler

pytestmark = requires_compiler

SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.5, -1.0, -1.5, -128.5, -129.0, 127.9,
                    128.0, 255.0, 256.0, 300.0, -300.0, 65536.5, 2.0**31, -2.0**31,
                    -2.0**31 - 1e3, 2.0**32 + 5, 2.0**63, -2.0**63, -2.0**64, 2.0**64,
                    2.0**66, 1e20, -1e20, 3.4e38, -3.4e38])
INTEGERS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def numpy_cast(values: np.ndarray, dtype: str) -> np.ndarray:
    """numpy's conversion of each element alone: its vectorised loop gives another uint32 for
    a value out of uint32's range in a long array (see float_to_int.h)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.array([value.reshape(1).astype(dtype)[0] for value in values],
                        dtype=dtype).reshape(values.shape)


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("target", INTEGERS)
def test_every_float_to_integer_cast_is_numpys(source, target):
    x = T.vector("x", dtype=source)
    values = numpy_cast(SPECIAL, source)
    got = compile_c([x], T.cast(x, target))(values)
    np.testing.assert_array_equal(got, numpy_cast(values, target))


def test_fused_casts_keep_numpys_values():
    """The graphs of the report: sgn(x) to uint8, and log(x) through int64 back to float."""
    x = T.fvector("x")
    values = np.array([-2.0, -0.5, 0.0, 3.0], dtype="float32")
    unsigned = compile_c([x], T.cast(T.sgn(x), "uint8"))(values)
    np.testing.assert_array_equal(unsigned, numpy_cast(np.sign(values), "uint8"))
    y = T.dvector("y")
    with np.errstate(all="ignore"):
        logs = np.log(np.array([np.nan, 0.0, -1.0, 5.0]))
    round_trip = compile_c([y], T.cast(T.cast(T.log(y), "int64"), "float64"))(
        np.array([np.nan, 0.0, -1.0, 5.0]))
    np.testing.assert_array_equal(round_trip, numpy_cast(numpy_cast(logs, "int64"), "float64"))
