"""The figure types the chapters share, drawn with matplotlib under seaborn's "whitegrid" theme.

The theme is written out (:data:`THEME`, :data:`PALETTE`) rather than applied by ``seaborn.set_theme``:
importing seaborn imports pandas and scipy.stats, about a second per kernel, and every chapter starts two
kernels in the test command.  ``tests/test_plots_theme.py`` compares the written theme with seaborn's own,
so the two cannot drift; seaborn's ``rocket`` colour map, registered only by importing seaborn, is the one
key replaced (by matplotlib's ``viridis``).
"""
from __future__ import annotations

import re
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..engine import metrics
from ..engine.data import Dataset, augment_bias
from ..engine.models import Network, Params

DATA_COLOUR = "tab:green"
NEURON_COLOUR = "tab:blue"


#: seaborn's "deep" palette (its first six colours also become the shorthands b, g, r, m, y, c)
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
           "#64b5cd")
_CODES = {"b": "#4c72b0", "g": "#55a868", "r": "#c44e52", "m": "#8172b3", "y": "#ccb974", "c": "#64b5cd",
          "k": (0.1, 0.1, 0.1)}
_FONT = 12 * 0.95  # seaborn's "notebook" context at font_scale 0.95
_TICK = 11 * 0.95
#: seaborn.axes_style("whitegrid") | seaborn.plotting_context("notebook", font_scale=0.95)
THEME = {
    "figure.facecolor": "white", "axes.labelcolor": ".15", "xtick.direction": "out", "ytick.direction": "out",
    "xtick.color": ".15", "ytick.color": ".15", "axes.axisbelow": True, "grid.linestyle": "-", "text.color": ".15",
    "font.family": ["sans-serif"],
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True, "image.cmap": "viridis",
    "xtick.top": False, "ytick.right": False, "axes.grid": True, "axes.facecolor": "white", "axes.edgecolor": ".8",
    "grid.color": ".8", "axes.spines.left": True, "axes.spines.bottom": True, "axes.spines.right": True,
    "axes.spines.top": True, "xtick.bottom": False, "ytick.left": False,
    "axes.linewidth": 1.25, "grid.linewidth": 1, "lines.linewidth": 1.5, "lines.markersize": 6, "patch.linewidth": 1,
    "xtick.major.width": 1.25, "ytick.major.width": 1.25, "xtick.minor.width": 1, "ytick.minor.width": 1,
    "xtick.major.size": 6, "ytick.major.size": 6, "xtick.minor.size": 4, "ytick.minor.size": 4,
    "font.size": _FONT, "axes.labelsize": _FONT, "axes.titlesize": _FONT, "xtick.labelsize": _TICK,
    "ytick.labelsize": _TICK, "legend.fontsize": _TICK, "legend.title_fontsize": _FONT,
}


def setup() -> None:
    """The book's plotting theme (call once per chapter): seaborn's whitegrid theme and deep palette."""
    import matplotlib as mpl
    from cycler import cycler

    plt.rcParams.update(THEME)
    plt.rcParams["axes.prop_cycle"] = cycler(color=list(PALETTE))
    for code, colour in _CODES.items():
        mpl.colors.colorConverter.colors[code] = mpl.colors.to_rgb(colour)
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold"})


def neurons_and_function(ax, p: Params, data: Dataset, network: Network, run: int = 0,
                         xlim: tuple[float, float] | None = None, ylim: tuple[float, float] | None = None,
                         title: str = "", right_lim: float | None = None):
    """003's Figure 2 panel: data (green dots), the fitted function (green line, left axis) and every
    neuron as a star at (kink -w_j2/w_j1, signed norm s_j ||w_j||) on the right axis."""
    x, y = data.x1d.cpu().numpy(), data.y.cpu().numpy()
    if xlim is None:
        xlim = (x.min() - 1, x.max() + 1)
    if ylim is None:
        ylim = (y.min() - 2.6, y.max() + 1)
    grid = torch.linspace(*xlim, 400, dtype=torch.float64)
    q = p.select(run)
    h = network.forward(q, augment_bias(grid))[0].numpy()
    ax.plot(grid.numpy(), h, color=DATA_COLOUR, lw=2, label=r"$h_\theta$")
    ax.scatter(x, y, color=DATA_COLOUR, s=60, zorder=5, edgecolor="black", label="data")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("x")
    ax.set_ylabel(r"$h_\theta(x)$", color=DATA_COLOUR)
    right = ax.twinx()
    right.grid(False)
    k = metrics.kinks(q)[0].numpy()
    s = metrics.signed_norms(q)[0].numpy()
    inside = (k >= xlim[0]) & (k <= xlim[1])
    right.scatter(k[inside], s[inside], marker="*", s=90, color=NEURON_COLOUR, zorder=6, label="neurons")
    right.axhline(0.0, ls="--", color=NEURON_COLOUR, lw=0.8)
    lim = right_lim if right_lim is not None else max(1.1 * float(np.abs(s).max()), 1e-300)
    right.set_ylim(-lim, lim)
    right.set_ylabel(r"$s_j\|w_j\|$", color=NEURON_COLOUR)
    if title:
        ax.set_title(title)
    return right


def loss_curves(ax, steps, losses, labels: Sequence[str] | None = None, log: bool = False, colour=None,
                alpha: float = 0.8, lw: float = 1.2, xlabel: str = "iterations", ylabel: str = "training loss"):
    """Loss against iterations (or time) for every run of an ensemble: losses (R, K)."""
    steps = np.asarray(steps)
    losses = np.asarray(losses)
    for i, row in enumerate(np.atleast_2d(losses)):
        ax.plot(steps, row, color=colour, alpha=alpha, lw=lw, label=None if labels is None else labels[i])
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def hold_points(ax, xs, ys, pad: float = 0.05, origin: bool = True):
    """Axis limits that show every point (xs[i], ys[i]) a figure's verdict uses, padded by ``pad`` of the span (from
    0 when ``origin``): a limit set from one curve alone can hide another's evidence (issue 41: 001 Fig. 4 stopped
    near d = 49 while its verdict rests on the authors' data to d = 100). Non-finite points are left out. Returns
    ``(xlim, ylim)``, already applied to ``ax``."""
    x = np.asarray(xs, float).reshape(-1)
    y = np.asarray(ys, float).reshape(-1)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return ax.get_xlim(), ax.get_ylim()
    x, y = x[ok], y[ok]
    lims = []
    for v in (x, y):
        lo = min(0.0, float(v.min())) if origin else float(v.min())
        hi = float(v.max())
        span = (hi - lo) or abs(hi) or 1.0
        lims.append((lo - (0 if origin and lo == 0 else pad * span), hi + pad * span))
    ax.set_xlim(*lims[0])
    ax.set_ylim(*lims[1])
    return lims[0], lims[1]


def mark_iterations(ax, xs, labels: Sequence[str], colour="0.3"):
    """Vertical dashed lines with labels (e.g. exit times, panel iterations)."""
    for x, label in zip(xs, labels):
        ax.axvline(x, ls=":", color=colour, lw=1)
        ax.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=8, color=colour)


# ------------------------------------------------------------------------------------------------
# 002 (early alignment): the polar neuron plot and the function panel of Figures 2 and 3
POSITIVE_COLOUR = "tab:purple"
NEGATIVE_COLOUR = "tab:red"


def polar_neurons(ax, p: Params, run: int = 0, data: Dataset | None = None, title: str = "",
                  rorigin: float = 0.05, rmax: float | None = None):
    """002's right-hand panels: every neuron (w_j, b_j) at angle atan2(b_j, w_j) and radius ||(w_j, b_j)||
    (a polar axes ``ax``), purple for a_j > 0 and red for a_j < 0.  With ``data``, the data directions
    (black crosses) and the cone boundaries (dotted green lines) are drawn.  The radial origin sits at
    -rorigin * rmax, so that radius 0 is a small circle [authors' plotting convention, -5e-2]."""
    q = p.select(run)
    W, a = q.W[0].cpu(), q.a[0].cpu()
    ang = torch.atan2(W[:, 1], W[:, 0]).numpy()
    r = W.norm(dim=1).numpy()
    top = rmax if rmax is not None else max(1.1 * float(r.max()), 1e-300)
    pos = a.numpy() > 0
    ax.scatter(ang[pos], r[pos], marker="*", s=25, color=POSITIVE_COLOUR, alpha=0.7, lw=0, zorder=5)
    ax.scatter(ang[~pos], r[~pos], marker="*", s=25, color=NEGATIVE_COLOUR, alpha=0.7, lw=0, zorder=4)
    if data is not None:
        X = data.X.cpu()
        th = torch.atan2(X[:, 1], X[:, 0]).numpy()
        ax.scatter(th, np.full_like(th, 0.85 * top), marker="x", color="black", s=40, zorder=6)
        for t in th:
            for s in (-np.pi / 2, np.pi / 2):
                ax.plot([t + s, t + s], [0, top], ls=":", color=DATA_COLOUR, lw=1)
    ax.set_ylim(0, top)
    ax.set_rorigin(-rorigin * top)
    ax.set_yticklabels([])
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def function_panel(ax, p: Params, data: Dataset, network: Network, run: int = 0, xlim=(-1.0, 1.0),
                   extra: dict | None = None, title: str = "", ylim=None):
    """002's left-hand panels: the fitted function on ``xlim`` (green line) and the data (green dots); ``extra``
    maps labels to functions of a 1-D tensor drawn dashed (e.g. the OLS line or the teacher)."""
    grid = torch.linspace(*xlim, 801, dtype=torch.float64)
    h = network.forward(p.select(run), augment_bias(grid))[0].cpu().numpy()
    ax.plot(grid.numpy(), h, color=DATA_COLOUR, lw=2, label=r"$h_\theta$")
    for i, (label, f) in enumerate((extra or {}).items()):
        ax.plot(grid.numpy(), np.asarray(f(grid)), ls="--", lw=1.2, color=["tab:red", "0.4", "tab:orange"][i % 3],
                label=label)
    ax.scatter(data.x1d.cpu().numpy(), data.y.cpu().numpy(), color=DATA_COLOUR, s=30, zorder=5, edgecolor="black")
    ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("x")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def animation_player(frames: Sequence, draw, figsize=(8, 3.4), fps: int = 10, dpi: int = 60) -> str:
    """A self-contained HTML player (matplotlib's ``to_jshtml``) with one frame per item of ``frames``;
    ``draw(fig, item)`` draws an item on the cleared figure.  The frames are PNG images embedded in the
    page: no ffmpeg, no network (matplotlib's link to a Font Awesome CDN is removed; the book's theme
    serves its own Font Awesome, whose "fa" names cover the player's icons)."""
    import tempfile
    from pathlib import Path

    from matplotlib import animation

    # matplotlib's HTMLWriter driven by hand: FuncAnimation.to_jshtml renders every frame twice (its
    # draw_idle, then the writer's savefig); this renders each once and writes the same player and frames.
    fig = plt.figure(figsize=figsize, dpi=dpi)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "player.html"
            writer = animation.HTMLWriter(fps=fps, embed_frames=True, default_mode="once")
            with writer.saving(fig, str(path), dpi):
                for item in frames:
                    fig.clear()
                    draw(fig, item)
                    writer.grab_frame()
            html = path.read_text()
    finally:
        plt.close(fig)
    return re.sub(r"<link[^>]*href=[\"']https?://[^>]*>", "", html)


def _when(k: int, time_per_step: float | None) -> str:
    return f"iteration {k}" + (f" (t = {k * time_per_step:.3g})" if time_per_step else "")


def neuron_animation(states: Sequence[tuple[int, Params]], data: Dataset, network: Network, run: int = 0,
                     extra: dict | None = None, ylim=None, xlim=(-1.0, 1.0), polar_data: bool = True,
                     fps: int = 10, dpi: int = 60, time_per_step: float | None = None) -> str:
    """002's animations (the authors' mp4 files, E4) as an HTML player (:func:`animation_player`): one
    frame per ``(iteration, Params)`` state, the function panel on the left and the polar neuron panel
    on the right.  The radius of the polar panel follows the largest neuron of each frame."""

    def draw(fig, state):
        k, q = state
        fig.subplots_adjust(left=0.08, right=0.97, top=0.82, bottom=0.14, wspace=0.3)
        left = fig.add_subplot(1, 2, 1)
        right = fig.add_subplot(1, 2, 2, projection="polar")
        function_panel(left, q, data, network, run=run, xlim=xlim, extra=extra, ylim=ylim,
                       title=_when(k, time_per_step))
        polar_neurons(right, q, run=run, data=data if polar_data else None,
                      title=f"neurons, max norm {float(q.select(run).W.norm(dim=-1).max()):.2g}")

    return animation_player(states, draw, figsize=(8, 3.4), fps=fps, dpi=dpi)


def kink_animation(states: Sequence[tuple[int, Params]], data: Dataset, network: Network, run: int = 0,
                   xlim: tuple[float, float] | None = None, fps: int = 10, dpi: int = 70,
                   time_per_step: float | None = None) -> str:
    """003's animations (E4, the authors' GFdynamics videos) as an HTML player (:func:`animation_player`):
    one Figure 2 panel (:func:`neurons_and_function`) per ``(iteration, Params)`` state.  The right axis
    follows the largest neuron of each frame, so the tiny neurons of the early phases stay visible."""

    def draw(fig, state):
        k, q = state
        ax = fig.add_subplot(1, 1, 1)
        neurons_and_function(ax, q, data, network, run=run, xlim=xlim, title=_when(k, time_per_step))
        fig.subplots_adjust(left=0.12, right=0.86, top=0.9, bottom=0.14)

    return animation_player(states, draw, figsize=(6, 3.6), fps=fps, dpi=dpi)
