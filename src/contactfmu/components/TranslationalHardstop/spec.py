"""TranslationalHardstop: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

from ..experiment_inputs import sine_flange

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ("b", "c", "d", "s_nominal")

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "flange_b.s = 0.6*sin(2*pi*t) m in the gap b = 1 m: the upper stop (s_rel > 0.5) "
    "around t = 0.25 s, the lower stop around t = 0.75 s; the documented law with "
    "m_a = m_b = 0",
    sine_flange("flange_b", 0.6, 1.0),
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("s_rel", "F")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = ("hardstop",)
REFERENCE_RESULTS = ()
