"""Every answer an importer may give to the FMI 3.0 intermediate-update callback of a contact
FMU, and what fmi3DoStep then reports (fmi3_status_shim.c).

FMI 3.0: the importer may set ``earlyReturnRequested`` and an ``earlyReturnTime`` with
currentCommunicationPoint <= earlyReturnTime <= currentCommunicationPoint + communicationStepSize;
"if the earlyReturnTime is greater than the current intermediateUpdateTime, the FMU may compute up
to earlyReturnTime"; ``earlyReturn`` "signals to the importer that the FMU returns at t_i+1 <
t_i + communicationStepSize". So ``earlyReturn`` is true exactly when ``lastSuccessfulTime`` is
before the step's end, whichever time the importer asked for.

The case, EndStop rigid (mode 1) with restitution ci = 0.5, the mass m1 = 1 kg at ctr1 leaving
dx = 0 at 1 m/s, stops at l1 = l2 = 0.25 m: impacts at 0.25 s (dv 1 -> -0.5) and 1.25 s
(dv -0.5 -> 0.25); between them dx = 0.25 - 0.5*(t - 0.25) m."""

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

START = {"mode": 1, "kind": 3, "ci": 0.5, "l1": 0.25, "l2": 0.25, "m1": 1.0, "ctr1.v": 1.0}


def dx_closed_form(t):
    """EndStop's dx [m] of the case, between 0 and 3.25 s."""
    if t <= 0.25:
        return t
    if t <= 1.25:
        return 0.25 - 0.5 * (t - 0.25)
    return -0.25 + 0.25 * (t - 1.25)


@pytest.fixture
def endstop3(fmu3_dir, tmp_path):
    """A function (answer) -> (the FMI 3.0 EndStop initialized with early return allowed and an
    intermediate-update callback that gives `answer(time)` = (earlyReturnRequested,
    earlyReturnTime), the list of (intermediateUpdateTime, canReturnEarly) offered)."""
    path = str(fmu3_dir / "EndStop.fmu")
    md = read_model_description(path)
    made = []

    def make(answer):
        offered = []

        def update(env, time, set_requested, get_allowed, finished, can_return, requested, when):
            offered.append((time, bool(can_return)))
            requested[0], when[0] = answer(time)

        fmu = FMU3Slave(
            guid=md.guid,
            unzipDirectory=extract(path, unzipdir=str(tmp_path / f"EndStop{len(made)}")),
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName="endstop3",
        )
        fmu.instantiate(earlyReturnAllowed=True, intermediateUpdate=update)
        fmu.vr = {v.name: v.valueReference for v in md.modelVariables}
        types = {v.name: v.type for v in md.modelVariables}
        fmu.enterInitializationMode(startTime=0.0)
        for key, value in START.items():
            if types[key] == "Int32":
                fmu.setInt32([fmu.vr[key]], [int(value)])
            else:
                fmu.setFloat64([fmu.vr[key]], [float(value)])
        fmu.exitInitializationMode()
        made.append(fmu)
        return fmu, offered

    yield make
    for fmu in made:
        fmu.terminate()
        fmu.freeInstance()


# (name, answer(intermediateUpdateTime) -> (earlyReturnRequested, earlyReturnTime) for a step
# 0 -> 1 s, where the step returns, earlyReturn)
ANSWERS = [
    ("at the event", lambda t: (True, t), 0.25, True),
    ("later than the event", lambda t: (True, 0.6), 0.6, True),
    ("before the event", lambda t: (True, 0.1), 0.25, True),
    ("at the step's start", lambda t: (True, 0.0), 0.25, True),
    ("at the step's end", lambda t: (True, 1.0), 1.0, False),
    ("declined", lambda t: (False, t), 1.0, False),
    ("declined, a time given", lambda t: (False, 0.6), 1.0, False),
]


@pytest.mark.parametrize(
    "answer, returns_at, early", [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS]
)
def test_each_answer_to_the_intermediate_update(endstop3, answer, returns_at, early):
    """The step 0 -> 1 s offers the impact at 0.25 s once (canReturnEarly); it returns at the
    event (earlyReturnTime at it, or before it: the FMU cannot go back), at a later earlyReturnTime,
    or at the step's end (an earlyReturnTime there, or declined). earlyReturn is true exactly when
    it returns before 1 s; the FMU's time and state are those of the closed form there."""
    fmu, offered = endstop3(answer)
    needed, terminate, early_return, last = fmu.doStep(0.0, 1.0)
    assert [(round(t, 12), c) for t, c in offered] == [(0.25, True)]
    assert last == pytest.approx(returns_at, abs=1e-13)
    assert (early_return, needed, terminate) == (early, False, False)
    assert fmu.getFloat64([fmu.vr["time"]]) == [last]
    assert fmu.getFloat64([fmu.vr["dx"]])[0] == pytest.approx(dx_closed_form(last), abs=1e-12)
    assert fmu.getFloat64([fmu.vr["dv"]])[0] == pytest.approx(-0.5, abs=1e-12)
    # the importer goes on from there to the end of the step it asked for
    if last < 1.0:
        _, _, early_return, end = fmu.doStep(last, 1.0 - last)
        assert (early_return, end) == (False, pytest.approx(1.0, abs=1e-13))
        assert fmu.getFloat64([fmu.vr["dx"]])[0] == pytest.approx(-0.125, abs=1e-12)


def test_a_later_early_return_time_past_a_further_event_offers_that_event(endstop3):
    """earlyReturnTime 1.5 s, asked at the impact at 0.25 s: the step goes on and offers the
    impact at 1.25 s (before 1.5 s) too; asked the same there, it returns at 1.5 s with
    earlyReturn = true, both impacts taken."""
    fmu, offered = endstop3(lambda t: (True, 1.5))
    _, _, early_return, last = fmu.doStep(0.0, 2.0)
    assert [(round(t, 12), c) for t, c in offered] == [(0.25, True), (1.25, True)]
    assert early_return and last == pytest.approx(1.5, abs=1e-13)
    assert fmu.getFloat64([fmu.vr["dv"]])[0] == pytest.approx(0.25, abs=1e-12)
    assert fmu.getFloat64([fmu.vr["dx"]])[0] == pytest.approx(dx_closed_form(1.5), abs=1e-12)


def test_each_offer_may_be_answered_differently(endstop3):
    """At 0.25 s a later time (0.6 s), at 1.25 s (in the next step, 0.6 -> 1.6 s) the event
    itself: the steps return at 0.6 s and 1.25 s, earlyReturn true both times."""
    answers = iter([(True, 0.6), (True, 1.25)])
    fmu, offered = endstop3(lambda t: next(answers))
    _, _, early_return, last = fmu.doStep(0.0, 1.0)
    assert early_return and last == pytest.approx(0.6, abs=1e-13)
    _, _, early_return, last = fmu.doStep(last, 1.0)
    assert early_return and last == pytest.approx(1.25, abs=1e-13)
    assert [round(t, 12) for t, _ in offered] == [0.25, 1.25]
    assert fmu.getFloat64([fmu.vr["dv"]])[0] == pytest.approx(0.25, abs=1e-12)
