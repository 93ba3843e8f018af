"""The variable table (fmi.variables): the units' SI exponents, the rows parameter(), inp() and
out() make (type from the start value, causality, variability, initial, the descriptions' notes),
the valid range and unit as the messages print them, and the XML value format. In-process, hand-
written expectations."""

import numpy as np
import pytest

from contactfmu.fmi.variables import UNITS, Var, _kind, article, fmt, inp, out, parameter


def test_units_carry_their_si_base_unit_exponents():
    assert UNITS == {
        "m": {"m": 1},
        "m/s": {"m": 1, "s": -1},
        "m/s2": {"m": 1, "s": -2},
        "N": {"kg": 1, "m": 1, "s": -2},
        "N/m": {"kg": 1, "s": -2},
        "N.s/m": {"kg": 1, "s": -1},
        "kg": {"kg": 1},
        "s": {"s": 1},
        "Hz": {"s": -1},
        "rad": {"rad": 1},
        "W": {"kg": 1, "m": 2, "s": -3},
        "K": {"K": 1},
        "J": {"kg": 1, "m": 2, "s": -2},
        "N.s": {"kg": 1, "m": 1, "s": -1},
        "s/m": {"m": -1, "s": 1},
        "1": {},
    }


def _exponents(*factors):
    out = {}
    for unit, power in factors:
        for base, e in UNITS[unit].items():
            out[base] = out.get(base, 0) + power * e
    return {b: e for b, e in out.items() if e}


@pytest.mark.parametrize(
    "unit, factors",
    [
        ("N", [("kg", 1), ("m/s2", 1)]),  # F = m a
        ("J", [("N", 1), ("m", 1)]),  # W = F s
        ("W", [("J", 1), ("s", -1)]),  # P = W / t
        ("N/m", [("N", 1), ("m", -1)]),
        ("N.s/m", [("N", 1), ("s", 1), ("m", -1)]),
        ("N.s", [("kg", 1), ("m/s", 1)]),  # impulse = momentum
        ("s/m", [("m/s", -1)]),
        ("Hz", [("s", -1)]),
        ("m/s", [("m", 1), ("s", -1)]),
    ],
)
def test_units_are_consistent_with_each_other(unit, factors):
    assert UNITS[unit] == _exponents(*factors)


def test_var_row_defaults():
    v = Var("flange_a.s", "Real", "output", "continuous", 0.5, "m", "position")
    assert (v.name, v.attr, v.type, v.causality, v.variability) == (
        "flange_a.s",
        "flange_a_s",
        "Real",
        "output",
        "continuous",
    )
    assert (v.start, v.unit, v.description) == (0.5, "m", "position")
    assert v.min is None and v.max is None and v.min_exclusive is False and v.initial is None
    assert v.depends == () and v.derivative is False and v.vr is None
    assert not hasattr(v, "__dict__")  # a row has only its slots


def test_var_attr_replaces_every_dot_and_depends_becomes_a_tuple():
    v = Var("a.b.c", "Real", "output", "continuous", None, None, "", depends=["x", "y"])
    assert v.attr == "a_b_c" and v.depends == ("x", "y")


@pytest.mark.parametrize(
    "lo, hi, exclusive, text",
    [
        (None, None, False, "(-inf, inf)"),
        (None, None, True, "(-inf, inf)"),
        (0.0, None, False, "[0.0, inf)"),
        (0.0, None, True, "(0.0, inf)"),
        (None, 5, False, "(-inf, 5]"),
        (0.5, 2.0, False, "[0.5, 2.0]"),
        (1e-3, 1.0, True, "(0.001, 1.0]"),
        (-1, 1, False, "[-1, 1]"),
    ],
)
def test_valid_range_as_the_messages_print_it(lo, hi, exclusive, text):
    v = Var("x", "Real", "parameter", "fixed", 1.0, "m", "", lo, hi, exclusive)
    assert v.valid_range() == text


@pytest.mark.parametrize("unit, text", [(None, ""), ("1", ""), ("m", " m"), ("N.s/m", " N.s/m")])
def test_unit_text(unit, text):
    assert Var("x", "Real", "parameter", "fixed", 1.0, unit, "").unit_text() == text


@pytest.mark.parametrize(
    "value, kind",
    [(True, "Boolean"), (False, "Boolean"), (3, "Integer"), (0, "Integer"), (3.0, "Real")],
)
def test_kind_from_the_start_value(value, kind):
    assert _kind(value) == kind


def test_parameter_row():
    p = parameter("c", 1e4, "N/m", "spring constant", min=0.0, max=1e9)
    assert (p.name, p.type, p.causality, p.variability, p.initial) == (
        "c",
        "Real",
        "parameter",
        "fixed",
        "exact",
    )
    assert (p.start, p.unit, p.description, p.min, p.max, p.min_exclusive) == (
        1e4,
        "N/m",
        "spring constant",
        0.0,
        1e9,
        False,
    )
    assert p.depends == () and p.derivative is False and p.vr is None
    assert parameter("n", 3, "1", "count").type == "Integer"
    assert parameter("on", True, "1", "switch").type == "Boolean"
    q = parameter("x", 1.0, "m", "d")
    assert q.min is None and q.max is None and q.min_exclusive is False


def test_parameter_with_an_exclusive_minimum_says_so_once():
    p = parameter("m", 1.0, "kg", "mass", min=1e-6, min_exclusive=True)
    assert p.description == "mass (must be > 1e-06)" and p.min == 1e-6 and p.min_exclusive is True
    assert p.valid_range() == "(1e-06, inf)"
    q = parameter("m", 1.0, "kg", "mass, must be > 0", min=0.0, min_exclusive=True)
    assert q.description == "mass, must be > 0"
    r = parameter("m", 1.0, "kg", "mass", min=0.0)
    assert r.description == "mass"


@pytest.mark.parametrize(
    "start, kind, variability",
    [(0.0, "Real", "continuous"), (1, "Integer", "discrete"), (False, "Boolean", "discrete")],
)
def test_input_row(start, kind, variability):
    v = inp("flange_a.f", start, "N", "force")
    assert (v.name, v.attr, v.type, v.causality, v.variability) == (
        "flange_a.f",
        "flange_a_f",
        kind,
        "input",
        variability,
    )
    assert (v.start, v.unit, v.description) == (start, "N", "force")
    assert v.initial is None and v.min is None and v.max is None and v.depends == ()
    assert v.derivative is False


def test_output_row():
    v = out("s", "m", "position")
    assert (v.type, v.causality, v.variability, v.initial, v.start) == (
        "Real",
        "output",
        "continuous",
        "calculated",
        None,
    )
    assert v.description == "position" and v.depends == () and v.derivative is False
    assert v.unit == "m" and v.min is None


def test_output_with_start_depends_and_derivative():
    v = out("s", "m", "position", depends=["f"], start=0.0, derivative=True)
    assert v.initial == "exact" and v.start == 0.0  # a start value 0.0 still makes it exact
    assert v.depends == ("f",) and v.derivative is True
    assert v.description == "position (first derivative available)"
    n = out("n", "1", "count", kind="Integer")
    assert (n.type, n.variability, n.initial) == ("Integer", "discrete", "calculated")
    b = out("stuck", "1", "stuck", kind="Boolean", start=False)
    assert (b.type, b.variability, b.initial, b.start) == ("Boolean", "discrete", "exact", False)


@pytest.mark.parametrize(
    "value, text",
    [
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (-2, "-2"),
        (0, "0"),
        (2.5, "2.5"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1e-300, "1e-300"),
        (np.float64(2.5), "2.5"),  # a number computed with numpy, written as a plain number
    ],
)
def test_fmt_writes_xml_values(value, text):
    assert fmt(value) == text


@pytest.mark.parametrize(
    "kind, text",
    [
        ("Integer", "an Integer"),
        ("Enumeration", "an Enumeration"),
        ("Output", "an Output"),
        ("Real", "a Real"),
        ("Boolean", "a Boolean"),
        ("String", "a String"),
    ],
)
def test_article(kind, text):
    assert article(kind) == text
