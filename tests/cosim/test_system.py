"""The system (cosim.system): connections, rods, force sums, refusals of ill-formed systems, FMU errors
naming instance, time and log, the README's master snippet."""

import numpy as np
import pytest
from cosim_systems import oscillator

from contactfmu.cosim import CosimError, System


def test_forces_of_several_elements_on_one_flange_add_up(fmu_dir):
    s = System()
    s.add("left", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("right", fmu_dir / "Fixed.fmu", s0=4.0)
    s.add("k1", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("k2", fmu_dir / "Spring.fmu", c=300.0, s_rel0=1.0)
    s.add("damper", fmu_dir / "Damper.fmu", d=40.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=1.0)
    s.connect("left.flange", "k1.flange_a")
    s.connect("left.flange", "damper.flange_a")
    s.connect("k1.flange_b", "mass.flange_a")
    s.connect("damper.flange_b", "mass.flange_a")
    s.connect("mass.flange_b", "k2.flange_a")
    s.connect("k2.flange_b", "right.flange")
    res = s.simulate(
        stop_time=3.0, step=1e-3, outputs=["mass.s", "left.f_support", "right.f_support"]
    )
    # equilibrium 100 (x - 1) = 300 (3 - x): x = 2.5; both springs pull their walls with 150 N
    assert res["mass.s"][-1] == pytest.approx(2.5, abs=1e-6)
    assert res["left.f_support"][-1] == pytest.approx(150.0, abs=1e-3)  # pulled towards the mass
    assert res["right.f_support"][-1] == pytest.approx(-150.0, abs=1e-3)


def test_two_inertial_elements_need_a_compliant_element_between(fmu_dir):
    s = System()
    s.add("m1", fmu_dir / "Mass.fmu")
    s.add("m2", fmu_dir / "Mass.fmu")
    s.add("wall", fmu_dir / "Fixed.fmu")
    with pytest.raises(CosimError, match="compliant element"):
        s.connect("m1.flange_b", "m2.flange_a")
    with pytest.raises(CosimError, match="compliant element"):
        s.connect("wall.flange", "m1.flange_a", rod=1.0)
    assert s.flange_edges == []


def test_a_node_without_an_inertial_element_is_refused(fmu_dir):
    s = System()
    s.add("k1", fmu_dir / "Spring.fmu")
    s.add("k2", fmu_dir / "Spring.fmu")
    s.connect("k1.flange_b", "k2.flange_a")
    with pytest.raises(CosimError, match="needs one inertial element"):
        s.simulate(stop_time=0.1, step=1e-3)


def test_unknown_flanges_and_bad_signals_are_refused(fmu_dir):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    s.add("sine", fmu_dir / "Sine.fmu")
    s.add("force", fmu_dir / "Force.fmu")
    with pytest.raises(CosimError, match="not a flange"):
        s.connect("mass.flange_c", "force.flange")
    with pytest.raises(CosimError, match="needs an output and an input"):
        s.connect("force.f", "sine.y")
    with pytest.raises(CosimError, match="has no variable 'mm'"):
        s.add("m2", fmu_dir / "Mass.fmu", mm=1.0)
    with pytest.raises(CosimError, match="not found"):
        s.add("x", fmu_dir / "Nothing.fmu")


def test_an_fmu_error_names_instance_time_and_log(fmu_dir):
    s = oscillator(fmu_dir)
    s.instances["spring"].values["c"] = -3.0
    with pytest.raises(CosimError) as exc:
        s.simulate(stop_time=0.1, step=1e-3)
    text = str(exc.value)
    assert (
        "spring (Spring.fmu)" in text and "fmi2ExitInitializationMode" in text and "t = 0 s" in text
    )
    assert "Invalid parameter c = -3.0 N/m" in text


def test_readme_master_snippet_runs_and_writes_into_an_ignored_folder(fmu_dir, tmp_path):
    """The README's master snippet ("A first co-simulation", repeated in docs/master.md "A system of
    FMUs"), run where a user runs it (the repository root, FMUs in fmus/)."""
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    snippets = []
    for page, heading in (
        ("README.md", "## A first co-simulation"),
        ("docs/master.md", "## A system of FMUs"),
    ):
        text = (root / page).read_text()
        snippets.append(
            re.search(r"```python\n(.*?)```", text[text.index(heading) :], re.S).group(1)
        )
    code = snippets[0]
    assert snippets[1] == code, "docs/master.md repeats the README's snippet: keep the two equal"
    written = re.findall(r"to_csv\(\"([^\"]+)\"\)", code)
    assert written, "the snippet writes a CSV"
    for path in written:
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=root)
        assert ignored.returncode == 0, (
            f"{path} is not ignored by git: the snippet would leave it in the clone"
        )
    shutil.copytree(fmu_dir, tmp_path / "fmus")
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    from contactfmu.cosim import read_csv

    res = read_csv(tmp_path / written[0])
    t = res.time
    assert np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * t)))) < 1e-4  # the oscillator above
