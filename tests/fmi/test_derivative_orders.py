"""Derivative orders in fmi2SetRealInputDerivatives and fmi2GetRealOutputDerivatives (the FMI 2.0
status shim, fmi2_status_shim.c), called through the C API so that every status is seen.

FMI 2.0 (section 4.2.1): "The array order contains the orders of the respective derivative
(1 means the first derivative, 0 is not allowed)", for both functions; "Calling of
fmi2GetRealOutputDerivatives(..) is allowed up to the order defined by maxOutputDerivativeOrder".
The FMUs declare maxOutputDerivativeOrder = 1 (the compliant elements, Force, Sine) and take
first input derivatives (canInterpolateInputs = true: Mass, MassWithStopAndFriction, Force:
a force linear over the step). Every other order, 0, 2 and negative ones, is refused: fmi2Error,
a message naming the function, the value reference and the order, nothing set."""

import pytest
from fmpy.fmi2 import fmi2Integer, fmi2Real, fmi2ValueReference
from fmu_helpers import Slave

OK, ERROR = 0, 3
REFUSED = [0, 2, -1, 3]


def _call(s, function, names, orders, values=None):
    """fmi2SetRealInputDerivatives (values given) or fmi2GetRealOutputDerivatives of `names` with
    `orders`: (status, the values after the call)."""
    n = len(names)
    buf = (fmi2Real * n)(*(values or [0.0] * n))
    status = s.fmu._functions[function](
        s.fmu.component,
        (fmi2ValueReference * n)(*s.vr(names)),
        n,
        (fmi2Integer * n)(*orders),
        buf,
    )
    return status, list(buf)


@pytest.fixture
def slaves(fmu_dir):
    made = []

    def make(model, **params):
        s = Slave(fmu_dir / f"{model}.fmu").init(**params)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_the_model_descriptions_declare_first_derivatives(fmu_dir):
    from fmpy import read_model_description

    cs = {
        name: read_model_description(str(fmu_dir / f"{name}.fmu")).coSimulation
        for name in ("Mass", "Spring")
    }
    assert cs["Mass"].canInterpolateInputs in (True, "true")
    assert int(cs["Spring"].maxOutputDerivativeOrder) == 1


@pytest.mark.parametrize("order", [1] + REFUSED)
def test_an_input_derivative_of_any_order_but_1_is_refused_and_not_taken(slaves, order):
    """Mass (m = 0.5 kg) pushed by F(t) = 1 + 4 t: with the first derivative set, the step of
    0.5 s gives v = (t + 2 t^2)/m = 2.0 m/s; a refused order leaves the force held, v = 1.0 m/s."""
    s = slaves("Mass", m=0.5)
    s.set(flange_a__f=-1.0)
    status, _ = _call(s, "fmi2SetRealInputDerivatives", ["flange_a.f"], [order], [-4.0])
    if order == 1:
        assert status == OK and not s.errors()
    else:
        assert status == ERROR
        assert s.errors() == [
            f"contactfmu: fmi2SetRealInputDerivatives: order {order} refused for value reference "
            f"{s.vr(['flange_a.f'])[0]}: this FMU takes first derivatives only (order 1)"
        ]
    assert s.fmu.doStep(0.0, 0.5) is None
    assert s.get("v") == pytest.approx(2.0 if order == 1 else 1.0, rel=1e-14)


def test_one_refused_order_sets_none_of_the_derivatives(slaves):
    s = slaves("Mass", m=0.5)
    s.set(flange_a__f=-1.0, flange_b__f=0.0)
    names = ["flange_a.f", "flange_b.f"]
    status, _ = _call(s, "fmi2SetRealInputDerivatives", names, [1, 0], [-4.0, -4.0])
    assert status == ERROR and len(s.errors()) == 1
    s.fmu.doStep(0.0, 0.5)
    assert s.get("v") == pytest.approx(1.0, rel=1e-14)  # the force held: no derivative taken


@pytest.mark.parametrize("order", [1] + REFUSED)
def test_an_output_derivative_of_any_order_but_1_is_refused(slaves, order):
    """Spring (c = 100 N/m), flange_b moving at 0.3 m/s: df/dt = c*v_rel = 30 N/s (order 1)."""
    s, plain = (slaves("Spring", c=100.0, s_rel0=0.0) for _ in range(2))
    for each in (s, plain):
        each.set(flange_b__s=0.1, flange_b__v=0.3)
    status, values = _call(s, "fmi2GetRealOutputDerivatives", ["f"], [order])
    if order == 1:
        assert status == OK and values == pytest.approx([30.0], rel=1e-14)
    else:
        assert status == ERROR
        assert s.errors() == [
            f"contactfmu: fmi2GetRealOutputDerivatives: order {order} refused for value "
            f"reference {s.vr(['f'])[0]}: this FMU provides first derivatives only (order 1)"
        ]
    # the instance goes on as one that was not asked
    for each in (s, plain):
        assert each.fmu.doStep(0.0, 0.1) is None
    assert s.get("f", "flange_b.f") == plain.get("f", "flange_b.f")
