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
# # The reproduction of [5]'s toy and the phase timing
#
# **Source:** Brisbois, master's thesis {cite:p}`brisbois2024thesis` (`000_5bec2764affd87f0.txt`), Section 2.4.3
# (Figs 2.6-2.9). **Targets:** Fig 2.7, Fig 2.8, Fig 2.9, T1.
# **Computed by:** {py:func}`shallowflow.experiments.brisbois_thesis.toy_reproduction.run`.
#
# The thesis re-runs the toy experiment of Boursier, Pillaud-Vivien and Flammarion ([5]; the
# {doc}`../orthogonal-inputs/toy` chapter of this book): Dataset 1.1.0, $x_1=(-0.5,1)$, $y_1=-1$,
# $x_2=(2,1)$, $y_2=1$ (orthogonal), a ReLU network $h_\theta(x)=\sum_j a_j\sigma(w_j^\top x)$ with $m=60$,
# balanced initialisation $w_j=\lambda g_j$, $a_j=s_j\|w_j\|$ with $\lambda=10^{-6}/\sqrt{60}\approx1.29\times10^{-7}$,
# and gradient descent with step $\alpha=10^{-3}$. Its Fig. 2.7 shows a saddle-to-saddle loss curve; Fig. 2.8
# shows the neurons at epochs 0, 4000, 8000, 15000 and at the end: alignment, then the positive label is
# reached (epoch 8000), then the negative one (epoch 15000). Fig. 2.9 ([34]'s message) shows simpler
# interpolators at smaller $\lambda$ ($\lambda = 2.5$, $1$, $\le 10^{-6}$).
#
# **Timing (check T1, [derived] in the spec).** A balanced neuron along $D_\pm$ grows like
# $\lambda e^{c\|D_\pm\|t}$ ($c=2$ for the MSE, $c=1$ for the $\frac1{2n}$ loss), so the label groups are fitted at
# $t_\pm\approx\ln(1/\lambda)/(c\|D_\pm\|)$, i.e. $t_\pm/\alpha$ epochs. On Dataset 1.1.4 ($x_1=(-0.1,1)$,
# $x_2=(10,1)$, $y=(-1,1)$), $\|D_+\|/\|D_-\|=10$.
#
# :::{admonition} Which loss? The mean squared error
# :class: note
# The experiments minimise $\frac1n\sum_k(h_\theta(x_k)-y_k)^2$, PyTorch's `MSELoss`, not the
# $\frac1{2n}$ loss the thesis writes: with the MSE the predicted fit epochs of 1.1.0 are 7094 and 14188,
# which Fig. 2.8's snapshots (8000, 15000) bracket; with $\frac1{2n}$ they would double (the spec's
# section 2.2). [5] itself, and its chapter in this book, read the same way. The parameter `loss` trains the
# other reading (`half`, the $\frac1{2n}$ loss, with the predictions and the plateau level following it): a custom
# run, since the registry compares only the book's reading. Seeds are not given: the book runs the seeds of
# `seeds` whose draw satisfies Assumption 5 (non-empty $S_{+,1}$ and $S_{-,1}$), as the thesis forced it for ReLU;
# a seed that does not is named below, not replaced.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m
init_scale = 1e-6  # lambda is init_scale / sqrt(width)
lr = 1e-3  # alpha, on the MSE
steps = 30_000  # epochs (the thesis's budget is 3e5; every run has converged long before)
seeds = [0, 1, 2, 3, 4, 5]  # one run per seed (a seed violating Assumption 5 is rejected and named)
loss = "mean"  # mean (MSE, the book's reading) or half (the 1/(2n) loss: a custom run)
panels = [0, 4000, 8000, 15_000]  # Fig. 2.8's epochs (the final one is added)
interp_scales = [2.5, 1.0, 1e-6]  # Fig. 2.9's lambda
timing_scales = [1e-10, 1e-6, 1e-2]  # T1 on Dataset 1.1.4
fit_every = 10  # epochs between the snapshots that time the fits
level = 0.95  # level of the Wilson intervals of the shares of runs (Fig. 2.7)

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.engine.models import Network, loss_factor
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import theory as T
from shallowflow.experiments.brisbois_thesis import toy_reproduction as X
from shallowflow.params import validate

P = validate(globals(), X.SCHEMA, X.RULES)
plots.setup()
claims = C.Claims(source="000", chapter="book/brisbois-thesis/toy-reproduction", profile=P.profile)

# %%
res = X.run(P)
tr = res.ens.traj
print(config.describe())
print(Cm.describe_seeds([m['seed'] for m in res.ens.meta], res.rejected), f"; loss: {P.loss}")
print(f"seeds {[m['seed'] for m in res.ens.meta]}, lambda = {res.scale:.6g}; {tr.runs} runs x {P.steps} epochs in {tr.seconds:.2f} s")

# %% [markdown]
# ## Fig. 2.7: the loss
#
# Dashed vertical lines: the epochs the thesis's text reads off its Fig. 2.8 for the end of alignment and the two fits.

# %% tags=["hide-input"]
L = tr.loss.numpy()
steps_ = tr.loss_steps.numpy()
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
plots.loss_curves(axes[0], steps_, L, colour="tab:blue", alpha=0.6, xlabel="epoch", ylabel="MSE")
plots.loss_curves(axes[1], steps_, np.maximum(L, 1e-32), colour="tab:blue", alpha=0.6, log=True, xlabel="epoch", ylabel="MSE (log)")
for (what, k), ls in zip(X.SOURCE_FIG28_EPOCHS.items(), ("--", "-.", ":")):
    for ax in axes if k <= P.steps else ():
        ax.axvline(k, color="k", ls=ls, lw=0.8, label=f"thesis, Fig. 2.8: {what} at epoch {k}" if ax is axes[1] else None)
if axes[1].get_legend_handles_labels()[0]:
    axes[1].legend(fontsize=6)
axes[0].set_title("Fig. 2.7: ReLU, Dataset 1.1.0, m = 60")
fig.tight_layout()
plt.show()
L0 = L[:, 0]
exit1 = Cm.first_epoch_below(tr, 0.99 * L0)
lf = loss_factor(P.loss)  # the plateau where one of the two labels is fitted: L = 0.5 on the MSE, 0.25 on 1/(2n)
near_half = X.plateau_epochs(tr, lf)
e6 = Cm.first_epoch_below(tr, 1e-6)
e10 = Cm.first_epoch_below(tr, 1e-10)
for r in range(tr.runs):
    print(f"seed {res.ens.meta[r]['seed']}: L0 = {L0[r]:.10f}; first epoch L < 0.99 L0: {exit1[r]}; epochs with L in [{0.45 * lf:g}, {0.55 * lf:g}]: "
          f"{near_half[r]}; L < 1e-6 at {e6[r]}, L < 1e-10 at {e10[r]}; final L {L[r, -1]:.2e}")

# %% [markdown]
# ## Fig. 2.8: neurons and model at epochs 0, 4000, 8000, 15000 and the end
#
# Data: Dataset 1.1.0 of the thesis (2 points).
#
# Each star is a neuron at its orientation $-w_{j,2}/w_{j,1}$ (the ReLU's breakpoint, horizontal) and its signed
# norm $s_j\|w_j\|$ (right axis); the green line is $h_\theta$. First seed.

# %% tags=["hide-input"]
net = Network("relu")
shown = [k for k in P.panels if k <= P.steps] + [P.steps]
fig, axes = plt.subplots(1, len(shown), figsize=(3.3 * len(shown), 3.2), squeeze=False)
for ax, k in zip(axes[0], shown):
    plots.neurons_and_function(ax, tr.at(k), res.data, net, run=0, title=f"epoch {k}")
fig.tight_layout()
plt.show()
fits = res.fits.numpy()
pred = T.phase_epochs(res.data, res.scale, P.lr, P.loss)
print(f"fit epochs (|h(x_k) - y_k| < 0.1 |y_k|), positive label: {fits[:, 1].tolist()}, negative: {fits[:, 0].tolist()}; "
      f"T1 predicts {pred[0]:.0f} and {pred[1]:.0f}")

# %% [markdown]
# ## Fig. 2.9: the final interpolator against $\lambda$
#
# The thesis does not give the dataset or the step of Fig. 2.9; the book uses Dataset 1.1.0 and $\alpha=10^{-3}$
# (the spec's alternative default, Dataset 1.3.3, belongs to the non-orthogonal chapters). A breakpoint counts
# when the summed slope jump of the neurons within $10^{-2}$ of it exceeds $10^{-2}$, inside $[-0.5, 2]$.

# %% tags=["hide-input"]
it = res.interp.traj
fig, axes = plt.subplots(1, len(P.interp_scales), figsize=(3.6 * len(P.interp_scales), 3.2), squeeze=False)
for i, (ax, lam) in enumerate(zip(axes[0], P.interp_scales)):
    plots.neurons_and_function(ax, it.final, res.data, net, run=i, title=f"lambda = {lam:g}: {int(res.interp_kinks[i])} breakpoints")
fig.tight_layout()
plt.show()
print("final MSE:", [f"{x:.1e}" for x in it.loss[:, -1].tolist()])

# %% [markdown]
# ## T1: phase timing on Dataset 1.1.4 ($c=1$)

# %% tags=["hide-input"]
tf = res.timing_fits.numpy()
p_first, p_second = T.phase_epochs(res.timing_data, np.array(P.timing_scales), P.lr, P.loss)
for i, lam in enumerate(P.timing_scales):
    print(f"lambda = {lam:g}: positive fit at {tf[i, 1]} (predicted {p_first[i]:.0f}), negative fit at {tf[i, 0]} "
          f"(predicted {p_second[i]:.0f})")
ln = np.log(1 / np.array(P.timing_scales))
slope, _, r2 = Cm.regression(ln, tf[:, 0])
dp, dm, _ = T.key_vectors(res.timing_data)
pred_slope = 1 / (T.time_factor(P.loss) * P.lr * float(dm.norm()))
print(f"negative-fit epochs per unit ln(1/lambda): {slope:.1f} (R^2 {r2:.5f}); predicted 1/(c alpha ||D_-||) = {pred_slope:.1f}")

# %% [markdown]
# ## Checks

# %% tags=["remove-cell"]
valid = res.ens.valid()
inf = lambda e: np.where(e < 0, np.inf, e).astype(float)
# Fig. 2.7 is one curve, a typical one: each check measures the share of runs that show the behaviour, with its Wilson
# interval at `level`, and passes when the interval's lower end is above one half (most runs show it)
def typical(cid, claim, values, criterion, source_value):
    low, text = Cm.typical_share(X.run_flags(values, criterion), P.level)  # the per-run reading of the criterion
    claims.check(cid, claim + f" ({criterion.text}): share of runs, lower end of its {P.level:.0%} Wilson interval", low,
                 Cm.TYPICAL, source_value=source_value, note=f"{text}; per run: {C.fmt(values)}", valid=valid)

typical("Fig2.7/initial-plateau", "L stays >= 0.99 L(theta^0) up to epoch ~4000: first epoch below", inf(exit1), X.FIG27_INITIAL_PLATEAU,
        "about 4000")
typical("Fig2.7/intermediate-plateau", f"a plateau at L ~ {0.5 * lf:g} (positive label fitted): epochs with L in [{0.45 * lf:g}, "
        f"{0.55 * lf:g}]", near_half.astype(float), X.FIG27_INTERMEDIATE_PLATEAU, "intermediate plateau")
typical("Fig2.7/below-1e-6", "L < 1e-6 by epoch ~20000: first epoch below", inf(e6), X.FIG27_BELOW_1E6, "~0 by 20000")
typical("Fig2.7/below-1e-10", "L < 1e-10 within 3e4 epochs: first epoch below", inf(e10), X.FIG27_BELOW_1E10,
        "zero loss")
k4 = min(4000, P.steps)
k8 = min(8000, P.steps)
k15 = min(15_000, P.steps)
claims.check("Fig2.8/aligned-4000", f"epoch {k4}: every neuron with ||w|| >= 10 lambda within 0.1 of its orientation (-0.5 or 2)",
             X.orientation_errors(tr.at(k4), res.scale, res.data), X.FIG28_ALIGNED_4000, source_value="end of alignment", valid=valid)
claims.check("Fig2.8/two-directions-4000", f"epoch {k4}, the end of the alignment phase as the thesis defines it (Phase 1: neurons "
             "small, 'two main directions'): distinct directions of the neurons with ||w|| >= 10 lambda (within cos 0.99, as "
             "Fig3.34/two-rays; small: Fig2.7/initial-plateau)",
             metrics.distinct_directions(tr.at(k4).W, grown_rel=0.0, grown_threshold=10 * res.scale, cos_tol=1e-2), X.FIG28_TWO_DIRECTIONS,
             source_value="end of alignment: two main directions", valid=valid)
claims.check("Fig2.8/aligned-8000", f"epoch {k8}: the same within 0.01",
             X.orientation_errors(tr.at(k8), res.scale, res.data), X.FIG28_ALIGNED, source_value="aligned", valid=valid)
claims.check("Fig2.8/positive-8000", f"epoch {k8}: positive label reached, |h(x_2) - 1|",
             (X.h_at(tr.at(k8), res.data)[:, 1] - 1).abs(), X.FIG28_LABEL_REACHED, source_value="reached at 8000", valid=valid)
claims.check("Fig2.8/negative-15000", f"epoch {k15}: negative label reached, |h(x_1) + 1|",
             (X.h_at(tr.at(k15), res.data)[:, 0] + 1).abs(), X.FIG28_LABEL_REACHED, source_value="reached at 15000", valid=valid)
claims.check("Fig2.8/final-breakpoints", "final breakpoints at the data: largest orientation error of grown neurons (||w|| >= 10 lambda)",
             X.orientation_errors(tr.final, res.scale, res.data), X.FIG28_FINAL_BREAKPOINTS, source_value="breakpoints -0.5 and 2", valid=valid)
claims.check("Fig2.8/balanced", "a_j = s_j ||w_j|| at the end: largest |a_j - s_j ||w_j|| |",
             X.balance_error(tr.final, res.ens.p0), X.FIG28_BALANCED,
             source_value="Lemma 5", valid=valid)
ivalid = res.interp.valid()
kk = res.interp_kinks.numpy()
order = np.argsort(-np.array(P.interp_scales))  # decreasing lambda
iresid = (X.h_at(res.interp.traj.final, res.data) - res.data.y.cpu()).abs().amax(1).numpy()
claims.check("Fig2.9/simpler", "every network interpolates (largest |h(x_k) - y_k| < 0.1) and the number of "
             "breakpoints is non-increasing as lambda decreases, fewer at the smallest than at the largest "
             f"(lambda {[P.interp_scales[i] for i in order]}: {kk[order].tolist()} breakpoints, residuals "
             f"{[float(f'{v:.2g}') for v in iresid[order]]})",
             X.fig29_simpler(kk[order], iresid[order]), X.FIG29_SIMPLER, source_value="simpler at small lambda",
             valid=ivalid)
small = [i for i, lam in enumerate(P.interp_scales) if lam <= 1e-6]
if small:
    claims.check("Fig2.9/at-most-n", "at lambda <= 1e-6 at most n = 2 breakpoints", kk[small], X.fig29_at_most_n(res.data),
                 source_value="linear interpolation of the data", valid=ivalid[small])
tvalid = res.timing.valid()
rich = [i for i, lam in enumerate(P.timing_scales) if lam <= 1e-6]
claims.check("T1/negative-ratio", "Dataset 1.1.4: measured / predicted negative-fit epoch, lambda <= 1e-6",
             tf[rich, 0] / p_second[rich], X.T1_RATIO, source_value="ln(1/lambda)/(c alpha ||D_-||)", valid=tvalid[rich])
claims.check("T1/slope", "Dataset 1.1.4: negative-fit epochs per unit ln(1/lambda) / 1/(c alpha ||D_-||)",
             slope / pred_slope, X.T1_SLOPE, source_value="-ln(lambda) law", valid=tvalid)
claims.check("T1/dataset-1.1.0", "Dataset 1.1.0: measured / predicted fit epochs (positive, negative), every seed",
             np.concatenate([fits[:, 1] / pred[0], fits[:, 0] / pred[1]]), X.T1_RATIO,
             source_value="8000 and 15000 (snapshots)", valid=np.concatenate([valid, valid]))

# %% [markdown]
# ### Verdicts

# %% tags=["nbval-check-output"]
print(claims.report())

# %% tags=["remove-input"]
display(HTML(claims._repr_html_()))
claims.finish();

# %% [markdown]
# ## What we find

# %% tags=["remove-input"]
ok27 = all(claims.passed(f"Fig2.7/{n}") for n in ("initial-plateau", "intermediate-plateau", "below-1e-6", "below-1e-10"))
lines = [
    f"- Fig. 2.7's saddle-to-saddle curve {'is' if ok27 else 'is not'} reproduced on {tr.runs} seeds: the first plateau ends at "
    f"epochs {int(exit1.min())}-{int(exit1.max())}, the plateau at 0.5 lasts {int(near_half.min())}-{int(near_half.max())} epochs.",
    f"- The labels are fitted at epochs {int(fits[:, 1].min())}-{int(fits[:, 1].max())} (positive) and {int(fits[:, 0].min())}-"
    f"{int(fits[:, 0].max())} (negative); T1 predicts {pred[0]:.0f} and {pred[1]:.0f} with the {'MSE' if P.loss == 'mean' else '1/(2n) loss'} trained here, "
    f"{'twice' if P.loss == 'mean' else 'half'} that with the {'1/(2n) loss' if P.loss == 'mean' else 'MSE'}.",
    f"- On Dataset 1.1.4 the negative-fit epoch grows by {slope:.0f} epochs per unit of ln(1/lambda) "
    f"(predicted {pred_slope:.0f}); the check {'passes' if claims.passed('T1/slope') else 'fails'}.",
    f"- Fig. 2.9: {kk[order].tolist()} breakpoints for lambda = {[P.interp_scales[i] for i in order]}.",
]
display(Markdown("\n".join(lines)))
