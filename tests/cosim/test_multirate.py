"""Partitioned adaptive steps (scheme="multirate", cosim.algorithms.multirate): the boundary bodies'
stand-ins by hand, and the algorithm on generated systems against their monolithic references
(contactfmu.family) beside the adaptive master's own steps."""

import dataclasses
from ctypes import byref, c_double, c_uint, c_void_p
from types import SimpleNamespace

import numpy as np
import pytest

from contactfmu.cosim.algorithms import Adaptive, AdaptiveAlgorithm, MultirateAlgorithm, select
from contactfmu.cosim.algorithms.multirate import BoundaryBody
from contactfmu.family import build, generate, reference


def cubic(tau):
    """s, v, a of s = 1 + 2*tau + 3*tau^2 - 4*tau^3."""
    return (
        1.0 + 2.0 * tau + 3.0 * tau**2 - 4.0 * tau**3,
        2.0 + 6.0 * tau - 12.0 * tau**2,
        6.0 - 24.0 * tau,
    )


def stand_in():
    return BoundaryBody(SimpleNamespace(name="body", path="Mass.fmu"), {1: "s", 2: "v", 3: "a"})


def test_a_boundary_body_moves_on_the_cubic_through_its_ends():
    """Given s and v at t0 and t0 + h of a cubic, the stand-in's s, v and a are the cubic's at any
    time between (a cubic Hermite interpolant reproduces a cubic), read through its fmi2GetReal at
    the time its fmi2DoStep calls reached; fmi2GetFMUstate / fmi2SetFMUstate keep and restore that
    time."""
    t0, h = 0.5, 0.2
    body = stand_in()
    body.span(t0, h, cubic(0.0)[0], cubic(0.0)[1], cubic(h)[0], cubic(h)[1])
    for tau in (0.0, 0.05, 0.13, h):
        assert body.motion(t0 + tau) == pytest.approx(cubic(tau), rel=1e-12, abs=1e-12)
    functions = body.slave._functions
    vrs, buf = (c_uint * 3)(1, 2, 3), (c_double * 3)()
    assert functions["fmi2DoStep"](None, t0, 0.05, 1) == 0
    functions["fmi2GetReal"](None, vrs, 3, buf)
    assert list(buf) == pytest.approx(cubic(0.05), rel=1e-12)
    state = c_void_p()
    functions["fmi2GetFMUstate"](None, byref(state))
    functions["fmi2DoStep"](None, t0 + 0.05, 0.1, 1)
    functions["fmi2GetReal"](None, vrs, 3, buf)
    assert list(buf) == pytest.approx(cubic(0.15), rel=1e-12)
    functions["fmi2SetFMUstate"](None, state)
    functions["fmi2GetReal"](None, vrs, 3, buf)
    assert list(buf) == pytest.approx(cubic(0.05), rel=1e-12)
    functions["fmi2FreeFMUstate"](None, byref(state))
    assert body.saved == {}
    assert body.discrete_outputs() == [] and body.variables == {}  # declares no inertia


def test_a_boundary_body_integrates_the_forces_set_on_it():
    """The forces set on it (value and rate, held linear over each step) integrated exactly from
    the span's start t0: F = 2 + 4*tau over [0, 0.1], then 1 over [0.1, 0.2]: impulse
    0.2 + 0.02 + 0.1 = 0.32 N*s, moment about t0 0.01 + 0.004/3 + 0.015 = 0.0263333 N*s^2; a
    restored state restores them."""
    body = stand_in()
    body.span(1.0, 0.2, 0.0, 0.0, 0.0, 0.0)
    functions = body.slave._functions
    vr, order = (c_uint * 1)(7), (c_uint * 1)(1)
    functions["fmi2SetReal"](None, vr, 1, (c_double * 1)(2.0))
    functions["fmi2SetRealInputDerivatives"](None, vr, 1, order, (c_double * 1)(4.0))
    functions["fmi2DoStep"](None, 1.0, 0.1, 1)
    assert body.impulse == pytest.approx(0.22, rel=1e-12)
    state = c_void_p()
    functions["fmi2GetFMUstate"](None, byref(state))
    functions["fmi2SetReal"](None, vr, 1, (c_double * 1)(1.0))
    functions["fmi2SetRealInputDerivatives"](None, vr, 1, order, (c_double * 1)(0.0))
    functions["fmi2DoStep"](None, 1.1, 0.1, 1)
    assert body.impulse == pytest.approx(0.32, rel=1e-12)
    assert body.moment == pytest.approx(0.01 + 0.004 / 3.0 + 0.015, rel=1e-12)
    functions["fmi2SetFMUstate"](None, state)
    assert body.impulse == pytest.approx(0.22, rel=1e-12) and body.force == {7: 2.0}


def test_multirate_is_a_scheme_of_its_own():
    algorithm = select("multirate", rtol=1e-5)
    assert isinstance(algorithm, MultirateAlgorithm) and algorithm.params.rtol == 1e-5
    # every recording time ends a long step: the regions' own steps are not recorded
    assert not MultirateAlgorithm(Adaptive(dense=True)).dense


def run(spec, fmu_dir, algorithm, grid, names):
    return build.system(spec, fmu_dir).simulate(
        spec.stop_time, output_interval=grid[1], outputs=names, scheme=algorithm
    )


def calls_per_fmu(result, spec):
    return sum(x.calls * (x.fmus or spec.fmus) for x in result.steps) / spec.fmus


@pytest.fixture(scope="module")
def chain():
    """A chain of 10 bodies (25 FMUs) with contacts here and there, 0.5 s, and its reference."""
    spec = dataclasses.replace(generate(3, bodies=10, topology="chain"), stop_time=0.5)
    grid = np.linspace(0.0, 0.5, 251)
    return spec, grid, reference.solve(spec, t_eval=grid)


@pytest.mark.parametrize("rtol", [1e-4, 1e-6])
def test_multirate_is_as_accurate_as_every_fmu_stepping_with_fewer_calls(chain, fmu_dir, rtol):
    """On the chain, against its reference: the error within 1.5x of the adaptive master's (the
    recording times ending its steps too), in fewer fmi2DoStep calls per FMU, with regions of
    some of the FMUs doing the small steps (measured at rtol 1e-4: 1.3e-3 against 6.6e-3, 387
    against 642 calls; at 1e-6: 6.6e-5 against 7.0e-5, 1374 against 3595)."""
    spec, grid, ref = chain
    names = build.signals(spec)
    tuning = Adaptive(rtol=rtol, atol=rtol * 1e-2, dense=False)
    every = run(spec, fmu_dir, AdaptiveAlgorithm(tuning), grid, names)
    parts = run(spec, fmu_dir, MultirateAlgorithm(tuning), grid, names)
    error = max(build.errors(parts, ref, names).values())
    assert error <= 1.5 * max(build.errors(every, ref, names).values())
    assert calls_per_fmu(parts, spec) < 0.8 * calls_per_fmu(every, spec)
    regions = [x for x in parts.steps if x.fmus]
    assert regions and all(0 < x.fmus < spec.fmus for x in regions)


def test_multirate_error_falls_in_proportion_to_the_tolerance(chain, fmu_dir):
    spec, grid, ref = chain
    names = build.signals(spec)
    errors = [
        max(
            build.errors(
                run(
                    spec, fmu_dir, MultirateAlgorithm(Adaptive(rtol=r, atol=r * 1e-2)), grid, names
                ),
                ref,
                names,
            ).values()
        )
        for r in (1e-4, 1e-6)
    ]
    assert errors[0] >= 10.0 * errors[1], errors  # (measured 1.3e-3 and 6.6e-5: 20x)


def test_a_system_it_cannot_partition_takes_the_adaptive_steps(fmu_dir):
    """A driven input (or one body, or an element that integrates its contact): the adaptive
    master's own steps, bit for bit."""
    spec = dataclasses.replace(generate(3, bodies=3, topology="tree"), stop_time=0.05)
    names = build.signals(spec)
    leaf = next(b.name for b in spec.bodies if all(lk.a != b.name for lk in spec.links))
    drive = {f"{leaf}.flange_b.f": lambda t: 0.5 * t}  # (a leaf's flange_b is free)
    results = [
        build.system(spec, fmu_dir).simulate(
            0.05, outputs=names, inputs=drive, scheme=cls(Adaptive(dense=False))
        )
        for cls in (AdaptiveAlgorithm, MultirateAlgorithm)
    ]
    assert not any(x.fmus for x in results[1].steps)
    for name in names:
        assert np.array_equal(results[0][name], results[1][name])
