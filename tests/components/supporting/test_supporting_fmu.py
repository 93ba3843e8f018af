"""The supporting FMUs follow their MSL 4.1 equations (Translational.Components,
Translational.Sources, Blocks.Sources.Sine)
and the sign conventions of docs/conventions.md."""

import math

import pytest
from fmu_helpers import Slave


def test_mass_integrates_a_held_force_exactly(fmu_dir):
    s = Slave(fmu_dir / "Mass.fmu").init(m=2.0, L=0.4, s_start=1.0, v_start=-0.5)
    s.set(flange_a__f=-3.0, flange_b__f=1.0)  # body receives +3 - 1 = 2 N
    assert s.get("a") == pytest.approx(1.0, rel=1e-15)
    s.fmu.doStep(0.0, 0.25)
    t = 0.25
    assert s.get("s") == pytest.approx(1.0 - 0.5 * t + 0.5 * t * t, rel=1e-14)
    assert s.get("v") == pytest.approx(-0.5 + t, rel=1e-14)
    assert s.get("flange_a.s", "flange_b.s") == pytest.approx(
        [s.get("s") - 0.2, s.get("s") + 0.2], rel=1e-14
    )
    s.close()


def test_mass_integrates_a_linear_force_exactly_with_input_derivatives(fmu_dir):
    s = Slave(fmu_dir / "Mass.fmu").init(m=0.5)
    s.set(flange_a__f=-1.0)  # F(t) = 1 + 4 t on the body
    s.fmu.setRealInputDerivatives(s.vr(["flange_a.f"]), [1], [-4.0])
    s.fmu.doStep(0.0, 0.5)
    t = 0.5
    assert s.get("v") == pytest.approx((t + 2 * t * t) / 0.5, rel=1e-14)
    assert s.get("s") == pytest.approx((t * t / 2 + 2 * t**3 / 3) / 0.5, rel=1e-14)
    # setting a new value without a derivative holds it
    s.set(flange_a__f=-1.0)
    s.fmu.doStep(0.5, 0.5)
    assert s.get("v") == pytest.approx((t + 2 * t * t) / 0.5 + 1.0, rel=1e-14)
    s.close()


@pytest.mark.parametrize("model", ["Mass", "MassWithStopAndFriction", "Fixed"])
def test_numbered_force_inputs_add_up(fmu_dir, model):
    """Tools that connect one output to one input (SSP, libcosim) use <flange>.f2 .. .f4 for further
    elements on a node: the body gets the sum, exactly as if the master had summed into <flange>.f."""
    flange = "flange" if model == "Fixed" else "flange_a"
    out = {"Fixed": "f_support", "Mass": "a", "MassWithStopAndFriction": "f"}[
        model
    ]  # f: stuck, = sa
    parts = {f"{flange}.f": 1.5, f"{flange}.f2": -4.0, f"{flange}.f3": 0.25, f"{flange}.f4": -0.5}
    split = Slave(fmu_dir / f"{model}.fmu").init()
    split.set(**{k.replace(".", "__"): v for k, v in parts.items()})
    summed = Slave(fmu_dir / f"{model}.fmu").init()
    summed.set(**{flange + "__f": sum(parts.values())})
    assert split.get(out) == summed.get(out) != 0.0
    if model != "Fixed":
        for s in (split, summed):
            s.fmu.doStep(0.0, 0.1)
        assert split.get("s", "v") == summed.get("s", "v")
        if model == "Mass":
            assert split.get("v") == pytest.approx(
                0.1 * 2.75 / 1.0, rel=1e-12
            )  # m = 1 kg, F = +2.75 N
    split.close()
    summed.close()


def test_fixed_gives_its_position_and_reports_the_reaction(fmu_dir):
    s = Slave(fmu_dir / "Fixed.fmu").init(s0=-1.75)
    s.set(flange__f=12.0)
    assert s.get("flange.s", "flange.v", "flange.a", "f_support") == [-1.75, 0.0, 0.0, -12.0]
    s.close()


@pytest.mark.parametrize(
    "sa,sb,va,vb", [(0.0, 1.5, 0.0, 0.0), (1.0, 0.2, -1.0, 2.0), (-2.0, -2.5, 0.3, 0.1)]
)
def test_compliant_force_laws_and_signs(fmu_dir, sa, sb, va, vb):
    c, d, s0 = 100.0, 7.0, 0.5
    inputs = dict(
        flange_a__s=sa,
        flange_b__s=sb,
        flange_a__v=va,
        flange_b__v=vb,
        flange_a__a=0.3,
        flange_b__a=-1.1,
    )
    expected = {
        "Spring": c * (sb - sa - s0),
        "Damper": d * (vb - va),
        "SpringDamper": c * (sb - sa - s0) + d * (vb - va),
    }
    rates = {
        "Spring": c * (vb - va),
        "Damper": d * (-1.1 - 0.3),
        "SpringDamper": c * (vb - va) + d * (-1.1 - 0.3),
    }
    params = {
        "Spring": dict(c=c, s_rel0=s0),
        "Damper": dict(d=d),
        "SpringDamper": dict(c=c, d=d, s_rel0=s0),
    }
    for name, f in expected.items():
        s = Slave(fmu_dir / f"{name}.fmu").init(**params[name])
        s.set(**inputs)  # outputs are current as soon as the inputs are set (before doStep)
        assert s.get("f") == pytest.approx(f, rel=1e-14, abs=1e-14)
        assert s.get("flange_b.f", "flange_a.f") == pytest.approx([f, -f], rel=1e-14, abs=1e-14)
        assert s.get("s_rel") == pytest.approx(sb - sa, rel=1e-14)
        der = s.fmu.getRealOutputDerivatives(s.vr(["f", "flange_a.f"]), [1, 1])
        assert der == pytest.approx([rates[name], -rates[name]], rel=1e-14, abs=1e-14)
        if name != "Spring":
            loss = s.get("lossPower")
            assert loss == pytest.approx(d * (vb - va) ** 2, rel=1e-14, abs=1e-15) and loss >= 0.0
        s.close()


def test_force_source_pushes_its_body_in_plus_s(fmu_dir):
    s = Slave(fmu_dir / "Force.fmu").init()
    s.set(f=5.0, flange__v=2.0)
    assert s.get("flange.f", "power") == [-5.0, 10.0]  # MSL Sources.Force: flange.f = -f
    s.close()


def test_sine_matches_msl_with_start_time(fmu_dir):
    amp, f, ph, off, t0 = 2.0, 3.0, 0.4, -1.0, 0.05
    s = Slave(fmu_dir / "Sine.fmu").init(amplitude=amp, f=f, phase=ph, offset=off, startTime=t0)
    assert s.get("y") == off
    t, h = 0.0, 0.01
    for _ in range(20):
        s.fmu.doStep(t, h)
        t += h
        expected = off if t < t0 else off + amp * math.sin(2 * math.pi * f * (t - t0) + ph)
        assert s.get("y") == pytest.approx(expected, abs=1e-12)
    der = s.fmu.getRealOutputDerivatives(s.vr(["y"]), [1])[0]
    assert der == pytest.approx(
        amp * 2 * math.pi * f * math.cos(2 * math.pi * f * (t - t0) + ph), rel=1e-12
    )
    s.close()
