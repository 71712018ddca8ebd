"""The README's demo runs and computes what it prints."""

import runpy
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.py"


def test_demo_runs_and_converges(capsys):
    runpy.run_path(str(DEMO), run_name="__main__")
    text = capsys.readouterr().out
    assert "== power iteration ==" in text
    lines = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    estimate = float(lines["after 200 more steps in one fn(n_calls=...) call"])
    reference = float(lines["numpy.linalg.eigh top eigenvalue"])
    assert abs(estimate - reference) < 1e-8
    costs = [float(line.split("cost")[1]) for line in text.splitlines()
             if line.startswith("step") and "cost" in line]
    assert costs[-1] < costs[0] / 2
    accuracy = [line for line in text.splitlines() if line.startswith("training accuracy")]
    assert float(accuracy[0].split()[-1]) > 0.9
