"""The plot of a study's table (study/plot.py), without FMUs: the axis labels with units, the log
axes of geometric grids, the title naming the model, span, options and failed runs, a curve per
metric over a one-parameter grid (failed runs left out), a heat map per metric over a two-parameter
grid (failed cells masked), histograms otherwise; checked on the figure before it is written."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from contactfmu import plots
from contactfmu.study import plot


def test_labels_carry_the_unit_when_there_is_one():
    assert plot.label("k", "N/m") == "k [N/m]"
    assert plot.label("bounces", "") == "bounces"
    assert plot.label("bounces", None) == "bounces"


@pytest.mark.parametrize(
    "values, log",
    [
        ([1.0, 20.0], True),  # a factor 20
        ([1.0, 19.0], False),  # below 20, two values: no progression to speak of
        ([1.0, 2.0, 4.0, 8.0], True),  # geometric
        ([1.0, 2.0, 3.0, 4.0], False),  # linear
        ([8.0, 1.0, 4.0, 2.0], True),  # sorted first
        ([2.0, 2.0, 2.0], False),  # constant: both progressions at once
        ([1.0, 2.0, 4.0, 7.0], False),  # neither
        ([0.0, 1.0, 100.0], False),  # not positive
        ([-1.0, 1.0, 100.0], False),
        ([5.0], False),
        ([], False),
        ([1.0, 1.0 + 1e-12, 1.0 + 2e-12], False),
    ],
)
def test_geometric_values_get_a_log_axis(values, log):
    assert plot.is_geometric(values) is log


def test_a_ratio_that_differs_beyond_the_tolerance_is_not_geometric():
    assert plot.is_geometric([1.0, 2.0, 4.0 * (1 + 1e-6)]) is False
    assert plot.is_geometric([1.0, 2.0, 4.0 * (1 + 1e-11)]) is True


class Runs(list):
    def __init__(self, n, kind, axes):
        super().__init__(range(n))
        self.kind, self.axes = kind, axes


def _study(kind="grid", axes=None, options=None, stop_time=1.5, model=None, n=4):
    return SimpleNamespace(
        name="demo",
        model=model if model is not None else SimpleNamespace(name="bouncer"),
        stop_time=stop_time,
        options=options if options is not None else {},
        runs=Runs(n, kind, axes or {}),
        metrics=[SimpleNamespace(name="peak", unit="N"), SimpleNamespace(name="count", unit="")],
        units={"k": "N/m", "d": "N.s/m"},
    )


def test_describe_names_runs_model_span_and_options():
    s = _study(options={"step": 1e-3, "scheme": "jacobi", "n": 3})
    s.runs = Runs(4, "grid", {})
    assert plot.describe(s) == "4 runs of bouncer, 0 to 1.5 s, step 0.001, scheme jacobi, n 3"
    s.options, s.stop_time = {}, None
    assert plot.describe(s) == "4 runs of bouncer"

    def build():
        pass

    s.model = build  # a function: its name
    assert plot.describe(s) == "4 runs of build"
    s.model = SimpleNamespace(name=None)  # nothing to name
    assert plot.describe(s) == "4 runs of the model"


def test_cell_edges_are_midpoints_linear_or_in_log10():
    assert list(plot.cell_edges([1.0, 2.0, 4.0], False)) == [0.5, 1.5, 3.0, 5.0]
    assert list(plot.cell_edges([3.0], False)) == [2.5, 3.5]
    assert plot.cell_edges([1.0, 10.0, 100.0], True) == pytest.approx(
        [10**-0.5, 10**0.5, 10**1.5, 10**2.5]
    )
    assert plot.cell_edges([100.0], True) == pytest.approx([10**1.5, 10**2.5])


def test_failed_runs_are_counted_in_the_title():
    ok = pd.DataFrame({"status": ["ok", "ok"]})
    assert plot._failed(ok) == ""
    bad = pd.DataFrame({"status": ["ok", "failed", "timeout", "failed"]})
    assert plot._failed(bad) == "; 2 runs failed, 1 run timeout (no metric values)"


@pytest.fixture
def figures(monkeypatch):
    """The figures plot() would write, with the paths."""
    kept = []

    def save(fig, path, dpi=None):
        kept.append((fig, path))
        return path

    monkeypatch.setattr(plots, "save", save)
    yield kept
    for fig, _ in kept:
        plots.pyplot().close(fig)


def _frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


def test_one_axis_a_curve_per_metric_failed_runs_left_out(figures):
    k = [1.0, 10.0, 100.0, 1000.0]
    s = _study()
    s.runs = Runs(4, "grid", {"k": k})
    frame = _frame(
        [
            [1.0, "ok", 5.0, 2, 0.1],
            [10.0, "failed", np.nan, np.nan, 0.2],
            [100.0, "ok", 7.0, 3, 0.3],
            [1000.0, "ok", 9.0, 4, 0.4],
        ],
        ["k", "status", "peak", "count", "wall_time"],
    )
    assert plot.plot(frame, s, "out.png") == "out.png"
    ((fig, path),) = figures
    assert path == "out.png"
    assert fig._suptitle.get_text() == (
        "study demo: 4 runs of bouncer, 0 to 1.5 s; 1 run failed (no metric values)"
    )
    axes = fig.axes
    assert [a.get_ylabel() for a in axes] == ["peak [N]", "count", "wall_time [s]"]
    assert axes[-1].get_xlabel() == "k [N/m]"
    assert [a.get_xscale() for a in axes] == ["log"] * 3
    (line,) = axes[0].get_lines()
    assert list(line.get_xdata()) == [1.0, 100.0, 1000.0]
    assert list(line.get_ydata()) == [5.0, 7.0, 9.0]
    assert list(axes[2].get_lines()[0].get_ydata()) == [0.1, 0.3, 0.4]
    assert fig.get_size_inches() == pytest.approx([8, 1.2 + 2.4 * 3])


def test_a_linear_axis_and_a_title_of_ones_own(figures):
    s = _study()
    s.runs = Runs(3, "grid", {"x": [1.0, 2.0, 3.0]})
    frame = _frame(
        [[1.0, "ok", 1.0, 1, 0.1], [2.0, "ok", 2.0, 1, 0.1], [3.0, "ok", 3.0, 1, 0.1]],
        ["x", "status", "peak", "count", "wall_time"],
    )
    plot.plot(frame, s, "p.png", title="mine")
    ((fig, _),) = figures
    assert fig._suptitle.get_text() == "mine"
    assert fig._suptitle.get_fontsize() == 10
    assert [a.get_xscale() for a in fig.axes] == ["linear"] * 3
    assert fig.axes[-1].get_xlabel() == "x"  # no unit known


def test_two_axes_a_heat_map_per_metric_failed_cells_masked(figures):
    k, d = [1.0, 10.0, 100.0], [0.5, 1.0]
    s = _study()
    s.runs = Runs(6, "grid", {"k": k, "d": d})
    rows = []
    for y in d:
        for x in k:
            status = "failed" if (x, y) == (10.0, 1.0) else "ok"
            rows.append([x, y, status, x * y, x + y, 0.5])
    frame = _frame(rows, ["k", "d", "status", "peak", "count", "wall_time"])
    plot.plot(frame, s, "h.png")
    ((fig, _),) = figures
    maps = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    bars = [a for a in fig.axes if a.get_label() == "<colorbar>"]
    assert len(maps) == len(bars) == 3  # and a colour bar each
    assert [b.get_ylabel() for b in bars] == ["peak [N]", "count", "wall_time [s]"]
    first = maps[0]
    assert (first.get_xlabel(), first.get_ylabel()) == ("k [N/m]", "d [N.s/m]")
    assert (first.get_xscale(), first.get_yscale()) == ("log", "linear")
    mesh = first.collections[0]
    z = mesh.get_array()
    assert z.shape == (2, 3)
    assert list(np.ma.getmaskarray(z).ravel()) == [False, False, False, False, True, False]
    assert list(z.ravel()[[0, 1, 2, 3, 5]]) == [0.5, 5.0, 50.0, 1.0, 100.0]
    assert list(maps[1].collections[0].get_array().ravel()[[0, 5]]) == [1.5, 101.0]
    # cell edges: log midpoints in k, linear in d
    coords = mesh.get_coordinates()
    assert list(coords[0, :, 0]) == pytest.approx([10**-0.5, 10**0.5, 10**1.5, 10**2.5])
    assert list(coords[:, 0, 1]) == pytest.approx([0.25, 0.75, 1.25])
    from matplotlib.colors import to_rgba

    assert mesh.get_cmap().name == "viridis"
    assert tuple(mesh.get_cmap().get_bad()) == to_rgba("lightgrey")  # failed runs grey
    assert fig.get_size_inches() == pytest.approx([1.0 + 5.0 * 3, 4.6])


def test_samples_get_a_histogram_per_metric_of_the_finite_values_of_good_runs(figures):
    s = _study()
    s.runs = Runs(5, "samples", {"k": [1.0, 2.0]})
    frame = _frame(
        [
            [1.0, "ok", 1.0, 1, 0.1],
            [2.0, "ok", np.inf, 1, 0.1],
            [3.0, "failed", 100.0, 1, 0.1],
            [4.0, "ok", 2.0, 2, 0.2],
            [5.0, "ok", 2.5, 2, 0.2],
        ],
        ["k", "status", "peak", "count", "wall_time"],
    )
    plot.plot(frame, s, "s.png")
    ((fig, _),) = figures
    axes = fig.axes
    assert [a.get_xlabel() for a in axes] == ["peak [N]", "count", "wall_time [s]"]
    assert [a.get_ylabel() for a in axes] == ["runs"] * 3
    bars = axes[0].patches
    assert len(bars) == 5  # max(5, min(30, int(sqrt(3)) + 1))
    assert sum(b.get_height() for b in bars) == 3  # 1.0, 2.0, 2.5: inf and the failed run left out
    assert bars[0].get_x() == pytest.approx(1.0) and bars[-1].get_x() + bars[
        -1
    ].get_width() == pytest.approx(2.5)
    assert fig.get_size_inches() == pytest.approx([1.0 + 4.2 * 3, 4.0])


def test_many_samples_get_more_bins_up_to_30(figures):
    s = _study()
    s.runs = Runs(1000, "samples", {})
    values = np.arange(1000.0)
    frame = pd.DataFrame(
        {"status": ["ok"] * 1000, "peak": values, "count": values[:1000], "wall_time": values}
    )
    plot.plot(frame, s, "m.png")
    ((fig, _),) = figures
    assert len(fig.axes[0].patches) == 30
    frame = frame.iloc[:100]
    plot.plot(frame, s, "m.png")
    assert len(figures[1][0].axes[0].patches) == 11  # int(sqrt(100)) + 1


def test_a_three_axis_grid_gets_histograms(figures):
    s = _study()
    s.runs = Runs(1, "grid", {"a": [1.0], "b": [1.0], "c": [1.0]})
    frame = pd.DataFrame({"status": ["ok"], "peak": [1.0], "count": [1.0], "wall_time": [1.0]})
    plot.plot(frame, s, "g.png")
    assert [a.get_ylabel() for a in figures[0][0].axes] == ["runs"] * 3


def test_the_style_of_curves_and_histograms(figures):
    """Curves: markers joined by lines (lw 1.4, markers 4), a grid on major and minor ticks, the
    axes sharing x; histograms in the first colour with white edges and a grid."""
    from matplotlib.colors import to_rgba

    s = _study()
    s.runs = Runs(3, "grid", {"k": [1.0, 10.0, 100.0]})
    frame = _frame(
        [[1.0, "ok", 1.0, 1, 0.1], [10.0, "ok", 2.0, 1, 0.1], [100.0, "ok", 3.0, 1, 0.1]],
        ["k", "status", "peak", "count", "wall_time"],
    )
    plot.plot(frame, s, "c.png")
    ((fig, _),) = figures
    first = fig.axes[0]
    (line,) = first.get_lines()
    assert (line.get_marker(), line.get_linestyle()) == ("o", "-")
    assert (line.get_linewidth(), line.get_markersize()) == (1.4, 4)
    assert first.get_shared_x_axes().joined(first, fig.axes[2])
    grid = first.get_xgridlines()[0]
    assert grid.get_visible() and grid.get_alpha() == 0.3
    assert first.get_ygridlines()[0].get_visible()
    # on the log axis the minor ticks (2, 3, ... between the decades) have grid lines too
    assert all(t.gridline.get_visible() for t in first.xaxis.get_minor_ticks())
    s.runs = Runs(3, "samples", {})
    plot.plot(frame, s, "h.png")
    ax = figures[1][0].axes[0]
    bar = ax.patches[0]
    assert bar.get_facecolor() == to_rgba("C0") and bar.get_edgecolor() == to_rgba("white")
    grid = ax.get_xgridlines()[0]
    assert grid.get_visible() and grid.get_alpha() == 0.3


def test_heat_map_axes_follow_each_grid_and_a_parameter_without_unit(figures):
    """A linear x and a geometric y: the scales and the cell edges follow each axis; a parameter
    whose unit is unknown is labelled by its name."""
    x, y = [1.0, 2.0, 3.0], [1.0, 10.0, 100.0]
    s = _study()
    s.runs = Runs(9, "grid", {"n": x, "z": y})
    rows = [[a, b, "ok", a * b, 1.0, 0.5] for b in y for a in x]
    plot.plot(_frame(rows, ["n", "z", "status", "peak", "count", "wall_time"]), s, "h.png")
    ((fig, _),) = figures
    first = fig.axes[0]
    assert (first.get_xscale(), first.get_yscale()) == ("linear", "log")
    assert (first.get_xlabel(), first.get_ylabel()) == ("n", "z")
    coords = first.collections[0].get_coordinates()
    assert list(coords[0, :, 0]) == pytest.approx([0.5, 1.5, 2.5, 3.5])
    assert list(coords[:, 0, 1]) == pytest.approx([10**-0.5, 10**0.5, 10**1.5, 10**2.5])


def test_describe_formats_float_options_short():
    s = _study(options={"step": 1e-3 / 3, "n": 7})
    s.runs = Runs(2, "grid", {})
    assert plot.describe(s) == "2 runs of bouncer, 0 to 1.5 s, step 0.000333333, n 7"


@pytest.mark.parametrize(
    "values, log",
    [
        ([0.1, 2.0], True),  # a factor 20 between small values
        ([5.0, 10.0], False),  # a factor 2 between large ones
        ([1.0, 2.0, 40.0], True),  # the factor is between the extremes
        ([1e6, 1e6 * (1 + 1e-6), 1e6 * (1 + 1e-6) ** 2], True),  # steps differ by 1e-6: geometric
    ],
)
def test_geometric_is_judged_on_the_extremes_and_tight_tolerances(values, log):
    assert plot.is_geometric(values) is log
