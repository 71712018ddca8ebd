"""Data-parallel training: every rank holds the same parameters, computes the gradient of
its own batch's cost, and the gradients are averaged across ranks in all-reduces of many of
them at once (buckets of about 4 MiB, the last layers' first), so every rank applies the
same update. A compiled step starts each bucket's all-reduce as soon as its gradients are
computed and waits for it when nothing else is left to compute (sympile.distributed's
rewriting), so that it overlaps the backward pass of the layers below.

    from sympile import distributed
    distributed.init()
    parallel = distributed.DataParallel(params)        # rank 0's values everywhere
    step = sympile.function([x, y], cost,
                            updates=parallel.sgd_updates(cost, learning_rate=0.1))
    ...
    parallel.save("model.npz")                          # rank 0 writes

With each rank's cost the mean over an equal share of the batch, the averaged gradient is
the gradient of the whole batch's mean cost: a step on 2 ranks gives the parameters one
process gives on the concatenated batch (to float rounding). When the shares differ (the
last batch of an epoch), pass each rank's batch size (`batch_size=x.shape[0]`): the
gradients are then weighted by it, sum(n_r g_r) / sum(n_r), which is again the whole
batch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sympile.distributed.collectives import all_reduce
from sympile.distributed.world import rank, size, wait, world
from sympile.gradient import grad
from sympile.graph.basic import Variable
from sympile.tensor.basic.ops import as_tensor_variable
from sympile.tensor.math import cast
from sympile.tensor.sharedvar import SharedVariable, shared

__all__ = ["DataParallel"]


class DataParallel:
    """Data-parallel helper for shared-variable parameters (see the module docstring).

    On creation (every rank, collectively): the parameters' names, shapes and dtypes are
    compared across ranks (a ValueError naming the first difference), then rank 0's values
    are broadcast to every rank.

    bucket_bytes: the gradients are averaged in buckets of about this many bytes (None: one
    bucket per dtype), from the last parameter's to the first's. A compiled step starts
    each bucket's all-reduce as soon as its gradients are computed and waits for it only
    when nothing else is left to compute, so that the all-reduce of the upper layers'
    gradients overlaps the backward pass of the lower ones."""

    def __init__(self, params: Sequence[SharedVariable], bucket_bytes: int | None = 4 << 20):
        if bucket_bytes is not None and (not isinstance(bucket_bytes, (int, np.integer))
                                         or bucket_bytes <= 0):
            raise ValueError(f"DataParallel: bucket_bytes must be a positive int or None, got "
                             f"{bucket_bytes!r}")
        self.bucket_bytes = bucket_bytes
        self.params = list(params)
        for index, param in enumerate(self.params):
            if not isinstance(param, SharedVariable):
                raise TypeError(f"DataParallel: params[{index}] must be a shared variable, "
                                f"got {param!r}")
        self._check_same_parameters()
        self.broadcast_parameters()

    def _signature(self) -> list[tuple[str, tuple[int, ...], str]]:
        return [(param.name or f"params[{i}]", tuple(np.shape(param.get_value(borrow=True))),
                 str(param.type.dtype)) for i, param in enumerate(self.params)]

    def _check_same_parameters(self) -> None:
        mine = self._signature()
        everyone = world().allgather(mine) if size() > 1 else [mine]
        for other_rank, theirs in enumerate(everyone):
            if theirs == mine:
                continue
            if len(theirs) != len(mine):
                raise ValueError(f"DataParallel: rank {rank()} has {len(mine)} parameters, "
                                 f"rank {other_rank} {len(theirs)}: the ranks must build the "
                                 f"same model")
            for (name, shape, dtype), (other_name, other_shape, other_dtype) in zip(mine,
                                                                                 theirs):
                if (shape, dtype) != (other_shape, other_dtype):
                    raise ValueError(f"DataParallel: parameter {name} is {shape} {dtype} on "
                                     f"rank {rank()} but {other_name} is {other_shape} "
                                     f"{other_dtype} on rank {other_rank}: the ranks must "
                                     f"build the same model")

    def broadcast_parameters(self, root: int = 0) -> None:
        """Every rank takes the root's parameter values."""
        for param in self.params:
            buffer = np.array(param.get_value(borrow=True), order="C")
            wait(world().Ibcast(buffer, root=root), "DataParallel.broadcast_parameters")
            param.set_value(buffer, borrow=True)

    def gradients(self, cost: Variable, batch_size: Any = None,
                  **grad_kwargs: Any) -> list[Variable]:
        """This rank's gradients of `cost`, averaged across ranks by one all-reduce of all of
        them (a bucket per dtype); weighted by each rank's `batch_size` (a scalar, symbolic
        or not) when given."""
        local = grad(cost, self.params, **grad_kwargs)
        if size() == 1:
            return local
        result: list[Variable | None] = [None] * len(local)
        for positions in self._buckets(local):
            bucket = [local[i] for i in positions]
            if batch_size is None:
                averaged = all_reduce(bucket, "mean")
            else:
                # The rank's weight rides in the same bucket: no collective more.
                weight = cast(as_tensor_variable(batch_size), bucket[0].type.dtype)
                *totals, weights = all_reduce([g * weight for g in bucket] + [weight], "sum")
                averaged = [total / weights for total in totals]
            for i, gradient in zip(positions, averaged):
                result[i] = gradient
        return result

    def _buckets(self, gradients: list[Variable]) -> list[list[int]]:
        """The gradients' positions in buckets: of one dtype each, filled from the last
        parameter to the first (the order in which a backward pass computes the gradients
        of layers given in order), each up to bucket_bytes (or one parameter larger)."""
        buckets: list[list[int]] = []
        for dtype in sorted({g.type.dtype for g in gradients}):
            bucket: list[int] = []
            filled = 0
            for i in reversed(range(len(gradients))):
                if gradients[i].type.dtype != dtype:
                    continue
                nbytes = np.asarray(self.params[i].get_value(borrow=True)).nbytes
                if bucket and self.bucket_bytes is not None \
                        and filled + nbytes > self.bucket_bytes:
                    buckets.append(bucket)
                    bucket, filled = [], 0
                bucket.append(i)
                filled += nbytes
            if bucket:
                buckets.append(bucket)
        return buckets

    def sgd_updates(self, cost: Variable, learning_rate: float, momentum: float = 0.0,
                    batch_size: Any = None) -> list[tuple[SharedVariable, Variable]]:
        """SGD updates (with momentum when given) from the averaged gradients (weighted by
        each rank's `batch_size` when given, see gradients)."""
        updates = []
        for param, gradient in zip(self.params, self.gradients(cost, batch_size)):
            rate = np.asarray(learning_rate, dtype=param.type.dtype)
            if momentum:
                velocity = shared(np.zeros_like(param.get_value(borrow=True)),
                                  name=f"velocity of {param.name or 'a parameter'}")
                new_velocity = np.asarray(momentum, dtype=param.type.dtype) * velocity \
                    - rate * gradient
                updates += [(velocity, new_velocity), (param, param + new_velocity)]
            else:
                updates.append((param, param - rate * gradient))
        return updates

    def save(self, path: str) -> None:
        """Rank 0 writes the parameters to `path` (numpy .npz, by name); the others wait
        until it is written."""
        if rank() == 0:
            np.savez(path, **{name: param.get_value() for (name, _, _), param in
                              zip(self._signature(), self.params)})
        wait(world().Ibarrier(), "DataParallel.save")
