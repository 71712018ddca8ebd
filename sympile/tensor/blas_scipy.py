"""Theano's theano.tensor.blas_scipy: Ger computed by scipy's BLAS. sympile's Ger already
calls the routines scipy exports (its C code, sympile.tensor.blas.blas_c), so ScipyGer is
Ger under Theano's name: into a new array, or written over a when destructive."""

from __future__ import annotations

from sympile.tensor.blas.gemm import Ger
from sympile.tensor.inplace import GerInplace

__all__ = ["ScipyGer", "scipy_ger_inplace", "scipy_ger_no_inplace"]


class ScipyGer(Ger):
    """Theano's ScipyGer(destructive): Ger, written over a (input 0) when `destructive`."""

    __props__ = ("destructive",)

    def __init__(self, destructive: bool):
        self.destructive = bool(destructive)
        self.destroy_map = {0: [0]} if self.destructive else {}

    def perform(self, node, inputs, output_storage):
        (GerInplace if self.destructive else Ger).perform(self, node, inputs, output_storage)

    def __str__(self):
        return f"ScipyGer{{{'destructive' if self.destructive else 'no_inplace'}}}"


scipy_ger_no_inplace = ScipyGer(False)
scipy_ger_inplace = ScipyGer(True)
