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
# # Local PL, conditioning and generalisation bounds along training
#
# **Source:** `004_ded8060f0425b0a2.txt`, Balboni's thesis {cite:p}`balboni2025thesis`, Sections 6.2-6.3
# (Experiment 6-B: Figures 6.5-6.8, 6.11, 6.12, 6.14-6.23; Lemma 11, Lemma 22, bound (4.11), Lemma 3's
# (4.12)-(4.13)).
# **Targets:** Fig6.5, Fig6.6, Fig6.7, Fig6.8, Fig6.11, Fig6.12, Fig6.14-Fig6.23, and a finding of this book, Lemma1-regime (steps longer than Lemma 1's 1/L_t in the runs of Figs. 6.5 and 6.15).
# **Computed by:** {py:func}`shallowflow.experiments.balboni_thesis.pl_training.run_training`
# (training: {py:func}`shallowflow.deep.train.train` with {py:class}`shallowflow.deep.train.PerRunSGD`),
# {py:func}`~shallowflow.experiments.balboni_thesis.pl_training.prediction_ratio`,
# {py:func}`~shallowflow.experiments.balboni_thesis.pl_training.generalisation_bound`.
#
# The thesis trains 6- and 9-layer fully connected networks of width 500 (normalised ReLU / Tanh) by
# full-batch gradient descent for 80 epochs at learning rates 0.0005-0.01 on random CIFAR-10 subsets of
# $n$ = 50-500 examples, under MSE and cross-entropy, keeps the configurations with accuracy above 12%,
# and measures along training the local PL coefficient (6.2)
# $\mu(\theta)=\|\nabla f(\theta)\|^2/(2(f(\theta)-f^*))$ with $f^*=0$, a smoothness constant $L$, the
# lowest eigenvalue of the feature Gram matrix and its perturbation bound (4.11), and the PL-stability
# generalisation bound (4.12)-(4.13). Its claims: the loss-decrease prediction of Lemma 1 (Lemma 22
# for cross-entropy) is conservative in the first epochs and "almost perfect" later; the lowest
# eigenvalues "don't decrease as much as predicted", roughly constant under MSE and slightly improving
# under cross-entropy, so the bounds (4.11) are pessimistic and often vacuous; the generalisation bounds
# are vacuous and decrease with the epochs.
#
# :::{admonition} What this chapter assumes (the thesis does not say)
# :class: note
# - **Data:** CIFAR-10 when present locally (`SHALLOWFLOW_CIFAR`), else scikit-learn's digits
#   ($d = 64$); each seed draws its own training subset and a held-out test subset; inputs have
#   $\|x\|=\sqrt d$. One network per seed; all learning rates of a seed start from it.
# - **Model:** no biases, weights $N(0,1/\text{fan-in})$, a linear head with 10 outputs, no renormalisation.
# - **Losses:** MSE on the logits with one-hot targets in torch's `MSELoss` convention (the mean of the
#   squared errors over the examples *and* the 10 classes; parameter `mse`), and mean cross-entropy.
#   The other convention, $\frac1n\sum_i\frac12\|f(x_i)-e_{y_i}\|^2$, is 5 times larger: at the thesis's
#   largest learning rates it makes this book's networks diverge (a `custom` run with `mse = "mse"` shows
#   it), which the thesis does not report, so the torch convention is the more likely one.
#   "Accuracy" is the final *training* accuracy.
# - **Smoothness $L_t$:** the top Hessian eigenvalue by power iteration on Hessian-vector products
#   (``jvp`` of ``grad``), warm-started every `hvp_every` epochs and held in between; the secant estimate
#   $\|\nabla f_{t+1}-\nabla f_t\|/\|\theta_{t+1}-\theta_t\|$ is shown as a cross-check.
# - **Prediction** (Lemma 1 with the actual step $\eta$ and the previous epoch's $\mu_t, L_t$):
#   $\hat D_t=\eta\|\nabla f_t\|^2(1-L_t\eta/2)$ if $\eta\le1/L_t$, else $\hat D_t=(\mu_t/L_t) f_t$ (the $1/L$
#   step's guarantee); the ratio $R_t=\hat D_t/(f_t-f_{t+1})$. For cross-entropy, Lemma 22 with the thesis's
#   proxy $\|x_k-x^*\|\simeq2(f_k-f^*)/G$ and the local weak-PL coefficient $(2\|\nabla f\|/G)^2$ reduces to
#   the same expression.
# - **Tracked layer:** the last hidden layer, $G/\text{width}$. **Bounds (4.11):** the *oracle*
#   $\lambda_{\min}(G_0)-\|G_t-G_0\|_{op}$ (the best (4.11) can give) and the *chain* bound, where
#   $\|G_t-G_0\|$ is bounded through the weights by layer-wise Lipschitz constants
#   $\sigma_{\max}(W)\max|\phi'|$ (Lemma 16, (B.17); Lemma 21's smoothness constant (B.18), which the spec
#   finds invalid for vector maps, is not needed).
# - **Generalisation (4.12)-(4.13):** $\varepsilon_A$ = the training loss, $\mu$ = (6.2), $G=\max_i\|\nabla\ell_i\|$
#   (per-example gradients, exact), $M$ = the largest per-example loss over the training and held-out
#   examples (the bound needs $0\le\ell\le M$ everywhere), $\delta=0.05$. "MSE on logits" (Fig. 6.11) is the
#   training loss; "MSE" (Fig. 6.12) is read as the other convention above (the same runs, the loss 5 times
#   larger). The bound scales like the loss, so the two figures differ by that factor only.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
dataset = "auto"  # auto uses CIFAR-10 when present locally, else digits
depth = 6  # hidden layers (the thesis: 6 and 9)
width = 200  # the thesis: 500 (reduced)
examples = [20, 40, 100]  # n (the thesis: 50, 100, 250, 500)
test_examples = 200  # held-out examples per seed
lrs = [0.0005, 0.001, 0.005, 0.01]  # the thesis's learning rates
epochs = 80  # full-batch steps (the thesis: 80)
seeds = [0, 1]  # the thesis: 3 (reduced)
accuracy_filter = 0.12  # analyse runs with final training accuracy above this (the thesis: 12%)
hvp_every = 20  # epochs between power iterations for L
hvp_iters = 10  # iterations of the first power iteration (later: a third, warm-started)
gen_every = 10  # epochs between per-example gradient measurements
delta = 0.05  # confidence of (4.13) (unstated)
sections = ["prediction", "conditioning", "bounds", "generalisation"]  # parts to run (each trains only the grids it needs)
mse = "mse_mean"  # torch's MSELoss convention; "mse" is half the squared error summed over classes
level = 0.95  # level of the Wilson intervals of the shares of runs
resume = False  # keep each finished grid on disk and resume an interrupted run (on in the paper profile only)

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.experiments.balboni_thesis import pl_training as X
from shallowflow.params import validate

P = validate(globals(), X.SCHEMA, X.RULES)
plots.setup()
claims = C.Claims(source="004", chapter="book/balboni-thesis/pl-training", profile=P.profile, sections=P.sections,
                  sections_all=X.SECTIONS)

# %% [markdown]
# ## Training
#
# For every activation, loss and $n$, the seeds $\times$ learning rates train as one ensemble. The
# book's scale keeps the depth (6), the 80 epochs, the four learning rates, both losses and activations,
# the accuracy filter and ratios $n/\text{width}$ of 0.1 to 0.5 (the thesis: 0.1 to 1); it loses the width
# (200 instead of 500), $n$ (20-100 instead of 50-500), the third seed and the 9-layer networks
# (`params/paper/balboni-thesis/pl-training.yml` has the thesis's grid).

# %%
runs = X.run_training(P)
grids = {k: v for k, v in runs.items() if isinstance(k, tuple)}
print(config.describe(), f"-> {runs['threads']} thread(s) chosen")
print(f"data: {next(iter(grids.values())).data_name} (seed {P.seeds[0]}'s subset; one per seed and n); seeds {P.seeds}")
print(f"{len(grids)} ensembles of {len(P.seeds) * len(P.lrs)} runs x {P.epochs} epochs in {runs['seconds']:.1f} s")
kept = {k: g.kept(P.accuracy_filter) for k, g in grids.items()}
for (act, loss, n), g in grids.items():
    print(f"{act:4s} {loss:3s} n = {n:4d}: final accuracy {np.array2string(g.acc, precision=2)}, kept {int(kept[(act, loss, n)].sum())}/{g.acc.size}")
DATA = next(iter(grids.values())).data_name
nmax = max(P.examples)


def select(act, loss, what):
    """Concatenate a per-run quantity over n for one (act, loss), kept runs only; with validity."""
    vals, valid = [], []
    for n in P.examples:
        g = grids[(act, loss, n)]
        k = kept[(act, loss, n)]
        vals.append(what(g)[..., k])
        valid.append(g.valid()[k])
    return np.concatenate(vals, axis=-1), np.concatenate(valid)


# %% [markdown]
# ## Figures 6.5, 6.14, 6.15: predicted against measured loss decrease
#
# $R_t<1$ means the prediction is conservative (the loss fell more than predicted); the thesis reports
# conservative early epochs and an "almost perfect" prediction late.

# %% tags=["hide-input"]
if "prediction" in P.sections:
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, (act, loss, fig_id) in zip(axes, (("relu", "mse", "6.5"), ("relu", "ce", "6.14"), ("tanh", "ce", "6.15"))):
        g = grids[(act, loss, nmax)]
        R = X.prediction_ratio(g)
        for r in range(R.shape[1]):
            if g.seed_of[r] == P.seeds[0]:
                ax.plot(np.arange(1, P.epochs + 1), R[:, r], label=f"lr {g.lrs[r]:g}", lw=1)
        ax.axhline(X.SOURCE_FIG65_LATE_RATIO, color="k", ls="--", lw=0.8,
                   label="thesis, Fig. 6.5: late epochs almost perfect (ratio 1)" if fig_id == "6.5" else None)
        ax.set_ylim(-0.5, 3); ax.set_xlabel("epoch"); ax.set_title(f"Fig. {fig_id}: {act}, {loss}, n = {nmax}", fontsize=9)
    axes[0].set_ylabel("predicted / measured decrease"); axes[0].legend(fontsize=7)
    fig.suptitle(f"seed {P.seeds[0]}; data: {grids[('relu', 'mse', nmax)].data_name}", fontsize=8)
    fig.tight_layout()
    plt.show()

# %%
if "prediction" in P.sections:
    TYPICAL = ("the thesis describes the typical curve of its figures, so a majority of the kept runs must show it, decided "
               "by the share's Wilson interval, not every run")


    def prediction_checks(target, act, loss, claim):
        early, valid = select(act, loss, X.early_ratio)
        late, _ = select(act, loss, X.late_ratio)
        e, l8 = X.majority(early < 1, P.level), X.majority(X.almost_perfect(late), P.level)
        claims.check(f"{target}/early-conservative", f"{claim}: the prediction is conservative in epochs 1-5 "
                     f"(median R_t < 1) in a majority of kept runs: {e['text']}; measured: the interval's lower end",
                     e["low"], X.MAJORITY, source_value="measured decrease bigger than predicted",
                     valid=valid, note=TYPICAL)
        claims.check(f"{target}/late-accurate", f"{claim}: the prediction is almost perfect in the last 20 epochs "
                     f"(median R_t in [0.8, 1.25]) in a majority of kept runs: {l8['text']}; measured: the interval's lower end",
                     l8["low"], X.MAJORITY,
                     source_value="for the final epochs the prediction is almost perfect", valid=valid, note=TYPICAL)
        if target in ("Fig6.5", "Fig6.15"):
            etaL, _ = select(act, loss, lambda g: np.max(np.asarray(g.lrs)[None, :] * g.L[:-1], axis=0))
            finding = {"Fig6.5": "relu-mse", "Fig6.15": "tanh-ce"}[target]
            claims.check(f"Lemma1-regime/{finding}", f"{claim}: some steps are longer than Lemma 1's 1/L_t, where its "
                         "guarantee is the 1/L step's, not the step taken (largest eta L_t over kept runs and epochs)",
                         float(np.max(etaL)) if etaL.size else float("nan"), X.LEMMA1_REGIME,
                         source_value="Lemma 1: a step 1/L", valid=valid,
                         note=f"a finding of this book on the runs of {target}, not a claim of the thesis")
        return early, late


    pred = {t: prediction_checks(t, a, l, c) for t, a, l, c in (("Fig6.5", "relu", "mse", "ReLU, MSE"),
                                                              ("Fig6.14", "relu", "ce", "ReLU, cross-entropy"),
                                                              ("Fig6.15", "tanh", "ce", "Tanh, cross-entropy"))}

# %% [markdown]
# The smoothness estimates behind the prediction (seed 0, largest $n$): the power iteration's $L_t$ and
# the secant cross-check. A step with $\eta L_t>2$ can increase the loss, which no PL prediction allows.

# %% tags=["hide-input"]
if "prediction" in P.sections:
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    for ax, loss in zip(axes, ("mse", "ce")):
        g = grids[("relu", loss, nmax)]
        for r in range(len(g.lrs)):
            if g.seed_of[r] == P.seeds[0]:
                ax.plot(g.L[:, r], color=f"C{r % len(P.lrs)}", label=f"lr {g.lrs[r]:g}: power iteration")
                ax.plot(np.arange(P.epochs), g.L_secant[:, r], ":", color=f"C{r % len(P.lrs)}")
        ax.set_yscale("log"); ax.set_xlabel("epoch"); ax.set_title(f"ReLU, {loss}: L_t (dotted: secant)", fontsize=9)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"seed {P.seeds[0]}; data: {grids[('relu', 'mse', nmax)].data_name}", fontsize=8)
    fig.tight_layout()
    plt.show()
    etaL = np.concatenate([np.asarray(g.lrs)[None, :] * g.L for g in grids.values()])
    print(f"eta * L_t over all runs and epochs: {etaL.min():.3g} .. {etaL.max():.3g}; "
          f"fraction of (run, epoch) with eta L_t > 2: {np.mean(etaL > 2):.3f}")

# %% [markdown]
# ## Conditioning during training (Figures 6.7, 6.8, 6.16-6.19)
#
# **Learning gate.** A network that never trains satisfies "increases very slowly" (Fig. 6.7, small learning
# rates), "remains effectively constant" (Figs. 6.16, 6.17) and, with a change of 0 counted as $\ge 0$, "slightly
# improving" (Figs. 6.18, 6.19) by construction. These checks therefore count only the runs that trained: those whose
# final training loss is at most the fraction `LEARNED_LOSS_FRACTION` of their initial training loss
# ({py:func}`~shallowflow.experiments.balboni_thesis.pl_training.learned`; the value is printed below and in each
# check's claim). The same gate for all of them, and for the generalisation bound's slope in $n$ (Figs. 6.11, 6.12,
# "not as much as expected with the number of examples", which an untrained network's bound, nearly flat in $n$, also
# satisfies); when no run passes it, the check measures NaN and fails.

# %% tags=["hide-input"]
if "conditioning" in P.sections:
    fig, axes = plt.subplots(2, 4, figsize=(15, 6), sharex=True)
    for j, (act, loss, fid) in enumerate((("relu", "mse", "6.16"), ("tanh", "mse", "6.17"), ("relu", "ce", "6.7 / 6.18"),
                                         ("tanh", "ce", "6.8 / 6.19"))):
        g = grids[(act, loss, nmax)]
        for r in range(len(g.lrs)):
            c = f"C{P.lrs.index(g.lrs[r])}"
            axes[0, j].plot(np.log(g.lmax[:, r] / g.lmin[:, r]), color=c, lw=1, label=f"lr {g.lrs[r]:g}" if g.seed_of[r] == P.seeds[0] else None)
            axes[1, j].plot(g.lmin[:, r], color=c, lw=1)
        axes[0, j].set_title(f"Fig. {fid}: {act}, {loss}", fontsize=9)
        axes[1, j].set_xlabel("epoch")
    axes[0, 0].set_ylabel("log-conditioning"); axes[1, 0].set_ylabel("lambda_min(G / width)"); axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"last hidden layer, every seed; data: {grids[('relu', 'mse', nmax)].data_name}", fontsize=8)
    fig.tight_layout()
    plt.show()

# %%
if "conditioning" in P.sections:
    logk = lambda g: np.log(g.lmax / g.lmin)  # noqa: E731
    small = P.lrs[:2]
    big = max(P.lrs)
    GATE = (f"a run that never trained satisfies this claim by construction (a change of 0), so only runs whose final "
            f"training loss is at most {X.LEARNED_LOSS_FRACTION:g} of the initial one count (the learning gate); with none "
            "the measured value is NaN and the check fails")
    slow_flags, valid = select("relu", "ce", lambda g: X.slow_rise(logk(g), g.lrs, small))
    trained, _ = select("relu", "ce", X.learned)
    slow = X.gated_majority(slow_flags, trained, P.level)
    print(f"learning gate: final training loss <= {X.LEARNED_LOSS_FRACTION:g} x initial; runs passing it per (activation, loss): "
          + ", ".join(f"{a} {l} {int(select(a, l, X.learned)[0].sum())}/{select(a, l, X.learned)[0].size}"
                      for a in X.ACTS for l in X.LOSSES))
    claims.check("Fig6.7/small-lr-slow", f"ReLU, cross-entropy, lr in {small}: log-conditioning increases very slowly "
                 f"(log k_80 - log k_0 in [0, 0.5]) in a majority of kept runs: {slow['text']}; measured: the interval's lower end",
                 slow["low"], C.above(0.5, strict=True),
                 source_value="for smaller learning rates the conditioning increases very slowly", valid=valid,
                 note=TYPICAL + "; " + GATE)

    rf, valid = select("relu", "ce", lambda g: X.rise_then_fall(logk(g), g.lrs, big))
    rfs = X.majority(rf[np.isfinite(rf)] == 1, P.level)
    claims.check("Fig6.7/large-lr-rise-fall", f"ReLU, cross-entropy, lr {big}: log-conditioning peaks in the first half and ends "
                 f"below its start in a majority of kept runs: {rfs['text']}; measured: the interval's lower end",
                 rfs["low"], C.above(0.5, strict=True),
                 source_value="initially increases, then starts to gradually decrease", valid=valid, note=TYPICAL)


    shapes, valid = select("tanh", "ce", lambda g: X.curve_shapes(logk(g)))
    typ = X.majority(shapes == 0, P.level)
    others = ", ".join(f"{int(np.sum(shapes == i))} {X.SHAPES[i]}" for i in range(1, len(X.SHAPES)))
    claims.check("Fig6.8/rise-then-steady-fall", f"Tanh, cross-entropy: the typical curve is an initial increase (peak before "
                 f"epoch {P.epochs // 2}) followed by a steady decrease, in a majority of kept runs: {typ['text']} (the others: "
                 f"{others}); measured: the interval's lower end", typ["low"], C.above(0.5, strict=True),
                 source_value="the initial increase followed by a steady decrease", valid=valid, note=TYPICAL)
    for target, act, loss in (("Fig6.16", "relu", "mse"), ("Fig6.17", "tanh", "mse"), ("Fig6.18", "relu", "ce"), ("Fig6.19", "tanh", "ce")):
        trained, _ = select(act, loss, X.learned)
        if loss == "mse":
            flags, valid = select(act, loss, X.lmin_constant)
            const = X.gated_majority(flags, trained, P.level)
            claims.check(f"{target}/lmin-constant", f"{act}, MSE: lambda_min stays about constant (|log lambda_min,80 - "
                         f"log lambda_min,0| < 0.25) in a majority of kept runs: {const['text']}; measured: the interval's lower end",
                         const["low"], C.above(0.5, strict=True),
                         source_value="effectively remaining constant in the case of MSE loss", valid=valid,
                         note=TYPICAL + "; " + GATE)
        else:
            flags, valid = select(act, loss, X.lmin_improves)
            up = X.gated_majority(flags, trained, P.level)
            claims.check(f"{target}/lmin-improves", f"{act}, cross-entropy: lambda_min slightly improves (log lambda_min,80 - "
                         f"log lambda_min,0 >= 0) in a majority of kept runs: {up['text']}; measured: the interval's lower end",
                         up["low"], C.above(0.5, strict=True),
                         source_value="slightly improving over time for cross-entropy loss", valid=valid,
                         note=TYPICAL + "; " + GATE)

# %% [markdown]
# ## The bounds of (4.11) (Figures 6.6, 6.20-6.23)
#
# Actual $\lambda_{\min}$ (blue) against the oracle bound (orange) and the chain bound (red); a bound at
# or below 0 is vacuous. The plot is symmetric-log.
#
# **What holds by construction.** That the actual $\lambda_{\min}$ lies above both bounds is no finding: for any
# matrices Weyl's inequality gives $\lambda_{\min}(G_t)\ge\lambda_{\min}(G_0)-\|G_t-G_0\|_{op}$ (the oracle), and the
# chain bound only bounds $\|G_t-G_0\|_{op}$ from above (Lemma 16), for any weights. The former check
# `Fig6.6/actual-above-bounds` could not fail, so it is retired: the smallest gap is printed below, and the identity
# is a test of the implementation (`tests/test_controls_balboni_thesis.py`). The
# thesis's observation is that the bound is *pessimistic*, "degrades significantly": `Fig6.6/bound-pessimistic` asks
# that at the last epoch the chain bound lie below the actual $\lambda_{\min}$ by at least half of
# $\lambda_{\min,0}$ in a majority of kept runs, which a network that does not move (gap 0) fails. Figures
# 6.20-6.23's "in multiple cases the bounds even become vacuous after the first epochs" asks for at least two
# $(n,\eta)$ configurations (one graph each) whose chain bound is $\le 0$ by epoch 10.

# %% tags=["hide-input"]
if "bounds" in P.sections:
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.5))
    for ax, (act, loss, fid) in zip(axes, (("relu", "ce", "6.20"), ("tanh", "ce", "6.21"), ("relu", "mse", "6.6 / 6.22"),
                                           ("tanh", "mse", "6.23"))):
        g = grids[(act, loss, nmax)]
        ax.plot(g.lmin, color="tab:blue", lw=0.8)
        ax.plot(g.oracle, color="tab:orange", lw=0.8)
        ax.plot(g.chain_steps, g.chain, "-", color="tab:red", lw=0.8)
        ax.set_yscale("symlog", linthresh=1e-3); ax.set_xlabel("epoch"); ax.set_title(f"Fig. {fid}: {act}, {loss}, n = {nmax}", fontsize=9)
    fig.suptitle(f"every run; data: {grids[('relu', 'mse', nmax)].data_name}", fontsize=8)
    fig.tight_layout()
    plt.show()

# %%
if "bounds" in P.sections:
    sanity, valid = select("relu", "mse", X.bounds_below_actual)
    print("Identity of the implementation, not a check (retired: it holds for any weights, trained or not, so it decides "
          "nothing; tests/test_controls_balboni_thesis.py): the smallest lambda_min - bound (4.11) over the epochs, ReLU MSE, kept runs "
          f"with finite values: {float(sanity[valid].min()) if valid.any() else float('nan'):.3g} (>= 0 by Weyl's inequality "
          "and Lemma 16)")
    pess, valid = select("relu", "mse", X.bound_pessimistic)
    pess_oracle, _ = select("relu", "mse", lambda g: (g.lmin[-1] - g.oracle[-1]) / g.lmin[0] >= X.PESSIMISM_MARGIN)
    pe = X.majority(pess, P.level)
    claims.check("Fig6.6/bound-pessimistic", f"ReLU, MSE: the chain bound (4.11) 'degrades significantly': at epoch {P.epochs} "
                 f"it lies below the actual lambda_min by at least {X.PESSIMISM_MARGIN:g} lambda_min,0 in a majority of kept runs: "
                 f"{pe['text']} (the oracle bound, the best (4.11) can give: {metrics.describe_share(pess_oracle, P.level)}); "
                 "measured: the interval's lower end", pe["low"], C.above(0.5, strict=True),
                 source_value="how pessimistic are current estimates ... the bound degrades significantly", valid=valid,
                 note="the empirical half of the spec's sanity criterion: the gap between the actual eigenvalue and its bound, "
                      "which is 0 for a network that did not move; the margin is the spec's ratio 0.5, fixed before measuring")
    gl = grids[("relu", "mse", nmax)]
    k = kept[("relu", "mse", nmax)]
    vac = X.majority((gl.chain[:, k] <= 0).any(0), P.level)
    claims.check("Fig6.6/chain-vacuous", f"at the largest n ({nmax}), the chain bound becomes vacuous (<= 0) within the epochs "
                 f"in a majority of kept runs: {vac['text']}; measured: the interval's lower end", vac["low"],
                 C.above(0.5, strict=True), source_value="even becomes vacuous for an high number of examples",
                 valid=gl.valid()[k])
    holds, valid = select("relu", "mse", X.lmin_holds)
    hold = X.majority(holds, P.level)
    claims.check("Fig6.6/lmin-holds", f"ReLU, MSE: lambda_min,{P.epochs} / lambda_min,0 >= 0.5 where the chain bound "
                 f"(4.11) predicted below 0.5 at epoch {P.epochs}, in a majority of kept runs: {hold['text']}; measured: the interval's lower end",
                 hold["low"], C.above(0.5, strict=True), source_value="don't decrease as much as predicted", valid=valid,
                 note="deviation from the spec: a share of runs with its Wilson interval instead of the median ratio (issue 26), "
                      "and 'than predicted' made explicit (the bound predicted losing more than half), so a network that did not move "
                      "does not pass")
    for target, act, loss in (("Fig6.20", "relu", "ce"), ("Fig6.21", "tanh", "ce"), ("Fig6.22", "relu", "mse"), ("Fig6.23", "tanh", "mse")):
        cases = X.vacuous_configurations([grids[(act, loss, n)] for n in P.examples], [kept[(act, loss, n)] for n in P.examples])
        runs_v, valid = select(act, loss, X.vacuous_early)
        n_cfg = sum(int(kept[(act, loss, n)].reshape(len(P.seeds), -1).any(0).sum()) for n in P.examples)
        claims.check(f"{target}/vacuous-early", f"{act}, {loss}: 'in multiple cases' (at least {X.MULTIPLE} (n, learning rate) "
                     f"configurations, one graph each) the chain bound (4.11) is <= 0 by epoch {X.VACUOUS_BY}: "
                     f"{len(cases)} of the {n_cfg} configurations with a kept run ({int(runs_v.sum())} of {runs_v.size} kept runs); "
                     "measured: the number of configurations", len(cases), X.VACUOUS_EARLY,
                     source_value="in multiple cases the bounds even become vacuous after the first epochs of training",
                     valid=valid, note="a configuration counts once however many of its seeds go vacuous; a network that does "
                     "not move keeps its bound at lambda_min,0 > 0")


    for target, loss in (("Fig6.21", "ce"), ("Fig6.23", "mse")):
        spread = {a: X.seed_spread([grids[(a, loss, n)] for n in P.examples]) for a in ("tanh", "relu")}
        more = metrics.share_interval(spread["tanh"] > spread["relu"], P.level)
        every = np.concatenate([grids[(a, loss, n)].valid() for a in ("tanh", "relu") for n in P.examples])
        claims.check(f"{target}/tanh-more-variable", f"{loss}: Tanh's lambda_min varies more over the {len(P.seeds)} seeds than "
                     f"ReLU's in a majority of the (n, lr) settings: {more['k']}/{more['n']} settings ({more['share']:.0%}, "
                     f"{P.level:.0%} Wilson interval [{more['low']:.2f}, {more['high']:.2f}]); measured: the interval's lower end",
                     more["low"], C.above(0.5, strict=True), source_value="Tanh shows greater variability", valid=every,
                     note="a spread over seeds per setting, compared in each setting; the settings are the runs of the share")

# %% [markdown]
# ## Generalisation bounds (Figures 6.11, 6.12)

# %% tags=["hide-input"]
if "generalisation" in P.sections:
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    other = 5.0 if P.mse == "mse_mean" else 0.2  # the other MSE convention, as a factor on the loss
    for ax, (fid, scale) in zip(axes, (("6.11: MSE on logits (training loss)", 1.0), ("6.12: MSE (other convention)", other))):
        for i, n in enumerate(P.examples):
            g = grids[("relu", "mse", n)]
            b, M = X.generalisation_bound(g, P.delta, scale)
            ax.plot(g.gen_steps, b.mean(1), color=f"C{i}", label=f"n = {n}: bound")
            ax.plot(g.gen_steps, M.mean(1), ":", color=f"C{i}", label=f"n = {n}: M")
        ax.set_yscale("log"); ax.set_xlabel("epoch"); ax.set_title(f"Fig. {fid}", fontsize=9)
    axes[0].legend(fontsize=7)
    fig.suptitle("ReLU, mean over runs; data: " + "; ".join(grids[("relu", "mse", n)].data_name for n in P.examples), fontsize=7)
    fig.tight_layout()
    plt.show()

# %%
if "generalisation" in P.sections:
    for target, scale in (("Fig6.11", 1.0), ("Fig6.12", other)):
        over, rhos, gaps, counted = [], [], [], []
        valid, valid_counted = [], []
        for n in P.examples:
            g = grids[("relu", "mse", n)]
            k = kept[("relu", "mse", n)]
            b, M = X.generalisation_bound(g, P.delta, scale)
            over.append((b / M).min(0)[k])
            idx = np.asarray(g.gen_steps)
            gap = np.abs(g.test_f * scale - g.f[idx] * scale)
            gaps.append((b - gap).min(0)[k])
            counted.append(k & X.learned(g))
            valid.append(g.valid()[k])
            valid_counted.append(g.valid()[counted[-1]])
            if counted[-1].any():
                rhos.append(X.bound_epoch_rhos(g, P.delta, scale, counted[-1]))
        valid, valid_counted = np.concatenate(valid), np.concatenate(valid_counted)
        rhos = np.concatenate(rhos) if rhos else np.array([np.nan])  # no run trained: nothing stands behind it
        slope = X.last_bound_slope([grids[("relu", "mse", n)] for n in P.examples], P.delta, scale, counted)
        claims.check(f"{target}/vacuous", "the bound exceeds the loss range M at every measured epoch (smallest bound / M)",
                     np.concatenate(over), C.above(1, strict=True), source_value="All the bounds are vacuous", valid=valid)
        claims.check(f"{target}/decreases", "the bound decreases with the epochs (Spearman rho of bound vs epoch < -0.8, every kept "
                     f"run that trained: {sum(int(c.sum()) for c in counted)} of {sum(c.size for c in counted)} runs; NaN when none did)",
                     rhos, X.GEN_DECREASES, source_value="effectively decrease with the number of epochs", valid=valid_counted)
        claims.check(f"{target}/slow-in-n", "it decreases with n, more slowly than n^(-1/2) (log-log slope in n of the last bound, "
                     f"averaged over the kept runs that trained: {sum(int(c.sum()) for c in counted)} of {sum(c.size for c in counted)} "
                     "runs; NaN when some n has none) in (-0.5, 0): a bound that grows with n does not 'decrease, but not as much')",
                     slope, X.SLOWER_THAN_SQRT_N, source_value="not as much as it would be expected with the number of examples",
                     valid=valid)
        claims.check(f"{target}/above-gap", "the measured generalisation gap |test - train loss| is below the bound (smallest bound - gap)",
                     np.concatenate(gaps), C.above(0), source_value="a bound", valid=valid)

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
# Generated from this execution's measurements and verdicts.

# %% tags=["remove-input"]
lines = [f"Data: {DATA}; {P.depth} x {P.width} networks, n {P.examples}, learning rates {P.lrs}, seeds {P.seeds}; "
         f"sections {P.sections}."]
if "prediction" in P.sections:
    for t, (early, late) in pred.items():
        lines.append(f"- **{t}: {claims.target_verdict(t)}**: median prediction ratio in epochs 1-5 ranges over "
                     f"{np.nanmin(early):.2f} .. {np.nanmax(early):.2f}, in the last 20 epochs {np.nanmin(late):.2f} .. {np.nanmax(late):.2f}.")
    lines.append(f"- eta L_t exceeds 2 in {np.mean(etaL > 2):.1%} of (run, epoch) pairs, where gradient descent may increase the loss.")
for t in ("Fig6.6", "Fig6.7", "Fig6.8", "Fig6.16", "Fig6.17", "Fig6.18", "Fig6.19", "Fig6.20", "Fig6.21", "Fig6.22", "Fig6.23", "Fig6.11", "Fig6.12"):
    if claims.checks_of(t):
        lines.append(f"- **{t}: {claims.target_verdict(t)}**")
display(Markdown("\n".join(lines)))
