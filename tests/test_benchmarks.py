"""The benchmark's quick mode (benchmarks/run.py --quick) runs and its accuracy and speed goals
hold, each measured against plain fixed-step coupling in the same run."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results(tmp_path_factory, fmu_dir):
    out = tmp_path_factory.mktemp("bench") / "results.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(out),
                           "--fmus", str(fmu_dir)], capture_output=True, text=True, timeout=1800)
    print(proc.stdout[-4000:], proc.stderr[-2000:])
    assert out.is_file(), proc.stderr[-2000:]
    return json.loads(out.read_text()), proc


def test_preload_passes_its_tube_in_under_20_s(results):
    goal = results[0]["goals"]["preload_wall"]
    assert goal["holds"] and goal["value"] < 20.0 and goal["step"] >= 1e-3
    assert goal["ratio_vs_plain"] > 10.0          # plain coupling needs steps ~100x smaller


def test_split_impact_restitution_within_1_percent_at_half_the_contact_time(results):
    goal = results[0]["goals"]["split_restitution"]
    assert goal["holds"] and abs(goal["value"]) < 0.01
    assert abs(goal["plain_error"]) > 0.5         # plain coupling gains energy there


def test_per_step_cost_of_every_fmu_is_measured_against_the_trivial_slave(results):
    cost = results[0]["fmu_cost"]
    assert len(cost) == 11
    for name, r in cost.items():
        assert r["trivial_us"] > 0.0 and r["us"] > 0.0
        assert r["ratio"] < 4.0, name             # regression bound; the goal (2x) is reported


def test_hardstop_default_impact_is_stopped_by_the_implicit_and_inertia_couplings(results):
    hs = results[0]["hardstop"]
    for coupling in ("implicit", "inertia"):
        assert hs[coupling]["tube"] and hs[coupling]["penetration"] < 1e-3


def test_table_is_printed(results):
    out = results[1].stdout
    assert "Goals" in out and "Split impact" in out and "Cost per communication step" in out
