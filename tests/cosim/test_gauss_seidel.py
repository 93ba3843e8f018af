"""The Gauss-Seidel algorithm (cosim.algorithms.fixed.GaussSeidel): coupling accuracy against the
analytic oscillator, first-order hold of the exchanged forces."""

import numpy as np
import pytest
from cosim_systems import oscillator


def test_rod_offset_and_coupling_against_the_analytic_oscillator(fmu_dir):
    res = oscillator(fmu_dir).simulate(
        stop_time=2.0, step=1e-3, outputs=["mass.s", "mass.v", "spring.s_rel"]
    )
    t = res.time
    assert res["spring.s_rel"][0] == pytest.approx(1.5)  # 3.5 - (0 + 2)
    err = np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * t))))
    assert err < 1e-4  # 2e-4 of the amplitude after 3.2 periods (omega*h = 0.01)
    assert np.max(np.abs(res["mass.v"] + 5 * np.sin(10 * t))) < 1e-3


def test_first_order_hold_beats_zero_order_hold(fmu_dir):
    def error(interpolate):
        res = oscillator(fmu_dir, interpolate).simulate(
            stop_time=2.0, step=1e-2, outputs=["mass.s"]
        )
        return np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * res.time))))

    foh, zoh = error(True), error(False)
    assert foh < zoh / 20, (foh, zoh)
