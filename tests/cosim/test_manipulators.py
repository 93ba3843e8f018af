"""The manipulators (cosim.manipulators): which inputs the exchange of a plan sets, and DrivenInputs,
which checks the driven inputs at once (only unconnected Real inputs, functions of time) and sets
each to its function's value (finite, or the run stops naming it). Plain stand-ins for the system,
its instances and the plan, no FMU: the messages and the calls are hand-written."""

from types import SimpleNamespace as NS

import pytest

from contactfmu.cosim.errors import CosimError
from contactfmu.cosim.manipulators import DrivenInputs, connected_inputs


class Slave:
    def __init__(self):
        self.set = []

    def setReal(self, vrs, values):  # noqa: N802 (fmpy's name)
        self.set.append((list(vrs), list(values)))


class Inst:
    def __init__(self, name, variables):
        self.name = name
        self.variables = {
            n: NS(name=n, valueReference=vr, causality=c, type=t)
            for n, (vr, c, t) in variables.items()
        }
        self.slave = Slave()
        self.calls = []

    def var(self, name):
        return self.variables[name]

    def call(self, what, fn, t=None):
        self.calls.append((what, t))
        return fn()


class System:
    def __init__(self, *instances):
        self.instances = {i.name: i for i in instances}

    def resolve(self, ref):
        inst, _, rest = ref.partition(".")
        return self.instances[inst], rest


def parts():
    mass = Inst(
        "mass",
        {
            "flange_a.s": (0, "input", "Real"),
            "flange_a.v": (1, "input", "Real"),
            "flange_a.f": (2, "input", "Real"),
            "f_ext": (3, "input", "Real"),
            "flag": (4, "input", "Boolean"),
            "n": (5, "input", "Integer"),
            "s": (6, "output", "Real"),
            "m": (7, "parameter", "Real"),
            "g": (8, "input", "Real"),
        },
    )
    spring = Inst("spring", {"u": (10, "input", "Real"), "a_in": (11, "input", "Real")})
    damper = Inst("damper", {"y": (20, "output", "Real")})
    return mass, spring, damper


def plan_of(mass, spring, damper, with_links=True):
    if not with_links:
        return NS(motion=[], accel=[], forces=[], signals=[])
    return NS(
        motion=[NS(source=damper, target=mass, target_s=0, target_v=1)],
        accel=[NS(source=mass, target=spring, target_a=11)],
        forces=[NS(body=mass, f=2, sources=[(spring, 0), (damper, 1)])],
        signals=[NS(source=damper, output=damper.var("y"), target=spring, input=spring.var("u"))],
    )


def test_connected_inputs_names_what_sets_each_input():
    mass, spring, damper = parts()
    assert connected_inputs(plan_of(mass, spring, damper)) == {
        ("mass", 0): "the motion of damper",
        ("mass", 1): "the motion of damper",
        ("spring", 11): "the motion of mass",
        ("mass", 2): "the forces of spring, damper",
        ("spring", 10): "damper.y",
    }
    assert connected_inputs(plan_of(mass, spring, damper, with_links=False)) == {}


def test_driven_inputs_set_each_function_of_time_in_order():
    mass, spring, damper = parts()
    seen = []
    drive = DrivenInputs(
        System(mass, spring, damper),
        {"mass.f_ext": lambda t: seen.append(t) or 2 * t, "mass.g": lambda t: 7},
        plan_of(mass, spring, damper),
    )
    assert [(i.name, vr, ref) for i, vr, _, ref in drive.plan] == [
        ("mass", 3, "mass.f_ext"),
        ("mass", 8, "mass.g"),
    ]
    drive(0.25)
    drive(1.5)
    assert seen == [0.25, 1.5]
    assert mass.slave.set == [([3], [0.5]), ([8], [7.0]), ([3], [3.0]), ([8], [7.0])]
    assert all(type(v[0]) is float for _, v in mass.slave.set)  # int 7 set as a float
    assert mass.calls == [("fmi2SetReal", 0.25)] * 2 + [("fmi2SetReal", 1.5)] * 2
    assert spring.slave.set == [] and spring.calls == []


@pytest.mark.parametrize("inputs", [None, {}])
def test_no_driven_inputs_set_nothing(inputs):
    mass, spring, damper = parts()
    drive = DrivenInputs(System(mass, spring, damper), inputs, plan_of(mass, spring, damper))
    assert drive.plan == []
    drive(1.0)
    assert mass.calls == [] and mass.slave.set == []


@pytest.mark.parametrize(
    "ref, message",
    [
        (
            "mass.flag",
            "inputs['mass.flag']: mass.flag is a Boolean input; only Real inputs can be driven",
        ),
        ("mass.n", "inputs['mass.n']: mass.n is a Integer input; only Real inputs can be driven"),
        ("mass.s", "inputs['mass.s']: mass.s is a Real output; only Real inputs can be driven"),
        ("mass.m", "inputs['mass.m']: mass.m is a Real parameter; only Real inputs can be driven"),
        (
            "mass.flange_a.f",
            "inputs['mass.flange_a.f']: mass.flange_a.f is already connected (set from the forces "
            "of spring, damper); only unconnected inputs can be driven",
        ),
        (
            "mass.flange_a.v",
            "inputs['mass.flange_a.v']: mass.flange_a.v is already connected (set from the motion "
            "of damper); only unconnected inputs can be driven",
        ),
        (
            "spring.u",
            "inputs['spring.u']: spring.u is already connected (set from damper.y); only "
            "unconnected inputs can be driven",
        ),
    ],
)
def test_driven_inputs_refuse_what_cannot_be_driven(ref, message):
    mass, spring, damper = parts()
    with pytest.raises(CosimError) as err:
        DrivenInputs(
            System(mass, spring, damper), {ref: lambda t: 0.0}, plan_of(mass, spring, damper)
        )
    assert str(err.value) == message


def test_driven_inputs_refuse_a_value_instead_of_a_function():
    mass, spring, damper = parts()
    with pytest.raises(CosimError) as err:
        DrivenInputs(System(mass, spring, damper), {"mass.g": 9.81}, plan_of(mass, spring, damper))
    assert str(err.value) == "inputs['mass.g'] must be a function of time, got float"


def test_an_input_of_another_instance_with_a_connected_value_reference_can_be_driven():
    mass, spring, damper = parts()  # spring's vr 10 is connected, mass has no vr 10; mass's 2 is
    spring.variables["free"] = NS(name="free", valueReference=2, causality="input", type="Real")
    drive = DrivenInputs(
        System(mass, spring, damper), {"spring.free": lambda t: t}, plan_of(mass, spring, damper)
    )
    drive(2.0)
    assert spring.slave.set == [([2], [2.0])]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_value_stops_the_run_naming_the_input_and_time(bad):
    mass, spring, damper = parts()
    drive = DrivenInputs(
        System(mass, spring, damper),
        {"mass.g": lambda t: 1.0, "mass.f_ext": lambda t: bad if t > 1 else 0.0},
        plan_of(mass, spring, damper),
    )
    drive(1.0)
    with pytest.raises(CosimError) as err:
        drive(1.0000000001)
    assert str(err.value) == f"inputs['mass.f_ext'] gave {bad!r} at t = 1 s"
    with pytest.raises(CosimError) as err:
        drive(2.123456789123)
    assert str(err.value) == f"inputs['mass.f_ext'] gave {bad!r} at t = 2.12345679 s"
    # the input before it was set, the bad value never
    assert mass.slave.set == [([8], [1.0]), ([3], [0.0]), ([8], [1.0]), ([8], [1.0])]
