"""Mass: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

import math

from ..experiment_inputs import TWO_PI

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ("m", "L")

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "1 kg pushed by flange_a.f = -sin(2*pi*t) N (the body receives +sin) and held back by "
    "flange_b.f = 0.25 N",
    {"flange_a.f": lambda t: -math.sin(TWO_PI * t), "flange_b.f": lambda t: 0.25},
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("s", "v", "a")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = (
    "elastogap_demo",
    "endstop",
    "hardstop",
    "msl_elastogap",
    "msl_generation_of_fmus",
    "msl_preload",
    "study_elastogap_restitution",
    "study_preload",
)
REFERENCE_RESULTS = ("ElastoGap", "GenerationOfFMUs", "PreLoad")
