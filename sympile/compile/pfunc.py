"""Theano's `theano.compile.pfunc`: pfunc, the function() that Theano's function() calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sympile.compile.function import Function, function

__all__ = ["pfunc"]


def pfunc(params: Sequence[Any], outputs: Any = None, mode: Any = None, updates: Any = None,
          givens: Any = None, no_default_updates: Any = False, accept_inplace: bool = False,
          name: str | None = None, rebuild_strict: bool = True,
          allow_input_downcast: bool | None = None, profile: Any = None,
          on_unused_input: str | None = None,
          output_keys: Sequence[str] | None = None) -> Function:
    """Theano's pfunc: function() with its inputs called `params`; `output_keys` names the
    outputs (a list of as many), which makes the function return a dict as function() does
    for outputs given as a dict."""
    if output_keys is not None:
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(output_keys):
            raise ValueError(f"pfunc: output_keys names {len(output_keys)} outputs, but "
                             f"outputs is {outputs!r}; expected a list of as many")
        outputs = dict(zip(output_keys, outputs))
    return function(params, outputs, mode=mode, updates=updates, givens=givens,
                    no_default_updates=no_default_updates, accept_inplace=accept_inplace,
                    name=name, rebuild_strict=rebuild_strict,
                    allow_input_downcast=allow_input_downcast, profile=profile,
                    on_unused_input=on_unused_input)
