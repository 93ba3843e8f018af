"""Force: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

import math

from ..experiment_inputs import TWO_PI, sine_flange

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ()

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "f = 2*sin(2*pi*t) N on a flange moving with s = 0.1*sin(2*pi*t) m",
    {"f": lambda t: 2 * math.sin(TWO_PI * t), **sine_flange("flange", 0.1, 1.0)},
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("flange.f",)

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = (
    "endstop",
    "hardstop",
    "msl_friction",
    "msl_generation_of_fmus",
    "msl_preload",
    "study_preload",
)
REFERENCE_RESULTS = ("Friction", "GenerationOfFMUs", "PreLoad")
