"""Compilation: function(), shared variables and modes."""

from sympile.compile.function import Function, In, Out, UnusedInputError, function  # noqa: F401
from sympile.compile.mode import Mode, get_mode  # noqa: F401
from sympile.compile.monitormode import MonitorMode, NanGuardError, NanGuardMode  # noqa: F401
from sympile.compile.ops import as_op  # noqa: F401
from sympile.compile.shared import SharedVariable, shared  # noqa: F401
