"""Fixed: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

import math

from ..experiment_inputs import TWO_PI

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ("s0",)

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "cut force flange.f = 3*sin(2*pi*t) N; f_support = -flange.f",
    {"flange.f": lambda t: 3 * math.sin(TWO_PI * t)},
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("f_support",)

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = (
    "elastogap_demo",
    "endstop",
    "hardstop",
    "msl_elastogap",
    "msl_friction",
    "msl_preload",
    "study_elastogap_restitution",
    "study_preload",
)
REFERENCE_RESULTS = ("ElastoGap", "Friction", "PreLoad")
