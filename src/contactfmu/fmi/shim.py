"""What the slaves share with the C status shims (fmi2_status_shim.c, fmi3_status_shim.c and
shim_common.c, compiled by contactfmu.build with these values as -D definitions): defined here once.

Generic: names no component and no physical domain. Only the standard library is imported."""

# fmi2SetRealInputDerivatives / fmi2GetRealOutputDerivatives of variable vr (order 1) reach the
# slave as fmi2SetReal / fmi2GetReal of value reference vr + DERIVATIVE_VR
DERIVATIVE_VR = 536870912

# FMI 3.0 (fmi3_status_shim.c): the shim's own channel to the slave, value references in no model
# description. The shim sets the Booleans CONTROL_VR (earlyReturnAllowed) and CONTROL_VR + 1
# (eventModeUsed) after fmi3InstantiateCoSimulation and fmi3Reset, sets the Float64 CONTROL_VR
# to fmi3EnterInitializationMode's startTime (pythonfmu3's library does not pass it), and reads after each doStep
# the Float64 CONTROL_VR (the time the step reached) and the Booleans CONTROL_VR + 2 (the step
# ended early, at an event) and CONTROL_VR + 3 (an event happened in the step).
CONTROL_VR = 1610612736
EARLY_RETURN_ALLOWED, EVENT_MODE_USED, RETURNED_EARLY, EVENT_IN_STEP = range(4)

# Value references from FIRST_PRIVATE_VR up (the derivative slots and the FMI 3.0 channel) are the
# shims' own, declared in no model description: the shims refuse them from an importer's getter or
# setter with fmi2Error / fmi3Error, and use them themselves.
FIRST_PRIVATE_VR = min(DERIVATIVE_VR, CONTROL_VR)

# the folder of the binaries (the shim and pythonfmu's library) inside an FMU, per standard
PLATFORM = "linux64"  # FMI 2.0
PLATFORM3 = "x86_64-linux"  # FMI 3.0

# the log categories every FMU declares (Slave.log_categories): fmi3SetDebugLogging refuses others
LOG_CATEGORIES = (
    "logStatusWarning",
    "logStatusDiscard",
    "logStatusError",
    "logStatusFatal",
    "logAll",
)

# the -D definitions the shims are compiled with (they refuse to compile without them)
DEFINES = {
    "CONTACTFMU_DERIVATIVE_VR": f"{DERIVATIVE_VR}u",
    "CONTACTFMU_CONTROL_VR": f"{CONTROL_VR}u",
    "CONTACTFMU_FIRST_PRIVATE_VR": f"{FIRST_PRIVATE_VR}u",
    "CONTACTFMU_LOG_CATEGORIES": ",".join(f'"{name}"' for name in LOG_CATEGORIES),
}
