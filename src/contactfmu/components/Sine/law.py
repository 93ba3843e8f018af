"""Sine: MSL Blocks.Sources.Sine."""

import math


def sine(t, amplitude, f, phase, offset, start_time):
    """MSL Blocks.Sources.Sine: offset + amplitude*sin(2*pi*f*(t - startTime) + phase) for
    t >= startTime, offset before."""
    if t < start_time:
        return offset
    return offset + amplitude * math.sin(2.0 * math.pi * f * (t - start_time) + phase)


def sine_derivative(t, amplitude, f, phase, start_time):
    """Time derivative of the Sine output (0 before startTime)."""
    if t < start_time:
        return 0.0
    w = 2.0 * math.pi * f
    return amplitude * w * math.cos(w * (t - start_time) + phase)
