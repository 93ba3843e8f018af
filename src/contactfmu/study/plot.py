"""The plot of a study's table: a curve per metric over a one-parameter grid, a heat map per metric
over a two-parameter grid, histograms of the metrics otherwise (samples, lists, larger grids).
Axes are labelled with the quantities' units (from the FMUs' model descriptions); runs that failed
are named in the title (and grey in heat maps)."""

import numpy as np

from .. import plots


def label(name, unit):
    return f"{name} [{unit}]" if unit else name


def is_geometric(values):
    """True for positive values spanning a factor 20 or more, or in geometric (not linear) progression:
    plotted on a log axis."""
    v = np.sort(np.asarray(values, dtype=float))
    if len(v) < 2 or np.any(v <= 0):
        return False
    if v[-1] / v[0] >= 20:
        return True
    ratios, steps = v[1:] / v[:-1], np.diff(v)
    return bool(
        len(v) >= 3
        and np.allclose(ratios, ratios[0], rtol=1e-9)
        and not np.allclose(steps, steps[0], rtol=1e-9)
    )


def describe(study):
    """'<n> runs of <model>, 0 to <stop> s, <options>' for titles."""
    model = getattr(study.model, "name", None) or getattr(study.model, "__name__", "the model")
    stop = f", 0 to {study.stop_time:g} s" if study.stop_time is not None else ""
    options = ", ".join(
        f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in study.options.items()
    )
    return f"{len(study.runs)} runs of {model}{stop}{', ' + options if options else ''}"


def cell_edges(centers, log):
    """Edges of heat-map cells around their centres (midpoints; in log10 for a log axis)."""
    c = np.log10(centers) if log else np.asarray(centers, dtype=float)
    if len(c) == 1:
        e = np.array([c[0] - 0.5, c[0] + 0.5])
    else:
        mid = (c[1:] + c[:-1]) / 2
        e = np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])
    return 10**e if log else e


def _failed(frame):
    bad = frame[frame["status"] != "ok"]
    if not len(bad):
        return ""
    counts = bad["status"].value_counts()
    return (
        "; "
        + ", ".join(f"{n} run{'s' * (n != 1)} {s}" for s, n in counts.items())
        + " (no metric values)"
    )


def plot(frame, study, path, title=None):
    """Write the study's plot (PNG) to `path`; returns path."""
    metrics = [(m.name, m.unit) for m in study.metrics] + [("wall_time", "s")]
    runs = study.runs
    title = title or f"study {study.name}: {describe(study)}"
    title += _failed(frame)
    if runs.kind == "grid" and len(runs.axes) == 1:
        fig = _curves(frame, study, metrics)
    elif runs.kind == "grid" and len(runs.axes) == 2:
        fig = _heat_maps(frame, study, metrics)
    else:
        fig = _histograms(frame, study, metrics)
    fig.suptitle(title, fontsize=10)
    return plots.save(fig, path)


def _curves(frame, study, metrics):
    ((name, values),) = study.runs.axes.items()
    fig, axes = plots.figure(
        len(metrics), 1, figsize=(8, 1.2 + 2.4 * len(metrics)), sharex=True, squeeze=False
    )
    ok = frame["status"] == "ok"
    for ax, (metric, unit) in zip(axes[:, 0], metrics):
        ax.plot(frame.loc[ok, name], frame.loc[ok, metric], "o-", lw=1.4, ms=4)
        ax.set_ylabel(label(metric, unit))
        ax.grid(True, which="both", alpha=0.3)
        if is_geometric(values):
            ax.set_xscale("log")
    axes[-1, 0].set_xlabel(label(name, study.units.get(name, "")))
    return fig


def _heat_maps(frame, study, metrics):
    (nx, vx), (ny, vy) = study.runs.axes.items()
    fig, axes = plots.figure(
        1, len(metrics), figsize=(1.0 + 5.0 * len(metrics), 4.6), squeeze=False
    )
    logx, logy = is_geometric(vx), is_geometric(vy)
    index = {(x, y): k for k, (x, y) in enumerate(zip(frame[nx], frame[ny]))}
    for ax, (metric, unit) in zip(axes[0], metrics):
        z = np.full((len(vy), len(vx)), np.nan)
        for i, y in enumerate(vy):
            for j, x in enumerate(vx):
                k = index.get((x, y))
                if k is not None and frame["status"].iloc[k] == "ok":
                    z[i, j] = frame[metric].iloc[k]
        cmap = plots.pyplot().get_cmap("viridis").copy()
        cmap.set_bad("lightgrey")
        mesh = ax.pcolormesh(
            cell_edges(vx, logx),
            cell_edges(vy, logy),
            np.ma.masked_invalid(z),
            cmap=cmap,
            shading="flat",
        )
        fig.colorbar(mesh, ax=ax, label=label(metric, unit))
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        ax.set_xlabel(label(nx, study.units.get(nx, "")))
        ax.set_ylabel(label(ny, study.units.get(ny, "")))
    return fig


def _histograms(frame, study, metrics):
    fig, axes = plots.figure(
        1, len(metrics), figsize=(1.0 + 4.2 * len(metrics), 4.0), squeeze=False
    )
    ok = frame["status"] == "ok"
    for ax, (metric, unit) in zip(axes[0], metrics):
        values = frame.loc[ok, metric].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        ax.hist(
            values,
            bins=max(5, min(30, int(np.sqrt(len(values))) + 1)),
            color="C0",
            edgecolor="white",
        )
        ax.set_xlabel(label(metric, unit))
        ax.set_ylabel("runs")
        ax.grid(True, alpha=0.3)
    return fig
