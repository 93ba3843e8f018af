"""Sine: MSL Blocks.Sources.Sine."""

import math
from fractions import Fraction

_isfinite = math.isfinite


def sine(t, amplitude, f, phase, offset, start_time):
    """MSL Blocks.Sources.Sine: offset + amplitude*sin(2*pi*f*(t - startTime) + phase) for
    t >= startTime, offset before."""
    if t < start_time:
        return offset
    x = 2.0 * math.pi * f * (t - start_time) + phase
    if not _isfinite(x):
        x = reduced_angle(t, f, phase, start_time)
    return offset + amplitude * math.sin(x)


def sine_derivative(t, amplitude, f, phase, start_time):
    """Time derivative of the Sine output (0 before startTime)."""
    if t < start_time:
        return 0.0
    w = 2.0 * math.pi * f
    x = w * (t - start_time) + phase
    if not _isfinite(x):
        x = reduced_angle(t, f, phase, start_time)
    dy = amplitude * w * math.cos(x)
    if not _isfinite(dy):  # w overflowed (f near the largest float): multiplied in another order
        dy = amplitude * math.cos(x) * (2.0 * math.pi) * f
    return dy


def reduced_angle(t, f, phase, start_time):
    """2*pi*f*(t - startTime) + phase for any finite t, f, phase and startTime, where the plain
    product overflows (|t - startTime| or 2*pi*f*(t - startTime) beyond the largest float): the
    number of periods f*(t - startTime) is reduced modulo 1 exactly (in rationals: the floats are
    exact binary fractions), so the angle is 2*pi*(its fractional part) + phase, in [phase,
    phase + 2*pi). Used only where the plain expression is not finite, so ordinary values give
    the plain expression bit for bit."""
    periods = Fraction(f) * (Fraction(t) - Fraction(start_time))
    return 2.0 * math.pi * float(periods - math.floor(periods)) + phase
