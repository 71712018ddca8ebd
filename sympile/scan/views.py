"""Theano's scan views (theano.scan_module.scan_views): map, reduce, foldl and foldr, each
a scan; they return (outputs, updates) as scan does."""

from __future__ import annotations

from sympile.scan.basic import scan

__all__ = ["map", "reduce", "foldl", "foldr"]


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,
        mode=None, name=None):
    """fn applied to each step of the sequences: scan without recurrent outputs. mode is
    Theano's per-scan compilation mode, which sympile takes from function() instead (it
    must be None)."""
    _no_mode("map", mode)
    return scan(fn, sequences=sequences, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False,
           mode=None, name=None):
    """The last step of scan(fn, sequences, outputs_info, ...): fn folds the sequences into
    the outputs_info values, as Python's reduce."""
    _no_mode("reduce", mode)
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                            non_sequences=non_sequences, go_backwards=go_backwards, name=name)
    if isinstance(outputs, (list, tuple)):
        return [output[-1] for output in outputs], updates
    return outputs[-1], updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """reduce from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """reduce from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)


def _no_mode(function: str, mode) -> None:
    if mode is not None:
        raise ValueError(f"{function}: mode must be None; the mode of the function() that "
                         f"compiles the graph applies to its scans")
