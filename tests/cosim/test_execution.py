"""The run loop (cosim.execution) and System.simulate's keywords: recording times, the span, driven
inputs (manipulators), the choice of the algorithm and its parameters."""

import numpy as np
import pytest
from cosim_systems import oscillator

from contactfmu.cosim import CosimError


def test_output_grid_and_csv(fmu_dir, tmp_path):
    res = oscillator(fmu_dir).simulate(
        stop_time=0.1, step=1e-3, output_interval=1e-2, outputs=["mass.s"]
    )
    assert np.allclose(res.time, np.linspace(0, 0.1, 11), atol=1e-12)
    path = res.to_csv(tmp_path / "out.csv")
    lines = path.read_text().splitlines()
    assert lines[0] == '"time","mass.s"' and len(lines) == 12
    assert res.data["mass.s"][0] == 3.5


def test_a_step_longer_than_the_span_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError, match=r"communication step 2.0 s is longer than the simulated span 1.0 s"
    ):
        s.simulate(stop_time=1.0, step=2.0)
    res = s.simulate(
        stop_time=1.0, step=1.0, outputs=["mass.s"]
    )  # one step over the span is allowed
    assert list(res.time) == [0.0, 1.0]


def test_driving_a_connected_input_is_refused(fmu_dir):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError,
        match=r"inputs\['mass.flange_a.f'\]: mass.flange_a.f is already connected "
        r"\(set from the forces of spring\)",
    ):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"mass.flange_a.f": lambda t: 1.0})
    with pytest.raises(
        CosimError, match=r"spring.flange_b.s is already connected \(set from the motion of mass\)"
    ):
        s.simulate(stop_time=0.1, step=1e-3, inputs={"spring.flange_b.s": lambda t: 1.0})
    # an unconnected input is driven: a constant 10 N pull on flange_b (the body receives -10 N)
    # moves the equilibrium from 3 to 3 - 0.1 m
    res = s.simulate(
        stop_time=0.1, step=1e-3, outputs=["mass.a"], inputs={"mass.flange_b.f": lambda t: 10.0}
    )
    assert res["mass.a"][0] == pytest.approx(-100.0 * 0.5 - 10.0)


@pytest.mark.parametrize("scheme", ["gauss-seidel", "jacobi", "implicit"])
def test_a_tolerance_given_to_a_fixed_step_scheme_is_refused(fmu_dir, scheme):
    s = oscillator(fmu_dir)
    with pytest.raises(
        CosimError,
        match=rf"rtol=1e-06 given with scheme '{scheme}': a fixed-step scheme takes no "
        rf"tolerance; rtol and atol are for scheme='adaptive'",
    ):
        s.simulate(0.1, 1e-3, scheme=scheme, rtol=1e-6)
    with pytest.raises(CosimError, match=r"atol=1e-08 given with scheme 'gauss-seidel'"):
        s.simulate(0.1, 1e-3, atol=1e-8)  # a step alone: gauss-seidel


def test_parameter_objects_check_their_values():
    import dataclasses

    from contactfmu.cosim.algorithms import Adaptive, FixedStep

    with pytest.raises(CosimError, match=r"communication step 0 s must be > 0"):
        FixedStep(0)
    with pytest.raises(CosimError, match=r"atol = -1.0: the tolerance must be finite and > 0"):
        Adaptive(atol=-1.0)
    with pytest.raises(CosimError, match=r"hmax = 0.0 s must be finite and > 0"):
        Adaptive(hmax=0.0)
    with pytest.raises(CosimError, match=r"event_window = nan s must be finite and >= 0"):
        Adaptive(event_window=float("nan"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        FixedStep(1e-3).step = 2e-3


def test_an_algorithm_object_runs_as_its_scheme_name(fmu_dir):
    from contactfmu.cosim.algorithms import Adaptive, AdaptiveAlgorithm, FixedStep, Jacobi

    s = oscillator(fmu_dir)
    a = s.simulate(0.2, 1e-2, scheme="jacobi", outputs=["mass.s"])
    b = s.simulate(0.2, scheme=Jacobi(FixedStep(1e-2)), outputs=["mass.s"])
    assert np.array_equal(a.values, b.values) and a.steps is None and b.steps is None
    c = s.simulate(0.2, rtol=1e-6, outputs=["mass.s"])
    d = s.simulate(0.2, scheme=AdaptiveAlgorithm(Adaptive(rtol=1e-6)), outputs=["mass.s"])
    assert np.array_equal(c.values, d.values)
    assert [(x.t, x.h, x.accepted) for x in c.steps] == [(x.t, x.h, x.accepted) for x in d.steps]
    with pytest.raises(
        CosimError, match=r"step=0.01 given beside the algorithm Jacobi: its parameter object"
    ):
        s.simulate(0.2, 1e-2, scheme=Jacobi(FixedStep(1e-2)))


# ---- the run loop with stand-ins (mutation/pytest_plugin.py UNIT_TESTS) ---------------------------


class Calls(list):
    def __call__(self, *call):
        self.append(call)


class Algo:
    """Stands for an algorithm: setup gives `times`, do_step goes to `ends` in turn."""

    derivatives = "derivatives flag"
    early_return = "early-return flag"
    observed = "observed slots"

    def __init__(self, log, times, ends, dense=False, fail_at=None):
        self.log, self.times, self.ends, self.dense, self.fail_at = (
            log,
            times,
            list(ends),
            dense,
            fail_at,
        )
        self.records = ["records"]

    def setup(self, system, start, stop, interval):
        self.log("setup", system.name, start, stop, interval)
        return self.times

    def initialize(self, run):
        self.log("initialize", run.system.name, run.plan, run.manipulate.name, run.observed)

    def start(self, t0):
        self.log("start", t0)

    def do_step(self, t, limit):
        t_next = self.ends.pop(0)
        self.log("do_step", t, limit)
        if t_next == self.fail_at:
            raise RuntimeError("step failed")
        return t_next


@pytest.fixture
def stand_ins(monkeypatch):
    from contactfmu.cosim import execution

    log = Calls()

    class System:
        name = "system"

        def plan(self, derivatives):
            log("plan", derivatives)
            return "plan"

        def instantiate(self, start, stop, early_return):
            log("instantiate", start, stop, early_return)

        def enter_initialization(self, t):
            log("enter", t)

        def exit_initialization(self, t):
            log("exit", t)

        def terminate(self, t):
            log("terminate", t)

        def free(self):
            log("free")

    class Drive:
        name = "drive"

        def __init__(self, system, inputs, plan):
            log("drive made", system.name, inputs, plan)

        def __call__(self, t):
            log("drive", t)

    class Observer:
        def __init__(self, tag):
            self.tag = tag

        def initialized(self, t0):
            log(self.tag, "initialized", t0)

        def step_complete(self, t, record):
            log(self.tag, "step", t, record)

        def finished(self):
            log(self.tag, "finished")

    class Rec(Observer):
        names = ["a.y", "b.z"]

        def __init__(self, system, outputs, grid=None):
            super().__init__("rec")
            log("recorder made", outputs, grid)

        def wanted(self):
            return "wanted outputs"

        def bind(self, offered):
            log("bind", offered)

        def table(self):
            return np.array([[0.0, 1.0, 2.0]])

        def interpolated(self):
            return "interpolated"

    monkeypatch.setattr(execution, "DrivenInputs", Drive)
    monkeypatch.setattr(execution, "Recorder", Rec)
    monkeypatch.setattr(
        execution, "ProgressBar", lambda t0, t1: (log("bar", t0, t1), Observer("bar"))[1]
    )
    monkeypatch.setattr(
        execution, "ProgressFunction", lambda f: (log("function", f), Observer("fn"))[1]
    )
    return execution.Execution, System(), log


def test_the_run_calls_in_order_and_records_at_the_recording_times(stand_ins):
    Execution, system, log = stand_ins
    algorithm = Algo(log, [0.5, 1.0], ends=[0.25, 0.5, 1.0])
    r = Execution(system, algorithm, inputs="inputs", outputs=["a.y"]).run(0.0, 1.0, 0.5)
    assert log == [
        ("setup", "system", 0.0, 1.0, 0.5),
        ("plan", "derivatives flag"),
        ("drive made", "system", "inputs", "plan"),
        ("recorder made", ["a.y"], None),  # not dense: no grid
        ("instantiate", 0.0, 1.0, "early-return flag"),
        ("drive", 0.0),
        ("enter", 0.0),
        # the outputs the recorder reads at every point, where the algorithm reads them anyway
        ("initialize", "system", "plan", "drive", "wanted outputs"),
        ("exit", 0.0),
        ("bind", "observed slots"),
        ("start", 0.0),
        ("rec", "initialized", 0.0),
        # each step up to the next recording time; recorded where it ends on it
        ("do_step", 0.0, 0.5),
        ("rec", "step", 0.25, False),
        ("do_step", 0.25, 0.5),
        ("rec", "step", 0.5, True),
        ("do_step", 0.5, 1.0),
        ("rec", "step", 1.0, True),
        ("terminate", 1.0),
        ("rec", "finished"),
        ("free",),
    ]
    assert r.names == ["time", "a.y", "b.z"] and r.values.tolist() == [[0.0, 1.0, 2.0]]
    assert r.interpolated == "interpolated" and r.steps == ["records"]


def test_a_dense_run_steps_to_the_end_and_records_every_step(stand_ins):
    Execution, system, log = stand_ins
    algorithm = Algo(log, [0.5, 1.0], ends=[0.75, 1.0], dense=True)
    Execution(system, algorithm).run(0.25, 1.5)
    assert ("recorder made", None, [0.25, 0.5, 1.0]) in log  # the grid: start and the times
    steps = [c for c in log if c[0] in ("do_step", "rec") and c[1] != "finished"]
    assert steps == [
        ("rec", "initialized", 0.25),
        ("do_step", 0.25, 1.0),  # up to the last recording time, not the stop time
        ("rec", "step", 0.75, True),
        ("do_step", 0.75, 1.0),
        ("rec", "step", 1.0, True),
    ]
    assert ("terminate", 1.0) in log


def test_without_recording_times_every_step_is_recorded_up_to_the_stop(stand_ins):
    Execution, system, log = stand_ins
    algorithm = Algo(log, None, ends=[0.4, 0.9, 1.0], dense=True)
    Execution(system, algorithm).run(0.0, 1.0)
    assert ("recorder made", None, None) in log  # no times: no grid, even for a dense algorithm
    steps = [c for c in log if c[0] == "do_step" or c[:2] == ("rec", "step")]
    assert steps == [
        ("do_step", 0.0, 1.0),
        ("rec", "step", 0.4, True),
        ("do_step", 0.4, 1.0),
        ("rec", "step", 0.9, True),
        ("do_step", 0.9, 1.0),
        ("rec", "step", 1.0, True),
    ]


def test_progress_observers_follow_the_recorder(stand_ins):
    Execution, system, log = stand_ins
    Execution(system, Algo(log, [1.0], ends=[1.0]), progress=True).run(0.0, 1.0)
    assert ("bar", 0.0, 1.0) in log
    assert [c for c in log if c[1:2] == ("step",)] == [
        ("rec", "step", 1.0, True),
        ("bar", "step", 1.0, True),
    ]
    assert log[-3:] == [("rec", "finished"), ("bar", "finished"), ("free",)]
    del log[:]
    Execution(system, Algo(log, [1.0], ends=[1.0]), progress=print).run(0.0, 1.0)
    assert ("function", print) in log and ("fn", "initialized", 0.0) in log
    del log[:]
    Execution(system, Algo(log, [1.0], ends=[1.0]), progress=False).run(0.0, 1.0)
    assert not [c for c in log if c[0] in ("bar", "function", "fn")]


def test_a_failed_step_still_ends_the_observers_and_frees_the_fmus(stand_ins):
    Execution, system, log = stand_ins
    algorithm = Algo(log, [1.0], ends=[0.5, 1.0], fail_at=1.0)
    with pytest.raises(RuntimeError, match="step failed"):
        Execution(system, algorithm, progress=True).run(0.0, 1.0)
    assert log[-3:] == [("rec", "finished"), ("bar", "finished"), ("free",)]
    assert not [c for c in log if c[0] == "terminate"]


@pytest.mark.parametrize("start, stop", [(1.0, 1.0), (2.0, 1.0), (0.0, float("nan"))])
def test_the_span_must_be_positive(stand_ins, start, stop):
    Execution, system, log = stand_ins
    with pytest.raises(CosimError) as e:
        Execution(system, Algo(log, None, [])).run(start, stop)
    assert str(e.value) == f"stop_time {stop!r} must be greater than start_time {start!r}"
    assert log == []


@pytest.mark.parametrize("kw", [{"step": 1e-3}, {}], ids=["fixed", "adaptive"])
def test_a_run_that_fails_keeps_what_it_recorded(fmu_dir, kw):
    # a driven input that turns NaN at 0.5 s stops the run there; the exception names the input
    # and the time, and carries the rows recorded before it, those of the same run without the NaN
    # (adaptive: the rows interpolated in its last steps, where the curve ends, to 1e-3 m)
    s = oscillator(fmu_dir)
    with pytest.raises(CosimError, match=r"gave nan at t = 0\.5.*\n.*the run stopped after") as e:
        s.simulate(
            stop_time=1.0,
            output_interval=0.01,
            outputs=["mass.s"],
            inputs={"mass.flange_b.f": lambda t: float("nan") if t > 0.5 else 0.0},
            **kw,
        )
    partial = e.value.result
    assert 0.48 <= partial.time[-1] <= 0.5 and partial.time[0] == 0.0
    whole = s.simulate(
        stop_time=1.0,
        output_interval=0.01,
        outputs=["mass.s"],
        inputs={"mass.flange_b.f": lambda t: 0.0},
        **kw,
    )
    n = len(partial.time)
    assert np.array_equal(partial.time, whole.time[:n])
    assert np.array_equal(partial["mass.s"][: n - 3], whole["mass.s"][: n - 3])
    assert np.allclose(partial["mass.s"], whole["mass.s"][:n], rtol=0, atol=1e-3)
