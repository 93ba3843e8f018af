"""Small systems the master's tests share."""

from contactfmu.cosim import System


def oscillator(fmu_dir, interpolate=True):
    """Fixed --rod 2 m-- Spring(c=100, s_rel0=1) -- Mass(1 kg, s0=3.5): s = 3 + 0.5 cos(10 t)."""
    s = System(interpolate_inputs=interpolate)
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=3.5, v_start=0.0)
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    return s
