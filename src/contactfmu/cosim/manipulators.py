"""The manipulators of a run (as libcosim's manipulators): what changes the system from outside while
it runs. :class:`DrivenInputs` sets unconnected Real inputs to functions of time
(System.simulate(inputs=...)); the algorithm applies it wherever it sets inputs."""

import math

from .errors import CosimError


def connected_inputs(plan):
    """{(instance name, value reference): what sets it} for every input the exchange of `plan` sets."""
    fed = {}
    for link in plan.motion:
        fed[(link.target.name, link.target_s)] = fed[(link.target.name, link.target_v)] = (
            f"the motion of {link.source.name}"
        )
    for link in plan.accel:
        fed[(link.target.name, link.target_a)] = f"the motion of {link.source.name}"
    for link in plan.forces:
        fed[(link.body.name, link.f)] = "the forces of " + ", ".join(
            ti.name for ti, _ in link.sources
        )
    for link in plan.signals:
        fed[(link.target.name, link.input.valueReference)] = (
            f"{link.source.name}.{link.output.name}"
        )
    return fed


class DrivenInputs:
    """``drive(t)`` (calling the object) sets each driven input to its function's value at t (finite, or
    the run stops with a CosimError naming it). `inputs` {"inst.var": f(t)} is checked at once: only
    unconnected Real inputs (not set by the exchange of `plan`) can be driven."""

    def __init__(self, system, inputs, plan):
        connected = connected_inputs(plan)
        self.plan = []  # [(instance, value reference, function, "inst.var")]
        for ref, fn in (inputs or {}).items():
            inst, name = system.resolve(ref)
            var = inst.var(name)
            if var.causality != "input" or var.type != "Real":
                raise CosimError(
                    f"inputs[{ref!r}]: {ref} is a {var.type} {var.causality}; only Real inputs "
                    f"can be driven"
                )
            source = connected.get((inst.name, var.valueReference))
            if source is not None:
                raise CosimError(
                    f"inputs[{ref!r}]: {ref} is already connected (set from {source}); only "
                    f"unconnected inputs can be driven"
                )
            if not callable(fn):
                raise CosimError(
                    f"inputs[{ref!r}] must be a function of time, got {type(fn).__name__}"
                )
            self.plan.append((inst, var.valueReference, fn, ref))

    def __call__(self, t):
        for inst, vr, fn, ref in self.plan:
            value = float(fn(t))
            if not math.isfinite(value):
                raise CosimError(f"inputs[{ref!r}] gave {value!r} at t = {t:.9g} s")
            inst.call("fmi2SetReal", lambda: inst.slave.setReal([vr], [value]), t)
