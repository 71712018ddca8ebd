"""The GPU suite (sympile/benchmarks/gpu.py) run end to end on the emulated device: every
workload builds, runs and reports; its times mean nothing there. On a GPU, .ci/gpu-check runs
it on cuda0 against the peers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_suite_runs_every_workload_on_the_emulated_device(tmp_path):
    output = tmp_path / "out" / "gpu.json"
    result = subprocess.run(
        [sys.executable, "-m", "sympile.benchmarks", "gpu", "--context", "emulated",
         "--compare", "", "--sizes", "1e3", "--models", "logreg 784-10", "--batches", "1,10",
         "--steps", "2", "--vocabulary", "20", "--rnn-hiddens", "4", "--lenet-batches", "2",
         "--repeats", "1", "--json", str(output)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "sympile-bench gpu on emulated" in result.stdout
    saved = json.loads(output.read_text())
    rows = {(row["workload"], row["size"], row["implementation"]): row for row in saved["rows"]}
    assert set(rows) == {
        ("device copy", "1e+03 float32", "sympile (runtime copy)"),
        ("fused elementwise", "1e+03 float32", "sympile trust_input"),
        ("sum of squared dev.", "1e+03 float32", "sympile trust_input"),
        *(("MLP train, logreg 784-10", f"batch {batch}", f"sympile {style}")
          for batch in (1, 10) for style in ("trust_input", "n_calls",
                                             "trust_input, graphs off")),
        ("RNN train (BPTT)", "V 20, H 4", "sympile scan"),
        ("LeNet-5 train", "batch 2", "sympile trust_input")}
    assert all(row["seconds"] > 0 for row in rows.values())
    # The loops' share of the copy's bandwidth, the copy itself at 100%.
    assert saved["copy_bytes_per_second"] > 0
    assert rows[("device copy", "1e+03 float32", "sympile (runtime copy)")]["of_limit"] == 1.0
    assert set(saved["compile_seconds"]) >= {"MLP logreg 784-10, batch 1, n_calls",
                                             "RNN V 20, H 4", "LeNet-5, batch 2"}


def test_gpu_suite_rejects_unknown_peers_and_workloads():
    from sympile.benchmarks.gpu import main
    with pytest.raises(SystemExit, match="unknown peers \\['pytensor'\\]"):
        main(["--compare", "pytensor"])
    with pytest.raises(SystemExit, match="workloads \\['sparse'\\]"):
        main(["--only", "sparse"])
