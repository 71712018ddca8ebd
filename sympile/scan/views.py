"""Theano's scan views (theano.scan_module.scan_views): map, reduce, foldl and foldr, each
a scan, and scan_checkpoints, two nested scans; they return (outputs, updates) as scan
does."""

from __future__ import annotations

from sympile.scan.basic import scan
from sympile.tensor.basic import concatenate, zeros
from sympile.tensor.math import cast
from sympile.tensor.subtensor import set_subtensor
from sympile.tensor.variable import as_tensor_variable

__all__ = ["map", "reduce", "foldl", "foldr", "scan_checkpoints"]


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,
        mode=None, name=None):
    """fn applied to each step of the sequences: scan without recurrent outputs (mode: the
    body's, as scan's)."""
    return scan(fn, sequences=sequences, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False,
           mode=None, name=None):
    """The last step of scan(fn, sequences, outputs_info, ...): fn folds the sequences into
    the outputs_info values, as Python's reduce."""
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                            non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                            name=name)
    if isinstance(outputs, (list, tuple)):
        return [output[-1] for output in outputs], updates
    return outputs[-1], updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """reduce from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """reduce from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)


def scan_checkpoints(fn, sequences=None, outputs_info=None, non_sequences=None,
                     name="checkpointscan_fn", n_steps=None, save_every_N=10, padding=True):
    """scan(fn, ...) that keeps only every save_every_N-th state, as Theano's
    scan_checkpoints: an outer scan over chunks of save_every_N steps, each an inner scan
    whose last state the outer one keeps. Backpropagation then stores the states at the
    chunk boundaries only and recomputes each chunk's steps when it reaches it: memory
    O(n / N + N) instead of O(n) for about one more forward pass.

    The outputs are the states after steps N, 2N, ..., and after the last step (a shorter
    last chunk when N does not divide the number of steps); fn's sequences have tap 0 and
    its recurrent outputs tap -1 (Theano's restriction); every output needs an initial
    value (outputs_info may not hold None). padding=False requires the number of steps to
    be a multiple of save_every_N (the sequences are then not copied into padded ones).
    """
    if not isinstance(save_every_N, int) or isinstance(save_every_N, bool) \
            or save_every_N < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be a positive int, got "
                         f"{save_every_N!r}")
    sequences = [as_tensor_variable(s) for s in _listed(sequences)]
    outputs_info = _listed(outputs_info)
    non_sequences = _listed(non_sequences)
    for index, spec in enumerate(outputs_info):
        if spec is None or isinstance(spec, dict):
            raise ValueError(f"scan_checkpoints: outputs_info[{index}] must be an initial "
                             f"value (tap -1); outputs without one, or with other taps, are "
                             f"not supported")
    if n_steps is None:
        if not sequences:
            raise ValueError("scan_checkpoints: give sequences or n_steps")
        n_steps = sequences[0].shape[0]
    n_steps = cast(as_tensor_variable(n_steps), "int64")
    chunks = (n_steps + (save_every_N - 1)) // save_every_N
    last = n_steps - (chunks - 1) * save_every_N
    chunk_steps = set_subtensor((zeros((chunks,), "int64") + save_every_N)[-1], last)
    chunked = []
    for sequence in sequences:
        if padding:
            pad = chunks * save_every_N - sequence.shape[0]
            sequence = concatenate([sequence, zeros((pad, *sequence.shape[1:]),
                                                    sequence.dtype)])
        chunked.append(sequence.reshape((chunks, save_every_N, *sequence.shape[1:]),
                                        ndim=sequence.ndim + 1))
    n_sequences, n_outputs = len(chunked), len(outputs_info)

    def outer_step(*args):
        inner_sequences = list(args[:n_sequences])
        steps = args[n_sequences]
        states = list(args[n_sequences + 1:n_sequences + 1 + n_outputs])
        constants = list(args[n_sequences + 1 + n_outputs:])
        results, updates = scan(fn, sequences=inner_sequences, outputs_info=states,
                                non_sequences=constants, n_steps=steps,
                                name=f"{name}_inner", return_list=True)
        return [result[-1] for result in results], updates

    results, updates = scan(outer_step, sequences=[*chunked, chunk_steps],
                            outputs_info=outputs_info, non_sequences=non_sequences,
                            n_steps=chunks, name=f"{name}_outer")
    return results, updates


def _listed(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
