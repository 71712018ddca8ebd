"""Theano's `theano.tensor.signal` (T.signal): pool.py, pool_2d and pool_3d."""

from sympile.tensor.signal import pool  # noqa: F401 - Theano's T.signal.pool
