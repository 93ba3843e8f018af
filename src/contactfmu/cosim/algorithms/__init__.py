"""The master's co-simulation algorithms, all behind one interface (base.Algorithm: setup, initialize,
start, do_step; each chooses its own steps), each tuned by one parameter object:

- fixed.GaussSeidel, fixed.Implicit, fixed.Jacobi with fixed.FixedStep(step);
- adaptive.AdaptiveAlgorithm with adaptive.Adaptive(rtol, atol, h0, hmax, hmin, event_window);
- multirate.MultirateAlgorithm (the adaptive steps, repeated only by the FMUs that need them) with
  the same Adaptive.

:func:`select` maps System.simulate's keywords (scheme name, step, tolerances) to one of them, once.
"""

from ..errors import CosimError
from .adaptive import Adaptive, AdaptiveAlgorithm, StepRecord
from .base import Algorithm, Run
from .fixed import FixedStep, GaussSeidel, Implicit, Jacobi
from .multirate import MultirateAlgorithm

FIXED = {"gauss-seidel": GaussSeidel, "jacobi": Jacobi, "implicit": Implicit}
ADAPTIVE = {"adaptive": AdaptiveAlgorithm, "multirate": MultirateAlgorithm}
SCHEMES = (*FIXED, *ADAPTIVE)

__all__ = [
    "Algorithm",
    "Run",
    "FixedStep",
    "GaussSeidel",
    "Implicit",
    "Jacobi",
    "Adaptive",
    "AdaptiveAlgorithm",
    "MultirateAlgorithm",
    "StepRecord",
    "SCHEMES",
    "select",
]


def select(scheme=None, step=None, rtol=None, atol=None):
    """The algorithm of System.simulate's keywords: scheme, a name of SCHEMES (default: "adaptive"
    without a step, else "gauss-seidel") or an Algorithm (then no step or tolerance beside it); step:
    the fixed step, or the adaptive algorithm's first step; rtol, atol: the adaptive algorithm's
    tolerance (default Adaptive's), refused for a fixed-step scheme."""
    if isinstance(scheme, Algorithm):
        given = [
            f"{name}={value!r}"
            for name, value in (("step", step), ("rtol", rtol), ("atol", atol))
            if value is not None
        ]
        if given:
            raise CosimError(
                f"{', '.join(given)} given beside the algorithm {type(scheme).__name__}: its "
                f"parameter object holds its step and tolerances"
            )
        return scheme
    if scheme is None:
        scheme = "adaptive" if step is None else "gauss-seidel"
    if scheme not in SCHEMES:
        raise CosimError(f"scheme {scheme!r}: valid are {', '.join(map(repr, SCHEMES))}")
    if scheme in ADAPTIVE:
        tolerance = {
            name: value for name, value in (("rtol", rtol), ("atol", atol)) if value is not None
        }
        return ADAPTIVE[scheme](Adaptive(h0=step, **tolerance))
    if step is None:
        raise CosimError(
            f"scheme {scheme!r} needs a communication step (step=...); without one the "
            f"master chooses the steps (scheme='adaptive')"
        )
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is not None:
            raise CosimError(
                f"{name}={value!r} given with scheme {scheme!r}: a fixed-step scheme takes no "
                f"tolerance; rtol and atol are for scheme='adaptive' (no step, or the first step)"
            )
    return FIXED[scheme](FixedStep(step))
