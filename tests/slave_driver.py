"""One slave class instance driven in-process through its FMI methods by variable name
(Driver), without building an FMU, and a Mass coupled to a contact element through it (bounce).
"""

import math

import pytest
from pythonfmu.enums import Fmi2Status

from contactfmu.components.ElastoGap.slave import ElastoGap
from contactfmu.components.Mass.slave import Mass
from contactfmu.fmi.shim import DERIVATIVE_VR

REL = 1e-12


class Driver:
    """One slave instance driven through its FMI methods by variable name."""

    def __init__(self, cls, **params):
        self.s = cls(instance_name="x", resources="/tmp", visible=False, logger=None)
        self.vr = {v.name: v.vr for v in self.s.variable_table()}
        self.kind = {v.name: v.type for v in self.s.variable_table()}
        self.s.setup_experiment(0.0)
        self.s.enter_initialization_mode()
        self.set(**params)
        self.s.exit_initialization_mode()

    def set(self, **values):
        for name, value in values.items():
            name = name.replace("__", ".")
            kind = self.kind[name]
            {"Real": self.s.set_real, "Integer": self.s.set_integer, "Boolean": self.s.set_boolean}[
                kind
            ]([self.vr[name]], [value])

    def inputs(self, **values):
        """All values in one fmi2SetReal call."""
        names = [n.replace("__", ".") for n in values]
        self.s.set_real([self.vr[n] for n in names], list(values.values()))

    def get(self, *names):
        out = []
        for name in names:
            kind = self.kind[name]
            out.append(
                {
                    "Real": self.s.get_real,
                    "Integer": self.s.get_integer,
                    "Boolean": self.s.get_boolean,
                }[kind]([self.vr[name]])[0]
            )
        return out if len(out) > 1 else out[0]

    def der(self, name):
        return self.s.get_real([self.vr[name] + DERIVATIVE_VR])[0]

    def set_der(self, name, value):
        self.s.set_real([self.vr[name] + DERIVATIVE_VR], [value])

    def errors(self):
        return [m.msg for m in self.s.log_queue if m.status == Fmi2Status.error]

    def step(self, t, h):
        return self.s.do_step(t, h)


def computes_in_a_step(d, h, **inputs):
    """The times at which the slave of Driver d computed its outputs in one doStep of h after the
    inputs given were set (Slave.compute_outputs counted)."""
    s, times = d.s, []
    compute = s.compute_outputs

    def counted():
        times.append(s.time)
        compute()

    s.compute_outputs = counted
    d.inputs(**inputs)
    t = s.time
    assert s.do_step(t, h)
    return times


def compliant_signs(d, f, name="f"):
    """MSL PartialCompliant: flange_b.f = f = -flange_a.f."""
    fa, fb, ff = d.get("flange_a.f", "flange_b.f", name)
    assert ff == pytest.approx(f, rel=REL, abs=1e-15)
    assert fb == ff and fa == -ff


# ---- inertia-aware coupling (m_a/m_b set): documented impact results in a master loop ------------

d_end = [None]  # s - offset at the end of the last bounce


def bounce(cls, params, h, T, jacobi, offset=0.0):
    """A 1 kg Mass (v_start = 1 m/s, from s = 0) against a stop element whose other flange is fixed,
    in a Gauss-Seidel (set inputs, read outputs, step) or Jacobi (read, step, set) master loop.
    The stop is at s = offset + 0.01 (offset: the fixed flange's position, or ElastoGap's s_rel0).
    Returns (v at T, largest s - offset at a communication point, errors logged, the element's Driver)."""
    m = Driver(Mass, m=1.0, v_start=1.0, s_start=offset)
    # ElastoGap: contact while flange_b.s - flange_a.s < s_rel0: the mass at flange_a
    gap = cls is ElastoGap
    e = Driver(cls, **({"m_a": 1.0} if gap else {"m_b": 1.0}), **params)
    mine, force, mass_input = (
        ("flange_a", "flange_a.f", "flange_b__f")
        if gap
        else ("flange_b", "flange_b.f", "flange_a__f")
    )
    if gap:
        e.inputs(flange_b__s=2 * offset + 0.01)  # s_rel0 = offset: contact from s = offset + 0.01
    else:
        e.inputs(flange_a__s=offset)

    def feed():
        e.inputs(**{mine + "__s": m.get("s"), mine + "__v": m.get("v")})

    feed()  # the initial exchange of every master
    smax = -math.inf
    for _ in range(round(T / h)):
        t = m.s.time
        if not jacobi:
            feed()
        m.inputs(**{mass_input: e.get(force)})
        assert m.step(t, h) and e.step(t, h)
        if jacobi:
            feed()
        smax = max(smax, m.get("s") - offset)
    d_end[0] = m.get("s") - offset
    return m.get("v"), smax, m.errors() + e.errors(), e
