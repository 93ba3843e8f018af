"""MassWithStopAndFriction: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

import math

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = (
    "m",
    "L",
    "smax",
    "smin",
    "F_prop",
    "F_Coulomb",
    "F_Stribeck",
    "fexp",
    "v_small",
    "useHeatPort",
)

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "flange_a.f = -30*sin(pi*t/5) N: the body breaks away from sticking, slides "
    "with Stribeck friction and hits the stop smax = 25 m",
    {"flange_a.f": lambda t: -30.0 * math.sin(math.pi * t / 5.0)},
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("s", "v", "f", "mode")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = ("msl_friction",)
REFERENCE_RESULTS = ("Friction",)
