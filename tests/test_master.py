"""The co-simulation master: connections, rods, force sums, errors, coupling accuracy."""

import numpy as np
import pytest

from contactfmu.cosim import CosimError, System


def oscillator(fmu_dir, interpolate=True):
    """Fixed --rod 2 m-- Spring(c=100, s_rel0=1) -- Mass(1 kg, s0=3.5): s = 3 + 0.5 cos(10 t)."""
    s = System(interpolate_inputs=interpolate)
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=3.5, v_start=0.0)
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    return s


def test_rod_offset_and_coupling_against_the_analytic_oscillator(fmu_dir):
    res = oscillator(fmu_dir).simulate(stop_time=2.0, step=1e-3, outputs=["mass.s", "mass.v", "spring.s_rel"])
    t = res.time
    assert res["spring.s_rel"][0] == pytest.approx(1.5)          # 3.5 - (0 + 2)
    err = np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * t))))
    assert err < 1e-4                  # 2e-4 of the amplitude after 3.2 periods (omega*h = 0.01)
    assert np.max(np.abs(res["mass.v"] + 5 * np.sin(10 * t))) < 1e-3


def test_first_order_hold_beats_zero_order_hold(fmu_dir):
    def error(interpolate):
        res = oscillator(fmu_dir, interpolate).simulate(stop_time=2.0, step=1e-2, outputs=["mass.s"])
        return np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * res.time))))
    foh, zoh = error(True), error(False)
    assert foh < zoh / 20, (foh, zoh)


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
    res = s.simulate(stop_time=3.0, step=1e-3, outputs=["mass.s", "left.f_support", "right.f_support"])
    # equilibrium 100 (x - 1) = 300 (3 - x): x = 2.5; both springs pull their walls with 150 N
    assert res["mass.s"][-1] == pytest.approx(2.5, abs=1e-6)
    assert res["left.f_support"][-1] == pytest.approx(150.0, abs=1e-3)    # pulled towards the mass
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
    assert "spring (Spring.fmu)" in text and "fmi2ExitInitializationMode" in text and "t = 0 s" in text
    assert "Invalid parameter c = -3.0 N/m" in text


def test_output_grid_and_csv(fmu_dir, tmp_path):
    res = oscillator(fmu_dir).simulate(stop_time=0.1, step=1e-3, output_interval=1e-2, outputs=["mass.s"])
    assert np.allclose(res.time, np.linspace(0, 0.1, 11), atol=1e-12)
    path = res.to_csv(tmp_path / "out.csv")
    lines = path.read_text().splitlines()
    assert lines[0] == '"time","mass.s"' and len(lines) == 12
    assert res.data["mass.s"][0] == 3.5


def test_a_step_longer_than_the_span_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(CosimError, match=r"communication step 2.0 s is longer than the simulated span 1.0 s"):
        s.simulate(stop_time=1.0, step=2.0)
    res = s.simulate(stop_time=1.0, step=1.0, outputs=["mass.s"])     # one step over the span is allowed
    assert list(res.time) == [0.0, 1.0]


def test_driving_a_connected_input_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(CosimError, match=r"inputs\['mass.flange_a.f'\]: mass.flange_a.f is already connected "
                                         r"\(set from the forces of spring\)"):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"mass.flange_a.f": lambda t: 1.0})
    with pytest.raises(CosimError, match=r"spring.flange_b.s is already connected \(set from the motion of mass\)"):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"spring.flange_b.s": lambda t: 1.0})
    # an unconnected input is driven: a constant 10 N pull on flange_b (the body receives -10 N)
    # moves the equilibrium from 3 to 3 - 0.1 m
    res = s.simulate(stop_time=0.1, step=1e-3, outputs=["mass.a"], inputs={"mass.flange_b.f": lambda t: 10.0})
    assert res["mass.a"][0] == pytest.approx(-100.0 * 0.5 - 10.0)


def test_readme_master_snippet_runs_and_writes_into_an_ignored_folder(fmu_dir, tmp_path):
    """The README's master snippet ("A first co-simulation", repeated in docs/master.md "A system of
    FMUs"), run where a user runs it (the repository root, FMUs in fmus/)."""
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    snippets = []
    for page, heading in (("README.md", "## A first co-simulation"), ("docs/master.md", "## A system of FMUs")):
        text = (root / page).read_text()
        snippets.append(re.search(r"```python\n(.*?)```", text[text.index(heading):], re.S).group(1))
    code = snippets[0]
    assert snippets[1] == code, "docs/master.md repeats the README's snippet: keep the two equal"
    written = re.findall(r"to_csv\(\"([^\"]+)\"\)", code)
    assert written, "the snippet writes a CSV"
    for path in written:
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=root)
        assert ignored.returncode == 0, f"{path} is not ignored by git: the snippet would leave it in the clone"
    shutil.copytree(fmu_dir, tmp_path / "fmus")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    from contactfmu.cosim import read_csv

    res = read_csv(tmp_path / written[0])
    t = res.time
    assert np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * t)))) < 1e-4    # the oscillator above


@pytest.mark.parametrize("m", [0.5, 3.0])
def test_implicit_coupling_uses_the_inertia_the_body_declares(fmu_dir, m):
    """Wall -- Spring (c) -- Mass (m) in scheme="implicit": backward Euler on the interface with the
    mass the Mass FMU declares by its output interface.m (conventions.INERTIA, read in
    initialization mode). The recursion written out: the held spring force at the step's end for the
    motion it causes, m*y = -c*(s + h*v + h^2/2*y), then s += h*v + h^2/2*y, v += h*y. A master
    that took another inertia would follow another recursion (both masses are tested)."""
    c, h, s0 = 1e4, 1e-2, 0.1                 # h*sqrt(c/m) = 1.4 and 0.58: the spring is stiff for the step
    sys = System()
    sys.add("wall", fmu_dir / "Fixed.fmu")
    sys.add("spring", fmu_dir / "Spring.fmu", c=c)
    sys.add("mass", fmu_dir / "Mass.fmu", m=m, s_start=s0)
    sys.connect("wall.flange", "spring.flange_a")
    sys.connect("spring.flange_b", "mass.flange_a")
    r = sys.simulate(0.2, h, scheme="implicit", outputs=["mass.s", "mass.v", "mass.interface.m"])
    assert np.all(r["mass.interface.m"] == m)
    s, v, expected = s0, 0.0, [s0]
    for _ in range(len(r.time) - 1):
        y = -c * (s + h * v) / (m + c * h * h / 2)
        s, v = s + h * v + h * h / 2 * y, v + h * y
        expected.append(s)
    assert np.max(np.abs(r["mass.s"] - np.array(expected))) < 1e-12
