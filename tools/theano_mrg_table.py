"""Print the MRG_RandomStreams reference values of tests/tensor/random/test_mrg.py, computed
with Theano's own generator code.

    pip download --no-deps --no-binary :all: theano==1.0.5 && tar xzf Theano-1.0.5.tar.gz
    python tools/theano_mrg_table.py Theano-1.0.5/theano/sandbox/rng_mrg.py

Theano itself does not import under today's numpy, so this runs the pure-numpy functions of
its rng_mrg.py (the constants, matVecModM, mrg_next_value, guess_n_streams), taken from
the file as they are, and follows MRG_RandomStreams' steps with them: the streams of a new
variable are rstate, then each 2**72 steps after the one before (ff_2p72, which Theano
computes with DotModulo, whose perform is matVecModM on each half), rstate then jumps
2**134 steps (inc_rstate), and element i comes from stream i mod n_streams (mrg_uniform).
A sample is Theano's C code's: the integer times NORM in the output dtype (float32:
4.6566126e-10f); the numbers are printed as integers (exact) and converted in the test.
"""

from __future__ import annotations

import ast
import sys

import numpy as np


def theano_functions(path: str) -> dict:
    """The module-level constants and the named functions of Theano's rng_mrg.py."""
    tree = ast.parse(open(path).read())
    wanted = {"matVecModM", "mrg_next_value", "guess_n_streams"}
    body = [node for node in tree.body
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "attr", "") in ("asarray", "int32"))
            or (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in
                ("NORM", "np_int32_vals"))
            or (isinstance(node, ast.FunctionDef) and node.name in wanted)]
    namespace = {"np": np, "numpy": np, "warnings": __import__("warnings"),
                 "integer_types": (int, np.integer)}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)
    return namespace


def main(path: str) -> None:
    theano = theano_functions(path)
    mat_vec, m1, m2 = theano["matVecModM"], theano["M1"], theano["M2"]

    def jump(state, first, second):
        return np.concatenate([mat_vec(theano[first], state[:3], m1),
                               mat_vec(theano[second], state[3:], m2)])

    np.seterr(over="ignore")  # as Theano does around mrg_next_value
    rstate = np.array([234] * 6, dtype=np.int32)
    for label, size in (("uniform (2, 3)", (2, 3)), ("uniform (4, 5)", (4, 5)),
                        ("normal (5,): 6 uniforms", None),
                        ("uniform (100, 300): elements 0, 4999, 5000, 29999", (100, 300))):
        n_streams = theano["guess_n_streams"](size) if size else 60 * 256
        states = np.zeros((n_streams, 6), np.int32)
        states[0] = rstate
        for row in range(1, n_streams):
            states[row] = jump(states[row - 1], "A1p72", "A2p72")
        rstate = jump(rstate, "A1p134", "A2p134").astype(np.int32)
        count = int(np.prod(size)) if size else 6
        values = [int(theano["mrg_next_value"](states[i % n_streams], states[i % n_streams],
                                               NORM=1, mask=np.int64(0xFFFFFFFF), offset=0))
                  for i in range(count)]
        if count > 100:
            values = [values[i] for i in (0, 4999, 5000, 29999)]
        print(label, n_streams, "streams:", values)


if __name__ == "__main__":
    main(sys.argv[1])
