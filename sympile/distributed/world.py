"""The MPI world of a data-parallel run: init(), rank(), size(), barrier(), and how a
collective waits (with a timeout, so that a rank that failed or stopped makes the others
fail with a clear error instead of hanging).

init() also fills the table through which the collectives' C code calls MPI (capi.py).

mpi4py is imported by init() only: `import sympile` never imports it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from sympile.distributed import capi

__all__ = ["CollectiveTimeout", "barrier", "init", "is_initialized", "rank", "size",
           "wait", "world"]


class CollectiveTimeout(RuntimeError):
    """A collective in which some rank did not take part within the timeout."""


_STATE: dict[str, Any] = {"comm": None, "timeout": None}


def init(comm: Any = None, timeout: float = 300.0, abort_on_error: bool = True) -> Any:
    """Joins the MPI world (`mpiexec -n 4 python train.py`, or several hosts through the
    launcher's host list) and returns the communicator (MPI.COMM_WORLD by default).

    timeout: seconds a collective waits for the other ranks before raising
    CollectiveTimeout. abort_on_error: an exception that ends this rank's program aborts
    the whole job (MPI_Abort) after printing it, so that no rank waits for it forever."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(f"sympile.distributed needs mpi4py and an MPI library: "
                          f"python -m pip install 'sympile[mpi]' ({error})") from None
    if timeout is not None and timeout <= 0:
        raise ValueError(f"init: timeout must be positive seconds or None, got {timeout!r}")
    _STATE["comm"] = comm if comm is not None else MPI.COMM_WORLD
    _STATE["timeout"] = timeout
    capi.publish(_STATE["comm"], timeout)
    if abort_on_error and not getattr(sys.excepthook, "_sympile_aborts", False):
        previous = sys.excepthook

        def abort_on_uncaught(kind, value, trace):
            previous(kind, value, trace)
            sys.stderr.write(f"sympile.distributed: rank {_STATE['comm'].Get_rank()} failed; "
                             f"aborting the job\n")
            sys.stdout.flush()
            sys.stderr.flush()
            # The launcher forwards output through pipes it stops reading at the abort: give
            # it the time to pass on this rank's traceback.
            time.sleep(0.5)
            _STATE["comm"].Abort(1)

        abort_on_uncaught._sympile_aborts = True
        sys.excepthook = abort_on_uncaught
    return _STATE["comm"]


def is_initialized() -> bool:
    return _STATE["comm"] is not None


def world() -> Any:
    """The communicator init() joined; a RuntimeError before init()."""
    if _STATE["comm"] is None:
        raise RuntimeError("sympile.distributed: call sympile.distributed.init() first (and "
                           "run the program under mpiexec)")
    return _STATE["comm"]


def rank() -> int:
    return world().Get_rank()


def size() -> int:
    return world().Get_size()


def wait(request: Any, who: str) -> None:
    """Waits for a non-blocking collective, up to the timeout: CollectiveTimeout names
    `who` and this rank when some rank does not take part."""
    timeout = _STATE["timeout"]
    if timeout is None:
        request.Wait()
        return
    start = time.monotonic()
    deadline = start + timeout
    # MPI makes progress inside its calls only: Test() back to back while the collective
    # is likely still moving data; after 0.2 s some rank is late, and polling every
    # millisecond leaves the core to the others.
    while not request.Test():
        now = time.monotonic()
        if now - start > 0.2:
            time.sleep(0.001)
        if now > deadline:
            raise CollectiveTimeout(
                f"{who}: rank {rank()} of {size()} waited {timeout:g} s for the other ranks; "
                f"one of them failed, stopped, or runs a different program")


def barrier() -> None:
    """Waits until every rank reaches this point (with the collectives' timeout)."""
    wait(world().Ibarrier(), "barrier")
