"""The figure types the chapters share, drawn with matplotlib under a seaborn theme."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from . import metrics
from .data import Dataset, augment_bias
from .models import Network, Params

DATA_COLOUR = "tab:green"
NEURON_COLOUR = "tab:blue"


def setup() -> None:
    """The book's plotting theme (call once per chapter)."""
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
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


def mark_iterations(ax, xs, labels: Sequence[str], colour="0.3"):
    """Vertical dashed lines with labels (e.g. exit times, panel iterations)."""
    for x, label in zip(xs, labels):
        ax.axvline(x, ls=":", color=colour, lw=1)
        ax.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=8, color=colour)
