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
# # Why a kernel-driven Hessian: Chapter 7's theory
#
# **Source:** Balboni, PhD thesis {cite:p}`balboni2025thesis` (`004_ded8060f0425b0a2.txt`), Sections 7.2-7.6.
# **Targets:** Eq7.3, Sec7.5-1, Sec7.5-2, Sec7.5-3, Sec7.5-fn3, Lemma2, Lemma12, Lemma13.
# **Computed by:** {py:mod}`shallowflow.experiments.balboni_thesis.adler_theory`.
#
# With $h=\mathcal L\circ F$ (a convex loss on the stacked outputs of a network $F$), the Hessian splits exactly as
#
# $$\nabla^2h(\theta)=\nabla F(\theta)\,\nabla^2\mathcal L(F(\theta))\,\nabla F(\theta)^\top
#   +\nabla\mathcal L(F(\theta))\cdot\nabla^2F(\theta) \qquad (7.3)/(7.4),$$
#
# a positive semi-definite "kernel-driven" (generalised Gauss-Newton, GGN) term and a curvature "perturbation". ADLER
# rests on the second being negligible. The thesis argues it informally (Sec. 7.5): (1) in wide networks with a linear
# output it is $O(1/\sqrt m)$ against an $O(1)$ kernel term [LZB22]; (2) it vanishes along training as
# $\nabla\mathcal L\to0$; (3) at initialisation its expectation over a symmetric last layer is zero under a
# $\mathcal D$-symmetric loss ((7.10)-(7.13), by the Gradient Independence Assumption). Footnote 3: for very deep
# networks the tangent kernel's conditioning tends to 1. Lemma 2 [LZB20] / Lemma 12: if $\mathcal L$ is $\mu$-PL and
# $L$-smooth, $h$ is $\mu\lambda_*$-PL and $\lambda^*L$ (PL$^+$) with $\lambda_*,\lambda^*$ the extreme eigenvalues of
# $K=\nabla F\nabla F^\top$. Lemma 13's rate is $\eta(\theta)=1/(2\lambda^*(\theta)\|\nabla^2\mathcal L\|_{op})$ (7.14),
# with $\lambda^*$ from power iteration (one JVP and one VJP per iteration, warm-started, footnote 6) or a Gershgorin
# bound. That the Gershgorin bound lies above $\lambda^*$ is Gershgorin's theorem, true of every matrix, so it is
# printed, not checked; the thesis's hope that the bound tightens with depth ("We expect this to be a reliable proxy",
# 004:1668, by [AAK20]'s off-diagonal entries that vanish in the number of layers) is an expectation stated for wide
# deep networks: its tightness by depth is printed, one seed at width 128, and decides nothing. (The spec notes that KNS16's rate is $1/L$, not the "$1/2L$" the lemma's proof cites, so (7.14) is a further
# factor 2 conservative.)
#
# Everything here is float64 on small MLPs in the NTK parameterisation (weights $\mathcal N(0,1)$, each layer divided
# by $\sqrt{\text{fan-in}}$, tanh hidden layers, linear output) and synthetic data (Gaussian inputs of norm
# $\sqrt d$, Gaussian targets).

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
widths = [32, 64, 128, 256, 512]  # hidden widths of the Sec. 7.5 (1) sweep (spec: 32 to 2048)
seeds = [0, 1, 2]  # seeds of the sweep (spec: 5)
n = 64  # examples of the sweep (spec: 64)
power_iters = 30  # power-iteration steps per operator norm
train_width = 64  # width of the trained MLP
train_steps = 3000  # at most this many GD steps with Lemma 13's rate
train_n = 32  # examples of the trained MLP
draws = 2000  # last-layer draws of the symmetry argument (spec: 10^4)
symmetry_widths = [16, 32, 64, 128]  # widths of the symmetry argument's trend with width (exact expectation at each)
trajectory_points = 100  # random parameter points of the Lemma 2/12 check (spec: 100)
dual_depth = 60  # depth of the infinite-width iteration (footnote 3)
power_steps = 10  # GD steps of the power-iteration comparison (Lemma 13 (a)-(b))
sharpness_samples = 50  # GD steps of the trained MLP at which the sharpness is measured

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.experiments.balboni_thesis import adler_theory as T
from shallowflow.params import validate

P = validate(globals(), T.SCHEMA, T.RULES)
plots.setup()
claims = C.Claims(source="004", chapter="book/balboni-thesis/adler-theory", profile=P.profile)
print(config.describe())

# %% [markdown]
# ## Eq. (7.3): the exact decomposition
#
# A two-hidden-layer MLP (width 24, $n=16$) with cross-entropy (3 classes) and with MSE: the full Hessian by
# autodiff against the GGN term $J^\top\nabla^2\mathcal L J$ plus the residual
# $\sum_\mu\partial\mathcal L/\partial F_\mu\,\nabla^2F_\mu$, each computed on its own.

# %%
dec = {loss: T.decomposition(loss, P.seeds[0]) for loss in ("ce", "mse")}
for loss, r in dec.items():
    print(f"{loss}: {r['P']} parameters, ||H - GGN - residual||_F / ||H||_F = {r['rel_err']:.2e}, "
          f"||residual|| / ||GGN|| = {r['resid_over_ggn']:.3f} at initialisation")

# %% [markdown]
# ## Sec. 7.5 (1): the residual against width
#
# $r(m)=\|\text{residual}\|_{op}/\|\text{GGN}\|_{op}$ at initialisation, both by power iteration (HVP minus
# GGN-vector product, and GGN-vector product), MSE, $n$ examples in $\mathbb R^8$.

# %%
sweep = T.width_sweep(P.widths, P.seeds, P.n, P.power_iters)
print("mean ratio by width:", dict(zip(P.widths, np.round(sweep["ratios"].mean(1), 4).tolist())),
      f"fitted slope {sweep['slope']:.3f}")

# %% [markdown]
# ## Sec. 7.5 (2) and Lemma 13 (c)-(d): training with the rate (7.14)
#
# Full-batch GD on the batch-mean MSE with $\eta_t=1/(2\lambda^*(\theta_t)\|\nabla^2\mathcal L\|_{op})$, $\lambda^*$ by
# warm-started power iteration, until the loss falls below $10^{-4}$ of its start; every few steps the sharpness
# $\lambda_{\max}(\nabla^2h)$ by HVP power iteration. Alongside, the full-batch ADLER rate $G^\top G/G^\top QG$.

# %%
tr = T.along_training(P.train_width, P.train_n, P.train_steps, P.power_iters, P.seeds[0], samples=P.sharpness_samples)
steps_run = len(tr["eta"])
print(f"{steps_run} steps, loss {tr['loss'][0]:.3g} -> {tr['loss'][-1]:.3g} (reached 1e-4 x start: {tr['reached']}); "
      f"residual ratio {tr['ratio_start']:.4f} -> {tr['ratio_end']:.3g}; power iterations per step: first "
      f"{int(tr['power_iters'][0])}, median {int(np.median(tr['power_iters']))}")

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5))
axes[0].loglog(P.widths, sweep["ratios"], "o", color="tab:blue", alpha=0.5)
axes[0].loglog(P.widths, sweep["ratios"].mean(1), "-", color="tab:blue", label=f"slope {sweep['slope']:.2f}")
axes[0].set(xlabel="width m", ylabel="||residual||_op / ||GGN||_op", title="at initialisation (synthetic data)")
axes[0].legend(fontsize=8)
axes[1].semilogy(tr["loss"], label="loss")
axes[1].set(xlabel="GD step", ylabel="batch-mean MSE", title=f"GD with (7.14), width {P.train_width}")
ax2 = axes[1].twinx()
ax2.plot(tr["eta"], color="tab:orange", lw=1)
ax2.set_ylabel("eta_t (7.14)", color="tab:orange")
axes[2].semilogy(tr["adler_eta"] / tr["eta"], lw=1)
axes[2].set(xlabel="GD step", ylabel="ADLER rate / (7.14) rate", title="Lemma 13 (d)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Sec. 7.5 (3): a symmetric last layer at initialisation
#
# Inner layers fixed (width 32, $n=32$), the last layer drawn `draws` times from $\mathcal N(0,1)$, the residual term
# applied to one fixed probe vector; the z-score of its mean over the draws, coordinate by coordinate, against the
# level a Gaussian exceeds with probability $10^{-3}$ over all coordinates (Bonferroni). Targets centred (the
# thesis's $\mathcal D$-symmetric case) and shifted by 3 (the thesis's counter-case). The thesis states the
# cancellation through the Gradient Independence Assumption, "properly formalized in the limit of infinite networks":
# read as that limit, the claim is that the expectation becomes negligible as the width grows. So the exact
# expectation (the residual is quadratic in the last layer: no sampling) is also computed at `symmetry_widths`, each
# seed, relative to the typical size of one draw's residual, and its log-log slope against width is fitted.

# %%
sym0 = T.symmetry(P.draws, P.seeds[0], 0.0)
sym3 = T.symmetry(P.draws, P.seeds[0], 3.0)
thr = T.family_threshold(sym0["coords"])
symw = T.symmetry_widths(P.symmetry_widths, P.seeds)
print(f"centred targets: max |z| = {sym0['max_z']:.1f}, |mean| / mean |draw| = {sym0['rel_mean']:.3f}; shifted targets: "
      f"max |z| = {sym3['max_z']:.1f}; threshold {thr:.2f} over {sym0['coords']} coordinates")
print("centred targets, ||E_a residual|| / mean ||one draw's residual|| by width (mean over seeds):",
      dict(zip(symw["widths"].tolist(), np.round(symw["share"].mean(1), 3).tolist())),
      f"log-log slope {symw['slope']:.3f}, 95% interval [{symw['low']:.3f}, {symw['high']:.3f}]")

# %% [markdown]
# ## Lemmas 2 and 12, Lemma 13 (a)-(b), footnote 3

# %%
l12 = T.lemma12(P.trajectory_points, P.seeds[0])
pw = T.power_vs_exact(P.seeds[0], iters=max(P.power_iters, 50), steps=P.power_steps)
ger = T.gershgorin([1, 2, 4, 8], P.seeds[0])
deep = T.deep_conditioning(P.dual_depth, P.seeds[0])
print(f"Lemma 2/12 over {l12['evaluations']} points: smallest (r - lambda_min)/lambda_max = {l12['min_lower_margin']:.3g}, "
      f"smallest (lambda_max - r)/lambda_max = {l12['min_upper_margin']:.3g}")
print(f"power iteration vs eigvalsh: largest relative error {pw['rel_err'].max():.2e}; iterations to converge "
      f"cold {np.median(pw['cold']):.0f}, warm-started {np.median(pw['warm']):.0f} (medians)")
print("Gershgorin tightness lambda_max / bound by depth (one seed, width 128; the thesis's 'we expect this to be a "
      "reliable proxy' is an expectation, not tested here):", dict(zip(ger["depths"].tolist(), np.round(ger["tightness"], 3).tolist())))
print("Identity of the implementation, not a check (retired: Gershgorin's theorem holds for every matrix, trained or "
      "not, so it decides nothing; tests/test_controls_balboni_thesis.py): largest lambda_max(K) - max_i sum_j |K_ij| "
      f"over the depths: {ger['max_violation']:.3g} (<= 0 by the theorem)")
print(f"infinite-width conditioning (normalised ReLU, digits inputs): kappa(S^0) = {deep['kappa0']:.3g}, depth 1: "
      f"{deep['kappa'][0]:.3g}, depth {P.dual_depth}: {deep['kappa'][-1]:.6f}")

# %% [markdown]
# ## Checks

# %%
trained = metrics.finite_runs(torch.as_tensor(tr["loss"])[None], torch.as_tensor(tr["theta"])[None])  # the GD run
l12_valid = [bool(np.isfinite(l12["min_lower_margin"]) and np.isfinite(l12["min_upper_margin"]))]  # its GD trajectory
pw_valid = [bool(np.isfinite(pw["rel_err"]).all())]  # the short GD run along which power iteration is compared
for loss, r in dec.items():
    claims.check(f"Eq7.3/exact-{loss}", f"||H - GGN - residual||_F / ||H||_F ({loss})", r["rel_err"], T.EQ73_EXACT,
                 source_value="exact identity", valid=C.NO_TRAINING)
claims.check("Sec7.5-1/width-slope", "fitted slope of log(||residual|| / ||GGN||) against log width", sweep["slope"],
             T.SEC75_WIDTH_SLOPE, source_value="O(1/sqrt(m))", valid=C.NO_TRAINING)
claims.check("Sec7.5-2/reached", "GD with (7.14) reaches 1e-4 x the initial loss within the step budget", tr["reached"],
             T.SEC75_REACHED, source_value="(setting of the check)", valid=trained)
claims.check("Sec7.5-2/vanishes", "residual ratio at the end / at initialisation", tr["ratio_end"] / tr["ratio_start"],
             T.SEC75_VANISHES, source_value="vanishes as grad L -> 0", valid=trained)
claims.check("Sec7.5-3/symmetric-mean-zero", "centred targets: largest |z| of the mean residual over last-layer draws",
             sym0["max_z"], C.below(thr), source_value="E[residual] = 0 (7.13)",
             note="deviation from the spec: a Bonferroni level over the coordinates instead of 3 sigma per coordinate "
                  "(which a zero-mean vector would fail by chance)", valid=C.NO_TRAINING)
claims.check("Sec7.5-3/vanishes-with-width", "centred targets: log-log slope against width of ||E_a residual|| / "
             "mean ||one draw's residual|| (exact expectation; upper end of the slope's 95% interval)", symw["high"],
             C.below(0.0), source_value="negligible in the limit of infinite networks (GIA)",
             note=f"widths {symw['widths'].tolist()}, seeds {list(P.seeds)}; slope {symw['slope']:.3f}, interval "
                  f"[{symw['low']:.3f}, {symw['high']:.3f}]; shares by width (seed mean): "
                  f"{np.round(symw['share'].mean(1), 3).tolist()}", valid=C.NO_TRAINING)
claims.check("Sec7.5-3/exact-mean-nonzero", "centred targets: the exact expectation of the residual over the last layer "
             "(the residual is quadratic in it: no sampling) is far from 0 (largest |E| / standard error of the draws' mean)",
             sym0["exact_z"], C.above(thr), source_value="E[residual] = 0 (7.13)", valid=C.NO_TRAINING)
claims.check("Sec7.5-3/exact-mean-agrees", "the draws' mean agrees with that exact expectation (largest |z| of the difference)",
             sym0["agree_z"], C.below(thr), source_value="(consistency of the two computations)", valid=C.NO_TRAINING)
claims.check("Sec7.5-3/shifted-mean-nonzero", "shifted targets: the mean residual is significant (largest |z|)",
             sym3["max_z"], C.above(thr), source_value="not D-symmetric", valid=C.NO_TRAINING)
claims.check("Sec7.5-fn3/conditioning-to-one", f"infinite-width conditioning at depth {P.dual_depth}", deep["kappa"][-1],
             T.FN3_CONDITIONING, source_value="tends to 1",
             note="the renormalised feature (conjugate-kernel) Gram matrix of the normalised ReLU, not the tangent kernel", valid=C.NO_TRAINING)
claims.check("Lemma2/kernel-bounds", "lambda_min(K) <= ||grad h||^2 / ||grad L||^2 <= lambda_max(K) (smallest margin / lambda_max)",
             min(l12["min_lower_margin"], l12["min_upper_margin"]), C.above(-1e-10), source_value="(4.6)-(4.8)", valid=l12_valid)
claims.check("Lemma12/pl-minus", "PL-: 1/2 ||grad h||^2 >= lambda_* mu (h - h*) (smallest margin / lambda_max)",
             l12["min_lower_margin"], C.above(-1e-10), source_value="PL-(lambda_* mu)", valid=l12_valid)
claims.check("Lemma12/pl-plus", "PL+: 1/2 ||grad h||^2 <= lambda^* L (h - h*) (smallest margin / lambda_max)",
             l12["min_upper_margin"], C.above(-1e-10), source_value="PL+(lambda^* L)", valid=l12_valid)
claims.check("Lemma13/power-iteration", "JVP+VJP power iteration agrees with eigvalsh(J J^T) (largest relative error)",
             pw["rel_err"].max(), T.LEMMA13_POWER_ITERATION, source_value="footnote 6", valid=pw_valid)
claims.check("Lemma13/warm-start", "warm-starting cuts the iterations (median cold / median warm)",
             float(np.median(pw["cold"]) / np.median(pw["warm"])), T.LEMMA13_WARM_START, source_value="footnote 6", valid=pw_valid)
claims.check("Lemma13/monotone", "GD with (7.14): fraction of steps that do not increase the loss",
             float(np.mean(np.diff(tr["loss"]) <= 0)), T.LEMMA13_MONOTONE, source_value="guarantees convergence", valid=trained)
claims.check("Lemma13/sharpness", "eta_t x lambda_max(Hess h) <= 1: fraction of sampled steps",
             float(np.mean(tr["eta_sharp"] <= 1)), T.LEMMA13_SHARPNESS, source_value="robust rate", valid=trained)
# the full-batch ADLER rate G^T G / (G^T Q G), Q = J^T J / n, is at least n / lambda_max(J^T J) = 2 x (7.14) by the
# Rayleigh quotient: the ratio cannot fall below 2, so it is printed, not checked (an audit found it registered as a check)
print(f"full-batch ADLER rate / (7.14): median {float(np.median(tr['adler_eta'] / tr['eta'])):.4g}, "
      f"smallest {float(np.min(tr['adler_eta'] / tr['eta'])):.4g} (at least 2 by the Rayleigh quotient)")

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
display(Markdown(T.findings(claims, sweep, tr, sym0, thr)))
