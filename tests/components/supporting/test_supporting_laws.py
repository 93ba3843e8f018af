"""The laws of the supporting sources, src/contactfmu/components/Sine/law.py and
src/contactfmu/components/Force/law.py (MSL 4.1 Blocks.Sources.Sine and
Translational.Sources.Force), written out again here: the sine, its derivative, the flange force.
"""

import math

import pytest

from contactfmu.components.Force import law as force_law
from contactfmu.components.Sine import law as sources


def test_sine_source_and_its_derivative():
    A, f, ph, off, t0 = 2.0, 3.0, 0.4, 0.5, 0.25
    assert sources.sine(0.1, A, f, ph, off, t0) == off
    assert sources.sine(t0, A, f, ph, off, t0) == pytest.approx(off + A * math.sin(ph))
    t = 0.6
    assert sources.sine(t, A, f, ph, off, t0) == pytest.approx(
        off + A * math.sin(2 * math.pi * f * (t - t0) + ph)
    )
    e = 1e-6
    numeric = (sources.sine(t + e, A, f, ph, off, t0) - sources.sine(t - e, A, f, ph, off, t0)) / (
        2 * e
    )
    assert sources.sine_derivative(t, A, f, ph, t0) == pytest.approx(numeric, rel=1e-7)
    assert sources.sine_derivative(0.1, A, f, ph, t0) == 0.0
    assert sources.sine_derivative(t0, A, f, ph, t0) == pytest.approx(
        A * 2 * math.pi * f * math.cos(ph)
    )
    assert force_law.force_source_flange_force(3.5) == -3.5
