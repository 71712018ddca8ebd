"""The table through which the collectives' C code (collectives.c) calls the MPI library
that mpi4py loaded: its functions' addresses (found through mpi4py's extension module), the
communicator, and the handles of the datatypes and operations. No header or library of MPI
is needed to compile that code, and it calls whichever MPI mpi4py runs on.

world.init() fills it (publish); the C code finds it through the capsule `capsule`.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

__all__ = ["DTYPES", "OPERATIONS", "c_types", "publish"]

_STATE: dict[str, Any] = {"table": None, "c_types": None}

# The orders of collectives.c's types[] and operations[].
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64")
OPERATIONS = ("sum", "max", "min")
_CAPSULE_NAME = b"sympile.distributed.capi.capsule"
# The MPI_Status that collectives.c's wait gives MPI_Test is this many bytes.
_STATUS_BYTES = 256


def _handle_c_type(size: int) -> tuple[str, Any] | None:
    """The C and ctypes types of an MPI handle `size` bytes long: an int (MPICH's ABI) or a
    pointer (Open MPI's, the standard ABI's); None for any other."""
    if size == ctypes.sizeof(ctypes.c_int):
        return "int", ctypes.c_int
    if size == ctypes.sizeof(ctypes.c_void_p):
        return "void *", ctypes.c_void_p
    return None


def publish(comm: Any, timeout: float | None) -> None:
    """Fills the table of collectives.c (struct sympile_mpi_api) for `comm`, and publishes
    its address as the capsule `capsule` the first time. Where the library's handles are of
    no known type, the collectives run their perform() (c_types stays None)."""
    from mpi4py import MPI
    handle = _handle_c_type(MPI._sizeof(MPI.Comm))
    request = _handle_c_type(MPI._sizeof(MPI.Request))
    if (handle is None or request is None or MPI._sizeof(MPI.Status) > _STATUS_BYTES
            or {MPI._sizeof(MPI.Datatype), MPI._sizeof(MPI.Op)} != {MPI._sizeof(MPI.Comm)}):
        return
    api = _STATE["table"]
    if api is None:
        class Api(ctypes.Structure):
            _fields_ = [("rank", ctypes.c_int), ("size", ctypes.c_int),
                        ("timeout", ctypes.c_double), ("comm", handle[1]),
                        ("in_place", ctypes.c_void_p),
                        ("operations", handle[1] * len(OPERATIONS)),
                        ("types", handle[1] * len(DTYPES)),
                        *[(name, ctypes.c_void_p) for name in (
                            "iallreduce", "ibcast", "iallgather", "iallgatherv", "test",
                            "error_string", "work")]]

        api = Api()
        # dlsym on mpi4py's extension finds the functions of the MPI library it loaded.
        library = ctypes.CDLL(MPI.__file__)
        for field, function in (("iallreduce", "MPI_Iallreduce"), ("ibcast", "MPI_Ibcast"),
                                ("iallgather", "MPI_Iallgather"),
                                ("iallgatherv", "MPI_Iallgatherv"), ("test", "MPI_Test"),
                                ("error_string", "MPI_Error_string")):
            setattr(api, field, ctypes.cast(getattr(library, function), ctypes.c_void_p).value)
        for i, name in enumerate(OPERATIONS):
            api.operations[i] = MPI._handleof(getattr(MPI, name.upper()))
        for i, dtype in enumerate(DTYPES):
            api.types[i] = MPI._handleof(MPI._typedict[np.dtype(dtype).char])
        api.in_place = int(MPI.IN_PLACE)
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        globals()["capsule"] = new_capsule(ctypes.addressof(api), _CAPSULE_NAME, None)
        _STATE["table"] = api
        _STATE["c_types"] = (handle[0], request[0])
    api.comm = MPI._handleof(comm)
    api.rank, api.size = comm.Get_rank(), comm.Get_size()
    api.timeout = -1.0 if timeout is None else timeout


def c_types() -> tuple[str, str] | None:
    """The C types of this process's MPI handles and requests for collectives.c, or None
    (before init(), or for a library whose handles it cannot describe)."""
    return _STATE["c_types"]
