"""Theano's sandbox paths that programs import: sandbox.rng_mrg."""
