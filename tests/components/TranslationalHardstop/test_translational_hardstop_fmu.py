"""The TranslationalHardstop FMU through FMI calls (fmpy): the force law of the MapleSim
Translational Hardstop help page, the impact of a Mass against Kelvin-Voigt, the documented defaults
stopping a 1 kg mass, loud failure without the inertia, state round trips, the sine example, and
every fmi2DoStep of a stiff rattle returning in bounded time (run in a subprocess).
"""

import math
import re

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmu_helpers import Slave, slave_fixture
from fmu_subprocess import run_example, run_in_subprocess
from hardstop_written_out import hardstop_force

from contactfmu.cosim import CosimError, System, read_csv
from contactfmu.monolithic import hardstop_mass


def test_hardstop_stiff_underdamped_rattle_in_bounded_time(fmu_dir):
    """A rattle between the two stops, ~43000 contact changes within the 2 s look-ahead (used to
    end in 'contact prediction did not finish' after 10000): cycles summed (segments.follow)."""
    r = run_in_subprocess(
        fmu_dir,
        """
        s = Slave(FMU + "/TranslationalHardstop.fmu").init(b=0.0853, c=2.8e9, d=1.81, m_a=1.0, m_b=1.0)
        s.set(flange_a__s=0.1)
        ok, cpu = timed(s, 0.0, 1.0)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """,
    )
    assert r["cpu"] < 1.0
    assert r["ok"], r["errors"]


def test_hardstop_undamped_rattle_under_held_force_in_bounded_time(fmu_dir):
    """d = 0, c = 1e10, m_b = 0.02, flange_b 300 m deep in the lower stop (found by the nightly
    hypothesis profile of tests/fmi/test_properties.py):
    an undamped rattle of ~70000 changes in 0.1 s under the held force; its periods are skipped."""
    r = run_in_subprocess(
        fmu_dir,
        """
        s = Slave(FMU + "/TranslationalHardstop.fmu").init(b=1.0, d=0.0, c=1e10, m_a=0.0, m_b=0.02)
        s.set(flange_b__s=-299.5571255791981)
        ok, cpu = timed(s, 0.0, 0.1)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """,
    )
    assert r["ok"], r["errors"]
    assert r["cpu"] < 1.0, r


stop = slave_fixture("TranslationalHardstop")


def at(s, s_rel, v_rel, a_rel=0.0, base=0.3):
    """flange_a away from the origin and moving, so that only relative motion may matter."""
    s.set(
        flange_a__s=base,
        flange_a__v=-0.2,
        flange_a__a=0.1,
        flange_b__s=base + s_rel,
        flange_b__v=-0.2 + v_rel,
        flange_b__a=0.1 + a_rel,
    )
    return s


def contact_of(s):
    return s.fmu.getInteger(s.vr(["contact"]))[0]


B, C, D = 1.0, 2e3, 30.0


@pytest.mark.parametrize("s_rel", [-0.8, -0.5001, -0.5, -0.2, 0.0, 0.3, 0.5, 0.5001, 0.9])
@pytest.mark.parametrize("v_rel", [-2.0, 0.0, 0.7])
def test_force_law_table(stop, s_rel, v_rel):
    s = at(stop(b=B, c=C, d=D), s_rel, v_rel)
    expected = hardstop_force(s_rel, v_rel, B, C, D)
    F = s.get("F")
    assert F == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert s.get("flange_b.f") == F and s.get("flange_a.f") == -F  # F = F_b = -F_a
    assert s.get("s_rel", "v_rel") == pytest.approx([s_rel, v_rel], abs=1e-15)
    assert contact_of(s) == (1 if s_rel > 0.5 else -1 if s_rel < -0.5 else 0)
    if contact_of(s):
        # the unbounded damper: the whole d*v_rel is transmitted, pulling (F of the sign of v_rel) too
        assert F - C * (s_rel - math.copysign(0.5, s_rel)) == pytest.approx(D * v_rel, abs=1e-9)
    else:
        assert F == 0.0


def test_the_two_stops_are_symmetric(stop):
    s = stop(b=B, c=C, d=D)
    for s_rel in (0.51, 0.6, 1.3):
        for v_rel in (-1.0, 0.0, 0.25, 3.0):
            upper = at(s, s_rel, v_rel).get("F")
            lower = at(s, -s_rel, -v_rel).get("F")
            assert lower == pytest.approx(-upper, rel=1e-12)


@pytest.mark.parametrize("b", [0.0, 1e-10, 2e-10])
def test_tiny_gap_is_a_plain_spring_damper(stop, b):
    s = stop(b=b, c=C, d=D)
    for s_rel, v_rel in ((0.0, 0.5), (5e-11, 0.0), (-0.01, 0.2), (0.3, -1.0)):
        assert at(s, s_rel, v_rel, base=0.0).get("F") == pytest.approx(
            C * s_rel + D * v_rel, rel=1e-12, abs=1e-15
        )
    # just above the threshold the gap is back: no force at s_rel = 1e-10 < b/2
    assert at(stop(b=3e-10, c=C, d=D), 1e-10, 0.5, base=0.0).get("F") == 0.0


def test_force_derivative_is_exact_without_inertia(stop):
    s = at(stop(b=B, c=C, d=D), 0.6, 0.4, a_rel=-3.0)
    vr = s.vr(["F", "flange_b.f", "flange_a.f"])
    assert list(s.fmu.getRealOutputDerivatives(vr, [1, 1, 1])) == pytest.approx(
        [C * 0.4 + D * -3.0, C * 0.4 + D * -3.0, -(C * 0.4 + D * -3.0)]
    )
    at(s, 0.2, 0.4, a_rel=-3.0)
    assert list(s.fmu.getRealOutputDerivatives(vr, [1, 1, 1])) == [0.0, 0.0, 0.0]


# ---- co-simulation: a 1 kg Mass FMU against a stop fixed at flange_a --------------------------


def impact(fmu_dir, step, v0=1.0, stop_time=0.05, m=1.0, x0=None, **params):
    """Mass at the centre of the gap (or x0) moving at v0 into the stop; returns the Result."""
    b = params.get("b", 1.0)
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("hardstop", fmu_dir / "TranslationalHardstop.fmu", **params)
    s.add(
        "mass",
        fmu_dir / "Mass.fmu",
        m=m,
        s_start=math.copysign(b / 2 - 0.01, v0) if x0 is None else x0,
        v_start=v0,
    )
    s.connect("wall.flange", "hardstop.flange_a")
    s.connect("hardstop.flange_b", "mass.flange_a")
    return s.simulate(
        stop_time, step, outputs=["mass.s", "mass.v", "hardstop.F", "hardstop.contact"]
    )


def kelvin_voigt(m, c, d):
    """Rebound ratio and contact time of a mass hitting this law (a linear spring-damper from
    s_rel = b/2 until s_rel returns to b/2): x = v0/wd*exp(-sigma t)*sin(wd t)."""
    sigma = d / (2 * m)
    wd = math.sqrt(c / m - sigma**2)
    return math.exp(-sigma * math.pi / wd), math.pi / wd


def test_monolithic_reference_reproduces_the_analytic_rebound():
    """Measured relative errors: contact time 6.7e-15, rebound 2.6e-13; tolerances 1e-13 and 3e-12."""
    e, contact_time = kelvin_voigt(1.0, 1e5, 20.0)
    ref = hardstop_mass(np.linspace(0.0, 0.05, 11), c=1e5, d=20.0, s0=0.49, v0=1.0)
    (t_hit, _, _), (t_release, _, _) = ref["events"]
    assert t_release - t_hit == pytest.approx(contact_time, rel=1e-13)
    assert ref["v"][-1] == pytest.approx(-e, rel=3e-12)


@pytest.mark.parametrize("step", [1e-4, 1e-3, 4e-3])
@pytest.mark.parametrize("v0", [1.0, -1.0])
def test_rebound_matches_kelvin_voigt_with_the_attached_inertia(fmu_dir, step, v0):
    """c = 1e5, d = 20 against 1 kg: contact time 9.94 ms; the element integrates the contact
    itself, so the rebound is the law's whatever the step (4 ms: 2.5 steps of contact). Measured
    relative error at most 1.85e-13 (0.1 ms); tolerance 2e-12."""
    e, _ = kelvin_voigt(1.0, 1e5, 20.0)
    r = impact(fmu_dir, step, v0, c=1e5, d=20.0, m_b=1.0)
    assert r["mass.v"][-1] == pytest.approx(-v0 * e, rel=2e-12)
    assert set(r["hardstop.contact"]) >= {0, int(v0)}


def test_rebound_matches_kelvin_voigt_with_the_plain_law_at_small_steps(fmu_dir):
    """The sampled law (m_a = m_b = 0) at 1e-5 s against the closed-form e = 0.905384: measured
    relative error 9.2e-6 (the first-order coupling); tolerance 1e-4."""
    e, _ = kelvin_voigt(1.0, 1e5, 20.0)
    r = impact(fmu_dir, 1e-5, 1.0, c=1e5, d=20.0)
    assert r["mass.v"][-1] == pytest.approx(-e, rel=1e-4)


@pytest.mark.parametrize("step", [1e-3, 1e-4])
@pytest.mark.parametrize("v0", [1.0, -1.0])
def test_documented_defaults_stop_a_1kg_mass_at_1m_per_s(fmu_dir, step, v0):
    """Acceptance case of the documented defaults: c = d = 1e10, b = 1 m; the mass is stopped at the stop, never passes
    through, never gains energy, no NaN, penetration < 1e-4 m.

    Tighter, against the law's own motion (overdamped, closed form: x = v0/(r1 - r2)*(exp(r1 t) -
    exp(r2 t)) after the hit, r1,2 = (-d -+ sqrt(d^2 - 4mc))/2m ~ -1, -1e10 1/s): the largest
    penetration is 1.0e-10 m (at 2.3 ns) and at 0.2 s the mass creeps back at x = 8.2696e-11 m,
    x' = r1*x. Measured: penetration 0.1 % (1 ms) / 0.01 % (0.1 ms) below the law's, tolerance 1 %;
    final position within 1.5e-15 m of the law's (the rounding of 0.5 + x), tolerance 2e-14 m; final
    velocity within 0.8 %, tolerance 8 %; impulse m*v0 to 8.3e-11 relative, tolerance 1e-9."""
    m, c, d = 1.0, 1e10, 1e10
    root = math.sqrt(d * d - 4 * m * c)
    r1, r2 = (-d + root) / (2 * m), (-d - root) / (2 * m)

    def law_x(t):
        return abs(v0) / (r1 - r2) * (math.exp(r1 * t) - math.exp(r2 * t))

    r = impact(fmu_dir, step, v0, stop_time=0.2, m_b=1.0)
    s, v, F = r["mass.s"], r["mass.v"], r["hardstop.F"]
    assert np.all(np.isfinite(s)) and np.all(np.isfinite(v)) and np.all(np.isfinite(F))
    side = math.copysign(1.0, v0)
    penetration = np.max(side * s) - 0.5
    assert penetration < 1e-4
    assert penetration == pytest.approx(law_x(math.log(r2 / r1) / (r1 - r2)), rel=1e-2)
    assert np.all(side * s < 0.5 + 1e-4)  # never through
    assert np.max(np.abs(v)) <= 1.0  # no energy gain at any point
    t_end = r.time[-1] - (0.5 - 0.49) / abs(v0)  # time since the hit
    assert abs(v[-1]) < 1e-6  # plastic: the law's rebound is ~1e-10 m/s
    assert side * v[-1] == pytest.approx(r1 * law_x(t_end), rel=8e-2)
    assert abs(s[-1] - 0.5 * side) < 1e-9  # it rests at the stop
    assert side * s[-1] - 0.5 == pytest.approx(law_x(t_end), abs=2e-14)
    assert set(r["hardstop.contact"][r.time > 0.02]) == {int(side)}
    hit = r.time < 0.01 - 1.5 * step  # no force before the stop is near
    assert np.all(F[hit] == 0.0)
    assert np.sum(F) * step == pytest.approx(side * 1.0, rel=1e-9)  # the impulse stops it: m*v0


REMEDY = (
    "Remedy: give m_a/m_b (the masses at the flanges) or a communication step below 2*m/d (= 2e-10 s for "
    "m = 1 kg; at h = 0.001 s only for m > h*d/2 = 5e+06 kg)"
)


def test_documented_defaults_without_the_inertia_fail_loudly_not_silently(fmu_dir):
    """The FMU description says so: with m_a = m_b = 0 the sampled law cannot hold c = d = 1e10.
    The hardstop, whose force overflows, is the element that fails (not the wall its force would
    reach), naming the output, its value, the inputs that produced it and the remedy."""
    with pytest.raises(CosimError) as exc:
        impact(fmu_dir, 1e-3, 1.0, stop_time=0.2)
    text = str(exc.value)
    head, log = text.split("\nFMU log:\n")
    assert head.startswith("hardstop (TranslationalHardstop.fmu): fmi2GetReal failed at t = "), text
    assert "wall" not in text
    ((status, message),) = [line.strip().split(" ", 1) for line in log.splitlines()]
    assert status == "[3]"
    assert message.startswith("TranslationalHardstop: non-finite outputs "), message
    assert re.search(r"\bflange_b\.f = -?inf\b", message) and re.search(
        r"\bF = -?inf\b", message
    ), message
    assert re.search(
        r"from the inputs flange_a\.s = 0\.0, flange_a\.v = 0\.0, flange_a\.a = 0\.0, "
        r"flange_b\.s = \S+e\+\d+, flange_b\.v = \S+e\+\d+, flange_b\.a = \S+; ",
        message,
    ), message
    assert (
        "the outputs keep their values from the last successful fmi2DoStep (the start values before "
        "it). " + REMEDY in message
    )
    assert message.endswith("the element does not know m without m_a/m_b.")


def test_non_finite_force_fails_the_getter_with_the_remedy_and_keeps_the_previous_outputs(stop):
    """An fmi2GetReal that computes the force: fmi2Error, the message, and the outputs of the last
    successful step stay readable; the instance is in error state, so its next fmi2DoStep fails too."""
    s = at(stop(), 0.6, 0.1, base=0.0)  # defaults c = d = 1e10, in contact
    assert s.get("F") == pytest.approx(1e10 * 0.1 + 1e10 * 0.1)
    s.fmu.doStep(0.0, 1e-3)
    before = s.get("flange_a.f", "flange_b.f", "F", "s_rel", "v_rel")
    s.set(flange_b__v=1e300)  # d*v_rel overflows
    with pytest.raises(FMICallException) as exc:
        s.fmu.getReal(s.vr(["F"]))
    assert exc.value.status == 3
    (message,) = s.errors()
    assert message.startswith(
        "TranslationalHardstop: non-finite outputs flange_a.f = -inf, flange_b.f = inf, "
        "F = inf, der(flange_a.f) = "
    ), message
    assert (
        "at t = 0.001 s (fmi2GetReal), from the inputs flange_a.s = 0.0, flange_a.v = -0.2, "
        "flange_a.a = 0.1, flange_b.s = 0.6, flange_b.v = 1e+300, flange_b.a = 0.1; the outputs keep their "
        "values from the last successful fmi2DoStep (the start values before it). Remedy: give m_a/m_b (the "
        "masses at the flanges) or a communication step below 2*m/d (= 2e-10 s for m = 1 kg; at h = 0.001 s "
        "only for m > h*d/2 = 5e+06 kg)" in message
    ), message
    assert (
        s.get("flange_a.f", "flange_b.f", "F", "s_rel", "v_rel") == before
    )  # previous outputs readable
    with pytest.raises(FMICallException) as exc:
        s.fmu.doStep(1e-3, 1e-3)
    assert exc.value.status == 3
    assert s.errors()[-1].startswith(
        "doStep refused: the instance is in error state (TranslationalHardstop: non-finite outputs"
    )


def test_non_finite_force_fails_do_step(stop):
    s = at(stop(c=1e3, d=10.0), 0.6, 0.1)
    s.fmu.doStep(0.0, 1e-3)
    before = s.get("F", "s_rel", "v_rel")
    s.set(flange_b__s=1e306)  # c*(s_rel - b/2) overflows
    with pytest.raises(FMICallException) as exc:
        s.fmu.doStep(1e-3, 1e-3)
    assert exc.value.status == 3
    (message,) = s.errors()
    assert message.startswith(
        "TranslationalHardstop: non-finite outputs flange_a.f = -inf, flange_b.f = inf, "
        "F = inf at t = 0.002 s (fmi2DoStep), from the inputs "
    ), message
    assert "flange_b.s = 1e+306" in message
    assert (
        "Remedy: give m_a/m_b (the masses at the flanges) or a communication step below 2*m/d (= 0.2 s for "
        "m = 1 kg; at h = 0.001 s only for m > h*d/2 = 0.005 kg) and well below sqrt(m/c) (= 0.0316 s for "
        "m = 1 kg)." in message
    )
    assert s.get("F", "s_rel", "v_rel") == before


def test_two_moving_bodies_conserve_momentum_and_meet_plastically(fmu_dir):
    """Both flanges carry a mass (m_a = 2 kg at 0.5 m/s, m_b = 1 kg at -1 m/s): the defaults give
    a plastic impact, after which both move with the common velocity of momentum conservation."""
    s = System()
    s.add("a", fmu_dir / "Mass.fmu", m=2.0, s_start=0.0, v_start=0.5)
    s.add("hardstop", fmu_dir / "TranslationalHardstop.fmu", b=0.2, m_a=2.0, m_b=1.0)
    s.add("b", fmu_dir / "Mass.fmu", m=1.0, s_start=0.05, v_start=-1.0)
    s.connect("a.flange_b", "hardstop.flange_a")
    s.connect("hardstop.flange_b", "b.flange_a")
    r = s.simulate(0.3, 1e-3, outputs=["a.v", "b.v", "a.s", "b.s"])
    momentum = 2.0 * r["a.v"] + 1.0 * r["b.v"]
    assert np.allclose(momentum, 0.0, atol=1e-12)
    assert r["a.v"][-1] == pytest.approx(0.0, abs=1e-8) and r["b.v"][-1] == pytest.approx(
        0.0, abs=1e-8
    )
    s_rel = r["b.s"] - r["a.s"]
    assert np.min(s_rel) > -0.1 - 1e-4  # lower stop at -b/2 = -0.1
    assert s_rel[-1] == pytest.approx(-0.1, abs=1e-9)


def test_sine_example_hits_both_stops_and_releases_when_the_law_says(fmu_dir, tmp_path):
    """examples/hardstop.py at 1 ms: 5 N sine force in a 10 cm gap. With the defaults the
    unbounded damper holds the mass at a stop after the push has turned into a pull until the
    spring has relaxed (time constant d/c = 1 s), a sub-nanometre effect: the co-simulation must
    keep the contact's history to release when the monolithic solution does."""
    run_example("hardstop", fmu_dir, tmp_path)  # the tube against the reference
    assert (tmp_path / "Hardstop.png").is_file()
    r = read_csv(tmp_path / "Hardstop.csv")
    assert {"mass.s", "mass.v", "hardstop.F"} <= set(r.names)
    contact = r["hardstop.contact"]
    assert set(contact) == {-1, 0, 1}  # both stops
    assert np.max(np.abs(r["mass.s"])) - 0.05 < 1e-4
    omega = 2 * math.pi
    ref = hardstop_mass(
        r.time, b=0.1, s0=0.0, v0=-5.0 / omega, force=lambda t: 5.0 * math.sin(omega * t)
    )
    releases = [t for t, kind, _ in ref["events"] if kind == "release"]
    left = r.time[1:][(contact[:-1] != 0) & (contact[1:] == 0)]
    assert len(left) == len(releases) >= 4
    # held for 0.17 .. 0.29 s after the force turned, released within 2 steps of the reference
    assert np.max(np.abs(left - np.array(releases))) <= 2e-3


def test_state_round_trip_while_the_element_runs_its_own_contact(fmu_dir):
    """The shadow contact motion and the step memory are FMU state: restoring it mid-contact
    replays bit-identically."""
    s = Slave(fmu_dir / "TranslationalHardstop.fmu").init(m_b=1.0)
    x, v, h = 0.495, 1.0, 1e-3

    def run(x, v, k, t0):
        rows = []
        for i in range(k):
            s.set(flange_b__s=x, flange_b__v=v)
            F = s.get("F")
            s.fmu.doStep(t0 + i * h, h)
            a = 2.0 - F  # 2 N push into the stop
            x, v = x + v * h + 0.5 * a * h * h, v + a * h
            rows.append((x, v, F))
        return rows, x, v

    _, x, v = run(x, v, 8, 0.0)  # hit at 5 ms, now glued
    state = s.fmu.getFMUstate()
    first, _, _ = run(x, v, 6, 8e-3)
    s.fmu.setFMUstate(state)
    assert run(x, v, 6, 8e-3)[0] == first
    s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(s.fmu.serializeFMUstate(state)))
    assert run(x, v, 6, 8e-3)[0] == first
    assert first[-1][2] == pytest.approx(2.0, rel=1e-6)  # holds the push
    s.close()


@pytest.mark.parametrize("param", ["b", "c", "d"])
def test_nan_parameters_are_refused(fmu_dir, param):
    s = Slave(fmu_dir / "TranslationalHardstop.fmu")
    before = s.get(param)
    with pytest.raises(FMICallException):
        s.set(**{param: math.nan})
    assert s.get(param) == before
    assert any(param in m and "nan" in m for m in s.errors())
    s.close()
