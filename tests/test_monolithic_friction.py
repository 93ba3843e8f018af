"""The monolithic scipy reference of MSL Translational.Examples.Friction, stop1 and stop2
(contactfmu.monolithic.friction; MSL 4.1 MassWithStopAndFriction and Translational.Examples.Friction)
against the Dymola event times
(only the event instants of the Dymola result are in the repository, refdata/Friction; the reference is what the
benchmarks compare the co-simulation of the example with)."""

import numpy as np
import pytest

from contactfmu.monolithic import friction

# stop2 hits its left stop (src/contactfmu/refdata/Friction/events.csv)
DYMOLA_HIT = 0.0605969540580
DYMOLA_STICKS = 1.0459741  # stop2 sticks for good
# every event instant of stop2 in the Dymola CSV (duplicated time stamps, left of the row pair),
# without the stop-leaving event at 0.0605986808 (s = lo + 1e-10, no mode change)
DYMOLA_STOP2 = [
    0.060596954058015,
    0.2011056396850,
    0.3416165479589,
    0.4821401095256,
    0.6226926121629,
    0.7633288139165,
    0.9042042090256,
    1.045974060530835,
]
F0_MAX_STOP2 = 1.001 * (3.0 + 5.0)
F0_MAX_STOP1 = 1.001 * (5.0 + 10.0)


@pytest.fixture(scope="module")
def t():
    return np.linspace(0.0, 5.0, 5001)


@pytest.fixture(scope="module")
def ref_run(t):
    return friction(t)


def test_stop2_event_times_agree_with_dymola(ref_run):
    events = ref_run["events"]
    assert events == sorted(events)
    assert abs(events[0] - DYMOLA_HIT) < 1e-6  # measured 1.4e-7 s
    assert abs(events[-1] - DYMOLA_STICKS) < 1e-6  # measured 3.5e-7 s (DYMOLA_STICKS has 8 digits)
    # the intermediate v = 0 reversals: Dymola's Dassl (tolerance 1e-6) places them up to 1.4e-6 s off
    assert len(events) == len(DYMOLA_STOP2)
    np.testing.assert_allclose(events, DYMOLA_STOP2, rtol=0, atol=5e-6)  # measured at most 1.4e-6 s


def test_event_sequence(ref_run):
    stop1 = [(te, kind) for te, body, kind in ref_run["event_log"] if body == "stop1"]
    # breakaway when 25*sin(pi/2*t) exceeds f0_max = 15.015 N: t = 2/pi*asin(0.6006); measured 5.6e-17 s
    assert stop1[0][1] == "breakaway forward"
    assert stop1[0][0] == pytest.approx(2 / np.pi * np.arcsin(15.015 / 25.0), rel=0, abs=1e-15)
    assert [k for _, k in stop1] == [
        "breakaway forward",
        "v = 0",
        "breakaway backward",
        "v = 0",
        "breakaway forward",
    ]
    stop2 = [(te, kind) for te, body, kind in ref_run["event_log"] if body == "stop2"]
    kinds = [k for _, k in stop2]
    assert kinds[:2] == ["hits the left stop", "breakaway forward"] and stop2[0][0] == stop2[1][0]
    assert kinds[-1] == "sticks"
    assert kinds[2:-1] == ["v = 0", "breakaway backward", "v = 0", "breakaway forward"] * 3


def test_stuck_is_at_rest_and_within_the_breakaway_force(t, ref_run):
    mode, s, v = ref_run["stop2.mode"], ref_run["stop2.s"], ref_run["stop2.v"]
    stuck = mode == 0
    assert (
        stuck.any()
        and np.all(stuck[t > DYMOLA_STICKS + 1e-3])
        and not stuck[t < DYMOLA_STICKS - 1e-3].any()
    )
    assert np.all(v[stuck] == 0.0)
    assert np.all(s[stuck] == s[stuck][0])  # no drift
    spring = -500.0 * (s + 0.25)  # the spring's force on stop2
    assert np.all(np.abs(spring[stuck]) <= F0_MAX_STOP2)
    # Dymola (Dassl, tolerance 1e-6) ends at -0.24751585, 1.8e-6 m from the converged -0.24751399
    assert abs(s[-1] - (-0.2475158)) < 5e-6  # measured 1.8e-6 m
    assert np.all(s >= -0.4) and np.all(s <= 0.4)  # never beyond its stops (centre +-0.4)
    assert np.all(np.sign(v[mode != 0]) == mode[mode != 0])  # the mode is the sliding direction

    mode1, v1, f1 = ref_run["stop1.mode"], ref_run["stop1.v"], ref_run["stop1.f"]
    stuck1 = mode1 == 0
    assert np.all(v1[stuck1] == 0.0)
    np.testing.assert_allclose(
        f1[stuck1], 25.0 * np.sin(np.pi / 2 * t[stuck1]), rtol=0, atol=1e-14
    )  # measured 0
    assert np.all(np.abs(f1[stuck1]) <= F0_MAX_STOP1)
    sliding = ~stuck1 & (np.abs(v1) > 1e-9)
    assert np.all(np.sign(f1[sliding]) == np.sign(v1[sliding]))  # friction opposes the motion
    assert np.all(np.abs(f1[sliding]) >= 5.0)  # at least Coulomb
