# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Appendix A: the non-orthogonal toy and the initial scale
#
# **Source:** `003_2cfc81695abc9c19.txt` {cite:p}`boursier2022orthogonal`, Boursier, Pillaud-Vivien and Flammarion (NeurIPS 2022).
# Appendix A is referred to but **not in the source file**; its experiments are rebuilt from the
# authors' code (github.com/eboursier/GFdynamics) as the specification describes it.
# **Targets:** E3a (non-orthogonal 1-D toy) and E3b (role of the initialisation scale).
# **Computed by:** {py:func}`shallowflow.experiments.orthogonal_inputs.appendix_a.run_nonorthogonal`.
#
# What the main text says Appendix A shows: "similar experiments on non-orthogonal toy data", with
# "some similar training phenomena, but major differences appearing in the dynamics"; "If data were
# not orthogonal, neurons could indeed realign while growing in norm as illustrated by Figure 4d";
# and experiments that "illustrate the necessity of small initialisation for implicit bias".
#
# :::{admonition} Which data, which scale, which step
# :class: note
# **Data** [authors' code]: $x=(-1.5,-1,0,0.25,2)$ with a bias coordinate, so $x\mapsto(x,1)$. The
# two commits disagree on the third label: $y=(0.7,-0.3,-0.4,0.4,0.2)$ in the early commits
# (d1f95d2, 39688ff), where this dataset was the *active* one, and $y_3=-0.3$ in the camera-ready
# commit, where the dataset lines are commented out (the notebook was last run on the orthogonal
# toy). We take the **early labels with the early commits' initialisation as the primary E3a
# setting**, because it is the only configuration of the code that was actually set up to run on
# this data (dataset active, 400,000 iterations, loss plot up to 300,000); and we train **both label
# variants** in the same ensemble, so that every E3a check is evaluated on both.
#
# **Initialisation.** E3a: the early code draws weights and biases with standard deviation
# `init_scale`$/m$ ($n_{\rm feature}=1$, so both are $1/m$ scaled), i.e. $\lambda=10^{-3}/60$.
# E3b: the camera-ready convention $\lambda=$ `init_scale`$/\sqrt m$ over a range of scales (the
# camera-ready scale of the large-initialisation animation is not recoverable; the specification
# suggests 1 and 3). Balanced: $a_j=s_j\|w_j\|$.
#
# **Steps and time.** Both commits use torch's mean squared error ($=2L$) with step $10^{-3}$, i.e.
# step $2\times10^{-3}$ on the paper's $L$: iteration $k$ is gradient-flow time $t=2\times10^{-3}k$.
# Losses below are in the paper's $L$. Runs whose loss falls below $10^{-20}$ are frozen there (only
# large-scale runs get that far).
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m (authors' code)
seeds = [0, 1, 2]  # the authors set no seed; one run per seed, label variant and scale
variants = "both"  # label variants: both, camera-ready or early
early_init_scale = 1e-3  # E3a: early code, lambda is early_init_scale / width
init_scales = [1e-6, 1e-3, 0.1, 1.0, 3.0]  # E3b: camera-ready scales, lambda is init_scale / sqrt(width)
lr = 1e-3  # step on the mean MSE of the authors' code (2e-3 on L)
steps = 400_000  # iterations (early code), flow time 800
record_every = 100  # loss recorded every this many iterations
panels = [0, 20_000, 100_000, 400_000]  # iterations of the four-panel figure

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.verdicts import fmt
from shallowflow.experiments.orthogonal_inputs import appendix_a as ex
from shallowflow.experiments.orthogonal_inputs import findings as fnd
from shallowflow.params import validate

P = validate(globals(), ex.SCHEMA, ex.RULES)
plots.setup()
claims = C.Claims(source="003", chapter="book/orthogonal-inputs/appendix-a", profile=P.profile)
print(config.describe())
print(f"seeds: {list(P.seeds)}")

# %% [markdown]
# ## Training
#
# Every (label variant, setting, scale, seed) is one run of a single ensemble with per-run data.

# %%
run = ex.run_nonorthogonal(P)
# every trained run of the chapter: one whose loss or parameters stopped being finite fails the checks, named
ok_runs = metrics.finite_runs(run.traj.loss, run.traj.final)
S = ex.nonorthogonal_summary(run)
print(f"{run.traj.runs} runs x {P.steps} iterations in {run.traj.seconds:.1f} s")
print("minimal ||theta||^2 of an interpolator (LP, eq. (8) at the data points):",
      {v: round(x, 6) for v, x in S["min_squared_norm"].items()})
rows = []
for i in range(run.traj.runs):
    rows.append(f"  {run.variants[i]:12s} {run.setting[i]:12s} scale {run.init_scale[i]:6g} seed {run.seeds[i]}: "
                f"L {float(S['final_loss'][i]):.3g} (x{float(S['loss_ratio'][i]):.2g} of initial), "
                f"||theta||^2 {float(S['squared_norm'][i]):.4f} (gap {float(S['rel_gap'][i]):+.3f}), "
                f"kinks {int(S['kinks'][i])}, escapes {int(S['saddles']['escapes'][i])}"
                f"{' + final plateau' if bool(S['saddles']['ends_on_plateau'][i]) else ''}, "
                f"max turning {float(S['max_turning'][i]):.3f} rad")
print("\n".join(rows))

# %% [markdown]
# ## E3a: the network at four stages (cf. Figure 2 of the main text)
#
# Primary setting (early labels, $\lambda=10^{-3}/60$), first seed. As in Figure 2, each star is a
# neuron at its kink $-w_{j,2}/w_{j,1}$ and signed norm $s_j\|w_j\|$ (right axis) and the green line is
# $h_\theta$ (left axis); the axis ranges are those of the authors' early notebook.
#
# Data: the five-point non-orthogonal toy of 003 Appendix A (n = 5 inputs $x=(-1.5,-1,0,0.25,2)$ with a bias
# coordinate; labels of the variant named in each run, from the authors' code).

# %%
primary = run.runs(setting="early", variant="early") or run.runs(setting="early")
main = primary[0]
d_main = run.data[main]
fig, axes = plt.subplots(1, len(P.panels), figsize=(4.2 * len(P.panels), 3.6))
for ax, k, letter in zip(np.atleast_1d(axes), P.panels, "abcdefgh"):
    if k > P.steps:
        ax.set_visible(False)
        continue
    plots.neurons_and_function(ax, run.traj.at(k), d_main, run.network, run=main,
                               ylim=(float(d_main.y.min()) - 1.6, float(d_main.y.max()) + 0.8),
                               title=f"({letter}) iteration {k}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## E3a: loss and saddles
#
# Left: the loss of every E3a run. Right: its log–log decay rate $-d\ln L/d\ln k$; each peak is an
# escape from a saddle ({py:func}`shallowflow.engine.metrics.saddle_visits`: peaks at least 1, separated by
# a slow-down of at least 5×), so two peaks mean one intermediate saddle. Crosses mark the escapes.
#
# Data: the five-point non-orthogonal toy of 003 Appendix A (n = 5 inputs $x=(-1.5,-1,0,0.25,2)$ with a bias
# coordinate; labels of the variant named in each run, from the authors' code).

# %%
E3a = run.runs(setting="early")
sv = S["saddles"]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for i in E3a:
    col = "tab:blue" if run.variants[i] == "early" else "tab:orange"
    axes[0].plot(run.traj.loss_steps, run.traj.loss[i], color=col, lw=1, alpha=0.8)
    axes[1].plot(sv["mid"], sv["slopes"][i], color=col, lw=1, alpha=0.8)
    for k in sv["escape_steps"][i]:
        j = int(np.argmin(np.abs(sv["mid"].numpy() - k)))
        axes[1].plot(k, float(sv["slopes"][i, j]), "kx")
axes[0].set_yscale("log")
axes[0].set_xlabel("iteration")
axes[0].set_ylabel("L")
axes[0].plot([], [], color="tab:blue", label="early labels (y3 = -0.4)")
axes[0].plot([], [], color="tab:orange", label="camera-ready labels (y3 = -0.3)")
axes[0].legend(fontsize=8)
axes[1].set_xscale("log")
axes[1].set_yscale("symlog", linthresh=1e-2)
axes[1].set_xlabel("iteration")
axes[1].set_ylabel(r"$-d\ln L/d\ln k$")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## E3a: neurons realign while they grow
#
# For orthogonal data, a neuron's direction is fixed once it has grown (target R8 of the remarks
# chapter: below $10^{-3}$ rad on the toy). Here: the angle between $w_j$ when $\|w_j\|$ first reaches
# 10% of its final norm and $w_j$ at the end, for the grown neurons (final norm at least 10% of the
# largest), on the 1.02-geometric snapshot schedule. The specification's bar for realignment is
# 0.05 rad.

# %%
fig, ax = plt.subplots(figsize=(6, 3.4))
vals = S["turning"][E3a].flatten()
vals = vals[torch.isfinite(vals)].clamp_min(1e-12)
ax.hist(np.log10(vals.numpy()), bins=30, alpha=0.8)
ax.axvline(math.log10(0.05), color="k", ls="--", label="0.05 rad")
ax.set_xlabel("log10 turning angle (rad) of grown neurons, E3a runs")
ax.legend()
fig.tight_layout()
plt.show()
print(f"max turning per E3a run: {fmt(S['max_turning'][E3a])} rad")

# %% [markdown]
# ## E3b: the initial scale
#
# The camera-ready convention $\lambda=$ `init_scale`$/\sqrt m$ over the scales of the parameters
# cell. The minimal $\|\theta\|^2$ of an interpolator is not known in closed form for non-orthogonal
# data; it is computed by the linear program of eq. (8) with equality constraints at the five data
# points over 4000 directions of the circle plus the directions with a kink at each data point
# ({py:func}`shallowflow.engine.theory.min_squared_norm_1d`, an upper bound on the minimum). The
# reference for "small initialisation" is the smallest scale whose runs all converge within the
# iterations (loss below $10^{-3}$ of its initial value and not ending on a plateau); a smaller one
# that is still on a saddle at the end has no final state to compare.

# %%
cr = [s for s in P.init_scales]
conv = (S["loss_ratio"] < ex.CONVERGED) & ~S["saddles"]["ends_on_plateau"]
ref_scale = ex.reference_scale(run, S, cr)
large = [s for s in cr if s >= 1.0]
print(f"reference small scale: {ref_scale}; large scales: {large}")
fig, axes = plt.subplots(1, 3, figsize=(15, 3.6))
grid = torch.linspace(-2.5, 3.0, 500, dtype=torch.float64)
G = torch.stack([grid, torch.ones_like(grid)], 1)
first_variant = run.variants[run.runs("camera-ready")[0]]
for c, s in enumerate(cr):
    col = plt.get_cmap("viridis")(c / max(1, len(cr) - 1))
    i = run.runs("camera-ready", s)
    j = [k for k in i if run.variants[k] == first_variant][0]
    axes[0].plot(grid, run.network.forward(run.traj.final.select(j), G)[0], color=col, label=f"{s:g}")
    axes[1].scatter([s] * len(i), S["squared_norm"][i], color=col, s=18)
    axes[2].scatter([s] * len(i), S["kinks"][i], color=col, s=18)
d0 = run.data[run.runs("camera-ready")[0]]
axes[0].scatter(d0.x1d, d0.y, color="k", zorder=5)
axes[0].set_ylim(-2, 2)
axes[0].set_title(f"h at the end ({first_variant} labels, seed {run.seeds[0]})")
axes[0].legend(title="init_scale", fontsize=7)
for v, m in S["min_squared_norm"].items():
    axes[1].axhline(m, ls="--", color="0.4", lw=0.8)
axes[1].set_xscale("log")
axes[1].set_yscale("log")
axes[1].set_xlabel("init_scale")
axes[1].set_ylabel(r"final $\|\theta\|^2$ (dashed: LP minima)")
axes[2].set_xscale("log")
axes[2].set_xlabel("init_scale")
axes[2].set_ylabel("kinks of h on [-2.5, 3]")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Checks

# %% tags=["remove-cell"]
def paired(quantity, scales):
    """quantity(run at scale s) - quantity(reference run), for the same label variant and seed."""
    return ex.paired_with_reference(run, quantity, scales, ref_scale)

# %%
claims.check("E3a/loss-small", "the loss converges towards 0: final L / initial L (both label variants)",
             S["loss_ratio"][E3a], ex.E3A_LOSS_SMALL, source_value="loss -> 0",
             note="zero at the resolution of a linear loss plot; the next check asks that it is still falling", valid=ok_runs)
claims.check("E3a/still-decreasing", "the run does not end on a plateau (1: still falling at the end)",
             ex.still_decreasing(S)[E3a], ex.E3A_STILL_DECREASING, source_value="loss -> 0", valid=ok_runs)
claims.check("E3a/intermediate-saddle", "similar phenomena: escapes from saddles (2: one intermediate saddle)",
             S["saddles"]["escapes"][E3a], ex.E3A_INTERMEDIATE_SADDLE, source_value="similar training phenomena", valid=ok_runs)
claims.check("E3a/realign", "neurons realign while growing: max turning of grown neurons (rad)",
             S["max_turning"][E3a], ex.E3A_REALIGN, source_value="Figure 4d: neurons realign", valid=ok_runs)
claims.check("E3b/norm-above-small-init", "init_scale >= 1: rel. gap to the minimal norm minus that of the small-scale "
             "run (same labels and seed)", paired(S["rel_gap"], large), ex.NORM_ABOVE_SMALL_INIT,
             source_value="necessity of small initialisation for implicit bias", valid=ok_runs)
claims.check("E3b/more-kinks", "init_scale >= 1: kinks of h minus those of the small-scale run", paired(S["kinks"], large),
             ex.MORE_KINKS, source_value="more kinks (spec E3b)", valid=ok_runs)

# %% [markdown]
# ### Verdicts

# %% tags=["nbval-check-output"]
print(claims.report())

# %% tags=["remove-input"]
display(HTML(claims._repr_html_()))
claims.finish();

# %% [markdown]
# ## What we find
#
# Written from this execution's checks and measurements.

# %% tags=["remove-input"]
small_gap = S["rel_gap"][run.runs("camera-ready", ref_scale)] if ref_scale is not None else torch.tensor([float("nan")])
text = fnd.extras_findings(claims, {"E3a": "non-orthogonal toy", "E3b": "initial scale"})
gaps = torch.cat([small_gap, S["rel_gap"][E3a]])
text += (f"\n- **Not claimed, measured:** at the reference small scale ({ref_scale}) the final $\\|\\theta\\|^2$ is "
         f"{fmt(small_gap)} above the LP minimum (relative), and in the early setting "
         f"{fmt(S['rel_gap'][E3a])}"
         + (": on this non-orthogonal data, small-initialisation GD does not end at a minimal-norm interpolator, "
            "so the implicit bias of Theorem 1 does not carry over as such." if bool((gaps > 1e-2).all())
            else "."))
unconv = [s for s in cr if not all(bool(conv[i]) for i in run.runs("camera-ready", s))]
if unconv:
    text += (f"\n- Scales {unconv} have runs that have not converged after {P.steps} iterations "
             "(still on a saddle or a plateau): a smaller scale delays every escape by a time of order "
             "$-\\ln\\lambda$.")
display(Markdown(text))
