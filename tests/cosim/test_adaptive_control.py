"""The adaptive master's error estimate and step-size controller (cosim.algorithms.adaptive) against
their formulas, with hand-computed values and no FMU:

    err = max_i |y_half_i - y_full_i| / (atol + rtol*max(|y_half_i|, |y_full_i|)) / (2^p - 1)
    next step = H*min(4, max(0.2, 0.9*err^(-1/(p + 1))))   (a rejected step: H*max(0.2, ...))

p = 2 for the explicit and the composite implicit steps, 1 for backward Euler on the interface.
The attempt itself (_save, _advance, _measure, ...) is replaced by stubs that return chosen
motions, so do_step runs only the controller."""

import math
import warnings
from types import SimpleNamespace

import pytest

from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm
from contactfmu.cosim.algorithms.extrapolation import ForceExtrapolation
from contactfmu.cosim.errors import CosimError, ToleranceWarning
from contactfmu.cosim.instances import Instance


@pytest.fixture(autouse=True)
def local_tolerance_as_given(monkeypatch):
    """The controller's formulas at a local tolerance equal to the tuning's rtol and atol (as at
    the default rtol); how the local tolerance follows rtol is tested on its own
    (test_the_local_tolerance_makes_the_error_proportional_to_rtol)."""
    monkeypatch.setattr(Adaptive, "local", property(lambda self: (self.rtol, self.atol)))


def test_the_local_tolerance_makes_the_error_proportional_to_rtol(monkeypatch):
    """A method of order 2 under a local tolerance tol leaves a global error of tol^(2/3): the local
    tolerance tol = rtol*(rtol/1e-4)^(1/2) makes that error proportional to rtol; rtol and atol
    are scaled alike, and the default rtol is its own local tolerance."""
    monkeypatch.undo()
    assert Adaptive().local == (1e-4, 1e-6)
    rtol, atol = Adaptive(rtol=1e-6, atol=1e-8).local
    assert rtol == pytest.approx(1e-7, rel=1e-12) and atol == pytest.approx(1e-9, rel=1e-12)
    rtol, atol = Adaptive(rtol=1e-2, atol=1e-3).local
    assert rtol == pytest.approx(1e-1, rel=1e-12) and atol == pytest.approx(1e-2, rel=1e-12)
    for r in (1e-3, 1e-5, 1e-6, 1e-8):
        # the global error tol^(2/3) of the local tolerance, relative to the default's
        assert (Adaptive(rtol=r).local[0] / 1e-4) ** (2.0 / 3.0) == pytest.approx(r / 1e-4)


def test_error_estimate_is_the_weighted_step_doubling_difference_over_2p_minus_1():
    algo = AdaptiveAlgorithm(Adaptive(rtol=1e-3, atol=1e-6))
    # component 1: |3e-4| / (1e-6 + 1e-3*1.0003) = 0.2996... ; component 2: |-2e-3| /
    # (1e-6 + 1e-3*4.0) = 0.49988 (the larger weight taken from max(|a|, |b|) = 4.0)
    y_half, y_full = [1.0003, -4.0], [1.0, -3.998]
    worst = 2e-3 / (1e-6 + 1e-3 * 4.0)
    assert worst == pytest.approx(0.49987503124219)
    assert algo._error(y_half, y_full, 2) == pytest.approx(worst / 3.0, rel=1e-15)
    assert algo._error(y_half, y_full, 1) == pytest.approx(worst, rel=1e-15)
    # hand-computed numbers, not the formula again: 0.166625 and 0.49988
    assert algo._error(y_half, y_full, 2) == pytest.approx(0.1666250104140633, rel=1e-12)
    # atol alone weighs a motion at rest
    assert algo._error([2e-6], [0.0], 1) == pytest.approx(2e-6 / (1e-6 + 2e-9), rel=1e-15)
    assert algo._error([0.0], [0.0], 2) == 0.0


class _Stubbed(AdaptiveAlgorithm):
    """do_step with the attempt replaced: each attempt measures y_full, then (step doubling) y_mid
    and y_half, from the queue `errors` of scaled differences (y_half - y_full = e*(atol + rtol))."""

    def __init__(self, params, errors, stiff=False, composite=False, h=0.1):
        super().__init__(params)
        self.errors = list(errors)
        self.is_stiff, self.composite = stiff, composite
        self.records, self.bracket, self.calls = [], None, 0
        self.h, self.hmax, self.hmin, self.window = h, 10.0, 1e-14, 1e-12
        self.motion, self.d, self.y = [object()], (), [1.0]
        self.measured, self.lights, self.saves = [], [], 0

    def _save(self):
        self.saves += 1
        return []

    def _restore(self, states, keep=()):
        pass

    def _free(self, states):
        pass

    def _stiff(self, t, h):
        return self.is_stiff

    def _advance(self, t, h, implicit):
        self.calls += 1

    def _measure(self, t, light=False):
        # full step, then the two half steps: y_full = 1, y_mid = 1, y_half = 1 + e*(atol + rtol*...)
        self.lights.append(light)
        k = len(self.measured) % 3
        if k == 2:
            e = self.errors.pop(0)
            p = self.params
            # |a - b| / (atol + rtol*max(|a|, |b|)) = e for a = 1 + delta, b = 1
            delta = e * (p.atol + p.rtol) / (1.0 - e * p.rtol)
            y = 1.0 + delta
        else:
            y = 1.0
        self.measured.append(y)
        return [y], ()


PARAMS = Adaptive(rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "stiff, composite, order",
    [(False, False, 2), (True, True, 2), (True, False, 1)],
    ids=["explicit", "composite", "backward-euler"],
)
@pytest.mark.parametrize("scaled", [0.3, 0.9, 1e-4])
def test_accepted_step_grows_by_0_9_err_to_minus_1_over_p_plus_1(stiff, composite, order, scaled):
    algo = _Stubbed(PARAMS, [scaled], stiff, composite, h=0.1)
    assert algo.do_step(0.0, 1.0) == pytest.approx(0.1)
    (record,) = algo.records
    err = scaled / (2.0**order - 1.0)
    assert record.accepted and record.implicit is stiff
    assert record.error == pytest.approx(err, rel=1e-9)
    factor = min(4.0, max(0.2, 0.9 * err ** (-1.0 / (order + 1))))
    assert algo.h == pytest.approx(0.1 * factor, rel=1e-9)


def test_the_step_factors_by_hand():
    """Hand values: p = 2, err = 0.9/3 = 0.3: 0.9*0.3^(-1/3) = 1.344421; p = 1, err = 0.3:
    0.9*0.3^(-1/2) = 1.643168; err = 1e-4/3 (p = 2): the growth limit 4; a zero error: 4."""
    for stiff, composite, scaled, factor in (
        (False, False, 0.9, 1.344421),
        (True, False, 0.3, 1.643168),
        (False, False, 1e-4, 4.0),
        (False, False, 0.0, 4.0),
    ):
        algo = _Stubbed(PARAMS, [scaled], stiff, composite, h=0.1)
        algo.do_step(0.0, 1.0)
        assert algo.h == pytest.approx(0.1 * factor, rel=1e-6), (stiff, scaled)


@pytest.mark.parametrize(
    "stiff, composite, order", [(False, False, 2), (True, False, 1)], ids=["p2", "p1"]
)
@pytest.mark.parametrize("scaled", [6.0, 500.0])
def test_rejected_step_shrinks_by_0_9_err_to_minus_1_over_p_plus_1_at_least_0_2(
    stiff, composite, order, scaled
):
    """The first attempt fails (err > 1), the retry with the shrunk step is accepted (err 0)."""
    algo = _Stubbed(PARAMS, [scaled, 0.0], stiff, composite, h=0.1)
    err = scaled / (2.0**order - 1.0)
    shrink = max(0.2, 0.9 * err ** (-1.0 / (order + 1)))
    end = algo.do_step(0.0, 1.0)
    first, second = algo.records
    assert not first.accepted and first.reason == "error"
    assert first.error == pytest.approx(err, rel=1e-9)
    assert second.accepted and second.h == pytest.approx(0.1 * shrink, rel=1e-9)
    assert end == pytest.approx(0.1 * shrink, rel=1e-9)
    assert algo.h == pytest.approx(0.1 * shrink * 4.0, rel=1e-9)  # then err 0: the growth limit


def test_rejected_step_factors_by_hand():
    """err = 6/3 = 2 (p = 2): 0.9*2^(-1/3) = 0.714330; err = 6 (p = 1): 0.9*6^(-1/2) = 0.3674235;
    err = 500/3 (p = 2, 0.9*err^(-1/3) = 0.1635) and 500 (p = 1, 0.0402): the limit 0.2."""
    for stiff, scaled, shrink in (
        (False, 6.0, 0.714330),
        (True, 6.0, 0.3674235),
        (False, 500.0, 0.2),
        (True, 500.0, 0.2),
    ):
        algo = _Stubbed(PARAMS, [scaled, 0.0], stiff, False, h=0.1)
        algo.do_step(0.0, 1.0)
        assert algo.records[1].h == pytest.approx(0.1 * shrink, rel=1e-6)


def test_hand_values_are_the_formula():
    assert 0.9 * 0.3 ** (-1 / 3) == pytest.approx(1.344421, rel=1e-6)
    assert 0.9 * 0.3 ** (-1 / 2) == pytest.approx(1.643168, rel=1e-6)
    assert 0.9 * 2.0 ** (-1 / 3) == pytest.approx(0.714330, rel=1e-6)
    assert 0.9 * 6.0 ** (-1 / 2) == pytest.approx(0.3674235, rel=1e-6)
    assert 0.9 * (500 / 3) ** (-1 / 3) == pytest.approx(0.163541, rel=1e-5)
    assert 0.9 * 500 ** (-1 / 2) == pytest.approx(0.040249, rel=1e-4)
    assert math.isclose(2e-3 / (1e-6 + 4e-3) / 3, 0.1666250104140633, rel_tol=1e-12)


# ---- the force extrapolation (module docstring, item 3): its formula and the controller with it ----


def _estimate(m, rates, order=2, still=()):
    """A ForceExtrapolation of one body of inertia m whose y entries are s (0) and v (1), with force
    buffers [f] and rate buffers [r] (rates: first-order hold; else none)."""
    forces, rate = [0.0], [0.0]
    est = ForceExtrapolation([], list(still), order)
    factors = (3.0, 12.0) if order == 2 else (2.0, 6.0)
    est.slots = [(m, [(forces, 0)], [(rate, 0)] if rates else [], [0], [1], factors)]
    return est, forces, rate


def test_force_extrapolation_by_hand():
    """m = 2 kg given F = 1 N and dF/dt = 0.5 N/s at t, meeting 1.8 N at t + 0.1 s: dF = 1.8 - 1 -
    0.05 = 0.75 N; first-order hold: dv = dF*h/(3m) = 0.0125 m/s, ds = dF*h^2/(12m) = 3.125e-4 m;
    weighted by atol + rtol*|y| (1e-3 + 1e-3*|y|) at s = 0.5 m, v = -2 m/s: 0.2083333 and
    4.1666667; zero-order hold (no rate: dF = 0.8 N): dv = dF*h/(2m) = 0.02 m/s, ds = dF*h^2/(6m) =
    6.6667e-4 m, weighted 6.6667."""
    est, forces, rate = _estimate(2.0, True)
    forces[0], rate[0] = 1.0, 0.5
    est.start()
    forces[0] = 1.8
    y = [0.5, -2.0]
    err = est.error(0.1, y, y, rtol=1e-3, atol=1e-3)
    assert err == pytest.approx(0.0125 / (1e-3 + 2e-3), rel=1e-12)
    assert err == pytest.approx(4.1666667, rel=1e-7)
    # the position's weight alone (a velocity at rest, where dv/(atol) wins anyway): ds part
    assert 3.125e-4 / (1e-3 + 0.5e-3) == pytest.approx(0.2083333, rel=1e-6)
    zoh, forces, _ = _estimate(2.0, False, order=1)
    forces[0] = 1.0
    zoh.start()
    forces[0] = 1.8
    assert zoh.error(0.1, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(0.02 / 3e-3, rel=1e-12)
    assert 0.8 * 0.01 / 12.0 == pytest.approx(6.6667e-4, rel=1e-4)


def test_force_extrapolation_as_a_jump_by_hand():
    """A step across a discrete change (jump=True): the deviation dF held over the whole step, as a
    jump at its start. m = 2 kg, F = 1 N and dF/dt = 0.5 N/s at t, 1.8 N at t + 0.1 s: dF = 0.75 N,
    dv = dF*h/m = 0.0375 m/s (weighted at v = -2 m/s: 12.5), ds = dF*h^2/(2m) = 1.875e-3 m (at
    s = 0.5 m: 1.25); with either hold."""
    y = [0.5, -2.0]
    for rates, order in ((True, 2), (False, 1)):
        est, forces, rate = _estimate(2.0, rates, order=order)
        forces[0], rate[0] = 1.0, 0.5 if rates else 0.0
        est.start()
        forces[0] = 1.8
        df = 0.75 if rates else 0.8
        err = est.error(0.1, y, y, rtol=1e-3, atol=1e-3, jump=True)
        assert err == pytest.approx(df * 0.1 / 2.0 / 3e-3, rel=1e-12)
        assert est.worst_at == 1
    y = [0.5, 1e6]  # the position decides: ds = 1.875e-3 m over 1.5e-3
    assert est.error(0.1, y, y, rtol=1e-3, atol=1e-3, jump=True) == pytest.approx(
        0.8 * 0.01 / 4.0 / 1.5e-3, rel=1e-12
    )


def test_force_extrapolation_weighs_the_position_where_it_dominates():
    """A large velocity makes dv's weight large: then ds/(atol + rtol*|s|) decides. m = 1, h = 1,
    F 0 -> 12 N (no rate given: first-order hold with rate 0): dF = 12, dv = 4 m/s, ds = 1 m; at
    v = 1e6 m/s (weight 1e3 + 1e-3) and s = 0 (weight 1e-3): ds wins, 1/1e-3 = 1000."""
    est, forces, rate = _estimate(1.0, True)
    est.start()
    forces[0] = 12.0
    y = [0.0, 1e6]
    assert est.error(1.0, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(1000.0, rel=1e-12)


def test_force_extrapolation_gives_no_estimate_when_a_flange_without_inertia_moves():
    """A flange without a declared inertia is taken to be fixed; if it moved over the step the
    estimate does not apply (None: the step is estimated by step doubling)."""
    est, forces, rate = _estimate(1.0, True, still=[2])
    est.start()
    assert est.error(0.1, [0.0, 0.0, 3.0], [0.0, 0.0, 3.0], 1e-3, 1e-3) == 0.0
    assert est.error(0.1, [0.0, 0.0, 3.0], [0.0, 0.0, 3.0 + 1e-15], 1e-3, 1e-3) is None


class _Extrapolated(_Stubbed):
    """_Stubbed with a force extrapolation that returns the queued errors (one per attempt)."""

    def __init__(self, errors, order=2, h=0.1):
        super().__init__(PARAMS, [], h=h)
        outer = self

        class Stub:
            def __init__(self):
                self.order, self.starts = order, 0

            def start(self):
                self.starts += 1

            def error(self, h, y0, y, rtol, atol, jump=False):
                outer.jumps.append(jump)
                return outer.queue.pop(0)

        self.queue, self.jumps = list(errors), []
        self.extrapolation = Stub()

    def _measure(self, t, light=False):
        self.lights.append(light)
        self.measured.append(1.0)
        return [1.0], ()


@pytest.mark.parametrize("order", [1, 2])
def test_an_extrapolated_step_is_one_attempt_kept_as_it_is(order):
    """err 0.3 from the force extrapolation: the step is accepted after one fmi2DoStep per FMU and
    one measurement (no halves), and grows by 0.9*err^(-1/(p + 1)) with the estimate's order."""
    algo = _Extrapolated([0.3], order=order)
    assert algo.do_step(0.0, 1.0) == pytest.approx(0.1)
    (record,) = algo.records
    assert record.accepted and record.calls == 1 and record.error == 0.3
    assert len(algo.measured) == 1 and algo.extrapolation.starts == 1
    assert algo.h == pytest.approx(0.1 * 0.9 * 0.3 ** (-1.0 / (order + 1)), rel=1e-12)


def test_an_extrapolated_step_above_the_tolerance_is_retried_smaller():
    """err 6 (p = 2): rejected, retried at 0.1*max(0.2, 0.9*6^(-1/3)) = 0.0495 s, accepted (err 0)."""
    algo = _Extrapolated([6.0, 0.0])
    end = algo.do_step(0.0, 1.0)
    first, second = algo.records
    assert not first.accepted and first.reason == "error" and first.calls == 1
    assert second.accepted and second.h == pytest.approx(0.1 * 0.9 * 6.0 ** (-1 / 3), rel=1e-12)
    assert end == pytest.approx(0.0495289, rel=1e-6)
    assert algo.extrapolation.starts == 1  # the forces at t, taken once per step


@pytest.mark.parametrize(
    "stiff, middle", [(False, False), (True, True)], ids=["explicit", "implicit"]
)
def test_the_state_is_saved_once_per_step_and_undone_measurements_are_light(stiff, middle):
    """A doubled step rejected (err 6/3), then accepted (err 0.5/3): the FMUs' state at t is saved once
    for both attempts (each attempt is undone to it); per attempt, the measurement at the full
    step's end is undone (light), the one at the middle light where an implicit half step makes
    its own exchange there (an explicit one keeps the middle's exchange), the last one full."""
    algo = _Stubbed(PARAMS, [6.0, 0.5], stiff=stiff, composite=stiff)
    algo.do_step(0.0, 1.0)
    assert [r.accepted for r in algo.records] == [False, True]
    assert algo.saves == 1
    assert algo.lights == [True, middle, False] * 2


def test_an_extrapolated_step_measures_with_the_full_exchange():
    """The force extrapolation keeps the step and reads the forces the full exchange at its end
    gives: no light measurement, one save for a rejected and an accepted attempt."""
    algo = _Extrapolated([6.0, 0.0])
    algo.do_step(0.0, 1.0)
    assert algo.lights == [False, False] and algo.saves == 1


def test_no_extrapolated_estimate_falls_back_to_step_doubling():
    """The extrapolation gives None (a flange without inertia moved): the attempt is estimated by
    step doubling (the step and its two halves: 3 calls)."""
    algo = _Extrapolated([None])
    algo.errors = [0.3]
    algo._measure = _Stubbed._measure.__get__(algo)
    algo.do_step(0.0, 1.0)
    (record,) = algo.records
    assert record.accepted and record.calls == 3 and record.error == pytest.approx(0.1)


def test_the_estimate_choice_is_checked():
    assert Adaptive().estimate == "auto"
    with pytest.raises(CosimError, match=r"^estimate = 'cheap': must be one of auto, doubling$"):
        Adaptive(estimate="cheap")


# ---- setup: the documented defaults and refusals (Adaptive's docstring), no FMU ----------------


def _system(*steps):
    """A system whose instances declare these DefaultExperiment step sizes (None: no default
    experiment; 0.0: one without a step size)."""
    from types import SimpleNamespace as NS

    return NS(
        instances={
            f"i{k}": NS(md=NS(defaultExperiment=None if h is None else NS(stepSize=h)))
            for k, h in enumerate(steps)
        }
    )


def test_setup_defaults_from_the_fmus_and_the_span():
    """start 2, stop 12 (span 10): h0 the smallest DefaultExperiment step (5e-4; FMUs without
    one or with none set are skipped), hmax span/50 = 0.2, event window 1e-9*span = 1e-8,
    hmin 1e-14*max(1, |stop|) = 1.2e-13; no output interval: no output times."""
    algo = AdaptiveAlgorithm(Adaptive())
    assert algo.setup(_system(1e-3, None, 5e-4, 0.0), 2.0, 12.0, None) is None
    assert (algo.t0, algo.h, algo.hmax, algo.window) == (2.0, 5e-4, 0.2, 1e-8)
    assert algo.hmin == pytest.approx(1.2e-13, rel=1e-15, abs=0)
    assert algo.records == [] and algo.bracket is None and algo.calls == 0


@pytest.mark.parametrize(
    "steps, start, stop, h",
    [
        ((1.0,), 2.0, 12.0, 0.1),  # at most span/100
        ((), 0.0, 3.0, 0.03),  # no FMU step: span/100
        ((None, 0.0), -5.0, -1.0, 0.04),  # none set: span/100 of 4
        ((0.02, 0.01), 0.0, 3.0, 0.01),
    ],
)
def test_setup_first_step_default(steps, start, stop, h):
    algo = AdaptiveAlgorithm(Adaptive())
    algo.setup(_system(*steps), start, stop, None)
    assert algo.h == pytest.approx(h, rel=1e-15, abs=0)


@pytest.mark.parametrize(
    "stop, hmin", [(12.0, 1.2e-13), (1.5, 1.5e-14), (0.5, 1e-14), (-3.0, 3e-14), (-0.5, 1e-14)]
)
def test_setup_smallest_step_default(stop, hmin):
    algo = AdaptiveAlgorithm(Adaptive())
    algo.setup(_system(), stop - 10.0, stop, None)
    assert algo.hmin == pytest.approx(hmin, rel=1e-15, abs=0)


def test_setup_takes_the_steps_given():
    algo = AdaptiveAlgorithm(Adaptive(h0=0.3, hmax=0.25, hmin=1e-6, event_window=1e-5))
    algo.setup(_system(1e-3), 0.0, 10.0, None)
    assert (algo.h, algo.hmax, algo.hmin, algo.window) == (0.3, 0.25, 1e-6, 1e-5)
    zero = AdaptiveAlgorithm(Adaptive(hmin=0.0, event_window=0.0))
    zero.setup(_system(), 0.0, 10.0, None)
    assert (zero.hmin, zero.window) == (0.0, 0.0)
    whole = AdaptiveAlgorithm(Adaptive(h0=10.0))  # the first step may be the whole span
    whole.setup(_system(), 0.0, 10.0, None)
    assert whole.h == 10.0


@pytest.mark.parametrize(
    "hmax, interval, dense, expected",
    [
        (None, None, True, 0.2),  # span/50
        (None, 0.5, True, 0.2),  # dense output: not the output interval
        (None, 0.5, False, 0.5),  # steps on the recording times: the output interval
        (None, 20.0, False, 10.0),  # at most the span
        (0.25, None, True, 0.25),
        (0.25, 0.5, False, 0.25),  # hmax beats the output interval
        (30.0, 0.5, True, 10.0),  # at most the span
    ],
)
def test_setup_largest_step(hmax, interval, dense, expected):
    algo = AdaptiveAlgorithm(Adaptive(hmax=hmax, dense=dense))
    algo.setup(_system(), 0.0, 10.0, interval)
    assert algo.hmax == expected


@pytest.mark.parametrize(
    "start, stop, interval, times",
    [
        (0.0, 1.0, 0.25, [0.25, 0.5, 0.75, 1.0]),  # a whole number of intervals
        (0.0, 1.0, 0.3, [0.3, 0.6, 0.9, 1.0]),  # the last one cut at stop
        (2.0, 2.5, 0.125, [2.125, 2.25, 2.375, 2.5]),
        (0.0, 0.3, 0.1, [0.1, 0.2, 0.3]),  # 0.3/0.1 = 2.9999999999999996: 3 times
        (0.0, 1.0, 5.0, [1.0]),  # longer than the span: only the stop time
    ],
)
def test_setup_output_times(start, stop, interval, times):
    algo = AdaptiveAlgorithm(Adaptive())
    assert algo.setup(_system(), start, stop, interval) == pytest.approx(times, rel=1e-15, abs=0)


@pytest.mark.parametrize("h0", [0.0, -1.0, 10.5, math.inf, math.nan])
def test_setup_refuses_a_first_step_outside_the_span(h0):
    algo = AdaptiveAlgorithm(Adaptive(h0=h0))
    with pytest.raises(CosimError) as info:
        algo.setup(_system(), 0.0, 10.0, None)
    assert str(info.value) == f"first step {h0!r} s must be > 0 and at most the span 10.0 s"


@pytest.mark.parametrize("interval", [0.0, -0.5, math.inf, math.nan])
def test_setup_refuses_a_bad_output_interval(interval):
    algo = AdaptiveAlgorithm(Adaptive())
    with pytest.raises(CosimError) as info:
        algo.setup(_system(), 0.0, 10.0, interval)
    assert str(info.value) == f"output_interval {interval!r} s must be > 0"


# ---- Adaptive: the tuning's refusals -----------------------------------------------------------


@pytest.mark.parametrize("name", ["rtol", "atol"])
@pytest.mark.parametrize("value", [0.0, -1e-3, math.inf, math.nan])
def test_tolerances_must_be_finite_and_positive(name, value):
    with pytest.raises(CosimError) as info:
        Adaptive(**{name: value})
    assert str(info.value) == f"{name} = {value!r}: the tolerance must be finite and > 0"


@pytest.mark.parametrize("value", [0.0, -1.0, math.inf, math.nan])
def test_largest_step_must_be_finite_and_positive(value):
    with pytest.raises(CosimError) as info:
        Adaptive(hmax=value)
    assert str(info.value) == f"hmax = {value!r} s must be finite and > 0"


@pytest.mark.parametrize("name", ["hmin", "event_window"])
@pytest.mark.parametrize("value", [-1e-300, -1.0, math.inf, math.nan])
def test_smallest_step_and_event_window_must_be_finite_and_not_negative(name, value):
    with pytest.raises(CosimError) as info:
        Adaptive(**{name: value})
    assert str(info.value) == f"{name} = {value!r} s must be finite and >= 0"


def test_the_tuning_accepts_its_limits():
    a = Adaptive(rtol=5e-324, atol=1e300, hmax=5e-324, hmin=0.0, event_window=0.0)
    assert (a.rtol, a.atol, a.hmax, a.hmin, a.event_window) == (5e-324, 1e300, 5e-324, 0.0, 0.0)
    d = Adaptive()
    assert (d.rtol, d.atol, d.h0, d.hmax, d.hmin, d.event_window) == (
        1e-4,
        1e-6,
        None,
        None,
        None,
        None,
    )


# ---- the force extrapolation built from an exchange plan (ForceExtrapolation.of and bind) --------


def test_force_extrapolation_weighs_the_position_of_a_heavier_body_by_its_own_size():
    """m = 2 kg, h = 1 s, F 0 -> 24 N (rate 0, first-order hold): dF = 24 N, dv = dF*h/(3m) = 4 m/s,
    ds = dF*h^2/(12m) = 1 m; at v = 1e6 m/s (weight 1e3 + 1e-3: 0.004) and s = 0.5 m (weight
    1e-3 + 0.5e-3 = 1.5e-3): the position decides, 1/1.5e-3 = 666.667."""
    est, forces, rate = _estimate(2.0, True)
    est.start()
    forces[0] = 24.0
    y = [0.5, 1e6]
    assert est.error(1.0, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(666.6666667, rel=1e-9)
    # a position below zero is weighed by its size too: s = -0.5 m, the same 666.667
    y = [-0.5, 1e6]
    assert est.error(1.0, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(666.6666667, rel=1e-9)


def _ns(**kw):
    from types import SimpleNamespace

    return SimpleNamespace(**kw)


def _extrapolation_plan(inertias, holds, signals=(), driven=()):
    """Instances named by `inertias` {name: declared inertia (None: none)}, each a flange with s (vr 1)
    and v (vr 2) read in that order (y = [s, v] per instance); a force from element "el" (its output
    vr 10 + k) on each instance named in `holds` {name: with_derivative}; `signals`: the instances
    that are a signal's target. (plan, readers, the instances, the exchange's force and rate
    buffers by instance name)."""
    insts = {name: _ns(name=name, m=m) for name, m in inertias.items()}
    el = _ns(name="el")
    motion = [_ns(source=inst, s=1, v=2) for inst in insts.values()]
    forces, force_at, der_at, buffers = [], {}, {}, {}
    for k, (name, with_derivative) in enumerate(holds.items()):
        forces.append(
            _ns(body=insts[name], with_derivative=with_derivative, sources=[(el, 10 + k)])
        )
        buffers[name] = ([0.0], [0.0])
        force_at[("el", 10 + k)] = (buffers[name][0], 0)
        der_at[("el", 10 + k)] = (buffers[name][1], 0)
    plan = _ns(motion=motion, forces=forces, signals=[_ns(target=insts[n]) for n in signals])
    readers = [_ns(inst=inst, vr=[1, 2]) for inst in insts.values()]
    return plan, readers, _ns(force_at=force_at, der_at=der_at), buffers


@pytest.fixture
def inertia(monkeypatch):
    """declared_inertia reads the fake instances' m."""
    from contactfmu.cosim.algorithms import extrapolation

    monkeypatch.setattr(extrapolation, "declared_inertia", lambda inst: inst.m)


def test_flanges_without_a_positive_finite_inertia_must_stay_still(inertia):
    """A Fixed (no inertia declared), and flanges declaring 0 or an infinite inertia, are not bodies
    the extrapolation can move: their s and v (y indices 0, 1; 4, 5; 6, 7) must not change, or there
    is no estimate (None); the bodies of 2 kg and 4 kg after them (y 2, 3 and 8, 9) are estimated."""
    plan, readers, exchange, buffers = _extrapolation_plan(
        {"wall": None, "a": 2.0, "zero": 0.0, "inf": math.inf, "b": 4.0},
        {"a": True, "b": True},
    )
    est = ForceExtrapolation.of(plan, readers, driven=set())
    assert est is not None and est.order == 2
    assert sorted(est.still) == [0, 1, 4, 5, 6, 7]
    est.bind(exchange)
    est.start()
    y = [0.0] * 10
    assert est.error(0.1, y, list(y), rtol=1e-3, atol=1e-3) == 0.0
    for i in (0, 1, 4, 5, 6, 7):
        moved = list(y)
        moved[i] = 1e-12
        assert est.error(0.1, y, moved, rtol=1e-3, atol=1e-3) is None, i
    # the body b (4 kg) meets 1.2 N more than extrapolated over 0.1 s: dv = 1.2*0.1/(3*4) = 0.01 m/s,
    # weighed by atol alone at v = 0: 10; body a (nothing changed): 0
    buffers["b"][0][0] = 1.2
    assert est.error(0.1, y, list(y), rtol=1e-3, atol=1e-3) == pytest.approx(10.0, rel=1e-12)


@pytest.mark.parametrize(
    "signals, driven", [(("a",), ()), ((), ("a",))], ids=["signal", "driven input"]
)
def test_no_extrapolation_for_a_body_that_takes_more_than_the_exchanged_forces(
    inertia, signals, driven
):
    """A body that is the target of a signal, or one of whose inputs is driven (System.simulate's
    inputs), takes an input that is not an exchanged force: no force extrapolation (None)."""
    plan, readers, _, _ = _extrapolation_plan(
        {"wall": None, "a": 2.0}, {"a": True}, signals=signals
    )
    assert ForceExtrapolation.of(plan, readers, driven=set(driven)) is None
    # the same body without them: estimated
    plan, readers, _, _ = _extrapolation_plan({"wall": None, "a": 2.0}, {"a": True})
    assert ForceExtrapolation.of(plan, readers, driven={"wall"}) is not None


def test_no_extrapolation_for_mixed_holds(inertia):
    """One body's force passed with its derivative, another's without: None (the module docstring's
    mixed holds)."""
    plan, readers, _, _ = _extrapolation_plan({"a": 2.0, "b": 4.0}, {"a": True, "b": False})
    assert ForceExtrapolation.of(plan, readers, driven=set()) is None


@pytest.mark.parametrize(
    "with_derivative, order, end_force, at_rest, moving",
    [(True, 2, 25.5, 4000.0, 1000.0), (False, 1, 25.0, 6000.0, 2000.0)],
    ids=["first-order hold", "zero-order hold"],
)
def test_extrapolation_by_hand(inertia, with_derivative, order, end_force, at_rest, moving):
    """m = 2, h = 1, F 1 N with 0.5 N/s at t. Forces passed with their derivatives: second order,
    dv = dF*h/(3m), ds = dF*h^2/(12m); 25.5 N at the end: dF = 24 N, dv = 4 m/s, ds = 1 m; v = 0
    (weight 1e-3): 4000; at v = 1e6 (dv weighed 1e3: 0.004) the position at s = 0 decides: 1000.
    Without derivatives: first order, dv = dF*h/(2m), ds = dF*h^2/(6m); 25 N at the end: dF = 24 N
    (the rate buffer is not read), dv = 6 m/s, ds = 2 m; v = 0: 6000; at v = 1e6: 2000."""
    plan, readers, exchange, buffers = _extrapolation_plan({"a": 2.0}, {"a": with_derivative})
    est = ForceExtrapolation.of(plan, readers, driven=set()).bind(exchange)
    assert est.order == order
    buffers["a"][0][0], buffers["a"][1][0] = 1.0, 0.5
    est.start()
    buffers["a"][0][0] = end_force
    y = [0.0, 0.0]
    assert est.error(1.0, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(at_rest, rel=1e-12)
    y = [0.0, 1e6]
    assert est.error(1.0, y, y, rtol=1e-3, atol=1e-3) == pytest.approx(moving, rel=1e-12)


# ---- do_step: the limit, and the next step after a step that reached it -------------------------


def test_a_step_never_passes_the_limit_before_time_zero():
    """Negative times (start = -1 s): the step from -1 s with 0.8 s planned stops at the limit
    -0.5 s, 0.5 s long."""
    algo = _Stubbed(PARAMS, [0.0], h=0.8)
    assert algo.do_step(-1.0, -0.5) == -0.5
    (record,) = algo.records
    assert record.accepted and record.t == -1.0 and record.h == 0.5


def test_steps_between_recording_times_before_time_zero():
    """No motion to estimate: the recording times bound the steps (module docstring, item 3): from
    -1 s on the grid -0.5, 0 s the step ends at -0.5 s, then at 0 s."""
    algo = _Stubbed(PARAMS, [], h=0.8)
    algo.motion, algo.grid = [], [-0.5, 0.0]
    assert algo.do_step(-1.0, 0.0) == -0.5
    assert algo.do_step(-0.5, 0.0) == 0.0
    assert [(r.t, r.h, r.accepted) for r in algo.records] == [(-1.0, 0.5, True), (-0.5, 0.5, True)]


def test_a_step_of_the_planned_size_that_reaches_the_limit_sets_the_next_step():
    """The planned step 0.5 s ends exactly at the limit: it is not cut, so the next step is
    H*min(4, max(0.2, 0.9*err^(-1/3))) (item 4): err 0.3/3 = 0.1, 0.45*10^(1/3) = 0.9694956."""
    algo = _Stubbed(PARAMS, [0.3], h=0.5)
    assert algo.do_step(0.0, 0.5) == 0.5
    assert algo.h == pytest.approx(0.5 * 0.9 * 0.1 ** (-1.0 / 3.0), rel=1e-12)
    assert algo.h == pytest.approx(0.9694956, rel=1e-7)
    # a step cut by the limit keeps the planned size
    cut = _Stubbed(PARAMS, [0.3], h=0.5)
    assert cut.do_step(0.0, 0.25) == 0.25 and cut.h == 0.5


def test_without_a_smallest_step_a_step_is_still_cut_at_the_limit():
    """hmin = 0 (no sliver rule): a planned step longer than what is left to the limit by less than
    the time resolution at t is still cut to end on it: h = limit - t."""
    algo = _Stubbed(PARAMS, [0.0], h=1.2 * 2.0**-52)
    algo.hmin = 0.0
    limit = 1.0 + 2.0**-52
    assert algo.do_step(1.0, limit) == limit
    assert algo.records[0].h == 2.0**-52


def test_the_algorithm_is_dense_as_the_tuning_says():
    """Algorithm.dense (base): the recording times interpolated between the steps, Adaptive.dense's
    default True; dense=False: every recording time ends a step."""
    assert AdaptiveAlgorithm(Adaptive()).dense is True
    assert AdaptiveAlgorithm(Adaptive(dense=False)).dense is False


# ---- the calls of an attempt: initialize, start and do_step on a logged fake run (no FMU) --------
#
# As test_algorithms' logs of the fixed-step algorithms: the exchanges, the driven inputs
# (run.manipulate), fmi2DoStep and the reads are logged, the FMUs' values are functions of the time
# their (fake) state is at. An explicit exchange is logged with its time (it ignores h), the implicit
# ones with their kind, their stage (composite) and h (lead: x + h*dx/dt, coupling.Exchange).


class _Log(list):
    def __call__(self, *entry):
        self.append(entry)


class _World:
    """The fake FMUs of a run: instances with values {vr: f(clock) or constant}, clock the time the
    FMUs' state is at (fmi2DoStep moves it, a restored state sets it back); early: (time, names) of
    an FMI 3.0 early return inside a step."""

    def __init__(self, log):
        self.log, self.clock, self.early = log, 0.0, None

    def value(self, inst, vr):
        v = inst.values[vr]
        return v(self.clock) if callable(v) else v


def _inst(name, m=None, values=None, discrete=(), outputs=()):
    """A fake instance: declared inertia m (None: none), values {vr: value}, discrete [(vr, kind)],
    the outputs of its ModelStructure [(vr, [vrs it depends on] or None)] (none declared: the
    algorithm reads its motion with readers of its own, and measures with the full exchange)."""
    outputs = [
        _ns(
            variable=_ns(valueReference=vr),
            dependencies=None if deps is None else [_ns(valueReference=d) for d in deps],
        )
        for vr, deps in outputs
    ]
    variables = [_ns(causality="output", type=kind, valueReference=vr) for vr, kind in discrete]
    inst = _ns(
        name=name,
        m=m,
        values=dict(values or {}),
        md=_ns(modelVariables=variables, defaultExperiment=None, outputs=list(outputs)),
    )
    inst.discrete_outputs = lambda: Instance.discrete_outputs(inst)  # (from its variables)
    return inst


@pytest.fixture
def world(monkeypatch):
    from contactfmu.cosim.algorithms import adaptive, extrapolation
    from contactfmu.cosim.algorithms.base import EarlyReturn

    log = _Log()
    w = _World(log)

    class Exchange:
        def __init__(self, plan, implicit=None, lead=False, composite=False, reads=(), observe=()):
            self.coupling, self.composite = implicit, implicit is not None and composite
            self.kind = (
                "explicit"
                if implicit is None
                else "composite"
                if composite
                else "lead"
                if lead
                else "plain"
            )
            self.force_at = {(ti.name, tf): ([0.0], 0) for f in plan.forces for ti, tf in f.sources}
            # what it reads with the forces (the interface stiffness): the instances' values
            self.reads = {(inst.name, vr): inst for inst, vr in reads}
            self.force_at.update({key: ([0.0], 0) for key in self.reads})
            self.observed_at = {}  # (observe: the real exchange's Program.join)
            self.der_at = {key: ([0.0], 0) for key in self.force_at}
            # the motion as the full exchange and the motion exchange alone read it
            self.read = {(m.source.name, vr): m.source for m in plan.motion for vr in (m.s, m.v)}
            self.motion_at = {key: ([0.0], 0) for key in self.read}
            self.light_at = {key: ([0.0], 0) for key in self.read}

        def _fill(self, at):
            for key, inst in self.read.items():
                at[key][0][0] = w.value(inst, key[1])

        def motion(self, t):
            log("motion", t)
            self._fill(self.light_at)

        def gauss_seidel(self, t, h):
            self._fill(self.motion_at)
            for key, inst in self.reads.items():
                self.force_at[key][0][0] = w.value(inst, key[1])
            if self.kind == "explicit":
                log("exchange", t)
            elif self.kind == "composite":
                log("exchange", self.kind, self.coupling.stage, t, h)
            else:
                log("exchange", self.kind, t, h)

    def implicit_coupling(system, plan):
        return _ns(
            elements=list(system.elements),
            bodies={name: _ns(m=m) for name, m in plan.inertia.items()},
            composite_ready=lambda: system.ready,
            stage=None,
        )

    class Reader:
        def __init__(self, inst, vrs, kind="Real"):
            self.inst, self.vr = inst, list(vrs)

        def __call__(self, t):
            log("read", self.inst.name, t)
            return [w.value(self.inst, vr) for vr in self.vr]

    class DoSteps:
        def __init__(self, instances, tag="do_steps"):
            self.instances, self.tag = list(instances), tag

        def others(self, names):
            return DoSteps([i for i in self.instances if i.name not in names], "others")

        def __call__(self, t, h):
            log(self.tag, t, h)
            if w.early is not None and t < w.early[0] < t + h:
                w.clock = w.early[0]
                raise EarlyReturn(*w.early)
            w.clock = t + h

    class States:
        def __init__(self, instances):
            pass

        def save(self):
            return w.clock

        def restore(self, states, keep=()):
            w.clock = states

        def free(self, states):
            pass

    for name, fake in (
        ("Exchange", Exchange),
        ("implicit_coupling", implicit_coupling),
        ("Reader", Reader),
        ("DoSteps", DoSteps),
        ("States", States),
    ):
        monkeypatch.setattr(adaptive, name, fake)
    monkeypatch.setattr(extrapolation, "declared_inertia", lambda inst: inst.m)
    return w


class _Manipulate:
    def __init__(self, log, plan=()):
        self.log, self.plan = log, list(plan)

    def __call__(self, t):
        self.log("manipulate", t)


def _fake_run(
    w, bodies, elements=(), ready=False, integrating=(), driven=(), extra=(), contact=None
):
    """A wall (a Fixed: no inertia) and the bodies {name: m} (s vr 1, v vr 2, both 0), each joined to
    element "sd" (motion inputs s vr 11, v vr 12; a contact flag: Integer output vr 20, 0); the
    implicit coupling's `elements` (composite-ready if `ready`), the instances that integrate their
    contact, the driven bodies and `extra` instances, listed first. contact: the inputs the flag
    depends on (the ModelStructure; the motion outputs then declared to depend on none); None:
    no dependencies declared."""
    from contactfmu.cosim.algorithms.base import Run

    declared = contact is not None
    sd = _inst(
        "sd",
        values={20: 0},
        discrete=[(20, "Integer")],
        outputs=[(20, contact)] if declared else (),
    )
    motion_outputs = [(1, []), (2, [])] if declared else ()
    wall = _inst("wall", values={1: 0.0, 2: 0.0}, outputs=motion_outputs)
    insts = [*extra, wall, sd] + [
        _inst(n, m, {1: lambda clock: clock, 2: 1.0}, outputs=motion_outputs)
        for n, m in bodies.items()
    ]
    by_name = {i.name: i for i in insts}
    motion = [
        _ns(source=by_name[n], target=sd, s=1, v=2, target_s=11, target_v=12)
        for n in ["wall", *bodies]
    ]
    forces = [_ns(body=by_name[n], with_derivative=True, sources=[(sd, 10)]) for n in bodies]
    plan = _ns(motion=motion, forces=forces, signals=[], inertia=dict(bodies, wall=None))
    system = _ns(
        instances=by_name,
        integrating=lambda: set(integrating),
        elements=list(elements),
        ready=ready,
    )
    manipulate = _Manipulate(w.log, [(by_name[n], 3, None, f"{n}.f") for n in driven])
    return Run(system, plan, manipulate)


def _element(a, b, c, d):
    """An interface element between bodies a and b (None: the wall) with c (vr 5) and d (vr 6)."""
    inst = _inst("el", values={5: c, 6: d})
    return _ns(inst=inst, c=5, d=6, end_a=_ns(body=a), end_b=_ns(body=b))


def _started(w, run, stop=1.0, **tuning):
    algo = AdaptiveAlgorithm(Adaptive(**dict(dict(hmax=1.0), **tuning)))
    algo.setup(run.system, 0.0, stop, None)
    algo.initialize(run)
    algo.start(0.0)
    return algo


def _measurement(t, *names):
    return [("manipulate", t), ("exchange", t)] + [("read", n, t) for n in names]


def test_an_explicit_step_is_the_step_alone_after_the_measurement_at_its_start(world):
    """initialize makes the initial exchange at t0; start measures at t0: the driven inputs set at t0,
    the explicit exchange at t0 that makes every output current, the motion (of the wall and the
    mass) and the discrete outputs (sd's contact flag) read at t0. A step from t0 (force
    extrapolation: err 0) is fmi2DoStep from t0 over h alone (the FMUs hold the inputs of the
    measurement's exchange at t0), then the measurement at its end."""
    run = _fake_run(world, {"mass": 1.0})
    algo = AdaptiveAlgorithm(Adaptive(h0=0.1, hmax=1.0))
    algo.setup(run.system, 0.0, 1.0, None)
    algo.initialize(run)
    assert world.log == [("exchange", 0.0)]
    algo.start(0.0)
    assert world.log[1:] == _measurement(0.0, "wall", "mass", "sd")
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.1
    assert world.log == [("do_steps", 0.0, 0.1)] + _measurement(0.1, "wall", "mass", "sd")
    (record,) = algo.records
    assert record == (0.0, 0.1, True, "", 0.0, False, 1, 0)


def test_an_explicit_step_without_the_exchange_at_its_start_makes_it_first(world):
    """The FMUs do not hold the inputs of an exchange at t (none made since setup): an explicit
    step from t sets the driven inputs at t and makes the exchange at t before fmi2DoStep."""
    run = _fake_run(world, {"mass": 1.0})
    algo = AdaptiveAlgorithm(Adaptive(h0=0.1))
    algo.setup(run.system, 0.0, 1.0, None)
    algo.initialize(run)
    del world.log[:]
    algo._advance(0.25, 0.5, False)
    assert world.log == [("manipulate", 0.25), ("exchange", 0.25), ("do_steps", 0.25, 0.5)]


def test_a_driven_body_is_estimated_by_step_doubling(world):
    """A body with a driven input takes more than the exchanged forces: no force extrapolation,
    the step and its two halves (3 fmi2DoStep calls)."""
    run = _fake_run(world, {"mass": 1.0}, driven=["mass"])
    algo = _started(world, run, h0=0.1)
    assert algo.extrapolation is None
    algo.do_step(0.0, 1.0)
    (record,) = algo.records
    assert record.accepted and record.calls == 3 and record.error == 0.0


def test_backward_euler_on_the_interface_where_a_body_takes_no_force_derivative(world):
    """An interface element (c = 1e6 N/m) between the wall and a 1 kg mass, the coupling not
    composite-ready: 0.1 s*sqrt(1e6/1) = 100 > 1, stiff: backward Euler, the driven inputs set at the
    step's end t + h and the implicit exchange with lead (x + h*dx/dt) over h; estimated by step
    doubling with the same coupling over the halves; the stiffness as the exchange at the step's
    start read it (no read of its own)."""
    el = _element(None, "mass", 1e6, 0.0)
    run = _fake_run(world, {"mass": 1.0}, elements=[el], extra=[el.inst])
    algo = _started(world, run, h0=0.1)
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.1
    names = ("wall", "mass", "sd")
    assert world.log == (
        [("manipulate", 0.1), ("exchange", "lead", 0.0, 0.1), ("do_steps", 0.0, 0.1)]
        + _measurement(0.1, *names)
        + [("manipulate", 0.05), ("exchange", "lead", 0.0, 0.05), ("do_steps", 0.0, 0.05)]
        + _measurement(0.05, *names)
        + [("manipulate", 0.1), ("exchange", "lead", 0.05, 0.05), ("do_steps", 0.05, 0.05)]
        + _measurement(0.1, *names)
    )
    (record,) = algo.records
    assert record == (0.0, 0.1, True, "", 0.0, True, 3, 0)


def test_the_composite_coupling_is_two_stages_of_half_the_step(world):
    """The same element, the coupling composite-ready: each implicit step of h is a trapezoidal
    stage over h/2 from t (driven inputs at t) and a three-point backward Euler stage over h/2 from
    t + h/2 (driven inputs there): 2 calls per step, 6 with the two halves of step doubling."""
    el = _element(None, "mass", 1e6, 0.0)
    run = _fake_run(world, {"mass": 1.0}, elements=[el], ready=True, extra=[el.inst])
    algo = _started(world, run, h0=0.1)
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.1

    names = ("wall", "mass", "sd")
    assert world.log == (
        _stages(0.0, 0.1)
        + _measurement(0.1, *names)
        + _stages(0.0, 0.05)
        + _measurement(0.05, *names)
        + _stages(0.05, 0.05)
        + _measurement(0.1, *names)
    )
    (record,) = algo.records
    assert record == (0.0, 0.1, True, "", 0.0, True, 6, 0)


def _stages(t, h):
    return [
        ("manipulate", t),
        ("exchange", "composite", 1, t, h / 2),
        ("do_steps", t, h / 2),
        ("manipulate", t + h / 2),
        ("exchange", "composite", 2, t + h / 2, h / 2),
        ("do_steps", t + h / 2, h / 2),
    ]


def test_a_measurement_that_is_undone_makes_the_motion_exchange_alone(world):
    """The composite step of the test above, the ModelStructure declared: the bodies' motion
    depends on no input, sd's contact flag on its motion inputs alone. The measurements at the end
    of the full step (undone for its halves) and at the middle (the second half makes its own
    exchange there) make the motion exchange alone (Exchange.motion: no driven inputs, no forces)
    and read the flag; the last one makes the full exchange. None reads the motion with a call of
    its own: it is the exchange's (the mass at s = t, v = 1)."""
    el = _element(None, "mass", 1e6, 0.0)
    run = _fake_run(
        world, {"mass": 1.0}, elements=[el], ready=True, extra=[el.inst], contact=[11, 12]
    )
    algo = _started(world, run, h0=0.1)
    assert algo.light
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.1

    def light(t):
        return [("motion", t), ("read", "sd", t)]

    assert world.log == (
        _stages(0.0, 0.1)
        + light(0.1)
        + _stages(0.0, 0.05)
        + light(0.05)
        + _stages(0.05, 0.05)
        + [("manipulate", 0.1), ("exchange", 0.1), ("read", "sd", 0.1)]
    )
    assert algo.y == [0.0, 0.0, 0.1, 1.0]  # wall s, v; mass s, v at 0.1 s
    (record,) = algo.records
    assert record == (0.0, 0.1, True, "", 0.0, True, 6, 0)


@pytest.mark.parametrize(
    "contact, light",
    [([11, 12], True), ([11], True), ([11, 12, 13], False), ([], True), (None, False)],
    ids=["motion", "position", "and-a-force", "nothing", "undeclared"],
)
def test_the_motion_exchange_alone_where_the_discrete_outputs_depend_on_the_motion(
    world, contact, light
):
    """light where every discrete output depends on nothing but the motion inputs the motion
    exchange sets (sd's s vr 11, v vr 12); not where one also depends on another input (vr 13), nor
    where the ModelStructure declares nothing (the motion then read with readers of its own)."""
    run = _fake_run(world, {"mass": 1.0}, contact=contact)
    algo = _started(world, run, h0=0.1)
    assert algo.light is light
    assert (algo.y_at is not None) is (contact is not None)


def test_a_discrete_output_of_an_instance_the_motion_exchange_does_not_set(world):
    """An instance that takes no motion (here one of its own, outside the nodes) whose discrete
    output depends on no input: nothing the motion exchange leaves out decides it, light; one
    that depends on an input of its own: not light."""
    for deps, light in (([], True), ([7], False)):
        other = _inst("other", values={30: 0}, discrete=[(30, "Integer")], outputs=[(30, deps)])
        run = _fake_run(world, {"mass": 1.0}, contact=[11, 12], extra=[other])
        assert _started(world, run, h0=0.1).light is light


def test_a_doubled_explicit_step_measures_its_middle_with_the_full_exchange(world):
    """A driven body (step doubling, explicit): the full step's measurement is undone (the motion
    exchange alone); the middle one is kept, with its exchange, which the second half does not make
    again (the FMUs hold its inputs)."""
    run = _fake_run(world, {"mass": 1.0}, driven=["mass"], contact=[11, 12])
    algo = _started(world, run, h0=0.1)
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.1
    full = [("manipulate", 0.05), ("exchange", 0.05), ("read", "sd", 0.05)]
    assert world.log == (
        [("do_steps", 0.0, 0.1), ("motion", 0.1), ("read", "sd", 0.1)]
        + [("do_steps", 0.0, 0.05)]
        + full
        + [("do_steps", 0.05, 0.05)]
        + [("manipulate", 0.1), ("exchange", 0.1), ("read", "sd", 0.1)]
    )


@pytest.mark.parametrize(
    "a, b, c, d, h, stiff",
    [
        # mu = 2*2/(2 + 2) = 1 kg: sqrt(c/mu) = 20/s, stiff for H > 0.05 s
        ("a", "b", 400.0, 0.0, 0.04, False),
        ("a", "b", 400.0, 0.0, 0.06, True),
        # the wall and a 4 kg body: mu = 4 kg; d/mu = 16/s, H*16 = 1 at H = 1/16 s: not > 1
        (None, "c", 0.0, 64.0, 0.0625, False),
        (None, "c", 0.0, 64.0, 0.1, True),
        # c below 1 N/m: sqrt(0.25/1) = 0.5/s, stiff for H > 2 s
        ("a", "b", 0.25, 0.0, 1.5, False),
        ("a", "b", 0.25, 0.0, 2.5, True),
        # a negative stiffness counts as none
        ("a", "b", -400.0, 0.0, 9.0, False),
        # no body at either end: nothing the element can be too stiff for
        (None, None, 1e12, 1e12, 9.0, False),
    ],
)
def test_an_element_is_stiff_where_h_max_d_over_mu_sqrt_c_over_mu_exceeds_1(
    world, a, b, c, d, h, stiff
):
    el = _element(a, b, c, d)
    run = _fake_run(world, {"a": 2.0, "b": 2.0, "c": 4.0}, elements=[el], extra=[el.inst])
    algo = _started(world, run, stop=100.0, h0=h, hmax=10.0)
    algo.do_step(0.0, 100.0)
    assert [r.implicit for r in algo.records] == [stiff]


def test_the_discrete_outputs_of_an_element_that_integrates_its_contact_are_its_own(world):
    """An element that integrates its contact locates its own events: its contact flag changing
    (at 0.05 s) inside a step is no event of the master; the flag of another FMU listed after it
    changing (at 0.08 s) is: the step is rejected (reason "event")."""
    own = _inst("own", values={21: lambda t: int(t > 0.05)}, discrete=[(21, "Integer")])
    other = _inst("other", values={22: 0}, discrete=[(22, "Integer")])
    run = _fake_run(world, {"mass": 1.0}, integrating=["own"], extra=[own, other])
    algo = _started(world, run, h0=0.1)
    algo.do_step(0.0, 1.0)
    assert [(r.accepted, r.reason) for r in algo.records] == [(True, "")]
    other.values[22] = lambda t: int(t > 0.08)
    world.clock = 0.0
    algo = _started(world, run, h0=0.1, events="locate")
    algo.do_step(0.0, 1.0)
    assert [(r.accepted, r.reason) for r in algo.records][0] == (False, "event")


def test_an_early_return_on_the_recording_grid_ends_the_step_at_the_event(world):
    """No motion to estimate (the mass's contact integrated by its element "sd"): the steps go from
    recording time to recording time (0.1 s); "sd" returns early at 0.03 s: the attempt is an event,
    the other FMUs, restored, step to 0.03 s, the step ends there with everything measured at
    0.03 s (nothing estimated: error 0 as the regular steps'); the next one goes on to 0.1 s."""
    run = _fake_run(world, {"mass": 1.0}, integrating=["sd"])
    algo = AdaptiveAlgorithm(Adaptive())
    algo.setup(run.system, 0.0, 1.0, 0.1)
    algo.initialize(run)
    algo.start(0.0)
    world.early = (0.03, ["sd"])
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.03
    assert world.log == [("do_steps", 0.0, 0.1), ("others", 0.0, 0.03)] + _measurement(0.03)
    event, step = algo.records
    assert (event.t, event.h, event.accepted, event.reason) == (0.0, 0.1, False, "event")
    assert (step.t, step.h, step.accepted, step.error, step.implicit) == (
        0.0,
        0.03,
        True,
        0.0,
        False,
    )
    world.early = None
    assert algo.do_step(0.03, 1.0) == 0.1
    assert algo.records[-1].accepted and algo.records[-1].error == 0.0


def test_a_discrete_change_is_bracketed_by_bisection_within_the_bracket():
    """A discrete output changes at 0.0123 s (event window 1e-3 s, every error 0): the attempt over
    it is rejected ("event") and the change bracketed by bisection: no later attempt ends past the
    latest bracket (the end of the latest event rejection), and the change is accepted in a step of
    at most the event window (module docstring, item 2)."""
    algo = _Extrapolated([0.0] * 200, h=0.1)
    algo.window, algo.d, algo.across = 1e-3, (0,), False  # (events="locate")

    def measure(t, light=False):
        algo.measured.append(t)
        return [1.0], (int(t > 0.0123),)

    algo._measure = measure
    t = 0.0
    while algo.d == (0,):
        t = algo.do_step(t, 1.0)
    bracket = None
    for r in algo.records:
        if bracket is not None:
            assert r.t + r.h <= bracket, (r, bracket)
        if r.reason == "event":
            bracket = r.t + r.h
    last = algo.records[-1]
    assert last.accepted and last.t < 0.0123 < last.t + last.h and last.h <= 1e-3


def _changing(algo, change):
    def measure(t, light=False):
        algo.measured.append(t)
        return [1.0], (int(t > change),)

    return measure


def test_a_change_inside_a_step_is_kept_where_its_jump_estimate_meets_the_tolerance():
    """events="estimate" (the default): a discrete change at 0.05 s inside the extrapolated step
    [0, 0.1] whose error, estimated as a jump (jump=True), is 0.5: the step is kept as it is, one
    attempt, its record the jump's error; the new discrete state taken."""
    algo = _Extrapolated([0.5])
    algo.d = (0,)
    algo._measure = _changing(algo, 0.05)
    assert algo.do_step(0.0, 1.0) == pytest.approx(0.1)
    assert [(r.accepted, r.reason, r.error) for r in algo.records] == [(True, "", 0.5)]
    assert algo.jumps == [True] and algo.d == (1,)


def test_a_change_whose_jump_estimate_exceeds_the_tolerance_is_bracketed_until_it_meets_it():
    """A change at 0.07 s: [0, 0.1] estimated as a jump at 4 (rejected, "event", bracket 0.1);
    [0, 0.05] without the change, estimated as a plain step (0.0: kept); [0.05, 0.075] over the
    change, as a jump at 0.5: kept, its bracket closed (no step below the event window needed)."""
    algo = _Extrapolated([4.0, 0.0, 0.5])
    algo.d = (0,)
    algo._measure = _changing(algo, 0.07)
    t = algo.do_step(0.0, 1.0)
    t = algo.do_step(t, 1.0)
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 0.1, False, "event"),
        (0.0, 0.05, True, ""),
        (0.05, 0.025, True, ""),
    ]
    assert algo.jumps == [True, False, True]
    assert t == pytest.approx(0.075, rel=1e-15) and algo.d == (1,) and algo.bracket is None


def test_a_bodys_own_change_is_located_even_where_it_could_be_estimated():
    """The discrete output that changes at 0.05 s is a body's (body_flags): the step over it is
    rejected ("event") although its jump estimate would meet the tolerance, and bracketed."""
    algo = _Extrapolated([0.5] * 200)
    algo.d, algo.body_flags = (0,), [0]
    algo._measure = _changing(algo, 0.05)
    algo.do_step(0.0, 1.0)
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 0.1, False, "event"),
        (0.0, 0.05, True, ""),
    ]
    assert algo.jumps == [False]  # (the kept step, without the change: a plain estimate)


class _Switching(_Stubbed):
    """_Stubbed whose steps are stiff above 0.05 s (the explicit limit), every step estimated by
    step doubling (the composite coupling where implicit: order 2)."""

    def __init__(self, errors, h):
        super().__init__(PARAMS, errors, composite=True, h=h)

    def _stiff(self, t, h):
        return h > 0.05

    def _explicit_limit(self):
        return 0.05


def test_steps_stay_explicit_after_two_implicit_rejections_until_the_error_allows_growth():
    """Errors are the scaled differences over 2^p - 1 = 3. Implicit attempts rejected by their
    error twice, none accepted between (0.1 s: err 100, shrinks 0.2x; explicit 0.02 s accepted,
    err 3.3e-7, grows 4x; 0.08 s implicit: err 100 again): the steps stay explicit, capped at the
    explicit limit 0.05 s (err 0.1 grows them 0.9*0.1^(-1/3) = 1.94x), until an explicit step's
    error allows the largest growth (err 3.3e-7 at 0.05 s): then 0.2 s, implicit again."""
    algo = _Switching([300.0, 1e-6, 300.0, 0.3, 0.3, 1e-6, 0.3], h=0.1)
    t = 0.0
    while len(algo.records) < 7:
        t = algo.do_step(t, 10.0)
    grow = 0.9 * 0.1 ** (-1.0 / 3.0)
    assert [r.h for r in algo.records] == pytest.approx(
        [0.1, 0.02, 0.08, 0.016, 0.016 * grow, 0.05, 0.2], rel=1e-9
    )
    assert [(r.accepted, r.implicit) for r in algo.records] == [
        (False, True),
        (True, False),
        (False, True),
        (True, False),
        (True, False),
        (True, False),  # (0.016*grow^2 = 0.06 s capped)
        (True, True),
    ]
    assert algo.failures == 0 and not algo.explicit_only


def test_an_implicit_rejection_followed_by_an_accepted_implicit_step_keeps_implicit_steps():
    """One implicit rejection (err 100 at 0.5 s), then an implicit step accepted (0.1 s, err 0.1):
    the count of failures restarts, no cap: the next step 0.1*1.94 s, implicit."""
    algo = _Switching([300.0, 0.3, 0.3], h=0.5)
    t = algo.do_step(0.0, 10.0)
    algo.do_step(t, 10.0)
    assert [r.h for r in algo.records] == pytest.approx(
        [0.5, 0.1, 0.1 * 0.9 * 0.1 ** (-1.0 / 3.0)], rel=1e-9
    )
    assert [(r.accepted, r.implicit) for r in algo.records] == [
        (False, True),
        (True, True),
        (True, True),
    ]
    assert algo.failures == 0 and not algo.explicit_only


def test_the_event_choice_is_checked():
    with pytest.raises(CosimError, match=r"events = 'never': must be one of estimate, locate"):
        Adaptive(events="never")


# ---- do_step: the event window, the smallest step and the rollback at their exact limits ---------


def _guarded_measure(algo, change, attempts=40):
    """algo._measure with one discrete output that is 1 from `change` s on (> change), the motion
    constant; more than `attempts` measurements fail the test (a bracket that is never closed)."""

    def measure(t, light=False):
        algo.measured.append(t)
        assert len(algo.measured) <= attempts, "the change is never accepted"
        return [1.0], (int(t > change),)

    return measure


def test_a_change_in_a_step_of_exactly_the_event_window_is_accepted():
    """Event window 2^-10 s, first step 2^-9 s, a discrete change at 0.0015 s (every error 0; powers
    of two: exact). The step [0, 2^-9] holds the change and is longer than the window: rejected
    ("event"), the bracket (0, 2^-9] bisected: [0, 2^-10] (no change) is accepted, the bracket left
    (2^-10, 2^-9] is exactly the window long, so the next step goes to its end: the change then lies
    in a step of at most event_window and is accepted there (module docstring, item 2), not bisected
    further."""
    window = 2.0**-10
    algo = _Extrapolated([0.0] * 20, h=2.0**-9)
    algo.window, algo.d, algo.across = window, (0,), False  # (events="locate")
    algo._measure = _guarded_measure(algo, 0.0015)
    assert algo.do_step(0.0, 1.0) == window
    assert algo.do_step(window, 1.0) == 2.0 * window
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 2.0 * window, False, "event"),
        (0.0, window, True, ""),
        (window, window, True, ""),
    ]
    assert algo.d == (1,) and algo.bracket is None


def test_a_step_of_exactly_the_event_window_over_a_change_is_not_rejected():
    """Event window 2^-10 s, first step 2^-10 s, a change at 0.0009 s inside it: a step of at most
    event_window holds the change (module docstring, item 2): accepted at once, no event."""
    window = 2.0**-10
    algo = _Extrapolated([0.0] * 20, h=window)
    algo.window, algo.d = window, (0,)
    algo._measure = _guarded_measure(algo, 0.0009)
    assert algo.do_step(0.0, 1.0) == window
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [(0.0, window, True, "")]
    assert algo.d == (1,)


def test_a_rest_of_exactly_the_smallest_step_before_the_limit_is_a_step_of_its_own():
    """hmin = 2^-10 s; planned 1 - 2^-10 s from 0 to the limit 1 s: what is left, 2^-10 s, is not
    below the smallest step (Adaptive: hmin the smallest step; only a sliver below it is merged into
    the step before the limit): two steps, of 1 - 2^-10 s and 2^-10 s."""
    hmin = 2.0**-10
    algo = _Stubbed(PARAMS, [0.0, 0.0], h=1.0 - hmin)
    algo.hmin = hmin
    assert algo.do_step(0.0, 1.0) == 1.0 - hmin
    assert algo.do_step(1.0 - hmin, 1.0) == 1.0
    assert [(r.t, r.h, r.accepted) for r in algo.records] == [
        (0.0, 1.0 - hmin, True),
        (1.0 - hmin, hmin, True),
    ]
    # a rest just below it is merged: one step to the limit
    merged = _Stubbed(PARAMS, [0.0], h=1.0 - 0.75 * hmin)
    merged.hmin = hmin
    assert merged.do_step(0.0, 1.0) == 1.0 and merged.records[0].h == 1.0


def test_an_attempt_rejected_by_an_event_is_retried_without_the_exchange_at_its_start_again(world):
    """The contact flag of "sd" changes at 0.05 s: the step [0, 0.1] is rejected ("event"), the FMUs
    restored to the state saved at 0, which holds the inputs of the measurement's exchange at 0;
    the retry over the bisected step [0, 0.05] (no change: accepted, err 0) is fmi2DoStep alone,
    the exchange at 0 not made again (the rollback's and _advance's comments)."""
    run = _fake_run(world, {"mass": 1.0})
    run.system.instances["sd"].values[20] = lambda t: int(t > 0.05)
    algo = _started(world, run, h0=0.1, events="locate")
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.05
    names = ("wall", "mass", "sd")
    assert world.log == (
        [("do_steps", 0.0, 0.1)]
        + _measurement(0.1, *names)
        + [("do_steps", 0.0, 0.05)]
        + _measurement(0.05, *names)
    )
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 0.1, False, "event"),
        (0.0, 0.05, True, ""),
    ]


@pytest.mark.parametrize("stiff", [False, True], ids=["explicit", "implicit"])
def test_an_event_rejection_is_recorded_with_no_error_and_the_attempts_coupling(world, stiff):
    """StepRecord: a rejected attempt's reason "event", its error nan (not estimated), whether its
    coupling was implicit (an element of c = 1e6 N/m on the 1 kg mass: 0.1*sqrt(1e6) = 100 > 1, stiff;
    c = 0: explicit), and its fmi2DoStep calls (backward Euler and the explicit step: 1)."""
    el = _element(None, "mass", 1e6 if stiff else 0.0, 0.0)
    run = _fake_run(world, {"mass": 1.0}, elements=[el], extra=[el.inst])
    run.system.instances["sd"].values[20] = lambda t: int(t > 0.05)
    algo = _started(world, run, h0=0.1, events="locate")
    algo.do_step(0.0, 1.0)
    event = algo.records[0]
    assert (event.t, event.h, event.accepted, event.reason, event.calls) == (
        0.0,
        0.1,
        False,
        "event",
        1,
    )
    assert isinstance(event.error, float) and math.isnan(event.error)
    assert event.implicit is stiff


def test_a_change_at_an_early_return_is_accepted_in_the_step_that_ends_there(world):
    """ "sd" returns early at 0.03 s (FMI 3.0) and its contact flag is 1 from 0.03 s on: the attempt
    [0, 0.1] is an event; the retry goes to the early return exactly ([0, 0.03]: the bracket, exact)
    and ends at the change: accepted there, although 0.03 s is longer than the event window (a
    time the FMU located, not bracketed again: 'an FMU's event time ends the step there'). The
    steps are not regular: the step is taken again to the event by every FMU, restored (not only
    by those that did not return early, as with regular steps)."""
    run = _fake_run(world, {"mass": 1.0})
    calls = []

    def flag(t):
        calls.append(t)
        assert len(calls) <= 40, "the change is never accepted"
        return int(t >= 0.03)

    run.system.instances["sd"].values[20] = flag
    algo = _started(world, run, h0=0.1)
    world.early = (0.03, ["sd"])
    del world.log[:]
    assert algo.do_step(0.0, 1.0) == 0.03
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 0.1, False, "event"),
        (0.0, 0.03, True, ""),
    ]
    assert algo.d == (1,) and algo.bracket is None and algo.event_at is None
    steps = [entry for entry in world.log if entry[0] in ("do_steps", "others")]
    assert steps == [("do_steps", 0.0, 0.1), ("do_steps", 0.0, 0.03)]


def _flag(calls, on, off=math.inf, attempts=60):
    """A discrete output that is 1 for on < t < off, 0 elsewhere; more than `attempts` reads fail
    the test (a bracket that is never closed)."""

    def flag(t):
        calls.append(t)
        assert len(calls) <= attempts, "the change is never accepted"
        return int(on < t < off)

    return flag


def test_a_change_seen_only_at_the_middle_of_a_doubled_step_is_bracketed_there(world):
    """Step doubling (a driven body: no force extrapolation); the contact flag of "sd" is 1 between
    0.04 s and 0.06 s only: the full step [0, 0.1] ends with the flag as it began, its first half
    [0, 0.05] ends with it changed: a change inside the step (module docstring, item 2), the
    attempt rejected ("event", error nan: not estimated; explicit; 2 fmi2DoStep calls: the step and
    the first half) and bracketed by (0, 0.05]; the next attempt is half of it, [0, 0.025]: no
    change, accepted (3 calls) and the bracket kept (the step ends before it)."""
    run = _fake_run(world, {"mass": 1.0}, driven=["mass"])
    run.system.instances["sd"].values[20] = _flag([], 0.04, 0.06)
    algo = _started(world, run, h0=0.1)
    assert algo.extrapolation is None
    assert algo.do_step(0.0, 1.0) == 0.025
    event, step = algo.records
    assert (event.t, event.h, event.accepted, event.reason, event.implicit, event.calls) == (
        0.0,
        0.1,
        False,
        "event",
        False,
        2,
    )
    assert isinstance(event.error, float) and math.isnan(event.error)
    assert step == (0.0, 0.025, True, "", 0.0, False, 3, 0)
    assert algo.bracket == 0.05


def test_a_change_inside_a_half_step_of_exactly_the_event_window_is_not_an_event():
    """Event window 2^-10 s, a doubled step of 2^-9 s, a discrete output that is 1 only between
    0.0009 s and 0.0011 s: seen at the middle 2^-10 s, not at the end. The half step that holds it is
    exactly the window long, not longer: no rejection (module docstring, item 2: a change inside a
    step longer than event_window rejects it); the step is accepted at once."""
    window = 2.0**-10
    algo = _Stubbed(PARAMS, [0.0], h=2.0 * window)
    algo.window, algo.d = window, (0,)
    calls = []
    flag = _flag(calls, 0.0009, 0.0011)

    def measure(t, light=False):
        y, _ = _Stubbed._measure(algo, t, light)
        return y, (flag(t),)

    algo._measure = measure
    assert algo.do_step(0.0, 1.0) == 2.0 * window
    assert [(r.t, r.h, r.accepted, r.reason) for r in algo.records] == [
        (0.0, 2.0 * window, True, "")
    ]
    assert calls == [2.0 * window, window, 2.0 * window]


@pytest.mark.parametrize("stiff", [False, True], ids=["explicit", "implicit"])
def test_an_early_return_is_recorded_as_an_event_with_no_error_and_the_attempts_coupling(
    world, stiff
):
    """ "sd" returns early at 0.03 s from the attempt [0, 0.1]: its record is a rejection ("event")
    with error nan (not estimated) and the attempt's coupling (stiff: c = 1e6 N/m on 1 kg, backward
    Euler; else explicit, c = 0), and the fmi2DoStep call that returned early (StepRecord: the calls
    each FMU made for it, 1); the step then ends at 0.03 s."""
    el = _element(None, "mass", 1e6 if stiff else 0.0, 0.0)
    run = _fake_run(world, {"mass": 1.0}, elements=[el], extra=[el.inst])
    algo = _started(world, run, h0=0.1)
    world.early = (0.03, ["sd"])
    assert algo.do_step(0.0, 1.0) == 0.03
    event, step = algo.records
    assert (event.t, event.h, event.accepted, event.reason, event.implicit) == (
        0.0,
        0.1,
        False,
        "event",
        stiff,
    )
    assert isinstance(event.error, float) and math.isnan(event.error) and event.calls == 1
    assert (step.t, step.h, step.accepted, step.implicit) == (0.0, 0.03, True, stiff)


def test_an_error_of_exactly_the_tolerance_is_accepted():
    """Module docstring, item 3: above 1 the attempt is rejected; err = 1 is accepted, and the next
    step is 0.9*1^(-1/3) = 0.9 times it (item 4)."""
    algo = _Extrapolated([1.0])
    assert algo.do_step(0.0, 1.0) == 0.1
    assert [(r.accepted, r.error) for r in algo.records] == [(True, 1.0)]
    assert algo.h == pytest.approx(0.09, rel=1e-15)


def test_a_step_of_the_smallest_size_is_kept_above_the_tolerance():
    """A step of hmin (Adaptive: the smallest step) cannot be shrunk: err 5 > 1 is accepted there
    (hmin = h = 2^-20 s), recorded with its error, and reported once with the output whose error
    is the largest (the estimate's worst_at: the body's velocity)."""
    hmin = 2.0**-20
    algo = _Extrapolated([5.0, 7.0], h=hmin)
    algo.hmin = hmin
    variable = SimpleNamespace(valueReference=3, type="Real", name="v")
    inst = SimpleNamespace(name="mass", md=SimpleNamespace(modelVariables=[variable]))
    algo.motion = [SimpleNamespace(inst=inst, vr=[3])]
    algo.extrapolation.worst_at = 0
    message = r"at t = 0 s: a step of 9.54e-07 s \(hmin\) is 5 times the local tolerance"
    with pytest.warns(ToleranceWarning, match=message + ", the largest error in mass.v;"):
        assert algo.do_step(0.0, 1.0) == hmin
    assert [(r.h, r.accepted, r.error) for r in algo.records] == [(hmin, True, 5.0)]
    assert algo.unmet == (0.0, hmin, 5.0, "mass.v")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per run
        algo.do_step(hmin, 1.0)  # (the step stays at hmin: err 5 asks for a smaller one)
    assert [(r.h, r.accepted, r.error) for r in algo.records[1:]] == [(hmin, True, 7.0)]


@pytest.mark.parametrize("stiff", [False, True], ids=["explicit", "implicit"])
def test_an_error_rejection_is_recorded_with_its_step_and_coupling(stiff):
    """StepRecord of an attempt rejected by its error (scaled difference 6, p = 2 explicit or
    composite: err 6/3 = 2): start 0.5 s, size 0.1 s, not accepted, "error", the error, the attempt's
    coupling (implicit when stiff), 3 fmi2DoStep calls (the step and its two halves)."""
    algo = _Stubbed(PARAMS, [6.0, 0.0], stiff, composite=stiff, h=0.1)
    algo.do_step(0.5, 2.0)
    first = algo.records[0]
    assert (first.t, first.h, first.accepted, first.reason, first.calls) == (
        0.5,
        0.1,
        False,
        "error",
        3,
    )
    assert first.error == pytest.approx(2.0, rel=1e-9) and first.implicit is stiff


def test_a_step_cut_by_the_limit_away_from_time_zero_keeps_the_planned_size():
    """From 1 s with 0.5 s planned, the limit 1.25 s cuts the step to 0.25 s: the next step keeps
    the planned 0.5 s (do_step: a step cut by the limit keeps the planned size)."""
    algo = _Stubbed(PARAMS, [0.3], h=0.5)
    assert algo.do_step(1.0, 1.25) == 1.25
    assert algo.records[0].h == 0.25 and algo.h == 0.5


def test_an_early_return_in_the_second_half_of_a_doubled_step_counts_the_calls_before_it(world):
    """Step doubling (a driven body); the full step [0, 0.1] and its first half end normally, "sd"
    returns early at 0.07 s from the second half [0.05, 0.1] only (an event its inputs of the
    exchange at 0.05 s lead to). The event's record counts the fmi2DoStep calls each FMU made for
    the attempt (StepRecord), the step, its first half and the second half that returned early: 3;
    the step then goes to the event exactly, 0.07 s."""
    run = _fake_run(world, {"mass": 1.0}, driven=["mass"])

    def flag(t):
        if t == 0.05 and not algo.records:
            world.early = (0.07, ["sd"])  # located on the second half's inputs
        return 0

    run.system.instances["sd"].values[20] = flag
    algo = _started(world, run, h0=0.1)
    assert algo.do_step(0.0, 1.0) == 0.07
    event, step = algo.records
    assert (event.t, event.h, event.accepted, event.reason) == (0.0, 0.1, False, "event")
    assert event.calls == 3
    assert (step.t, step.h, step.accepted, step.calls) == (0.0, 0.07, True, 3)


def test_an_error_just_above_the_tolerance_is_rejected():
    """Module docstring, item 3: above 1 the attempt is rejected: err 1.5 (force extrapolation,
    p = 2) is, the retry of 0.1*0.9*1.5^(-1/3) = 0.0786222 s (item 4) accepted with err 0."""
    algo = _Extrapolated([1.5, 0.0])
    end = algo.do_step(0.0, 1.0)
    assert [(r.accepted, r.reason, r.error) for r in algo.records] == [
        (False, "error", 1.5),
        (True, "", 0.0),
    ]
    assert end == pytest.approx(0.0786222, rel=1e-6)
    assert end == pytest.approx(0.1 * 0.9 * 1.5 ** (-1.0 / 3.0), rel=1e-15)
