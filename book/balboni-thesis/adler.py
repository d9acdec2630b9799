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
# # ADLER against a tuned SGD grid and Gauss-Newton (Chapter 7)
#
# **Source:** Balboni, PhD thesis {cite:p}`balboni2025thesis` (`004_ded8060f0425b0a2.txt`), Sections 7.7-7.8,
# Algorithm 1, Table 7.1, Figures 7.1-7.2.
# **Targets:** Alg1, Table7.1, Fig7.1, Fig7.2, C1-C4, P1-P4.
# **Computed by:** {py:func}`shallowflow.experiments.balboni_thesis.adler.run_comparison` with the optimizers of
# {py:mod}`shallowflow.deep.optim` and the models of {py:mod}`shallowflow.deep.vision`.
#
# **ADLER** (ADaptive LEarning Rate SGD, Algorithm 1) takes plain minibatch gradient steps
# $\theta_{k+1}=\theta_k-\hat\eta_kG$ whose rate minimises the quadratic model of the minibatch loss along $-G$ with
# the kernel-driven Hessian $Q=\nabla F_I^\top\nabla^2\mathcal L_I\nabla F_I$ (the next chapter's subject):
#
# $$\eta=\frac{G^\top G}{v^\top\nabla^2\mathcal L_I\,v+\varepsilon\,G^\top G},\quad v=\nabla F_I\,G\ \text{(one JVP)},
#   \qquad s_{k+1}=\beta s_k+\log\eta,\ c_{k+1}=\beta c_k+1,\ \hat\eta=e^{s_{k+1}/c_{k+1}},$$
#
# with $\beta=0.99$, $\varepsilon=10^{-10}$. The thesis's claims: over more than 100 CNN (with and without residual
# connections) and ViT variations, ReLU/Sigmoid/Tanh, ADLER is "on par" with the best of a grid of ten SGD rates
# $10^{-5}\dots3\times10^{-1}$ on CIFAR10 (**C1**), better on CIFAR100 (**C2**, Table 7.1: ADLER row mean 0.310,
# SGD 0.285, GN 0.274 [derived]), "much better" than a Gauss-Newton variant (**C3**), at "twice the computation of a
# single SGD run" against the grid's ten runs (**C4**). Fig. 7.1: ADLER's training loss falls with a steeper
# logarithmic slope; the test loss rises after about ten epochs while the accuracy stabilises. Fig. 7.2: ADLER's
# rates look like cyclical learning rates for ReLU networks; GN's "inexorably decrease" and are smaller; on the
# easier CIFAR10 the steps are larger. The spec's pass criteria P1-P4 make these quantitative.
#
# :::{admonition} What this page runs, and what it assumes
# :class: note
# - **Data.** CIFAR10/100 are not on these machines. The 10-class set is scikit-learn's digits (1×8×8, stratified
#   1437/360 split); the 100-class set is a Gaussian mixture of 100 prototypes as 1×8×8 "images" (prototype norm
#   `separation_100`, unit-norm noise; the spec asks for a noise level where grid-best SGD reaches roughly the thesis's
#   25-40 %, and this value was chosen once by that rule). With the CIFAR files present locally,
#   `datasets = "cifar10,cifar100"` runs the same code on them. Every table and figure names its data.
# - **Models** (the thesis gives no sizes): a CNN of two 3×3 stages (widths `width`, 2×`width`, the second with
#   stride 2) and a linear head; the same with a residual block after each stage ("CNN+ResNet" pools both, as the
#   table's row does); a ViT with 2×2 patches, `vit_depth` blocks of dimension `vit_dim`, 4 heads. No normalisation
#   layers, no momentum, no weight decay (footnote 13); cross-entropy; minibatches of `batch` (an assumption).
# - **Gauss-Newton** is underspecified (footnote 10); this page uses the per-example (BHHH) reading with footnote 12's
#   arithmetic average. The literal reading gives $\eta=1/(\|G\|^2+\varepsilon)$ and is tested in the library.
# - **The grid's best** is chosen by final test accuracy (the thesis's "best result", optimistic for SGD).
# - **One loop.** All twelve methods of a (data, model, activation, seed) group start from the same initialisation
#   and see the same minibatches, through the one function {py:func}`shallowflow.experiments.balboni_thesis.adler.fit`.
# - **Scale.** The book runs a few epochs on 8×8 images with small models and one seed; the thesis trained for more
#   than ten epochs on CIFAR. `params/paper/balboni-thesis/adler.yml` holds larger settings for a GPU.
# :::
#
# ## Training your own model with ADLER
#
# `Adler` is a `torch.optim.Optimizer` for any `nn.Module`; its step takes a closure returning the minibatch inputs
# and the loss as a function of the model's outputs:

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
datasets = "digits10,mixture100"  # the 10- and 100-class substitutes (or cifar10,cifar100 when present)
models = "cnn,resnet,vit"  # CNN, CNN with residual blocks, tiny ViT
activations = "relu,sigmoid,tanh"  # the activations of Table 7.1
seeds = [0]  # initialisation and minibatch-order seeds
grid = [1e-05, 3e-05, 1e-04, 3e-04, 1e-03, 3e-03, 1e-02, 3e-02, 1e-01, 3e-01]  # the ten SGD rates of the grid
epochs = 4  # epochs per run
batch = 64  # minibatch size
n_train_100 = 1500  # training examples of the 100-class substitute
n_test_100 = 500  # test examples of the 100-class substitute
separation_100 = 0.45  # prototype norm of the 100-class mixture (noise norm 1)
width = 8  # first CNN stage width
vit_dim = 16  # ViT embedding dimension
vit_depth = 2  # ViT blocks
beta = 0.99  # ADLER and GN discount factor (thesis)
eps = 1e-10  # ADLER Hessian regularisation (thesis)
threads = 1  # torch threads (1 or 2); 0 uses the faster of the two as measured, at the price of last-digit differences

# %%
import torch
import torch.nn.functional as F

from shallowflow.deep import data, vision
from shallowflow.deep.optim import Adler

digits = data.digits(device="cpu")
X, y = (digits.X / 16).reshape(-1, 1, 8, 8).float(), digits.y
torch.manual_seed(0)
model = vision.SmallCNN(in_channels=1, classes=10, widths=(8, 16), act="tanh")  # any nn.Module
opt = Adler(model)  # beta = 0.99, eps = 1e-10
for xb, yb in zip(X[:1408].split(64), y[:1408].split(64)):  # one epoch of minibatches
    loss = opt.step(lambda: (xb, lambda out: F.cross_entropy(out, yb)))
with torch.no_grad():
    accuracy = (model(X[1408:]).argmax(1) == y[1408:]).float().mean()
print(f"one epoch of ADLER on {digits.describe()}: held-out accuracy {accuracy:.3f}, "
      f"last rate {opt.history[-1]['eta_hat']:.3g}, passes {opt.passes}")

# %% tags=["remove-cell"]
import math
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow import config, plots
from shallowflow.experiments.balboni_thesis import adler as A
from shallowflow.params import validate

P = validate(globals(), A.SCHEMA, A.RULES)
plots.setup()
claims = C.Claims(source="004", chapter="book/balboni-thesis/adler", profile=P.profile)

# %% [markdown]
# ## The comparison
#
# Every (dataset, model, activation, seed) group trains the ten grid rates, ADLER and GN. Before training the
# experiment times a few steps with one and with two torch threads and prints both. It trains with `threads`
# threads (restored afterwards); `threads = 0` takes the faster one, but the thread count changes the last digits
# of the convolutions' sums, so the book fixes it to keep its numbers the same on every machine.

# %%
comp = A.run_comparison(P)
cost = A.cost(comp)
print(config.describe())
print(f"threads: 1 -> {comp.threads[1] * 1e3:.1f} ms/step, 2 -> {comp.threads[2] * 1e3:.1f} ms/step; "
      f"faster {comp.threads['best']}, used {comp.threads['used']}")
for name, split in comp.splits.items():
    print(f"{name}: {split.description}")
print(f"{cost['runs']} runs in {comp.seconds:.1f} s")

# %% [markdown]
# ## Table 7.1: final test accuracy
#
# Mean ± standard deviation over the row's models and the seeds (the thesis's ± is "presumably" the same).

# %% tags=["remove-input"]
tables = {}
for name in comp.splits:
    cells = A.cell_table(comp, name)
    tables[name] = A.cell_comparisons(cells)
    rows = "".join(f"<tr><td>{c['row']}</td><td>{c['act']}</td>"
                   + "".join(f"<td>{c[m]:.3f} ± {c[m + '_sd']:.3f}</td>" for m in ("adler", "gn", "sgd"))
                   + f"<td>{'' if c['learned'] else 'SGD below the learning gate: undecided'}"
                   + f"{'' if c['valid'] else ' diverged run'}</td></tr>" for c in cells)
    display(HTML(f"<p><b>{comp.splits[name].description}</b></p><table><tr><th>models</th><th>activation</th>"
                 f"<th>ADLER</th><th>GN</th><th>SGD (grid-best)</th><th></th></tr>{rows}</table>"))

# %% [markdown]
# ## Cost
#
# Passes: forward + backward (+ JVP for ADLER and GN) per step, against one SGD run of the same group; wall time of
# the optimisation steps (evaluation excluded).

# %%
print(f"ADLER / one SGD run: passes {np.median(cost['pass_ratio']):.2f}x, wall time {np.median(cost['wall_ratio']):.2f}x "
      f"(median over {len(cost['wall_ratio'])} groups; range {cost['wall_ratio'].min():.2f} .. {cost['wall_ratio'].max():.2f}); "
      f"GN {np.median(cost['gn_wall_ratio']):.2f}x")
print("total optimisation seconds:", {k: round(v, 1) for k, v in cost["total_seconds"].items()},
      "total passes:", cost["total_passes"])

# %% [markdown]
# ## Figure 7.1: ReLU networks on the 100-class set
#
# Mean over the ReLU models (and seeds) of the test accuracy and the training loss per epoch, for ADLER, GN and the
# grid-best SGD of each model.

# %% tags=["hide-input"]
hundred = [n for n in comp.splits if comp.splits[n].classes == 100]
ten = [n for n in comp.splits if comp.splits[n].classes == 10]
fig_set = hundred[0] if hundred else next(iter(comp.splits))
cv = A.curves(comp, fig_set, "relu") if "relu" in P.activations else None
if cv is not None:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.5))
    for m, colour in (("adler", "tab:blue"), ("sgd", "tab:green"), ("gn", "tab:red")):
        ep = np.arange(cv[m]["acc"].shape[1])
        axes[0].plot(ep, np.nanmean(cv[m]["acc"], 0), color=colour, label=m.upper() if m != "sgd" else "SGD (grid-best)")
        axes[1].semilogy(ep, np.nanmean(cv[m]["train_loss"], 0), color=colour)
        axes[2].plot(ep, np.nanmean(cv[m]["test_loss"], 0), color=colour)
    axes[0].set(xlabel="epoch", ylabel="test accuracy", title=comp.splits[fig_set].name)
    axes[1].set(xlabel="epoch", ylabel="training loss (log)")
    axes[2].set(xlabel="epoch", ylabel="test loss")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Figure 7.2: learning rates of the CNN+ResNet ReLU network
#
# ADLER's and GN's $\hat\eta$ per step and, for SGD, the grid rate with the best test accuracy at each epoch
# (training keeps each grid rate fixed).

# %% tags=["hide-input"]
fig72 = "resnet" if "resnet" in P.models else A._items(P.models)[0]
rates = {name: A.rate_series(comp, name, fig72, "relu", P.seeds[0]) for name in comp.splits} if "relu" in P.activations else {}
if rates:
    fig, axes = plt.subplots(1, len(rates), figsize=(6 * len(rates), 3.4), squeeze=False)
    for ax, (name, r) in zip(axes[0], rates.items()):
        ax.semilogy(np.arange(len(r["adler"])) / r["per_epoch"], r["adler"], label="ADLER")
        ax.semilogy(np.arange(len(r["gn"])) / r["per_epoch"], r["gn"], label="GN")
        ax.step(np.arange(len(r["sgd"])), r["sgd"], where="post", label="SGD (best at epoch)")
        ax.set(xlabel="epoch", ylabel="learning rate", title=f"{fig72} ReLU, {comp.splits[name].name}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Checks
#
# P4 checks ADLER's per-minibatch rate against hand computations in float64 (and float32 for the JVP); the others
# use the runs above. The thresholds are the spec's (section 3.3); "cells" are Table 7.1's (row, activation) pairs.
# A comparison counts only the cells whose baseline learned: grid-best SGD's final test accuracy above chance plus
# three binomial standard errors of the test set ({py:func}`~shallowflow.experiments.balboni_thesis.adler.learning_gate`).
# A cell below it is undecided (marked in the table), evidence neither for nor against ADLER; Fig. 7.1's properties
# of ADLER's own curves (a rising test loss, a stable accuracy) count only the models where ADLER learned, since a
# curve flat at chance is "stable" for the wrong reason. C4 is measured in wall time: the pass count is fixed by
# Algorithm 1 (checked by Alg1/passes) and could not fail.

# %%
step = A.step_checks()
alg = A.algorithm_checks(comp, P.beta)
claims.check("Alg1/passes", "each ADLER step costs one forward, one backward and one JVP (largest count mismatch, finite runs)",
             alg["pass_mismatch"], C.below(0.5), source_value="one backward pass + one JVP")
claims.check("Alg1/first-step", "the first effective rate equals the first estimate (largest relative error)",
             alg["first_err"], C.below(1e-12), source_value="s_1 / c_1 = log eta_0")
claims.check("Alg1/geometric-mean", "eta_hat is the beta-discounted geometric mean of the estimates (largest relative error, all runs)",
             alg["geo_err"], C.below(1e-9), source_value="Algorithm 1")
claims.check("P4/a-line-search", "linear model + MSE, eps = 0: eta equals the exact line-search step (relative error)",
             step["a_rel_err"], C.below(1e-10), source_value="argmin of the quadratic model")
claims.check("P4/b-jvp-float64", "JVP-based v^T Q v equals the explicit-Jacobian value, float64 (relative error)",
             step["b_rel_err_f64"], C.below(1e-12), source_value="(spec) 1e-12")
claims.check("P4/b-jvp-float32", "the same in float32", step["b_rel_err_f32"], C.below(1e-5), source_value="(spec) 1e-5")
claims.check("P4/c-ce-closed-form", "closed-form cross-entropy quadratic form equals v^T Hess v by autograd (relative error)",
             step["c_rel_err"], C.below(1e-10), source_value="softmax variance")
claims.check("P4/d-constant-rate", "constant estimates give eta_hat = eta exactly (largest relative error)",
             max(step["d_const_err"], step["d_first_err"]), C.below(1e-12), source_value="EMA bookkeeping")
claims.check("P4/e-psd", "v^T Q v >= 0 at every ADLER step of every run (smallest value)", alg["min_vqv"],
             C.above(0.0), source_value="Q is PSD")

wall = cost["wall_ratio"]
if P.profile != "smoke":  # timings: the smoke tier's re-execution (nbval) compares printed numbers
    claims.check("P3/wall-clock", "wall-clock of ADLER / one SGD run (median over groups)", float(np.median(wall)),
                 C.below(2.5, strict=False), source_value="(spec) <= 2.5",
                 note="wall time of the optimisation steps on a shared machine")
    claims.check("C4/grid-saving", f"wall time of the {cost['grid_size']}-rate grid / wall time of ADLER (median over groups "
                 "with a finite ADLER run; the grid's cost is its size times its finite runs' median time)",
                 float(np.median(cost["grid_saving"])) if cost["grid_saving"].size else float("nan"), C.above(4.0),
                 source_value="about 5x [derived: 10 runs against twice one run]",
                 note="measured in wall time: the pass count is fixed by Algorithm 1 (one forward, one backward, one "
                      "JVP per step: Alg1/passes), so a ratio of counted passes could not fail")


def learned_note(t):
    return (f"counted over the cells where grid-best SGD learned (test accuracy above {t['gate']:.3f}, chance plus "
            f"three binomial standard errors): {t['cells']} of {t['total']}; a cell where it did not is undecided")


for name in ten:
    t = tables[name]
    claims.check("C1/on-par", f"{comp.splits[name].name}: mean over learned cells of ADLER - grid-best SGD accuracy",
                 t["adler_vs_sgd"], C.above(-0.02), source_value="on par (CIFAR10)", valid=t["valid"], note=learned_note(t))
    claims.check("P1/ten-class", f"{comp.splits[name].name}: share of learned cells with ADLER >= SGD - max(pooled sd, 0.02) "
                 f"({t['on_par']} of {t['cells']})", t["on_par_share"], C.above(4 / 6), source_value="(spec) >= 4 of 6",
                 valid=t["valid"], note=learned_note(t) + "; the spec's 4 of 6 as a share")
    claims.check("P2/ten-class", f"{comp.splits[name].name}: share of learned cells with ADLER > GN ({t['above_gn']} of "
                 f"{t['cells']})", t["above_gn_share"], C.above(4 / 6), source_value="(spec) >= 4 of 6", valid=t["valid"],
                 note=learned_note(t) + "; the spec's 4 of 6 as a share")
for name in hundred:
    t = tables[name]
    claims.check("C2/better", f"{comp.splits[name].name}: mean over learned cells of ADLER - grid-best SGD accuracy",
                 t["adler_vs_sgd"], C.above(0.0, strict=True), source_value="+0.024 (Table 7.1 row means)", valid=t["valid"],
                 note=learned_note(t))
    claims.check("P1/hundred-class", f"{comp.splits[name].name}: share of learned cells with ADLER >= grid-best SGD "
                 f"({t['above_sgd']} of {t['cells']})", t["above_sgd_share"], C.above(4 / 6), source_value="5 of 6 (Table 7.1)",
                 valid=t["valid"], note=learned_note(t) + "; the spec's 4 of 6 as a share")
    claims.check("P2/hundred-class", f"{comp.splits[name].name}: share of learned cells with ADLER > GN ({t['above_gn']} of "
                 f"{t['cells']})", t["above_gn_share"], C.above(4 / 6), source_value="5 of 6 (Table 7.1)", valid=t["valid"],
                 note=learned_note(t) + "; the spec's 4 of 6 as a share")
    claims.check("Table7.1/adler-best", f"{comp.splits[name].name}: ADLER's mean accuracy minus the better of SGD and GN "
                 "(learned cells)", t["adler_mean"] - max(t["sgd_mean"], t["gn_mean"]), C.above(0.0, strict=True),
                 source_value="0.310 vs 0.285 / 0.274", valid=t["valid"], note=learned_note(t))
    claims.check("Table7.1/sgd-above-gn", f"{comp.splits[name].name}: grid-best SGD mean minus GN mean (learned cells)",
                 t["sgd_mean"] - t["gn_mean"], C.above(0.0, strict=True), source_value="0.285 vs 0.274", valid=t["valid_sg"],
                 note=learned_note(t))
if tables:
    allc = [c for name in comp.splits for c in A.cell_table(comp, name) if c["learned"]]
    diff = float(np.mean([c["adler"] - c["gn"] for c in allc])) if allc else float("nan")
    claims.check("C3/much-better-than-gn", f"mean over the learned cells of all sets ({len(allc)}) of ADLER - GN accuracy",
                 diff, C.above(0.02), source_value="much better", valid=[c["valid"] for c in allc],
                 note="counted over the cells where grid-best SGD learned; a cell where it did not is undecided")

if cv is not None:
    f71 = A.fig71_measures(cv, A.gate_of(comp, fig_set))
    E = f71["epochs"]
    vs, va = f71["sgd_learned"], f71["adler_learned"]
    pick = lambda x, rows: np.asarray(x)[rows] if rows.any() else float("nan")  # noqa: E731 (no learned row: nan)
    gate71 = (f"gate {f71['gate']:.3f} (chance plus three binomial standard errors); grid-best SGD learned in "
              f"{int(vs.sum())}, ADLER in {int(va.sum())} of {len(vs)} ReLU models")
    claims.check("Fig7.1/train-loss", "ADLER's final training loss / grid-best SGD's (ReLU models where SGD learned)",
                 pick(f71["train_final_ratio"], vs), C.below(1.0, strict=True), source_value="steeper log slope",
                 valid=f71["valid"][vs], note=gate71)
    claims.check("Fig7.1/log-slope", "ADLER's log training-loss slope over the first half minus SGD's (models where SGD learned)",
                 pick(f71["slope_adler"] - f71["slope_sgd"], vs), C.below(0.0, strict=True), source_value="steeper",
                 valid=f71["valid"][vs], note=gate71)
    claims.check("Fig7.1/test-loss-rises", "ADLER's final test loss / its minimum (models where ADLER learned)",
                 pick(f71["test_rise"], va), C.above(1.5), source_value="rises dramatically after ~10 epochs",
                 valid=f71["valid"][va], note=gate71)
    claims.check("Fig7.1/early-minimum", f"epoch of ADLER's test-loss minimum (of {E}; scaled: at most half; models where "
                 "ADLER learned)", pick(f71["argmin_epoch"], va), C.below(E / 2, strict=False),
                 source_value="about epoch 10 of more than 10", valid=f71["valid"][va],
                 note="the thesis's 'first ten epochs' scaled to the first half of this run; " + gate71)
    claims.check("Fig7.1/accuracy-stable", "spread of ADLER's test accuracy over the last quarter of epochs (models where "
                 "ADLER learned: a curve flat at chance is not evidence of stability)", pick(f71["acc_spread"], va),
                 C.below(0.02), source_value="stabilises", valid=f71["valid"][va], note=gate71)
if rates:
    first = next(iter(rates.values()))
    ends = [float(r["gn"][-1]) for r in rates.values()]
    after1 = [float(r["gn"][min(r["per_epoch"], len(r["gn"])) - 1]) for r in rates.values()]
    claims.check("Fig7.2/gn-decreases", "GN's final eta_hat / its eta_hat after the first epoch",
                 np.array(ends) / np.array(after1), C.below(1.0, strict=True), source_value="inexorably decrease",
                 valid=[r["valid"] for r in rates.values()])
    claims.check("Fig7.2/gn-smaller", "median over training of GN's eta_hat / ADLER's",
                 [float(np.median(r["gn"]) / np.median(r["adler"])) for r in rates.values()], C.below(1.0, strict=True),
                 source_value="generally smaller", valid=[r["valid"] for r in rates.values()])
    claims.check("Fig7.2/adler-cyclical", "local maxima of ADLER's smoothed eta_hat, at least one epoch apart",
                 [A.local_maxima(r["adler"], r["per_epoch"]) for r in rates.values()], C.above(2),
                 source_value="resembles cyclical rates", valid=[r["valid"] for r in rates.values()])
    if ten and hundred:
        claims.check("Fig7.2/easier-larger", "mean ADLER eta_hat on the 10-class set / on the 100-class set",
                     float(np.mean(rates[ten[0]]["adler"]) / np.mean(rates[hundred[0]]["adler"])),
                     C.above(1.0, strict=True), source_value="flatter, greater steps on CIFAR10",
                     valid=[rates[ten[0]]["valid"], rates[hundred[0]]["valid"]])

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
display(Markdown(A.findings(claims, comp, cost, {comp.splits[n].name: t for n, t in tables.items()})))
