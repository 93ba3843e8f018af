"""The inputs of the components' cross-check experiments (``<Name>/spec.py``, ``CROSS_CHECK``):
a flange moving as a sine, its position, velocity and acceleration consistent."""

import math

TWO_PI = 2.0 * math.pi


def motion(amplitude, period, offset=0.0):
    """s, v, a of s = offset + amplitude*sin(2*pi*t/period) (consistent derivatives)."""
    w = TWO_PI / period
    return (
        lambda t: offset + amplitude * math.sin(w * t),
        lambda t: amplitude * w * math.cos(w * t),
        lambda t: -amplitude * w * w * math.sin(w * t),
    )


def sine_flange(name, amplitude, period, offset=0.0, x="s"):
    """Inputs {<name>.s: s(t), <name>.v: v(t), <name>.a: a(t)} of a flange moving as
    s = offset + amplitude*sin(2*pi*t/period) (``x``: the position's name, "x" for SimulationX)."""
    s, v, a = motion(amplitude, period, offset)
    return {f"{name}.{x}": s, f"{name}.v": v, f"{name}.a": a}
