"""Compilation: function(), shared variables and modes (debugmode and monitormode register
DEBUG_MODE/DebugMode and NanGuardMode among get_mode's names when imported here)."""

# Theano's compile package imports these submodules, so code reads them as its attributes.
from sympile.compile import io, sharedvalue  # noqa: F401
from sympile.compile.debugmode import DebugMode
from sympile.compile.function import (
    Function,
    In,
    Out,
    Param,
    UnusedInputError,
    function,
)
from sympile.compile.mode import Mode, get_default_mode, get_mode
from sympile.compile.monitormode import MonitorMode, NanGuardError, NanGuardMode
from sympile.compile.ops import DeepCopyOp, ViewOp, as_op, deep_copy_op, view_op
from sympile.compile.pfunc import pfunc, rebuild_collect_shared
from sympile.compile.profiling import ProfileMode, ProfileStats
from sympile.compile.shared import SharedVariable, shared
from sympile.config import config  # Theano's theano.compile.config

__all__ = ["function", "Function", "In", "Out", "Param", "UnusedInputError", "Mode", "get_mode",
           "get_default_mode",
           "DebugMode", "MonitorMode", "NanGuardMode", "NanGuardError", "ProfileMode",
           "ProfileStats", "as_op", "shared", "SharedVariable", "DeepCopyOp", "ViewOp",
           "deep_copy_op", "view_op", "config", "pfunc",
           "rebuild_collect_shared"]
