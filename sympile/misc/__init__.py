"""Theano's `theano.misc`: pkl_utils (dump and load with arrays stored as .npy files)."""
