"""SpringDamper: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

from ..experiment_inputs import sine_flange

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ("c", "d", "s_rel0")

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = ("flange_b oscillates, s = 0.1*sin(2*pi*t) m", sine_flange("flange_b", 0.1, 1.0))

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("s_rel", "f")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = ("msl_elastogap", "msl_generation_of_fmus")
REFERENCE_RESULTS = ("ElastoGap", "GenerationOfFMUs")
