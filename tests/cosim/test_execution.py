"""The run loop (cosim.execution) and System.simulate's keywords: recording times, the span, driven
inputs (manipulators), the choice of the algorithm and its parameters."""

import numpy as np
import pytest
from cosim_systems import oscillator

from contactfmu.cosim import CosimError


def test_output_grid_and_csv(fmu_dir, tmp_path):
    res = oscillator(fmu_dir).simulate(
        stop_time=0.1, step=1e-3, output_interval=1e-2, outputs=["mass.s"]
    )
    assert np.allclose(res.time, np.linspace(0, 0.1, 11), atol=1e-12)
    path = res.to_csv(tmp_path / "out.csv")
    lines = path.read_text().splitlines()
    assert lines[0] == '"time","mass.s"' and len(lines) == 12
    assert res.data["mass.s"][0] == 3.5


def test_a_step_longer_than_the_span_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError, match=r"communication step 2.0 s is longer than the simulated span 1.0 s"
    ):
        s.simulate(stop_time=1.0, step=2.0)
    res = s.simulate(
        stop_time=1.0, step=1.0, outputs=["mass.s"]
    )  # one step over the span is allowed
    assert list(res.time) == [0.0, 1.0]


def test_driving_a_connected_input_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError,
        match=r"inputs\['mass.flange_a.f'\]: mass.flange_a.f is already connected "
        r"\(set from the forces of spring\)",
    ):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"mass.flange_a.f": lambda t: 1.0})
    with pytest.raises(
        CosimError, match=r"spring.flange_b.s is already connected \(set from the motion of mass\)"
    ):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"spring.flange_b.s": lambda t: 1.0})
    # an unconnected input is driven: a constant 10 N pull on flange_b (the body receives -10 N)
    # moves the equilibrium from 3 to 3 - 0.1 m
    res = s.simulate(
        stop_time=0.1, step=1e-3, outputs=["mass.a"], inputs={"mass.flange_b.f": lambda t: 10.0}
    )
    assert res["mass.a"][0] == pytest.approx(-100.0 * 0.5 - 10.0)


@pytest.mark.parametrize("scheme", ["gauss-seidel", "jacobi", "implicit"])
def test_a_tolerance_given_to_a_fixed_step_scheme_is_refused(fmu_dir, scheme):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError,
        match=rf"rtol=1e-06 given with scheme '{scheme}': a fixed-step scheme takes no "
        rf"tolerance; rtol and atol are for scheme='adaptive'",
    ):
        s.simulate(0.1, 1e-3, scheme=scheme, rtol=1e-6)
    with pytest.raises(CosimError, match=r"atol=1e-08 given with scheme 'gauss-seidel'"):
        s.simulate(0.1, 1e-3, atol=1e-8)  # a step alone: gauss-seidel


def test_parameter_objects_check_their_values():
    import dataclasses

    from contactfmu.cosim.algorithms import Adaptive, FixedStep

    with pytest.raises(CosimError, match=r"communication step 0 s must be > 0"):
        FixedStep(0)
    with pytest.raises(CosimError, match=r"atol = -1.0: the tolerance must be finite and > 0"):
        Adaptive(atol=-1.0)
    with pytest.raises(CosimError, match=r"hmax = 0.0 s must be finite and > 0"):
        Adaptive(hmax=0.0)
    with pytest.raises(CosimError, match=r"event_window = nan s must be finite and >= 0"):
        Adaptive(event_window=float("nan"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        FixedStep(1e-3).step = 2e-3


def test_an_algorithm_object_runs_as_its_scheme_name(fmu_dir):
    from contactfmu.cosim.algorithms import Adaptive, AdaptiveAlgorithm, FixedStep, Jacobi

    s = oscillator(fmu_dir)
    a = s.simulate(0.2, 1e-2, scheme="jacobi", outputs=["mass.s"])
    b = s.simulate(0.2, scheme=Jacobi(FixedStep(1e-2)), outputs=["mass.s"])
    assert np.array_equal(a.values, b.values) and a.steps is None and b.steps is None
    c = s.simulate(0.2, rtol=1e-6, outputs=["mass.s"])
    d = s.simulate(0.2, scheme=AdaptiveAlgorithm(Adaptive(rtol=1e-6)), outputs=["mass.s"])
    assert np.array_equal(c.values, d.values)
    assert [(x.t, x.h, x.accepted) for x in c.steps] == [(x.t, x.h, x.accepted) for x in d.steps]
    with pytest.raises(
        CosimError, match=r"step=0.01 given beside the algorithm Jacobi: its parameter object"
    ):
        s.simulate(0.2, 1e-2, scheme=Jacobi(FixedStep(1e-2)))
