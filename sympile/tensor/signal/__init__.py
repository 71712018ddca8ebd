"""Theano's `theano.tensor.signal` (T.signal): pool.py, pool_2d and pool_3d; downsample.py,
Theano 0.7-0.9's max_pool_2d."""

from sympile.tensor.signal import (
    downsample,  # noqa: F401 - Theano 0.7-0.9's T.signal.downsample
    pool,  # noqa: F401 - Theano's T.signal.pool
)
