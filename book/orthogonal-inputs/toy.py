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
# # The orthogonal toy: Figures 2 and 3
#
# **Source:** `003_2cfc81695abc9c19.txt` {cite:p}`boursier2022orthogonal`, Boursier, Pillaud-Vivien and Flammarion, *Gradient flow
# dynamics of shallow ReLU networks for square loss and orthogonal inputs* (NeurIPS 2022), Section 5.
# **Targets:** E1 (Figures 2a-2d), E2 (Figure 3) and E4 (the animation).
# **Computed by:** {py:func}`shallowflow.experiments.orthogonal_inputs.toy.run_toy` (the animation: {py:func}`shallowflow.site.plots.kink_animation`).
#
# The paper's experiment is a two-point dataset with orthogonal inputs, a one-hidden-layer ReLU
# network $h_\theta(x)=\sum_{j=1}^m a_j\,\sigma(\langle w_j, x\rangle)$ without output scaling, and a
# tiny balanced initialisation $w_j = \lambda g_j$, $a_j = s_j\|w_j\|$. The bias is a constant
# second input coordinate, so a one-dimensional input $x$ becomes $(x, 1)$ and neuron $j$ has its
# kink at $-w_{j,2}/w_{j,1}$:
#
# $$ x_1 = (-0.5,\ 1),\ y_1 = -1, \qquad x_2 = (2,\ 1),\ y_2 = 1, \qquad \langle x_1, x_2\rangle = 0. $$
#
# The paper trains with "gradient descent with a step size $10^{-3}$ to approximate the gradient flow
# trajectory" of its loss $L(\theta) = \frac{1}{2n}\sum_k (h_\theta(x_k)-y_k)^2$ (eq. (1)), with
# $m = 60$ and $\lambda = 10^{-6}/\sqrt{m}$; the iteration count (20,000) comes from the authors' code.
#
# :::{prf:theorem} 003, Theorem 1 (informal)
# :label: thm-003-implicit-bias
# For orthogonal inputs, labels with $\|D_+\| \ne \|D_-\|$ and a balanced initialisation whose key sets
# $S_{+,1}$, $S_{-,1}$ are non-empty, gradient flow from a small enough scale $\lambda$ reaches zero loss,
# and as $\lambda \to 0$ its limit tends to a minimum-$\ell_2$-norm interpolator: here
# $\|\theta^*\|^2 = 6/\sqrt5$ and $h^*(x) = 0.4(x+0.5)_+ - 0.4(2-x)_+$ (closed form derived from the
# paper's Prop. 1 by {py:func}`shallowflow.engine.theory.min_norm_interpolator`).
# :::
#
# :::{admonition} Which loss? Both, in one batch
# :class: note
# The authors' code minimises torch's mean squared error $\frac1n\sum_k(h_\theta(x_k)-y_k)^2 = 2L$.
# Gradient descent with step $\eta$ on $2L$ is gradient descent with step $2\eta$ on $L$, so the two
# readings differ only by the step size. This chapter trains every seed under **both** readings as
# one ensemble on $L$: the *mean* runs (the authors' code) with step $2\times10^{-3}$ and the *half*
# runs (eq. (1) as printed) with step $10^{-3}$. One iteration is $2\eta$ units of gradient-flow time
# in the first reading and $\eta$ in the second.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m, the number of hidden neurons
init_scale = 1e-6  # lambda is init_scale / sqrt(width)
lr = 1e-3  # the paper's step size
steps = 20_000  # gradient-descent iterations (authors' code)
seeds = list(range(10))  # one run per seed and per loss convention
conventions = "both"  # "both", "mean" (authors' code) or "half" (eq. (1) as printed)
panels = [0, 2500, 8000, 20_000]  # iterations shown in Figure 2 (a)-(d)
level = 0.95  # level of the Wilson intervals of the shares of runs (E2)
animation_frames = 80  # frames of the animation (E4) on the authors' frame schedule; 0: none

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics, theory
from shallowflow.site import plots
from shallowflow.experiments.orthogonal_inputs import toy
from shallowflow.experiments.orthogonal_inputs import findings as fnd
from shallowflow.params import validate

P = validate(globals(), toy.SCHEMA, toy.RULES)
plots.setup()
claims = C.Claims(source="003", chapter="book/orthogonal-inputs/toy", profile=P.profile)

# %% [markdown]
# ## Training
#
# All runs (seeds $\times$ conventions) are one tensor computation; the loss of every run is kept at
# every iteration, and the parameters at the panel iterations and on the authors' geometric frame
# schedule ($k \mapsto \lfloor 1.05k\rfloor + 1$).

# %%
run = toy.run_toy(P)
first, second = toy.exits(run)
print(config.describe())
print(f"seeds: {list(P.seeds)}")
print(f"{run.traj.runs} runs x {P.steps} iterations in {run.traj.seconds:.1f} s "
      f"(lambda = {run.scale:.4g}); |S+,1| = {run.s_plus.sum(1).tolist()}, |S-,1| = {run.s_minus.sum(1).tolist()}")

# %% [markdown]
# ## Figure 2: the network at four stages
#
# Each blue star is a neuron, placed at its kink $-w_{j,2}/w_{j,1}$ (horizontal) and its signed norm
# $s_j\|w_j\| = a_j$ (right axis); the green line is $h_\theta$ (left axis). Panels use the first
# seed of the first convention trained. The theory predicts that neurons of $S_{+,1}$ align with
# $D_+ = \frac1n\sum_{y_k>0} y_kx_k$ (kink at $-0.5$, the *other* data point) and those of $S_{-,1}$
# with $-D_-$ (kink at $2$), that the former grow first, and that the limit is the two-kink function
# $h^*(x) = 0.4(x+0.5)_+ - 0.4(2-x)_+$.

# %% tags=["hide-input"]
main = run.runs_of(run.conventions[0])[0]
cols = 2 if len(P.panels) > 1 else 1
rows_ = math.ceil(len(P.panels) / cols)
fig, axes = plt.subplots(rows_, cols, figsize=(5.6 * cols, 3.9 * rows_), squeeze=False)
for ax in axes.flat[len(P.panels):]:
    ax.set_visible(False)
for ax, k, letter in zip(axes.flat, P.panels, "abcdefgh"):
    if k > P.steps:
        ax.set_visible(False)
        continue
    plots.neurons_and_function(ax, run.traj.at(k), run.data.to("cpu"), run.network, run=main,
                               title=f"({letter}) iteration {k}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Figure 3: the loss, saddle to saddle
#
# The paper: "the parameters vector starts from the 0 saddle point at initialisation and needs 5000
# iterations to leave this first saddle. A second saddle is then encountered at the end of the second
# phase and the trajectory only leaves this saddle around iteration 11000". The plotted quantity in
# the authors' code is the mean squared error ($2L$), so the curve goes $1 \to 0.5 \to 0$. An exit is
# the first iteration with $L < 0.99\,L(\theta^0)$ (first saddle) and with
# $L < 0.99\,L(\theta_S)$, $L(\theta_S) = \frac{1}{2n}\sum_{y_k<0}y_k^2 = 0.25$ (second saddle).
#
# Data: the two-point orthogonal toy of 003 Section 5 (n = 2 inputs, $x_1=(-0.5,1)$, $x_2=(2,1)$, labels $-1$, $1$).

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for conv, colour in (("mean", "tab:blue"), ("half", "tab:orange")):
    idx = run.runs_of(conv)
    if not idx:
        continue
    mse = 2 * run.traj.loss[idx]  # the authors' plotted quantity
    plots.loss_curves(axes[0], run.traj.loss_steps, mse, colour=colour, alpha=0.6, lw=1,
                      ylabel="mean squared error (= 2L)")
    plots.loss_curves(axes[1], run.traj.loss_steps, mse, colour=colour, alpha=0.6, lw=1, log=True,
                      ylabel="mean squared error (log)")
    axes[0].plot([], [], color=colour, label=f"{conv}: step {run.traj.lr[idx[0]]:.0e} on L")
for ax in axes:
    for which, it in toy.SOURCE_SADDLE_EXITS.items():
        ax.axvline(it, color="0.3", ls="--", lw=1, label=f"source (Section 5): {which} exit ~ {it}" if ax is axes[0] else None)
axes[0].set_ylim(bottom=0)
axes[0].legend(loc="upper right", fontsize=8)
fig.tight_layout()
plt.show()

# %%
rows = []
for conv in ("mean", "half"):
    for i in run.runs_of(conv):
        rows.append(f"  {conv:4s} seed {run.seeds[i]:2d}: first exit {int(first[i]):6d}, second exit {int(second[i]):6d}")
print("exit iterations (-1: not within the run)\n" + "\n".join(rows))

# %% [markdown]
# ## The animation (E4)
#
# "The code and animated versions of the figures are available in github.com/eboursier/GFdynamics."
# The book draws the animation from the same run as Figure 2 (first seed of the first convention), on
# the authors' frame schedule $0, 1, k \mapsto \lfloor 1.05k\rfloor + 1$ (153 frames over 20,000
# iterations; `animation_frames` of them, evenly spaced in the schedule, plus the last iteration), as a
# player embedded in the page (no video file, no network). The right axis follows the largest neuron
# of each frame, so the early alignment of the tiny neurons is visible before they grow.

# %% tags=["hide-input"]
anim, anim_loss = toy.animation(run, P.animation_frames) if P.animation_frames else ([], None)
if anim:
    display(HTML(plots.kink_animation(anim, run.data.to("cpu"), run.network, run=main,
                                      time_per_step=float(run.traj.lr[main]))))
    print(f"{len(anim)} frames, iterations {anim[0][0]} to {anim[-1][0]}; "
          f"L {float(anim_loss[main, 0]):.6f} -> {float(anim_loss[main, -1]):.3g}")

# %% [markdown]
# ## Checks
#
# The pass criteria are those of the specification of this source (targets E1, E2 and E4). E1 states what
# Theorem 1 proves for every initialisation: it is evaluated on every seed of the reading it concerns, and
# passes only if every seed passes. E2 describes the typical curve of Figure 2e (one run of the authors): each
# E2 check measures the share of runs whose curve shows the behaviour, with its Wilson interval at `level`,
# and passes when the interval's lower end is above one half (most runs show it) [the book's reading of
# "typical"; deviation from the spec, which asks every seed].

# %% tags=["remove-cell"]
M = run.runs_of("mean")
H = run.runs_of("half")
# a run whose loss or parameters stopped being finite is never evidence: the checks on it fail and name it
ok = metrics.finite_runs(run.traj.loss, run.traj.final)
ok_M, ok_H, ok_main = ok[M], ok[H], ok[main:main + 1]
end = toy.end_state(run)
# panel (b): the end of Phase 1
k_b = P.panels[1] if len(P.panels) > 1 else 0

# %%
if M:
    sel = lambda t: t[M]
    claims.check("E1/final-loss", "the loss reaches 0 (authors' step, 20,000 iterations)",
                 sel(end["loss"]), toy.FINAL_LOSS, source_value="0", valid=ok_M)
    claims.check("E1/norm", "||theta||^2 equals the minimum-norm value 6/sqrt(5)",
                 sel(end["squared_norm"]), toy.norm_criterion(end["min_squared_norm"]),
                 source_value="min-norm interpolator (Thm 1)", valid=ok_M)
    claims.check("E1/kinks", "only two kinks, at -0.5 (s=+1) and 2 (s=-1): max deviation of grown neurons",
                 sel(end["kink_deviation"]), toy.KINKS, source_value="two kinks", valid=ok_M)
    claims.check("E1/function", "h equals h* = 0.4(x+0.5)+ - 0.4(2-x)+ on [-1.5, 3] (sup distance)",
                 sel(end["sup_distance"]), toy.FUNCTION, source_value="h*", valid=ok_M)
    claims.check("E1/grown-neurons", "the grown neurons are exactly S+,1 and S-,1",
                 sel(end["grown_is_key_sets"]), toy.GROWN_NEURONS, source_value="S+,1 u S-,1", valid=ok_M)
    align = toy.alignment(run, k_b)
    claims.check("E1/phase1-align-plus", f"end of Phase 1 (iteration {k_b}): min cos(w_j, D+) over S+,1",
                 sel(align["cos_plus"]), toy.PHASE1_ALIGN_PLUS, source_value="aligned with D+", valid=ok_M)
    claims.check("E1/phase1-align-minus", f"end of Phase 1 (iteration {k_b}): min cos(w_j, -D-) over S-,1",
                 sel(align["cos_minus"]), C.above(0.99), source_value="aligned with -D-", valid=ok_M)
    claims.check("E1/phase1-small", f"end of Phase 1 (iteration {k_b}): all neurons still small, max ||w_j||",
                 sel(align["max_norm"]), toy.PHASE1_SMALL, source_value="close to 0", valid=ok_M)
    claims.check("E1/phase1-loss", f"end of Phase 1 (iteration {k_b}): the loss has not moved, |L - L(theta0)|",
                 sel(align["loss_change"]), toy.PHASE1_LOSS, source_value="L within 1e-3 of L(theta0) (spec)", valid=ok_M)
    claims.check("E1/phase1-kinks-minus", f"end of Phase 1 (iteration {k_b}): median kink of S-,1 within 0.05 of 2",
                 (sel(align["median_kink_minus"]) - 2).abs(), C.below(0.05), source_value="kink at 2",
                 note="the kink -w2/w1 is 5x more sensitive to the angle for the -D- group than the cosine", valid=ok_M)
    claims.check("E1/phase1-kinks-plus", f"end of Phase 1 (iteration {k_b}): median kink of S+,1 within 0.05 of -0.5",
                 (sel(align["median_kink_plus"]) + 0.5).abs(), toy.PHASE1_KINKS_PLUS, source_value="kink at -0.5", valid=ok_M)
    intervals = [(-1.5, 3.0), (-5.0, 5.0), (-20.0, 20.0)]  # the spec's three intervals
    f1 = [toy.variation_norms(iv) for iv in intervals]
    claims.check("E1/F1-below-linear", "the learned function has a smaller F1 norm than the linear interpolator "
                 "(the trained network's F1 cost sum |a_j| ||w_j||, a bound on its F1 norm, minus the F1 norm of "
                 "0.8x-0.6 by LP on [-1.5, 3], [-5, 5] and [-20, 20], every run; NaN where the run fits nothing)",
                 toy.learned_f1_below_linear(run, M, [f["linear"] for f in f1]), toy.F1_BELOW_LINEAR,
                 source_value="smaller",
                 note="h*'s F1 norm minus the linear interpolator's on the same intervals: "
                      + ", ".join(f"{f['star'] - f['linear']:.4g}" for f in f1), valid=ok_M)
    f1_min = toy.min_f1_interpolator()
    claims.check("E8/toy-F1-equals-half-norm", "eq. (8): the minimum F1 norm over all interpolators of the two data "
                 "points (LP on the data) equals min ||theta||^2 / 2 (toy)",
                 f1_min, C.close_to(f1[0]["half_min_squared_norm"], rtol=1e-6), source_value="equal",
                 note=f"the F1 norm of h* itself on [-1.5, 3] (LP on a grid of h*): {f1[0]['star']:.7g}",
                 valid=C.NO_TRAINING)

    def typical(cid, claim, flags, source_value, values):
        """An E2 check: the share of runs with the behaviour, its Wilson interval's lower end against one half."""
        low, text = toy.typical_share(flags, P.level)
        claims.check(cid, claim + f": share of runs, lower end of its {P.level:.0%} Wilson interval", low, toy.TYPICAL,
                     source_value=source_value, note=f"{text}; per run: {C.fmt(values)}", valid=ok_M)

    e2 = toy.saddle_behaviours(run, M)
    typical("E2/first-exit", "the first saddle is left after about 5000 iterations (first exit in [4000, 6500])",
            e2["E2/first-exit"][0], "5000", e2["E2/first-exit"][1])
    typical("E2/second-exit", "the second saddle is left around iteration 11000 (second exit in [9000, 12500])",
            e2["E2/second-exit"][0], "around 11000", e2["E2/second-exit"][1])
    typical("E2/exit-ratio", "second exit / first exit is about ||D+||/||D-|| = 2 (in [1.7, 2.3])",
            e2["E2/exit-ratio"][0], "r = 2", e2["E2/exit-ratio"][1])
    typical("E2/plateau", "a plateau at L(theta_S) = 0.25 (at least 2000 iterations within 1% of it)",
            e2["E2/plateau"][0], "second saddle", e2["E2/plateau"][1])
    typical("E2/monotone", "the loss decreases monotonically (no relative increase while L > 1e-12)",
            e2["E2/monotone"][0], "monotone curve", e2["E2/monotone"][1])
if anim:
    claims.check("E4/descent", "the animation's frames show a descent: largest loss increase between consecutive "
                 "frames, relative to L(0)", toy.animation_descent(anim_loss, main), toy.ANIMATION_DESCENT,
                 source_value="the authors' animation",
                 note=f"{len(anim)} frames of run {main}", valid=ok_main)
    cons = toy.animation_consistency(run, anim, main)
    spans = cons["first"] == cons["start"] and cons["last"] == cons["end"]
    claims.check("E4/spans-training", "the frames are the trajectory's own states from its first to its last "
                 "iteration: largest |L(frame) - L recorded at that iteration| / L(0) (infinite if the frames do not "
                 "start and end with the run)", cons["gap"] if spans else math.inf, toy.ANIMATION_SPANS,
                 source_value="iterations 0 to 20,000", valid=ok_main,
                 note=f"frames at iterations {cons['first']} .. {cons['last']}; loss recorded over {cons['start']} .. "
                      f"{cons['end']}")
    claims.check("E4/ends-at-interpolator", "its last frame is the trained network at zero loss",
                 float(anim_loss[main, -1]), toy.ANIMATION_ENDS, source_value="Figure 2d", valid=ok_main)
if H:
    low_H, text_H = toy.typical_share((first[H] >= 4000) & (first[H] <= 6500), P.level)
    claims.check("E2/exits-as-printed", "with L as printed in eq. (1) and step 1e-3, the first exit is near 5000 (in "
                 f"[4000, 6500]): share of runs, lower end of its {P.level:.0%} Wilson interval", low_H, toy.TYPICAL,
                 source_value="5000", valid=ok_H,
                 note=f"{text_H}; per run: {C.fmt(first[H])}; expected to fail: the figure's iteration counts belong to "
                      "the authors' mean-MSE loss")
if M and H:
    claims.check("E2/convention-factor", "half-reading exit / mean-reading exit = 2 (same flow, half the step)",
                 first[H].double() / first[M].double(), C.within(1.9, 2.1), source_value="(derived) 2", valid=ok[M + H])

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
# The summary below is written from the measurements of this execution (change the parameters and it
# changes with them).

# %% tags=["remove-input"]
display(Markdown(fnd.toy_findings(claims, run, first, second)))
