"""The adaptive master's error estimate and step-size controller (cosim.algorithms.adaptive) against
their formulas, with hand-computed values and no FMU:

    err = max_i |y_half_i - y_full_i| / (atol + rtol*max(|y_half_i|, |y_full_i|)) / (2^p - 1)
    next step = H*min(4, max(0.2, 0.9*err^(-1/(p + 1))))   (a rejected step: H*max(0.2, ...))

p = 2 for the explicit and the composite implicit steps, 1 for backward Euler on the interface.
The attempt itself (_save, _advance, _measure, ...) is replaced by stubs that return chosen
motions, so do_step runs only the controller."""

import math

import pytest

from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm


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

    def _restore(self, states):
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
