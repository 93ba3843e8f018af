"""What the slaves share with the C status shim (fmi2_status_shim.c, compiled by contactfmu.build
with these values as -D definitions): defined here once.

Generic: names no component and no physical domain. Only the standard library is imported."""

# fmi2SetRealInputDerivatives / fmi2GetRealOutputDerivatives of variable vr (order 1) reach the
# slave as fmi2SetReal / fmi2GetReal of value reference vr + DERIVATIVE_VR
DERIVATIVE_VR = 536870912

# the -D definitions the shim is compiled with (it refuses to compile without them)
DEFINES = {"CONTACTFMU_DERIVATIVE_VR": f"{DERIVATIVE_VR}u"}
