"""Running in libcosim (cosim/libcosim.py), unit by unit with small systems: whole nanoseconds,
the SSP's DefaultExperiment, the refusals of run_ssp with their texts, the rows after every step
(Real outputs in one bulk call; Integer/Boolean outputs and driven inputs step by step) equal to
the master's Jacobi run, and the error without libcosimpy. The library's comparisons over every
FMU and the MSL example: tests/test_libcosim.py."""

import math
import sys
import zipfile

import numpy as np
import pytest

from contactfmu.cosim import CosimError, System
from contactfmu.cosim import libcosim as lc
from contactfmu.cosim.ssp import NS, export_ssp

pytest.importorskip("libcosimpy")


@pytest.mark.parametrize(
    "x, n", [(1e-3, 1_000_000), (1e-9, 1), (2.0, 2_000_000_000), (1e-3 * (1 + 1e-9), 1_000_000)]
)
def test_steps_in_whole_nanoseconds(x, n):
    assert lc._ns(x, "step") == n


@pytest.mark.parametrize("x", [0.0, -1e-3, 2.5e-9, 1.5e-9, 1.5e-10, 1e-9 * (1 + 1.5e-6)])
def test_a_step_that_is_no_whole_number_of_nanoseconds_is_refused(x):
    with pytest.raises(CosimError) as e:
        lc._ns(x, "step")
    assert (
        str(e.value) == f"step {x!r} s is not a whole number of nanoseconds (libcosim's time unit)"
    )


def _oscillator(fmu_dir):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=3.5, v_start=0.0)
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    return s


def test_the_default_experiment_of_a_package(fmu_dir, tmp_path):
    path = export_ssp(_oscillator(fmu_dir), tmp_path / "o.ssp", 2.0, 1e-3, start_time=0.5)
    assert lc.default_experiment(path) == (0.5, 2.0, 1e-3)
    bare = tmp_path / "bare.ssp"
    with zipfile.ZipFile(bare, "w") as z:
        z.writestr(
            "SystemStructure.ssd",
            f'<ssd:SystemStructureDescription xmlns:ssd="{NS["ssd"]}" xmlns:ssc="{NS["ssc"]}" '
            f'xmlns:osp="{NS["osp"]}"><ssd:DefaultExperiment><ssd:Annotations><ssc:Annotation>'
            '<osp:Algorithm><osp:FixedStepAlgorithm baseStepSize="0.25"/></osp:Algorithm>'
            "</ssc:Annotation></ssd:Annotations></ssd:DefaultExperiment>"
            "</ssd:SystemStructureDescription>",
        )
    start, stop, step = lc.default_experiment(bare)
    assert (start, step) == (0.0, 0.25) and math.isnan(stop)  # no times: 0 and nan
    none = tmp_path / "none.ssp"
    with zipfile.ZipFile(none, "w") as z:
        z.writestr(
            "SystemStructure.ssd", f'<ssd:SystemStructureDescription xmlns:ssd="{NS["ssd"]}"/>'
        )
    with pytest.raises(CosimError) as e:
        lc.default_experiment(none)
    assert str(e.value) == (
        f"{none}: no osp:FixedStepAlgorithm step size in the DefaultExperiment (libcosim cannot run "
        "an SSP without one)"
    )


def test_run_ssp_refuses_what_it_cannot_run(fmu_dir, tmp_path):
    with pytest.raises(CosimError) as e:
        lc.run_ssp(tmp_path / "missing.ssp", [])
    assert str(e.value) == f"SSP package {tmp_path / 'missing.ssp'} not found"
    path = export_ssp(_oscillator(fmu_dir), tmp_path / "o.ssp", 1.0, 1e-3, start_time=0.5)
    for stop in (0.5, 0.25, float("inf")):
        with pytest.raises(CosimError) as e:
            lc.run_ssp(path, ["mass.s"], stop_time=stop)
        assert str(e.value) == f"stop time {stop!r} s must be finite and after the start time 0.5 s"
    with pytest.raises(CosimError) as e:
        lc.run_ssp(path, ["body.s"], stop_time=0.502)
    text = str(e.value)  # the instances in libcosim's order
    assert text.startswith("body.s: no instance 'body' in o.ssp (has ") and text.endswith(")")
    assert sorted(text[text.index("(has ") + 5 : -1].split(", ")) == ["mass", "spring", "wall"]
    with pytest.raises(CosimError) as e:
        lc.run_ssp(path, ["mass.q"], stop_time=0.502)
    assert str(e.value) == "mass.q: mass has no variable 'q'"
    odd = export_ssp(_oscillator(fmu_dir), tmp_path / "odd.ssp", 1.0, 1.5e-10)
    with pytest.raises(CosimError, match="step 1.5e-10 s is not a whole number of nanoseconds"):
        lc.run_ssp(odd, [])


def test_real_outputs_after_every_step_equal_the_masters_jacobi_run(fmu_dir):
    s = _oscillator(fmu_dir)
    r = lc.run_system(s, ["mass.s", "spring.f"], 0.05, 1e-2, start_time=0.01)
    assert r.names == ["time", "mass.s", "spring.f"]
    assert list(r.time) == pytest.approx([0.02, 0.03, 0.04, 0.05], abs=1e-15)  # after each step
    ja = s.simulate(0.05, 1e-2, start_time=0.01, scheme="jacobi", outputs=["mass.s", "spring.f"])
    assert np.abs(r.values[:, 1:] - ja.values[1:, 1:]).max() < 1e-14


def test_discrete_outputs_and_driven_inputs_step_by_step(fmu_dir):
    """An EndStop's Integer and Boolean outputs, a driven force on the mass: read after every
    step, as the master's Jacobi run (the inputs held over each step from its start)."""
    s = System()
    s.add("es", fmu_dir / "EndStop.fmu", l1=0.01, k1=1e4, b1=0.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=4.0, s_start=0.02)
    s.connect("mass.flange_b", "es.ctr1")
    outputs = ["es.stop", "mass.s", "es.interface.integrates", "mass.v"]
    drive = {"mass.flange_a.f": lambda t: 10.0 + 100.0 * t}
    r = lc.run_system(s, outputs, 0.004, 1e-3, inputs=drive)
    assert r.names == ["time", *outputs] and list(r.time) == pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])
    ja = s.simulate(0.004, 1e-3, scheme="jacobi", outputs=outputs, inputs=drive)
    assert np.abs(r.values[:, 1:] - ja.values[1:, 1:]).max() < 1e-14
    assert list(r["es.stop"]) == [1.0] * 4  # at end stop 1 throughout
    assert r.values.dtype == np.float64
    plain = lc.run_system(s, ["mass.v"], 0.004, 1e-3, inputs=drive)  # Real only, driven: stepwise
    assert np.array_equal(plain["mass.v"], r["mass.v"])
    free = lc.run_system(s, ["mass.v"], 0.004, 1e-3)  # no force: a different motion
    assert not np.array_equal(free["mass.v"], r["mass.v"])


def test_a_failed_step_is_named(fmu_dir):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("hardstop", fmu_dir / "TranslationalHardstop.fmu")
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=0.49, v_start=1.0)
    s.connect("wall.flange", "hardstop.flange_a")
    s.connect("hardstop.flange_b", "mass.flange_a")
    with pytest.raises(CosimError) as e:
        lc.run_system(s, ["mass.s"], 0.5, 1e-3)
    assert str(e.value).startswith("libcosim failed before t = 0.5 s (")
    assert str(e.value).endswith("system.ssp)")  # the package run
    with pytest.raises(CosimError) as e:
        lc.run_system(s, ["hardstop.interface.integrates"], 0.5, 1e-3)  # step by step
    assert str(e.value).startswith("libcosim failed in the step from t = 0.0")


def test_without_libcosimpy_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "libcosimpy.CosimExecution", None)
    with pytest.raises(CosimError) as e:
        lc.run_ssp("x.ssp", [])
    assert str(e.value).startswith("libcosim is not installed (") and str(e.value).endswith(
        "): pip install libcosimpy"
    )


def test_a_long_bulk_run_keeps_every_sample_and_libcosims_times(fmu_dir, tmp_path, monkeypatch):
    """200 steps in one call: every sample returned (more than libcosimpy's default count of
    10 and a buffer of the steps), the times libcosim's whole nanoseconds; the package written
    into a temporary folder, nothing in the working directory."""
    monkeypatch.chdir(tmp_path)
    s = _oscillator(fmu_dir)
    r = lc.run_system(s, ["mass.s", "mass.v"], 0.2, 1e-3)
    assert len(r.time) == 200 and r.time[-1] == 0.2
    ja = s.simulate(0.2, 1e-3, scheme="jacobi", outputs=["mass.s", "mass.v"])
    assert np.abs(r.values[:, 1:] - ja.values[1:, 1:]).max() < 1e-14
    tenths = lc.run_system(s, ["mass.s"], 0.3, 0.1)
    assert tenths.time.tolist() == [0.1, 0.2, 0.3]  # 300000000 ns, not 3 * 0.1
    nothing = lc.run_system(s, [], 0.3, 0.1)  # no output: the times of the steps
    assert nothing.names == ["time"] and nothing.time.tolist() == pytest.approx([0.1, 0.2, 0.3])
    assert list(tmp_path.iterdir()) == []
