"""The adaptive master's error estimate and step-size controller (cosim.algorithms.adaptive) against
their formulas, with hand-computed values and no FMU:

    err = max_i |y_half_i - y_full_i| / (atol + rtol*max(|y_half_i|, |y_full_i|)) / (2^p - 1)
    next step = H*min(4, max(0.2, 0.9*err^(-1/(p + 1))))   (a rejected step: H*max(0.2, ...))

p = 2 for the explicit and the composite implicit steps, 1 for backward Euler on the interface.
The attempt itself (_save, _advance, _measure, ...) is replaced by stubs that return chosen
motions, so do_step runs only the controller."""

import math

import pytest

from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm, ForceExtrapolation
from contactfmu.cosim.errors import CosimError


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
        self.measured = []

    def _save(self):
        return []

    def _restore(self, states, keep=()):
        pass

    def _free(self, states):
        pass

    def _stiff(self, t, h):
        return self.is_stiff

    def _advance(self, t, h, implicit):
        self.calls += 1

    def _measure(self, t):
        # full step, then the two half steps: y_full = 1, y_mid = 1, y_half = 1 + e*(atol + rtol*...)
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

            def error(self, h, y0, y, rtol, atol):
                return outer.queue.pop(0)

        self.queue = list(errors)
        self.extrapolation = Stub()

    def _measure(self, t):
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
