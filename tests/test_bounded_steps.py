"""Issue "Under hostile input every FMI call returns the truth, in bounded time": each fmi2DoStep of
the reproductions runs in a subprocess (a hang fails the test instead of hanging the suite) and
reports its CPU time (time.process_time) and results."""
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

PRELUDE = """
import json, math, random, sys, time
sys.path.insert(0, {tests!r})
from fmu_helpers import Slave
FMU = {fmu_dir!r}
def timed(s, t, h):
    t0 = time.process_time()
    try:
        s.fmu.doStep(t, h)
        ok = True
    except Exception:
        ok = False
    return ok, time.process_time() - t0
"""


def run(fmu_dir, body, timeout=60):
    code = PRELUDE.format(tests=str(TESTS), fmu_dir=str(fmu_dir)) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_mass_with_stop_and_friction_huge_forces_step_quickly(fmu_dir):
    """flange_b.f4 = -1.797e308, flange_a.f3 = -1e300 (finite, F = 1.797e308 N): the mass reaches the
    right stop within 5e-154 s and is held there; the step used to run for minutes."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/MassWithStopAndFriction.fmu").init()
        s.set(flange_b__f4=-1.797e308, flange_a__f3=-1e300)
        ok, cpu = timed(s, 0.0, 0.2243)
        print(json.dumps(dict(ok=ok, cpu=cpu, out=s.get("s", "v"), errors=s.errors())))
    """)
    assert r["cpu"] < 1.0, r
    assert r["ok"], r["errors"]
    assert r["out"] == [25.0, 0.0]


def test_mass_with_stop_and_friction_overflowing_force_sum_is_an_error_at_once(fmu_dir):
    """Two finite force inputs whose sum overflows: fmi2Error naming the non-finite outputs, quickly."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/MassWithStopAndFriction.fmu").init()
        s.set(flange_b__f4=-1.797e308, flange_a__f3=-1.797e308)
        ok, cpu = timed(s, 0.0, 0.2243)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """)
    assert r["cpu"] < 1.0 and not r["ok"]
    assert "non-finite output" in r["errors"][-1] and "internal error" not in r["errors"][-1]


def test_endstop_stick_slip_random_inputs_step_in_bounded_time(fmu_dir):
    """EndStop mode 1, m1 = m2 = 1, stick-slip: random input sequences (extreme values included, random
    steps); every doStep within 1 s of CPU and never an internal error (a storm of bounces at the
    time resolution of the crossings used to gain energy without end)."""
    r = run(fmu_dir, """
        rng = random.Random(7)
        def rv():
            return rng.choice([0.0, 1.0, -1.0, 1e-300, 1e300, -1e300, 1.797e308, -1.797e308, rng.uniform(-1, 1),
                               rng.uniform(-0.02, 0.02), 0.01, -0.01, 1e-5, 1e12, -1e12])
        worst, internal = 0.0, []
        for trial in range(40):
            s = Slave(FMU + "/EndStop.fmu").init(mode=1, m1=1.0, m2=1.0, friction=True, kindF=2)
            t = 0.0
            for k in range(6):
                s.set(**{n: rv() for n in ["ctr1__x", "ctr1__v", "ctr1__a", "ctr2__x", "ctr2__v", "ctr2__a"]
                         if rng.random() < 0.5})
                h = rng.choice([1e-3, 0.2243, 1.0, 1e-9, rng.uniform(0, 1)])
                ok, cpu = timed(s, t, h)
                worst = max(worst, cpu)
                internal += [m for m in s.errors() if "internal error" in m]
                if not ok:
                    break
                t += h
        print(json.dumps(dict(worst=worst, internal=internal[:3])))
    """, timeout=300)
    assert r["worst"] < 1.0, r
    assert not r["internal"], r["internal"]


def test_endstop_bounce_storm_is_summed_in_closed_form():
    """endstop.predict (what the FMU runs): a relative acceleration of 2e301 m/s2 into stop 1 of a
    rigid stop (ci = 0.8) with stick-slip friction: about 1600 bounces within 1e-150 s end in
    permanent contact (the geometric series of the bounces, summed in closed form) instead of 'more
    than 10000 state changes'; the summed impulses equal the impacts' momentum changes."""
    import time

    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, friction=True, kindF=2)
    t0 = time.process_time()
    pred = endstop.predict(1e-300, 0.0, endstop.FREE, 0, 0.5, 1.987657047267876e+301, (1e-3, 2e-3), p)
    assert time.process_time() - t0 < 0.1
    assert [s[:3] for s in pred.states] == [(0.01, 0.0, endstop.STOP1)] * 2
    assert pred.impacts > 1000
    # no friction, g = 9.81 from 0.1 m under the stop: impulse of all bounces = the momentum of the fall
    # and of the pushing force's impulse until the permanent contact: sum_k (1 + ci)*ci^k*v0 minus the
    # last plastic one's rebound, i.e. close to v0*(1 + ci)/(1 - ci)
    q = endstop.Parameters(mode=1, l1=0.0, l2=1.0, ci=0.8)
    v0 = (2 * 9.81 * 0.1) ** 0.5
    pred = endstop.predict(-0.1, 0.0, endstop.FREE, 0, 1.0, 9.81, (2.0,), q)
    assert pred.states[0][:3] == (0.0, 0.0, endstop.STOP1)
    assert pred.impulse == pytest.approx(v0 * 1.8 / 0.2, rel=1e-3)


def test_endstop_grazing_sine_motion_runs_through(fmu_dir):
    """Rigid stop, m1 = 1, l2 = 0.01: ctr1 moves on 0.01*cos(2 pi t) (and slightly more) and grazes
    stop 2; every step is accepted, each within 1 s of CPU."""
    r = run(fmu_dir, """
        w = 2 * math.pi
        worst, failed = 0.0, []
        for amp in (0.01, 0.010001, 0.0100000001):
            s = Slave(FMU + "/EndStop.fmu").init(mode=1, m1=1.0, l2=0.01)
            h = 1e-3
            for k in range(1000):
                t = k * h
                s.set(ctr1__x=amp * math.cos(w * t), ctr1__v=-amp * w * math.sin(w * t),
                      ctr1__a=-amp * w * w * math.cos(w * t))
                ok, cpu = timed(s, t, h)
                worst = max(worst, cpu)
                if not ok:
                    failed.append((amp, t, s.errors()[-1][-300:]))
                    break
        print(json.dumps(dict(worst=worst, failed=failed)))
    """, timeout=300)
    assert not r["failed"], r["failed"]
    assert r["worst"] < 1.0


def test_hardstop_stiff_underdamped_rattle_in_bounded_time(fmu_dir):
    """A rattle between the two stops, ~43000 contact changes within the 2 s look-ahead (used to
    end in 'contact prediction did not finish' after 10000): cycles summed (contact_motion.follow)."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/TranslationalHardstop.fmu").init(b=0.0853, c=2.8e9, d=1.81, m_a=1.0, m_b=1.0)
        s.set(flange_a__s=0.1)
        ok, cpu = timed(s, 0.0, 1.0)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """)
    assert r["cpu"] < 1.0
    assert r["ok"], r["errors"]


def test_hardstop_undamped_rattle_under_held_force_in_bounded_time(fmu_dir):
    """d = 0, c = 1e10, m_b = 0.02, flange_b 300 m deep in the lower stop (hypothesis nightly seed 2):
    an undamped rattle of ~70000 changes in 0.1 s under the held force; its periods are skipped."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/TranslationalHardstop.fmu").init(b=1.0, d=0.0, c=1e10, m_a=0.0, m_b=0.02)
        s.set(flange_b__s=-299.5571255791981)
        ok, cpu = timed(s, 0.0, 0.1)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """)
    assert r["ok"], r["errors"]
    assert r["cpu"] < 1.0, r


def test_endstop_tiny_mass_dragged_by_continuous_friction_steps_quickly(fmu_dir):
    """Rigid stop, continuous friction (Fst = 10 N, dvL = 1e-3 m/s), m2 = 1 g dragged at 1 m/s: the
    friction stops the relative motion within 1.25e-4 s (time constant of its slope near dv = 0:
    5e-8 s). The start linearization of the friction, held over the horizon, drove dv through 0
    to +12 m/s into stop 1 and then chattered there (3.4 s of CPU, then an error)."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/EndStop.fmu").init(l1=0.01, l2=0.01, mode=1, kind=1, ci=0.8, friction=True, kindF=1,
                                             Fst=10.0, Fsl=8.0, dvL=0.001, adv=True, eps_Fi=0.0, eps_dv=1e-4,
                                             dFfrel=1e-3, eps_dvsl=1e-6, eps_dI=1e-8, kindTrans=1, eps_sigma=1.0,
                                             eps_tau=0.1, m1=0.0, m2=0.001)
        s.set(ctr2__v=1.0)
        ok, cpu = timed(s, 0.0, 1e-4)
        worst = cpu
        for k in range(1, 20):
            ok2, cpu = timed(s, k * 1e-4, 1e-4)
            ok, worst = ok and ok2, max(worst, cpu)
        print(json.dumps(dict(ok=ok, cpu=worst, errors=s.errors(), stop=s.get("Fi"))))
    """)
    assert r["ok"], r["errors"]
    assert r["cpu"] < 1.0, r


def test_couple_free_motion_holds_exactly_zero():
    """contact_motion.couple: a free law motion (no force within the step) gives exactly 0, not the
    rounding of (w1 - w)/h (ElastoGap held f = +1.74e-13 N, a pull, on 4 steps)."""
    from contactfmu.components.ElastoGap import law as elastogap
    from contactfmu.mechanics.contact_motion import couple

    mu, h = 0.5, 1e-4
    for w in (0.3, -0.7, 1.234567, 1e-3):
        for g in (0.0, 9.81, -3.3):
            def predict(x0, w0, state, times):
                return elastogap.predict(x0, w0, mu, g, times, 1.0, 1.0)
            force, shadow = couple(0.5, w, mu, g, h, (0.5, w, 0, None), predict, False)
            assert force == 0.0, (w, g, force)


def test_piece_overflow_of_a_huge_finite_state_is_not_taken_for_a_crossing():
    """Piece.state turns an overflow into nan (outside every region) only for a growing solution
    (negative damping: a falling friction band of the EndStop); a motion from -1.8e308 under a
    damped law keeps its values (ElastoGap, m_b = 1 g: hypothesis nightly seed 1 found 10000
    spurious changes, an internal error, after that conversion was made unconditional)."""
    from contactfmu.components.ElastoGap import law as elastogap
    from contactfmu.mechanics.contact_motion import Piece
    assert elastogap.predict(-1.7976931348623157e+308, 0.0, 1e-3, 0.0, (1e-4, 2e-4), 1.0, 1.0)[1:] == (0.0, 2)
    x, w = Piece(0.0, 1.0, 1e-3, 0.0, 1e6, -400.0).state(1.0)     # growing: e^(2e5 t) overflows
    assert math.isnan(x) and math.isnan(w)


def _triangle(x0, u, lo, hi, t):
    """Position and velocity at t of a point moving at speed |u| between two perfectly elastic
    walls lo < hi, from x0 with velocity u (the unfolded motion folded back)."""
    period = 2.0 * (hi - lo)
    z = ((x0 - lo) + u * t) % period          # unfolded distance from lo, modulo a round trip
    return (lo + z, u) if z <= hi - lo else (hi - (z - (hi - lo)), -u)


def test_endstop_undamped_rigid_rattle_between_the_stops_is_followed_to_the_end():
    """Rigid stops 2 cm apart, elastic impacts (kind 2), 863 m/s, no other force: 43,150 impacts in
    1 s (used to end in 'more than 10000 state changes'). Legs in closed form, whole periods of
    the envelope beyond 20,000 legs: the state is the folded free flight, the impulses sum to the
    momentum change (their net is mu*(w0 - w))."""
    import time

    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, kind=2)
    t0 = time.process_time()
    pred = endstop.predict(0.0, -863.0, endstop.FREE, 0, 1.0, 0.0, (0.5, 1.0, 1.0 + 1.3e-5), p)
    assert time.process_time() - t0 < 0.2
    for (x, w, stop, _), t in zip(pred.states, (0.5, 1.0, 1.0 + 1.3e-5)):
        xe, we = _triangle(0.0, -863.0, -0.01, 0.01, t)
        assert stop == endstop.FREE
        assert w == we
        assert x == pytest.approx(xe, abs=1e-9)     # 863 m/s: 1e-9 m is 1.2e-12 s of phase
    assert pred.impacts == pytest.approx(863.0 * (1.0 + 1.3e-5) / 0.02, abs=1.0)
    assert pred.impulse == pytest.approx(1.0 * (-863.0 - pred.states[-1][1]), abs=1e-6)


@pytest.mark.parametrize("ci, g, u", [(0.9999, 5.0, -863.0), (0.99999, -50.0, -2000.0), (0.9999999, 0.0, -1e5)])
def test_endstop_long_damped_rigid_rattle_envelope_keeps_the_speed_and_momentum(ci, g, u):
    """A damped rattle of 17,000 to 4 million impacts within 1 s under a held acceleration: beyond
    20,000 legs the element follows its envelope (the speed map E' = ci^4*E + p in closed form).
    Against the rattle followed impact by impact: speeds within 1e-8 relative plus the speed change
    over one cycle, 2*|g|*(l1 + l2)/|w| + 2*(1 - ci)*|w| (the phase of the storm is an
    approximation: where in its cycle the motion is; positions within the stops), the impulses' sum equals the
    momentum balance mu*(w0 + g*t - w), and it costs < 0.2 s of CPU."""
    import time

    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, kind=3, ci=ci)
    t0 = time.process_time()
    fast = endstop.predict(0.0, u, endstop.FREE, 0, 1.0, g, (0.3, 1.0), p)
    assert time.process_time() - t0 < 0.2
    saved = endstop.RATTLE_EXACT
    try:
        endstop.RATTLE_EXACT = 10 ** 9
        exact = endstop.predict(0.0, u, endstop.FREE, 0, 1.0, g, (0.3, 1.0), p)
    finally:
        endstop.RATTLE_EXACT = saved
    for a, b in zip(fast.states, exact.states):
        assert abs(a[1]) == pytest.approx(abs(b[1]), rel=1e-8, abs=abs(g) * 0.04 / abs(b[1]) + 2 * (1 - ci) * abs(b[1]))
        assert -0.01 <= a[0] <= 0.01
    assert abs(fast.impacts - exact.impacts) <= 1           # (the phase: one impact more or less)
    w_end = fast.states[-1][1]
    assert fast.impulse == pytest.approx(u + g * 1.0 - w_end, rel=1e-8)
    assert exact.impulse == pytest.approx(u + g * 1.0 - exact.states[-1][1], rel=1e-8)


def test_endstop_fmu_rigid_rattle_step_is_bounded(fmu_dir):
    """The FMU (m1 = 1): a body at 863 m/s between rigid elastic stops 2 cm apart (hypothesis
    nightly: 'prediction did not finish'): each 0.1 s step is accepted within 1 s of CPU, and the
    body stays between the stops."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/EndStop.fmu").init(mode=1, kind=2, m1=1.0)
        worst, out = 0.0, []
        s.set(ctr1__v=-863.0)
        for k in range(3):
            ok, cpu = timed(s, 0.1 * k, 0.1)
            worst = max(worst, cpu)
            out.append([ok, s.get("dx")])
        print(json.dumps(dict(worst=worst, out=out, errors=s.errors())))
    """)
    assert r["worst"] < 1.0, r
    assert all(ok for ok, _ in r["out"]), r["errors"]
    assert all(-0.01 <= dx <= 0.01 for _, dx in r["out"])


def test_endstop_elastic_bouncing_on_one_stop_is_periodic():
    """Elastic impacts (kind 2) of a body dropped 1 um onto a rigid stop under g = 9.81 m/s2: the
    bounce repeats forever with period 2*sqrt(2*h/g) (about 22,000 impacts in 10 s; used to end in
    'more than 10000 state changes'). Whole periods are skipped: the state at 10 s is the
    analytic one, x = -(v0*tau - g*tau^2/2), tau the time since the last impact."""
    import time

    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, kind=2, l1=0.0, l2=1.0)
    h, g = 1e-6, 9.81
    t0 = time.process_time()
    pred = endstop.predict(-h, 0.0, endstop.FREE, 0, 1.0, g, (10.0,), p)
    assert time.process_time() - t0 < 0.2
    tf = math.sqrt(2.0 * h / g)
    v0 = g * tf
    tau = (10.0 - tf) % (2.0 * tf)
    x, w, stop, _ = pred.states[0]
    assert stop == endstop.FREE
    assert x == pytest.approx(-(v0 * tau - 0.5 * g * tau * tau), abs=1e-6 * h)
    assert w == pytest.approx(-v0 + g * tau, abs=1e-6 * v0)
    assert pred.impacts == math.floor((10.0 - tf) / (2.0 * tf)) + 1


def test_endstop_rattle_at_the_largest_float_speed_is_bounded():
    """hypothesis nightly (seed 1): a rigid elastic stop, the relative motion 999 m behind stop 2
    at -1.797e308 m/s. Each leg between the stops takes 2.2e-310 s; 2*D/(s + s') overflowed to a
    zero duration and the rattle never advanced (292 s of CPU in one 1 ms doStep). Now the
    periodic rattle's whole periods are skipped: 0.1 s of CPU, the motion between the stops with
    its speed."""
    import time

    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, kind=2)
    t0 = time.process_time()
    pred = endstop.predict(-999.0, -1.7976931348623157e308, endstop.FREE, 0, 2.0, -237.8, (1e-3, 2e-3), p)
    assert time.process_time() - t0 < 0.5
    for x, w, stop, _ in pred.states:
        assert -0.01 <= x <= 0.01 and abs(w) == 1.7976931348623157e308 and stop == endstop.FREE


def test_endstop_fmu_at_the_largest_float_speed_steps_in_bounded_time(fmu_dir):
    """The same through FMI (m1 = 2 kg, 1 ms step): the step returns within 1 s of CPU, with
    fmi2Error naming the forces that cannot be computed (the force to hold such a body is not a
    float) and the inputs."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/EndStop.fmu").init(mode=1, kind=2, m1=2.0)
        s.set(ctr1__x=-999.0, ctr1__v=-1.7976931348623157e308)
        ok, cpu = timed(s, 0.0, 1e-3)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """)
    assert r["cpu"] < 1.0, r
    assert not r["ok"]
    assert "non-finite outputs ctr1.F" in r["errors"][-1] and "ctr1.v = -1.7976931348623157e+308" in r["errors"][-1]


def test_piece_damper_velocity_has_no_cancellation_of_its_limit():
    """contact_motion.Piece, kind "damper" (a falling friction band: negative slope): with the
    limit velocity winf = 16 m/s far above |w0| = 6.8e-5 m/s, w(t) = winf + (w0 - winf)*exp(-k t)
    lost w0's digits (3.5e-15 m/s at t = 1e-15 s, more than the distance to a band end); written
    as w0 + (w0 - winf)*expm1(-k t), w(t) = w0 + a0*t to rounding for small t."""
    from contactfmu.mechanics.contact_motion import Piece
    mu, g, d, w0 = 1e-3, -3.13e7, -1.9528, -6.780688961960e-05
    piece = Piece(0.0, w0, mu, g, 0.0, d)
    a0 = g - d * w0 / mu
    for t in (1e-18, 1e-15, 1e-12):
        assert abs(piece.state(t)[1] - (w0 + a0 * t)) <= 1e-19 + abs(a0 * t) * 1e-6


def test_endstop_fall_through_falling_friction_bands_does_not_chatter():
    """hypothesis nightly (seed 1): a rigid stop with continuous friction (dvL = 9.6e-6 m/s,
    tanh transition) and a relative acceleration of -3.1e7 m/s2 from rest: the motion crossed a
    band end and came back on rounding (above), 10000 'band' changes within 2e-12 s and 'prediction
    did not finish'. Now it falls through the ~390 bands: at 1e-5 s (before stop 2) the velocity
    is g*t plus at most the friction's Fst/mu*t."""
    from contactfmu.components.EndStop import law as endstop
    p = endstop.Parameters(mode=1, kind=3, ci=0.8, friction=True, kindF=1, Fst=10.0, Fsl=0.2962084028818947,
                           dvL=9.634796683236928e-06, kindTrans=2, eps_dv=0.0, eps_Fi=0.0)
    mu, g, t = 0.0009973959338114337, -31333333.198464483, 1e-5
    pred = endstop.predict(2.6e-15, 2.6e-11, endstop.FREE, 0, mu, g, (t,), p)
    x, w, stop, _ = pred.states[0]
    assert stop == endstop.FREE
    assert g * t <= w <= g * t + p.Fst / mu * t
    assert pred.changes < 1000


def test_endstop_bounce_storm_with_continuous_friction_ends_in_contact(fmu_dir):
    """hypothesis nightly (seed 1): rigid stop, continuous friction that is not negligible, eps_dv
    = 0 (infinitely many bounces in finite time), a body pressed at 1e300 m/s2. These bounces used
    to end the step with "EventStorm: EndStop prediction did not finish" after 1 s of CPU; they
    are now summed (endstop._friction_bounces): the step is accepted quickly, with finite outputs and
    no error (the inputs are not a consistent motion: the positions set put dx beyond stop 2 while
    the accelerations press toward stop 1; the summed bounces themselves are checked against
    their closed form and solve_ivp in test_endstop.py)."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/EndStop.fmu").init(
            k1=79432.82347242814, kind=3, eps_dI=0.0, kindTrans=2, Fsl=0.2962084028818947, eps_dv=0.0,
            friction=True, kindF=1, adv=True, mode=1, eps_Fi=0.0, m2=0.001, m1=0.38301481667046205,
            b2=12427.99694075536, k2=79432.82347242814, dvL=9.634796683236928e-06)
        s.set(ctr2__a=-1e300)
        first = timed(s, 0.0, 0.38508635400580393)
        s.set(ctr1__x=0.02, ctr1__a=0.2852731751418822)
        t = 0.38508635400580393
        first = (first[0] and timed(s, t, 1e-4)[0],)
        s.set(ctr2__x=0.3333333333333333)
        ok, cpu = timed(s, t + 1e-4, 0.01)
        out = s.get("Fi", "dx", "dv", "impulse")
        print(json.dumps(dict(first=first[0], ok=ok, cpu=cpu, errors=s.errors(), finite=all(map(math.isfinite, out)))))
    """)
    assert r["first"]
    assert r["ok"] and r["cpu"] < 1.0, r
    assert r["finite"] and not r["errors"], r

def test_endstop_overflowing_elastic_contact_fails_in_bounded_time(fmu_dir):
    """hypothesis nightly (seed 1): elastic stop (k1 = 2.3e8), stick-slip friction, dv = 1e300 m/s
    and dx = 1.8e308 m pressed at 1e300 m/s2: the event location needed 6 million motion evaluations
    (2.8 s of CPU for a 0.45 s step). Every prediction now stops after contact_motion.MAX_WORK
    evaluations: fmi2Error (EventStorm, naming the inputs) within the 1 s + h bound."""
    r = run(fmu_dir, """
        s = Slave(FMU + "/EndStop.fmu").init(
            b1=5.202544361166921, b2=99.99999391879098, k2=1e6, Fsl=0.0, eps_Fi=0.0, Fst=10.0,
            m2=2.5140707803828843, eps_dvsl=0.0, dvL=0.001, eps_dv=0.0, ci=0.05608914940943201, adv=True,
            k1=226374489.11007768, kindF=2, m1=2.5140707803828843, l1=1.2423213632026513, eps_dI=1e-08,
            eps_sigma=30.653354123818428, kindTrans=2, mode=2, dFfrel=2.596903444701329e-06, kind=2,
            friction=True, l2=0.01)
        s.set(ctr2__v=-8.157378346774902e-250, ctr2__a=-460.7775281932244, ctr2__x=-0.7850146369395796,
              ctr1__v=5e-324, ctr1__a=1e300, ctr1__x=0.6275727656027765)
        first = timed(s, 0.0, 0.33619192689865357)
        s.set(ctr1__v=1e300, ctr2__a=-105.78973770653579, ctr1__x=0.36291280189745323,
              ctr2__v=-3.4923245340180064e-136, ctr2__x=-1.7976931348623157e308)
        ok, cpu = timed(s, 0.33619192689865357, 0.44766451033767646)
        print(json.dumps(dict(first=first[0], ok=ok, cpu=cpu, errors=s.errors())))
    """)
    assert r["first"]
    assert r["cpu"] < 1.0 + 0.44766451033767646, r
    if not r["ok"]:
        message = r["errors"][-1]
        assert "EventStorm" in message and "ctr1.v = 1e+300" in message and "Traceback" not in message
