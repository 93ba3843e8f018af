"""csv-compare style tube comparison of a result against a reference (MSL regression criterion).

Per reference signal y(t) (csv-compare v2.0.3 "legacy" bases, tolerance 2e-3 by default):

    baseX = max(t_max - t_min, |t_min|, 1e-12)        dt = tol*baseX
    baseY = max(y_max - y_min, |y_min|, floor)         dy = tol*baseY

The tube is the union of the rectangles [t_i +- dt] x [y_i +- dy] around the reference points.
Here it is evaluated as lower(t) = min of the piecewise-linear reference over [t - dt, t + dt]
minus dy (upper alike), which is the Minkowski sum the rectangle algorithm builds; event rows
(duplicated time stamps) are part of the reference. Every value of the result, at its own time
points inside the reference's time range, must lie in the tube.

The result must also cover the reference's time range: start no later than t_min + dt and end
no earlier than t_max - dt (the tube's own time tolerance, which also absorbs float noise in the
end time); otherwise every signal fails ("result covers 0 .. 0.1 s, reference 0 .. 1 s").
"""

import math
from dataclasses import dataclass

import numpy as np

from .results import read_csv


@dataclass
class SignalReport:
    name: str
    passed: bool
    points: int  # result points checked
    failures: int  # points outside the tube
    worst: float  # largest distance outside the tube, in units of dy (0 if inside)
    worst_time: float  # where it occurs (nan if passed)
    dt: float
    dy: float
    coverage: str = ""  # why the result does not cover the reference's time range ("" if it does)

    def __str__(self):
        if self.passed:
            return f"{self.name}: PASSED ({self.points} points, dt = {self.dt:.3g} s, dy = {self.dy:.3g})"
        text = f"{self.name}: FAILED"
        if self.coverage:
            text += f": {self.coverage}"
        if self.failures or not self.coverage:
            text += (
                f"{';' if self.coverage else ''} at {self.failures} of {self.points} points; worst "
                f"{self.worst:.3g} dy outside at t = {self.worst_time:.6g} s"
            )
        else:
            text += f"; inside the tube at its {self.points} points"
        return text + f" (dt = {self.dt:.3g} s, dy = {self.dy:.3g})"


class Report(dict):
    """SignalReport by signal name; ``passed`` if every requested signal was compared and passed
    (a signal missing from the result fails the report, and so does a result that does not
    cover the reference's time range: ``coverage`` says how, "" if it does)."""

    missing = ()
    coverage = ""

    @property
    def passed(self):
        return (
            bool(self)
            and not self.missing
            and not self.coverage
            and all(r.passed for r in self.values())
        )

    def __str__(self):
        lines = [str(r) for r in self.values()]
        lines += [f"{name}: FAILED: missing from the result" for name in self.missing]
        if self.coverage and not self:
            lines.append(f"FAILED: {self.coverage}")
        return "\n".join(lines)


def _range_extrema(y):
    """Sparse tables for O(1) range min/max queries."""
    mins, maxs = [y], [y]
    k = 1
    while 2 * k <= len(y):
        mins.append(np.minimum(mins[-1][:-k], mins[-1][k:]))
        maxs.append(np.maximum(maxs[-1][:-k], maxs[-1][k:]))
        k *= 2
    return mins, maxs


def tube_bounds(t_ref, y_ref, t, tol=2e-3, floor=1e-12):
    """Lower and upper tube curves at the times t, and (dt, dy)."""
    t_ref = np.asarray(t_ref, float)
    y_ref = np.asarray(y_ref, float)
    t = np.asarray(t, float)
    dt = tol * max(t_ref.max() - t_ref.min(), abs(t_ref.min()), 1e-12)
    dy = tol * max(y_ref.max() - y_ref.min(), abs(y_ref.min()), floor)
    lo_t, hi_t = t - dt, t + dt
    # the reference at the window ends (linear interpolation, clipped to its range)
    ends = np.stack([np.interp(lo_t, t_ref, y_ref), np.interp(hi_t, t_ref, y_ref)])
    lower, upper = ends.min(axis=0), ends.max(axis=0)
    i0 = np.searchsorted(t_ref, lo_t, side="left")
    i1 = np.searchsorted(t_ref, hi_t, side="right")  # points i0..i1-1 lie inside the window
    n = i1 - i0
    inside = n > 0
    if inside.any():
        mins, maxs = _range_extrema(y_ref)
        level = np.zeros_like(n)
        level[inside] = np.floor(np.log2(n[inside])).astype(int)
        for k in np.unique(level[inside]):
            sel = inside & (level == k)
            a, b = i0[sel], i1[sel] - (1 << k)
            lower[sel] = np.minimum(lower[sel], np.minimum(mins[k][a], mins[k][b]))
            upper[sel] = np.maximum(upper[sel], np.maximum(maxs[k][a], maxs[k][b]))
    return lower - dy, upper + dy, dt, dy


def _coverage(t, t_ref, dt):
    """Why the times t do not cover t_ref's range within dt, or ""."""
    if not len(t):
        return "the result has no rows"
    if t.min() <= t_ref.min() + dt and t.max() >= t_ref.max() - dt:
        return ""
    return (
        f"result covers {t.min():.6g} .. {t.max():.6g} s, reference {t_ref.min():.6g} .. {t_ref.max():.6g} s "
        f"(allowed gap dt = {dt:.3g} s)"
    )


def compare(result, reference, signals=None, tol=2e-3):
    """Compare Result `result` against Result `reference`; returns a Report."""
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if not len(reference.time):
        raise ValueError("the reference has no rows")
    names = [n for n in (signals or reference.names[1:])]
    report = Report()
    missing = []
    t_ref = reference.time
    t = result.time
    dt = tol * max(t_ref.max() - t_ref.min(), abs(t_ref.min()), 1e-12)  # as in tube_bounds
    report.coverage = coverage = _coverage(t, t_ref, dt)
    keep = (t >= t_ref.min() - 1e-12) & (t <= t_ref.max() + 1e-12)
    for name in names:
        if name not in reference:
            raise KeyError(f"reference has no signal {name!r}")
        if name not in result:
            missing.append(name)
            continue
        y = result[name][keep]
        lower, upper, dt, dy = tube_bounds(t_ref, reference[name], t[keep], tol)
        excess = np.maximum(lower - y, y - upper)
        bad = ~(excess <= 0)  # NaN counts as outside
        worst_i = int(np.nanargmax(np.where(np.isnan(excess), np.inf, excess))) if bad.any() else -1
        report[name] = SignalReport(
            name,
            not bad.any() and not coverage,
            int(keep.sum()),
            int(bad.sum()),
            float(excess[worst_i] / dy) if worst_i >= 0 else 0.0,
            float(t[keep][worst_i]) if worst_i >= 0 else float("nan"),
            dt,
            dy,
            coverage,
        )
    report.missing = tuple(missing)
    return report


def compare_files(result_csv, reference_csv, signals=None, tol=2e-3):
    return compare(read_csv(result_csv), read_csv(reference_csv), signals, tol)
