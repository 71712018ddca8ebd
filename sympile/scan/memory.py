"""Memory rewrites of the Scan Op, in scan_db (tags scan and fast_run):

  scan_keep_last_steps  a recurrent output read only at its last steps (outputs[-1], what
                        encoders and gradient accumulators use) keeps only those steps: its
                        state lives in a circular buffer of max(lag + 1, k) rows instead of
                        lag + n_steps (Scan's kept_steps)

Gradients: the rewrite runs when a function is compiled, after grad built its graph. A
gradient reads every step of the states it goes through (the backward scan takes them as a
sequence), so a state whose gradient was taken has a client other than a last-step index and
keeps its full buffer.
"""

from __future__ import annotations

from sympile.graph.basic import Apply, Variable
from sympile.graph.fgraph import FunctionGraph
from sympile.graph.rewriting.basic import node_rewriter
from sympile.scan.op import Scan
from sympile.scan.rewriting import scan_db
from sympile.tensor.subtensor import Subtensor

__all__ = ["scan_keep_last_steps"]


def _last_steps_read(fgraph: FunctionGraph, output: Variable) -> int:
    """k if every use of `output` is a basic index whose first item is a constant -j with
    1 <= j <= k (so it reads only the last k steps), else 0."""
    kept = 0
    for client, position in fgraph.clients.get(output, ()):
        if not isinstance(client, Apply) or not isinstance(client.op, Subtensor) \
                or position != 0:
            return 0
        first = client.op.idx_list[0] if client.op.idx_list else None
        if not isinstance(first, int) or isinstance(first, bool) or first >= 0:
            return 0
        kept = max(kept, -first)
    return kept


@node_rewriter([Scan])
def scan_keep_last_steps(fgraph, node):
    """Scan(...) whose recurrent output o is used only as o[-j, ...] (constant j, at most k)
    -> a Scan with kept_steps k for o: o holds its last min(k, steps run) steps, so o[-j]
    reads the same step (and fails where it did: past the steps that ran)."""
    op: Scan = node.op
    kept_steps = list(op.kept_steps)
    for index in range(len(op.recurrent_taps)):
        if kept_steps[index] == 0:
            kept_steps[index] = _last_steps_read(fgraph, node.outputs[index])
    if tuple(kept_steps) == op.kept_steps:
        return None
    new_op = Scan(op.inner_inputs, op.inner_outputs, n_sequence_inputs=op.n_sequence_inputs,
                  recurrent_taps=op.recurrent_taps, n_plain_outputs=op.n_plain_outputs,
                  n_non_sequences=op.n_non_sequences, has_until=op.has_until, name=op.name,
                  truncate_gradient=op.truncate_gradient, kept_steps=tuple(kept_steps),
                  mode=op.mode)
    outputs = new_op(*node.inputs)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return dict(zip(node.outputs, outputs))


scan_db.register(scan_keep_last_steps.name, scan_keep_last_steps, "scan", "fast_run")
