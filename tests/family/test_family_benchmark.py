"""benchmarks/family.py in a tiny run: it writes, per generated system, its description and size,
and per tolerance the co-simulation's steps, cost and error beside a monolithic solver's."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_family_benchmark_writes_every_field(tmp_path, fmu_dir):
    out = tmp_path / "family.json"
    args = ["--fmus", str(fmu_dir), "--out", str(out), "--sizes", "2", "--seeds", "5"]
    args += ["--rtols", "1e-3", "1e-4", "--topologies", "chain", "--stop", "0.05"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "family.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads(out.read_text())
    assert entry["topology"] == "chain" and entry["bodies"] == 2 and entry["fmus"] >= 9
    assert [run["rtol"] for run in entry["runs"]] == [1e-3, 1e-4]
    for run in entry["runs"]:
        assert run["accepted"] > 0 and run["dosteps_per_fmu"] >= run["accepted"]
        assert 0.0 <= run["error_s"] < 1.0 and 0.0 <= run["lsoda_error_s"] < 1.0
        assert run["worst_signal"].startswith("body")
    # a tighter tolerance, no fewer steps
    assert entry["runs"][1]["accepted"] >= entry["runs"][0]["accepted"]
    assert "rtol 0.001:" in done.stdout
