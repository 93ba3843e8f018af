"""libcosim (DNV Open Simulation Platform, PyPI libcosimpy) runs every FMU and exported SSP
packages; its fixed-step algorithm (Jacobi, values only) equals the project's master run with
scheme="jacobi"."""

import zipfile
from xml.etree import ElementTree

import numpy as np
import pytest

from contactfmu import crosscheck
from contactfmu.components import NAMES
from contactfmu.cosim import CosimError, System
from contactfmu.cosim.libcosim import run_ssp, run_system
from contactfmu.cosim.ssp import NS, export_ssp


def close(a, b):
    """Largest difference relative to the signal ranges."""
    return float((np.abs(a - b) / (1.0 + np.abs(b).max(axis=0))).max())


@pytest.mark.parametrize("model", list(NAMES))
def test_libcosim_runs_every_fmu_like_the_master(fmu_dir, model):
    """Each FMU alone in libcosim, its cross-check inputs set through libcosim's override
    manipulator before every step: the outputs after every step equal the master's reference."""
    fmu = fmu_dir / f"{model}.fmu"
    ref, ins, (start, stop, step), _ = crosscheck.reference(fmu)
    _, _, _, _, inputs = crosscheck.experiment(fmu)
    system = System()
    system.add(model, fmu)
    outputs = [f"{model}.{n}" for n in ref.names[1:]]
    result = run_system(
        system, outputs, stop, step, start, inputs={f"{model}.{k}": f for k, f in inputs.items()}
    )
    assert len(result.time) == len(ref.time) - 1  # rows after each step
    assert np.abs(result.time - ref.time[1:]).max() < 1e-12
    assert close(result.values[:, 1:], ref.values[1:, 1:]) < 1e-12
    assert np.ptp(result.values[:, 1:], axis=0).max() > 0


@pytest.fixture(scope="module")
def elastogap_example(fmu_dir):
    import runpy

    from contactfmu.examples import ROOT

    example = runpy.run_path(str(ROOT / "examples" / "msl_elastogap.py"))
    fmu = {n: fmu_dir / f"{n}.fmu" for n in ("Fixed", "SpringDamper", "ElastoGap", "Mass")}
    return example["build_system"](fmu)


OUTPUTS = [
    "mass1.s",
    "mass2.s",
    "elastoGap1.v_rel",
    "elastoGap2.s_rel",
    "springDamper1.v_rel",
    "springDamper2.s_rel",
    "elastoGap1.f",
    "elastoGap2.f",
    "fixed.f_support",
]


def test_msl_elastogap_example_as_ssp_in_libcosim_equals_the_master(elastogap_example, tmp_path):
    """MSL Examples.ElastoGap (rods as LinearTransformation offsets, four elements on the fixed
    flange through the numbered force inputs) exported as SSP and run by libcosim: the same
    trajectories as the project's master with libcosim's scheme, to round-off."""
    ssp = export_ssp(elastogap_example, tmp_path / "ElastoGap.ssp", stop_time=5.0, step=1e-3)
    lc = run_ssp(ssp, OUTPUTS)
    ja = elastogap_example.simulate(5.0, 1e-3, scheme="jacobi", outputs=OUTPUTS)
    assert lc.values.shape == (5000, len(OUTPUTS) + 1)
    assert close(lc.values[:, 1:], ja.values[1:, 1:]) < 1e-12
    # the system really moves and hits the gaps: mass2 leaves |s| < 0.5 m, contact forces act
    assert np.abs(lc["mass2.s"]).max() > 0.5 and np.abs(lc["elastoGap1.f"]).max() > 1.0
    # the fixed flange's four elements add up: f_support = -(sum of their flange forces on it)
    gs = elastogap_example.simulate(
        5.0,
        1e-3,
        scheme="jacobi",
        outputs=[
            "fixed.f_support",
            "springDamper1.flange_a.f",
            "elastoGap1.flange_a.f",
            "springDamper2.flange_b.f",
            "elastoGap2.flange_b.f",
        ],
    )
    total = sum(gs[n][:-1] for n in gs.names[2:])
    assert np.abs(lc["fixed.f_support"] + total).max() < 1e-12 * (1 + np.abs(total).max())


def test_exported_ssp_structure(elastogap_example, tmp_path):
    ssp = export_ssp(elastogap_example, tmp_path / "ElastoGap.ssp", stop_time=5.0, step=1e-3)
    with zipfile.ZipFile(ssp) as z:
        names = set(z.namelist())
        root = ElementTree.fromstring(z.read("SystemStructure.ssd"))
    assert {
        "SystemStructure.ssd",
        "resources/Mass.fmu",
        "resources/Fixed.fmu",
        "resources/ElastoGap.fmu",
        "resources/SpringDamper.fmu",
    } <= names
    ns = {k: v for k, v in NS.items()}
    comps = {c.get("name"): c for c in root.iterfind(".//ssd:Component", ns)}
    assert set(comps) == {
        "fixed",
        "springDamper1",
        "springDamper2",
        "elastoGap1",
        "elastoGap2",
        "mass1",
        "mass2",
    }
    params = {
        p.get("name"): float(p.find("ssv:Real", ns).get("value"))
        for p in comps["mass2"].iterfind(".//ssv:Parameter", ns)
    }
    assert params == {"m": 1.0, "L": 0.0, "s_start": 2.0, "v_start": 0.0}
    rods = {}
    for c in root.iterfind(".//ssd:Connection", ns):
        lt = c.find("ssc:LinearTransformation", ns)
        if lt is not None:
            rods[(c.get("startConnector"), c.get("endElement"), c.get("endConnector"))] = float(
                lt.get("offset")
            )
            assert float(lt.get("factor")) == 1.0
    assert rods == {
        ("flange.s", "springDamper1", "flange_a.s"): -2.0,
        ("flange.s", "elastoGap1", "flange_a.s"): -2.0,
        ("flange.s", "springDamper2", "flange_b.s"): 2.0,
        ("flange.s", "elastoGap2", "flange_b.s"): 2.0,
    }
    force_inputs = sorted(
        c.get("endConnector")
        for c in root.iterfind(".//ssd:Connection", ns)
        if c.get("endElement") == "fixed"
    )
    assert force_inputs == ["flange.f", "flange.f2", "flange.f3", "flange.f4"]
    algo = root.find(
        "ssd:DefaultExperiment/ssd:Annotations/ssc:Annotation/osp:Algorithm/osp:FixedStepAlgorithm",
        ns,
    )
    assert float(algo.get("baseStepSize")) == 1e-3
    assert float(root.find("ssd:DefaultExperiment", ns).get("stopTime")) == 5.0


def test_libcosim_honours_rod_offsets(fmu_dir):
    """Fixed at 0, a 2 m rod, a spring with s_rel0 = 1 m and a mass at rest at 3 m: the mass is in
    equilibrium only if libcosim applies the rod's offset (else it would feel 200 N)."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=3.0)
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    r = run_system(s, ["mass.s", "spring.f", "spring.flange_a.s"], 1.0, 1e-3)
    assert np.abs(r["mass.s"] - 3.0).max() == 0.0 and np.abs(r["spring.f"]).max() == 0.0
    assert np.all(r["spring.flange_a.s"] == 2.0)


def test_several_elements_on_a_flange_use_the_numbered_inputs(fmu_dir):
    """Three springs on one flange of a mass: libcosim (one connection per input) equals the
    master, which sums them into one input; the oscillation has the summed stiffness."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=0.1)
    for k, c in enumerate((100.0, 200.0, 100.0)):
        s.add(f"spring{k}", fmu_dir / "Spring.fmu", c=c)
        s.connect("wall.flange", f"spring{k}.flange_a")
        s.connect(f"spring{k}.flange_b", "mass.flange_a")
    lc = run_system(s, ["mass.s"], 0.5, 1e-4)
    ja = s.simulate(0.5, 1e-4, scheme="jacobi", outputs=["mass.s"])
    assert np.abs(lc["mass.s"] - ja["mass.s"][1:]).max() < 1e-14
    t = lc.time
    assert (
        np.abs(lc["mass.s"] - 0.1 * np.cos(20.0 * t)).max() < 2e-3
    )  # sqrt(400 N/m / 1 kg) = 20 rad/s


def test_more_elements_than_force_inputs_are_refused_by_name(fmu_dir, tmp_path):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    for k in range(5):
        s.add(f"spring{k}", fmu_dir / "Spring.fmu")
        s.connect("wall.flange", f"spring{k}.flange_a")
    s.add("mass", fmu_dir / "Mass.fmu")
    for k in range(5):
        s.connect(f"spring{k}.flange_b", "mass.flange_a")
    with pytest.raises(
        CosimError, match=r"wall.flange carries 5 compliant elements .* 4 force inputs"
    ):
        export_ssp(s, tmp_path / "x.ssp", 1.0, 1e-3)


def test_an_ssp_without_step_size_is_refused_before_libcosim_sees_it(tmp_path):
    path = tmp_path / "nostep.ssp"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            "SystemStructure.ssd",
            '<?xml version="1.0"?><ssd:SystemStructureDescription '
            f'xmlns:ssd="{NS["ssd"]}" name="x" version="1.0"><ssd:System name="x"/>'
            '<ssd:DefaultExperiment startTime="0" stopTime="1"/></ssd:SystemStructureDescription>',
        )
    with pytest.raises(CosimError, match="no osp:FixedStepAlgorithm step size"):
        run_ssp(path, [])


def test_libcosim_reports_the_element_whose_force_is_not_finite(fmu_dir, capfd):
    """TranslationalHardstop at its defaults without m_a/m_b, 1 kg hit at 1 m/s, 1 ms: in libcosim
    too the hardstop's own call fails, logging its outputs, inputs and the remedy."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("hardstop", fmu_dir / "TranslationalHardstop.fmu")
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=0.49, v_start=1.0)
    s.connect("wall.flange", "hardstop.flange_a")
    s.connect("hardstop.flange_b", "mass.flange_a")
    with pytest.raises(CosimError, match="libcosim failed before t = 0.5 s"):
        run_system(s, ["mass.s"], 0.5, 1e-3)
    log = capfd.readouterr()
    text = log.out + log.err
    assert "TranslationalHardstop: non-finite output" in text and "Remedy: give m_a/m_b" in text
