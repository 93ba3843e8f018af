"""The linear force laws of src/contactfmu/mechanics/linear.py (Spring, Damper, SpringDamper,
the force rate), written out again here.
"""

import pytest

from contactfmu.mechanics import linear


def test_linear_laws_written_out():
    assert linear.relative_motion(1.5, -2.0, 4.0, 3.0) == (2.5, 5.0)
    assert linear.spring_force(0.3, 2.0, 0.1) == pytest.approx(2.0 * 0.2)
    assert linear.damper_force(-3.0, 7.0) == -21.0
    assert linear.force_rate(2.0, 5.0, 3.0, 7.0) == 3.0 * 2.0 + 7.0 * 5.0
    assert linear.spring_damper_force(0.5, 2.0, 3.0, 7.0, 0.2) == pytest.approx(
        3.0 * 0.3 + 7.0 * 2.0
    )
