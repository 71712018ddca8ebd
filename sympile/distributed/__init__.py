"""Data-parallel training across processes and machines on MPI, through mpi4py with an MPI
from PyPI (`pip install 'sympile[mpi]'`: mpi4py and the mpich wheel; no system MPI).

    mpiexec -n 4 python train.py

init() joins the world (mpi4py is imported there, never by `import sympile`); rank() and
size(); symbolic collectives with gradients (all_reduce, all_gather, broadcast); and
DataParallel, which averages the gradients in one bucketed all-reduce, broadcasts rank 0's
parameters at the start and writes checkpoints from rank 0. A rank that raises aborts the
job; a collective some rank never joins raises CollectiveTimeout after init's timeout.
"""

from sympile.distributed import rewriting  # noqa: F401 - registers its rules
from sympile.distributed.collectives import (
    AllGather,
    AllReduce,
    Broadcast,
    all_gather,
    all_reduce,
    broadcast,
)
from sympile.distributed.data_parallel import DataParallel
from sympile.distributed.world import (
    CollectiveTimeout,
    barrier,
    init,
    is_initialized,
    rank,
    size,
    world,
)

__all__ = ["AllGather", "AllReduce", "Broadcast", "CollectiveTimeout", "DataParallel",
           "all_gather", "all_reduce", "barrier", "broadcast", "init", "is_initialized",
           "rank", "size", "world"]
