"""The benchmark harness (sympile/benchmarks/run.py's command line, harness.py's timing)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sympile.benchmarks.__main__ import SUITES
from sympile.benchmarks.__main__ import main as bench_main
from sympile.benchmarks.harness import Case, format_table, matching_sympile, rows_of, time_case
from sympile.benchmarks.run import rnn_sizes

ROOT = Path(__file__).resolve().parents[2]


def test_rnn_sizes_parses_vocabulary_by_hidden_pairs():
    assert rnn_sizes("54x50,3000x100") == [(54, 50), (3000, 100)]
    assert rnn_sizes("10x1500") == [(10, 1500)]


@pytest.mark.parametrize("text", ["54", "54x", "x50", "54x50x2", "54x50,", "ax50"])
def test_rnn_sizes_rejects_what_is_not_a_pair(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--rnn-sizes"):
        rnn_sizes(text)


def test_rows_compare_each_peer_with_sympile_in_the_matching_call_style():
    case = Case("overhead", "x + 1", "calls", 1000, "call", 1000)
    idle = {"sympile default": 2e-6, "sympile trust_input": 1e-6, "sympile n_calls": 1e-7,
            "pytensor default": 4e-6, "pytensor trust_input": 3e-6, "jax jit": 5e-6,
            "jax fori_loop": 2e-7}
    rows = {row.implementation: row for row in rows_of(case, idle, {})}
    assert rows["pytensor default"].compared_with == "sympile default"
    assert rows["pytensor default"].ratio == pytest.approx(2.0)
    assert rows["pytensor trust_input"].ratio == pytest.approx(3.0)
    assert rows["jax jit"].compared_with == "sympile trust_input"
    assert rows["jax fori_loop"].compared_with == "sympile n_calls"
    assert rows["sympile n_calls"].ratio is None
    assert rows["sympile default"].units_per_second == pytest.approx(5e5)
    assert matching_sympile("numpy (by hand)", ["sympile scan"]) == "sympile scan"


def test_time_case_gives_seconds_per_call_and_the_table_lines_up():
    values = np.arange(100.0)
    case = Case("sum", "100", "calls", 10, "call", 10)
    case.implementations["sympile sum"] = lambda: [values.sum() for _ in range(10)]
    case.implementations["numpy sum"] = lambda: [np.add.reduce(values) for _ in range(10)]
    idle = time_case(case, repeats=1)
    assert all(0 < seconds < 1e-3 for seconds in idle.values())
    rows = rows_of(case, idle, idle)
    table = format_table(rows).splitlines()
    assert "busy time" in table[0] and "/call" in table[2]
    assert len({line.index("/call") for line in table[2:]}) == 1   # the columns line up
    assert "busy time" not in format_table(rows_of(case, idle, {}))


@pytest.mark.slow
def test_sympile_bench_runs_each_library_in_its_own_process(tmp_path):
    """From another directory, as an installed tool: the table, the JSON with its units and
    the ratio plot."""
    output = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, "-m", "sympile.benchmarks", "--only", "overhead", "--compare", "",
         "--repeats", "1", "--no-busy", "--json", str(output)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "us/call" in result.stdout or "ns/call" in result.stdout
    saved = json.loads(output.read_text())
    assert "per row's `per`" in saved["units"]
    implementations = {row["implementation"]: row for row in saved["rows"]}
    assert implementations["numpy"]["compared_with"] == "sympile trust_input"
    assert implementations["sympile n_calls"]["per"] == "call"
    assert (tmp_path / "results.png").stat().st_size > 1000
    # The machine and its measured limits head the report and are in the JSON.
    assert "machine:" in result.stdout and "read bandwidth" in result.stdout
    machine = saved["machine"]
    assert machine["cores"] >= 1 and set(machine) >= {"cpu", "isa_level", "caches"}
    assert all(value > 0 for value in machine["fma_gflops"].values())
    assert all(value > 0 for by_threads in machine["read_gbs"].values()
               for value in by_threads.values())


def test_rows_give_their_share_of_the_machines_limit():
    case = Case("fused elementwise", "1e+06 float32", "elements", 1e6, "evaluation",
                limit="read", work=8e6)
    rows = rows_of(case, {"sympile trust_input": 1e-3, "numpy": 2e-3}, {},
                   lambda case: {"read": 16e9, "fma": 1e11}[case.limit])
    # 8 MB in 1 ms is 8 GB/s: half of 16 GB/s; numpy's 2 ms a quarter.
    assert [round(row.of_limit, 3) for row in rows] == [0.5, 0.25]
    assert "50%" in format_table(rows)
    assert rows_of(Case("x", "y", "calls", 1.0), {"sympile": 1.0}, {})[0].of_limit is None


def test_the_machine_is_measured():
    from sympile.benchmarks import machine
    info = machine.machine_info()
    assert info["cores"] >= 1 and isinstance(info["caches"], dict)
    measured = machine.limits(steps=100_000, read_sizes=(1 << 20, 1 << 22), repeats=1)
    assert set(measured["fma_gflops"]) == {1, info["cores"]}
    assert all(value > 0 for value in measured["fma_gflops"].values())
    assert all(value > 0 for by_threads in measured["read_gbs"].values()
               for value in by_threads.values())
    # A footprint picks the bandwidth of the smallest measured size that holds it.
    largest = max(measured["read_gbs"][1 << 22].values()) * 1e9
    assert machine.read_limit(measured, 3 << 20) == largest
    assert machine.read_limit(measured, 1 << 30) == largest   # past every size: the largest


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_option_of_every_suite_is_documented(suite, monkeypatch, capsys):
    undocumented = []
    add_argument = argparse._ActionsContainer.add_argument

    def recording(self, *names, **options):
        if not options.get("help") and names[0].startswith("--"):
            undocumented.append(names[0])
        return add_argument(self, *names, **options)

    monkeypatch.setattr(argparse._ActionsContainer, "add_argument", recording)
    with pytest.raises(SystemExit):
        bench_main([suite, "--help"])
    assert "usage: sympile-bench" in capsys.readouterr().out
    assert undocumented == []
