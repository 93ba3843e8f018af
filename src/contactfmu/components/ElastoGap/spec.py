"""ElastoGap: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

from ..experiment_inputs import sine_flange

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = ("c", "d", "s_rel0", "n", "s_nominal", "useHeatPort")

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "flange_b.s = 0.01 + 0.05*sin(2*pi*t/0.1) m: contact (s_rel < s_rel0 = 0) from t = 0.0532 s "
    "to 0.0968 s, 4.7e-6 s off the communication points, the damper force bounded at contact "
    "start and end",
    sine_flange("flange_b", 0.05, 0.1, offset=0.01),
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("s_rel", "f_c", "f_d", "f")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = (
    "elastogap_demo",
    "msl_elastogap",
    "msl_preload",
    "study_elastogap_restitution",
    "study_preload",
)
REFERENCE_RESULTS = ("ElastoGap", "PreLoad")
