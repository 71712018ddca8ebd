"""The benchmark harness's command line (benchmarks/run.py)."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.run import rnn_sizes


def test_rnn_sizes_parses_vocabulary_by_hidden_pairs():
    assert rnn_sizes("54x50,3000x100") == [(54, 50), (3000, 100)]
    assert rnn_sizes("10x1500") == [(10, 1500)]


@pytest.mark.parametrize("text", ["54", "54x", "x50", "54x50x2", "54x50,", "ax50"])
def test_rnn_sizes_rejects_what_is_not_a_pair(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--rnn-sizes"):
        rnn_sizes(text)
