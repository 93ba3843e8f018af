"""The generic FMI 2.0 layer of the FMUs: the slave's entry points and statuses (slave.py), its
variable table (variables.py), the FMU state codec (state.py), the model description
(model_description.py) and what the C status shim shares (shim.py, fmi2_status_shim.c).

Names no component and no physical domain. Bundled into every FMU: standard library and
pythonfmu only."""
