"""The Jacobi algorithm (cosim.algorithms.fixed.Jacobi, libcosim's fixed-step algorithm): every output
is read right after the steps, before the inputs of that point are set; value for value against
libcosim itself in tests/test_libcosim.py."""

import numpy as np
import pytest
from cosim_systems import oscillator


def test_outputs_that_depend_on_inputs_are_one_step_old(fmu_dir):
    """The oscillator's spring force and the mass's acceleration at t1 are those of the inputs of t0 in
    the Jacobi order (50 N, -50 m/s^2), the present ones in the Gauss-Seidel order (c*h^2/2*... : 49.75 N)."""
    outputs = ["spring.f", "mass.a"]
    jacobi = oscillator(fmu_dir).simulate(0.03, 1e-2, scheme="jacobi", outputs=outputs)
    gs = oscillator(fmu_dir).simulate(0.03, 1e-2, outputs=outputs)
    assert list(jacobi["spring.f"][:2]) == [50.0, 50.0] and list(jacobi["mass.a"][:2]) == [
        -50.0,
        -50.0,
    ]
    assert gs["spring.f"][1] == pytest.approx(49.75, rel=1e-12) and gs["mass.a"][
        1
    ] == pytest.approx(-49.75, rel=1e-12)
    assert jacobi["spring.f"][2] == pytest.approx(gs["spring.f"][1], rel=1e-12)  # one step late


def test_jacobi_coupling_is_less_accurate_than_gauss_seidel(fmu_dir):
    """The analytic oscillator at h = 1 ms: measured 7.6e-2 m (Jacobi) against 7.6e-5 m (Gauss-Seidel)."""

    def error(scheme):
        r = oscillator(fmu_dir).simulate(2.0, 1e-3, scheme=scheme, outputs=["mass.s"])
        return np.max(np.abs(r["mass.s"] - (3 + 0.5 * np.cos(10 * r.time))))

    jacobi, gs = error("jacobi"), error("gauss-seidel")
    assert jacobi < 0.1 and jacobi > 100 * gs
