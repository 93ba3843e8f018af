"""EndStop: what its documentation specifies and how the project checks it (master side, not
bundled into the FMU)."""

from ..experiment_inputs import sine_flange

# the parameters of the documentation, each an FMU parameter of the same name (contactfmu validate)
DOCUMENTED_PARAMETERS = (
    "l1",
    "l2",
    "mode",
    "kind",
    "ci",
    "k1",
    "k2",
    "b1",
    "b2",
    "friction",
    "kindF",
    "Fst",
    "Fsl",
    "dvL",
    "adv",
    "eps_Fi",
    "eps_dv",
    "dFfrel",
    "eps_dvsl",
    "eps_dI",
    "kindTrans",
    "eps_sigma",
    "eps_tau",
)

# the FMI cross-check experiment (contactfmu.crosscheck): what happens in it, and its inputs
# {variable: f(t)}, with the FMU's default parameters and DefaultExperiment
CROSS_CHECK = (
    "ctr1.x = 0.02*sin(2*pi*t) m against l1 = l2 = 0.01 m: Elastic End Stop, stop 1 "
    "(state 1) around t = 0.25 s and stop 2 (state 2) around t = 0.75 s",
    sine_flange("ctr1", 0.02, 1.0, x="x"),
)

# the outputs its documentation page draws over the cross-check experiment (contactfmu.pages)
FIGURE_SIGNALS = ("dx", "Fi", "stop")

# the examples (examples/<name>.py) that use it, and the MSL reference results
# (src/contactfmu/refdata/<Name>/) of the MSL examples among them (examples/msl_<name>.py)
EXAMPLES = ("endstop",)
REFERENCE_RESULTS = ()
