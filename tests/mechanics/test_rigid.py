"""The rigid-body motion of src/contactfmu/mechanics/rigid.py: acceleration and the exact advance
under a linearly varying force, against the polynomial solution and scipy's solve_ivp.
"""

import pytest
from scipy.integrate import solve_ivp

from contactfmu.mechanics import rigid


def test_rigid_advance_is_exact_for_a_linearly_varying_force():
    """Integrate s''' = jerk exactly: the polynomial solution of constant jerk."""
    assert rigid.acceleration(4.0, 10.0) == 2.5
    s0, v0, a0, j, h = 0.3, -1.2, 2.0, 6.0, 0.7
    s, v = rigid.advance(s0, v0, a0, h, j)
    sol = solve_ivp(lambda t, y: [y[1], y[2], j], (0, h), [s0, v0, a0], rtol=1e-12, atol=1e-14)
    assert s == pytest.approx(sol.y[0, -1], rel=1e-10)
    assert v == pytest.approx(sol.y[1, -1], rel=1e-10)
    assert rigid.advance(s0, v0, a0, h) == pytest.approx(
        (s0 + v0 * h + a0 * h * h / 2, v0 + a0 * h)
    )
