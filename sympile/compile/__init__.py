"""Compilation: function(), shared variables and modes."""

from sympile.compile.function import (  # noqa: F401
    Function,
    In,
    Out,
    Param,
    UnusedInputError,
    function,
)
from sympile.compile.mode import Mode, get_mode  # noqa: F401
from sympile.compile.monitormode import MonitorMode, NanGuardError, NanGuardMode  # noqa: F401
from sympile.compile.ops import as_op  # noqa: F401
from sympile.compile.profiling import ProfileMode, ProfileStats  # noqa: F401
from sympile.compile.shared import SharedVariable, shared  # noqa: F401
