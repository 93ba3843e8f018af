"""The generic slave's getters and setters (fmi.slave.Slave): outputs computed once per input change,
however many values a get asks for, and current for the inputs set since."""

import math

from slave_driver import Driver

from contactfmu.components.ElastoGap.slave import ElastoGap

INPUTS = {"flange_a.s": 0.0, "flange_a.v": 0.5, "flange_b.s": 0.0008, "flange_b.v": -0.25}
OUTPUTS = ["flange_a.f", "flange_b.f", "s_rel", "v_rel", "f_c", "f_d", "interface.c", "interface.d"]


def _counted(**params):
    d = Driver(ElastoGap, c=1e5, d=20.0, s_rel0=0.001, **params)
    computes = []
    compute = d.s.compute_outputs
    d.s.compute_outputs = lambda: (computes.append(1), compute())[1]
    return d, computes


def test_a_multi_value_get_is_the_single_gets_and_computes_the_outputs_once():
    d, computes = _counted()
    d.inputs(**INPUTS)
    batch = d.s.get_real([d.vr[n] for n in OUTPUTS])
    assert len(computes) == 1
    singles = [d.get(n) for n in OUTPUTS]
    assert len(computes) == 1  # nothing set since
    assert [x.hex() for x in batch] == [x.hex() for x in singles]
    assert batch[1] != 0.0 and batch[2] == 0.0008  # in contact: the outputs of these inputs


def test_the_same_inputs_set_again_are_no_change_a_different_one_is():
    d, computes = _counted()
    d.inputs(**INPUTS)
    before = d.get("flange_b.f")
    d.inputs(**INPUTS)  # the same values, bit for bit: the outputs computed for them stay current
    assert d.get("flange_b.f") == before and len(computes) == 1
    d.inputs(**{**INPUTS, "flange_a.s": -0.0})  # -0.0 is another value
    d.get("flange_b.f")
    assert len(computes) == 2
    d.inputs(**{**INPUTS, "flange_b.s": 0.0009})
    after = d.get("flange_b.f")
    assert len(computes) == 3 and after != before and math.isfinite(after)


def test_inputs_set_after_a_step_are_fresh_even_when_unchanged():
    """After doStep the inputs held describe the step's start (the contact elements' outputs depend
    on whether they were set since): setting the same values again computes the outputs anew."""
    d, computes = _counted()
    d.inputs(**INPUTS)
    d.get("flange_b.f")
    d.s.do_step(0.0, 1e-4)
    n = len(computes)
    d.get("flange_b.f")
    assert len(computes) == n  # doStep left them current
    d.inputs(**{k: getattr(d.s, k.replace(".", "_")) for k in INPUTS})
    d.get("flange_b.f")
    assert len(computes) == n + 1
