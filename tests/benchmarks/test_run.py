"""The benchmark harness (benchmarks/run.py's command line, benchmarks/harness.py's timing)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from benchmarks.harness import Case, format_table, measure
from benchmarks.run import rnn_sizes


def test_rnn_sizes_parses_vocabulary_by_hidden_pairs():
    assert rnn_sizes("54x50,3000x100") == [(54, 50), (3000, 100)]
    assert rnn_sizes("10x1500") == [(10, 1500)]


@pytest.mark.parametrize("text", ["54", "54x", "x50", "54x50x2", "54x50,", "ax50"])
def test_rnn_sizes_rejects_what_is_not_a_pair(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--rnn-sizes"):
        rnn_sizes(text)


def test_measure_times_idle_and_with_a_busy_core():
    case = Case("sum", "100", "calls", 1)
    values = np.arange(100.0)
    case.implementations["sympile sum"] = lambda: values.sum()
    case.implementations["numpy sum"] = lambda: np.add.reduce(values)
    rows = measure(case, repeats=1)
    assert [row.implementation for row in rows] == ["sympile sum", "numpy sum"]
    for row in rows:
        assert row.seconds_per_call > 0 and row.busy_seconds_per_call > 0
    assert rows[0].ratio_to_sympile == rows[0].busy_ratio_to_sympile == 1.0
    assert "busy time" in format_table(rows)
    idle_only = measure(case, repeats=1, busy=False)
    assert idle_only[0].busy_seconds_per_call is None
    assert "busy time" not in format_table(idle_only)
