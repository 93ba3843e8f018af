"""The TranslationalHardstop law, src/contactfmu/components/TranslationalHardstop/law.py: the
force, its rate and interface derivatives, the contact regions, and its prediction of a body's
motion (predict: against solve_ivp of the law, the Kelvin-Voigt closed form of a rattle, the
event-by-event reference of a rattle whose cycles are summed).

The law is the MapleSim Translational Hardstop help page's, written out in
tests/hardstop_written_out.py; no FMU is built.
"""

import math

import numpy as np
import pytest
from hardstop_written_out import hardstop_force
from motion_reference import reference_state, simulate
from scipy.linalg import expm

from contactfmu.components.TranslationalHardstop import law as hardstop
from contactfmu.mechanics import motion, segments

# ---- the law, its rate and its prediction against solve_ivp ---------------------------------------


@pytest.mark.parametrize("s", [-0.3, -0.1, -0.05, 0.0, 0.05, 0.1, 0.3])
@pytest.mark.parametrize("b", [0.2, 2e-10, 3e-10, 0.0])
def test_hardstop_law_rate_and_interface(s, b):
    c, d, v, a = 50.0, 3.0, 0.7, -2.0
    f, contact = hardstop.force(s, v, b, c, d)
    assert f == pytest.approx(hardstop_force(s, v, b, c, d))
    if b > 2e-10:
        assert contact == (1 if s > b / 2 else -1 if s < -b / 2 else 0)
    else:
        assert contact == (1 if s > 0 else -1 if s < 0 else 0)
    engaged = not (b > 2e-10 and -b / 2 <= s <= b / 2)
    assert hardstop.force_rate(s, v, a, b, c, d) == (c * v + d * a if engaged else 0.0)
    assert hardstop.interface(s, b, c, d) == ((c, d) if engaged else (0.0, 0.0))


def test_hardstop_region_on_the_boundaries():
    h = 0.1
    assert hardstop._region(0.2, 0.0, 0.0, h) == hardstop.UPPER
    assert hardstop._region(h, 1.0, 0.0, h) == hardstop.UPPER
    assert hardstop._region(h, 0.0, 1.0, h) == hardstop.UPPER
    assert hardstop._region(h, 0.0, -1.0, h) == hardstop.FREE
    assert hardstop._region(h, -1.0, 5.0, h) == hardstop.FREE
    assert hardstop._region(-h, -1.0, 0.0, h) == hardstop.LOWER
    assert hardstop._region(-h, 0.0, -1.0, h) == hardstop.LOWER
    assert hardstop._region(-h, 0.0, 1.0, h) == hardstop.FREE
    assert hardstop._region(-h, 1.0, -5.0, h) == hardstop.FREE
    assert hardstop._region(-0.2, 0.0, 0.0, h) == hardstop.LOWER
    assert hardstop._region(0.0, 0.0, 0.0, h) == hardstop.FREE


@pytest.mark.parametrize(
    "x0, w0, g", [(0.0, 1.0, 0.0), (0.0, -1.0, 3.0), (0.09, 0.0, 2.0), (0.15, 0.2, -1.0)]
)
def test_hardstop_predict_matches_numerical_integration_of_the_law(x0, w0, g):
    b, c, d, mu = 0.2, 2e3, 4.0, 1.5
    times = [0.05, 0.1, 0.2, 0.35]
    states, onset, changes = hardstop.predict(x0, w0, mu, g, times, b, c, d)
    ref = simulate(lambda x, w: hardstop_force(x, w, b, c, d), x0, w0, mu, g, times)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-6)
        assert w == pytest.approx(wr, abs=1e-5)
    # the onset: the first time |x| reaches b/2 in the reference
    ts = np.linspace(0, 0.35, 3501)
    ref_dense = simulate(lambda x, w: hardstop_force(x, w, b, c, d), x0, w0, mu, g, list(ts))
    inside = [i for i, (x, w) in enumerate(ref_dense) if abs(x) > b / 2 - 1e-12]
    if inside:
        assert ts[inside[0]] - 1e-4 <= onset <= ts[inside[0]] + 1e-9
        assert changes >= 1
    else:
        assert onset is None and changes == 0


def test_hardstop_predict_without_gap_is_the_spring_damper():
    states, onset, changes = hardstop.predict(0.01, 0.5, 2.0, 1.0, [0.1, 0.3], 0.0, 100.0, 3.0)
    assert (onset, changes) == (0.0, 0)
    for t, (x, w) in zip([0.1, 0.3], states):
        assert (x, w) == pytest.approx(
            reference_state(0.01, 0.5, 2.0, 1.0, 100.0, 3.0, 0.0, t), rel=1e-9
        )


# ---- Hardstop (MapleSim page, lower branch read as s_rel < -b/2) ---------------------------------


@pytest.mark.parametrize("side", [1, -1])
def test_hardstop_at_rest_on_a_stop_edge_without_force_stays_free(side):
    """F = c*(s_rel -+ b/2) + d*v_rel only for |s_rel| > b/2 (strict): at rest on the edge with no other
    force the bodies never touch the stop: no onset, no change, the state kept."""
    b, c, d = 1.0, 100.0, 1.0
    states, onset, changes = hardstop.predict(side * 0.5, 0.0, 1.0, 0.0, (0.5, 1.0), b, c, d)
    assert onset is None and changes == 0
    assert states == [(side * 0.5, 0.0), (side * 0.5, 0.0)]


def test_hardstop_gap_of_exactly_2e_10_is_the_plain_spring_damper():
    """b <= 2e-10: F = c*s_rel + d*v_rel (page); the motion is expm of the linear system."""
    b, c, d, mu = 2e-10, 1.0, 0.1, 1.0
    x0, w0 = 1e-10, 0.0
    times = (1.0, math.pi, 5.0)
    states, onset, changes = hardstop.predict(x0, w0, mu, 0.0, times, b, c, d)
    A = np.array([[0.0, 1.0], [-c / mu, -d / mu]])
    for t, (x, w) in zip(times, states):
        xr, wr = expm(A * t) @ np.array([x0, w0])
        assert x == pytest.approx(xr, rel=1e-9, abs=1e-22) and w == pytest.approx(
            wr, rel=1e-9, abs=1e-22
        )


def kelvin_voigt_rattle(w0, mu, b, c, d, T):
    """Closed form of a body started at the gap centre with speed w0 > 0, g = 0: flights of b/|w| (b/2
    first), contacts y = |w| e^(-sigma t) sin(omega t)/omega lasting pi/omega, exit speed times
    exp(-sigma pi/omega). Returns (x, w, changes) at T."""
    half, sig = b / 2, d / (2 * mu)
    om = math.sqrt(c / mu - sig * sig)
    e, tc = math.exp(-sig * math.pi / om), math.pi / om
    t, x, w, changes, side, tf = 0.0, 0.0, w0, 0, 1, half / w0
    while True:
        if t + tf > T:
            return x + w * (T - t), w, changes
        t += tf
        changes += 1
        if t + tc > T:
            tt = T - t
            y = abs(w) * math.exp(-sig * tt) * math.sin(om * tt) / om
            dy = abs(w) * math.exp(-sig * tt) * (math.cos(om * tt) - sig * math.sin(om * tt) / om)
            return side * (half + y), side * dy, changes
        t += tc
        changes += 1
        w, side = -w * e, -side
        x, tf = -side * half, b / abs(w)


RATTLE = dict(w0=1.0, mu=1.0, b=1e-4, c=1e10, d=0.02)  # 30382 contact changes in 2 s


def test_hardstop_long_rattle_is_summed_by_default_and_matches_the_closed_form():
    """predict's default (exact=False) sums the cycles of a g = 0 rattle of 30000 changes (more than
    segments.MAX_SEGMENTS) and gives the closed-form Kelvin-Voigt bounce sequence."""
    r = RATTLE
    states, onset, changes = hardstop.predict(
        0.0, r["w0"], r["mu"], 0.0, (2.0,), r["b"], r["c"], r["d"]
    )
    x, w, n = kelvin_voigt_rattle(r["w0"], r["mu"], r["b"], r["c"], r["d"], 2.0)
    assert n > segments.MAX_SEGMENTS and changes == n
    assert onset == pytest.approx(r["b"] / 2 / r["w0"], rel=1e-12)
    assert states[0][0] == pytest.approx(x, abs=3e-9) and states[0][1] == pytest.approx(w, rel=1e-9)


def test_hardstop_exact_prediction_is_event_by_event_and_refuses_an_event_storm():
    """exact=True: every change simulated (segments.follow docstring), so a rattle of more than
    MAX_SEGMENTS changes raises EventStorm instead of being summed."""
    r = RATTLE
    with pytest.raises(motion.EventStorm):
        hardstop.predict(0.0, r["w0"], r["mu"], 0.0, (2.0,), r["b"], r["c"], r["d"], exact=True)


# ---- rattles: cycle skipping in segments.follow (every fmi2DoStep returns within a bounded time)

RATTLES = [  # (x0, w0, mu, times, b, c, d): underdamped stiff stops, no other force (g = 0)
    (-0.1, 0.0, 0.5, (0.01, 0.02), 0.0853, 2.8e9, 1.81),  # ~640 contact changes
    (-0.1, 0.0, 0.5, (0.05, 0.1), 0.0853, 2.8e9, 1.81),  # ~3100
    (0.0, 3.0, 1.0, (0.1, 0.25), 0.01, 1e7, 5.0),
    (
        0.0,
        -30.0,
        2.0,
        (0.01, 0.0137, 0.5),
        0.02,
        1e8,
        20.0,
    ),  # outputs in mid-rattle, and after it has slowed
    (0.0, 5.0, 1.0, (0.03, 0.05), 0.01, 1e8, 0.0),  # undamped: periodic
]


@pytest.mark.parametrize("x0, w0, mu, times, b, c, d", RATTLES)
def test_rattle_cycles_summed_agree_with_event_by_event_reference(x0, w0, mu, times, b, c, d):
    """g = 0: each cycle is the last one scaled, so the summed cycles give the event-by-event motion
    to rounding (the reference accumulates rounding over its thousands of located events)."""
    summed = hardstop.predict(x0, w0, mu, 0.0, times, b, c, d)
    reference = hardstop.predict(x0, w0, mu, 0.0, times, b, c, d, exact=True)
    assert summed[1] == reference[1] and summed[2] == reference[2]
    for (x, w), (xr, wr) in zip(summed[0], reference[0]):
        assert x == pytest.approx(xr, rel=1e-8, abs=1e-12)
        assert w == pytest.approx(wr, rel=1e-8, abs=1e-9)


def test_rattle_of_43000_changes_is_summed_quickly():
    """The rattle that once ran into the event bound (b = 0.0853, c = 2.8e9, d = 1.81, m_a = m_b = 1
    from 0.057 m deep in a stop): without and with a held acceleration, within a fraction of a second."""
    import time

    for g in (0.0, 2079837.2264333316):
        t0 = time.process_time()
        states, onset, changes = hardstop.predict(
            -0.1, 0.0, 0.5, g, (1.0, 2.0), 0.0853, 2.8e9, 1.81
        )
        assert time.process_time() - t0 < 0.5
        assert changes > 40000 and onset == 0.0
        assert all(math.isfinite(x) and math.isfinite(w) for x, w in states)


@pytest.mark.parametrize("g", [2079837.2264333316, 1e5, -3e6])
def test_rattle_under_held_acceleration_follows_the_envelope(g, monkeypatch):
    """g != 0: after EXACT_CHANGES exact changes the rattle is followed by its envelope; the energy
    (kinetic + spring - work of g) at the outputs agrees with the event-by-event reference to 1e-3
    and the number of contact changes to 0.1% (the phase of a storm of 12000 contacts is not kept)."""
    from contactfmu.mechanics import segments

    b, c, d, mu = 0.0853, 2.8e9, 1.81, 0.5

    def energy(x, w):
        pen = max(abs(x) - b / 2, 0.0)
        return 0.5 * w * w + 0.5 * c / mu * pen * pen - g * x

    times = (0.05, 0.1, 0.2, 0.4)
    summed = hardstop.predict(-0.1, 0.0, mu, g, times, b, c, d)
    monkeypatch.setattr(segments, "MAX_SEGMENTS", 10**6)
    reference = hardstop.predict(-0.1, 0.0, mu, g, times, b, c, d, exact=True)
    assert summed[2] == pytest.approx(reference[2], rel=1e-3)
    for s, r in zip(summed[0], reference[0]):
        assert energy(*s) == pytest.approx(energy(*r), rel=1e-3)
