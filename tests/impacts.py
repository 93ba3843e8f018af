"""A 1 kg body hitting a contact element at 1 m/s, and the analytic rebounds the tests compare
it with: TranslationalHardstop c = 1e5, d = 20 (Kelvin-Voigt while in the stop, the damper pulls):
exp(-zeta*pi/sqrt(1 - zeta^2)), zeta = d/(2*sqrt(c*m)); ElastoGap c = 1e5, d = 20, n = 1 (bounded
damper): the closed form of elastogap_written_out."""

import math

from elastogap_written_out import restitution

from contactfmu.cosim import System

ZETA = 20.0 / (2.0 * math.sqrt(1e5 * 1.0))
KELVIN_VOIGT = math.exp(-ZETA * math.pi / math.sqrt(1.0 - ZETA**2))  # 0.905384...
ELASTOGAP = restitution(1.0, 1e5, 20.0)[0]  # 0.909008...


def impact_system(fmu_dir, element, params, s0):
    """Fixed -- element -- Mass (1 kg) moving at -1 m/s from s0 towards the element's stop."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("el", fmu_dir / f"{element}.fmu", **params)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=s0, v_start=-1.0)
    s.connect("wall.flange", "el.flange_a")
    s.connect("el.flange_b", "mass.flange_a")
    return s
