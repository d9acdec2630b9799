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
# # Part I and Appendix B: signal propagation, kernels and the lemma toolbox
#
# **Source:** Balboni, PhD thesis {cite:p}`balboni2025thesis` (`004_ded8060f0425b0a2.txt`), Sections 1.1-1.2, 2.3,
# 4.1, Definition 15 and Appendix B.
# **Targets:** I-1 to I-5, Sec1.1-qstar, Def15, Lemmas 16-21.
# **Computed by:** {py:mod}`shallowflow.experiments.balboni_thesis.part_one`.
#
# Part I of the thesis is a review; it has no figures. The specification turns its checkable statements into small
# float64 computations (none of them is a thesis figure):
#
# - **Sec. 1.1 / I-1 (mean-field theory).** For a bounded activation the length map
#   $q^{l+1}=\sigma_w^2\,\mathbb E\,\phi(\sqrt{q^l}z)^2+\sigma_b^2$ converges to a fixed point $q^*$ for any
#   $\sigma_w^2,\sigma_b^2$; $\chi_1=\sigma_w^2\,\mathbb E\,\phi'(\sqrt{q^*}z)^2$ separates the ordered phase
#   ($\chi_1<1$: the correlation of two inputs tends to 1) from the chaotic one ($\chi_1>1$: it stays below 1), and
#   back-propagated squared gradients shrink or grow by $\chi_1$ per layer
#   ($\tilde q^l=\tilde q^{l+1}\frac{N_{l+1}}{N_l}\chi_1$). Simulated: deep tanh networks, $\sigma_b^2=0.05$.
# - **I-2 (dynamical isometry, Sec. 1.2).** The input-output Jacobian of a deep linear network with orthogonal
#   weights has all singular values 1; with Gaussian $\mathcal N(0,1/N)$ weights their spread grows with depth.
# - **I-3 (NTK constancy, Sec. 2.3).** For an NTK-parameterised two-layer network the tangent kernel barely moves
#   during training, less the wider the network (the spec expects a relative change of order $m^{-1/2}$).
# - **I-4 (Nyström, Sec. 2.3).** $\mathcal K(X,X)\approx\mathcal K(X,Y)\mathcal K(Y,Y)^+\mathcal K(Y,X)$ improves as
#   the landmark set $Y$ grows (RBF kernel on scikit-learn's digits).
# - **I-5 (Lemma 1's example [KNS16]).** $f(x)=x^2+3\sin^2x$ is $\mu$-PL with $\mu=1/32$ and $L=8$-smooth, so GD with
#   step $1/L$ contracts $f$ by $\gamma=1-\mu/L$ per step and stays within
#   $\sqrt{2f(x_0)/L}/(1-\sqrt\gamma)$ of its start (the spec's corrected (4.4), without the spurious $1/L$).
# - **Definition 15.** Iterating the normalised-ReLU dual kernel $S^{m+1}=\hat\sigma(S^m)$ keeps the diagonal at 1 and
#   shrinks the off-diagonal entries geometrically.
# - **Appendix B.** Lemma 16 (Lipschitz/smoothness constants of a composition), Lemma 17 (MSE), Lemma 18 (cross-entropy),
#   Lemmas 19-20 (matrix norm facts, interpolation) and Lemma 21 (constants of a layer $f(x)=M\phi(x)$, with the
#   spec's warning that (B.18) bounds each coordinate's Hessian only).

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
mft_width = 1000  # width of the simulated deep tanh networks (spec: 1000)
mft_depth = 50  # their depth (spec: 50)
iso_width = 256  # width of the deep linear networks (spec: 256)
iso_depth = 50  # deepest linear network (spec: 50)
ntk_widths = [64, 128, 256, 512, 1024, 2048, 4096]  # I-3 widths (spec: 64 to 8192)
ntk_steps = 300  # GD steps of the NTK networks
seeds = [0, 1, 2]  # seeds of the random networks
nystrom_sizes = [10, 20, 40, 80, 160, 320, 640]  # Nystrom landmark counts
pairs = 10_000  # random pairs or draws per sampled bound (spec: 10^4)
dual_depth = 30  # depth of Definition 15's iteration (spec: 30)
level = 0.95  # level of the printed intervals (I-3's slope, the means over seeds)

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.deep import data as ddata
from shallowflow.experiments.balboni_thesis import part_one as T
from shallowflow.params import validate

P = validate(globals(), T.SCHEMA, T.RULES)
plots.setup()
claims = C.Claims(source="004", chapter="book/balboni-thesis/part-one", profile=P.profile)
print(config.describe(), f"; seeds {P.seeds} (the first draws the single-draw parts; I-3 runs every seed)")

# %% [markdown]
# ## Mean-field signal propagation (Sec. 1.1, I-1)
#
# Two parameter points on either side of the order-to-chaos line, $\sigma_b^2=0.05$: the fixed point $q^*$ and
# $\chi_1$ from 121-node Gauss-Hermite quadrature, then a simulated tanh network of the parameters' width and depth
# (two inputs at correlation 0.3 and 16 more for the gradient ratio; weights $\mathcal N(0,\sigma_w^2/N)$).

# %%
SB2 = 0.05
mft = {sw2: T.simulate_mft(sw2, SB2, P.mft_width, P.mft_depth, P.seeds[0]) for sw2 in (0.8, 2.5)}
c_star = T.correlation_fixed_point(2.5, SB2)
for sw2, r in mft.items():
    gm = float(np.exp(np.log(r["grad_ratio"]).mean()))
    print(f"sigma_w^2 = {sw2}: q* = {r['q_star']:.4f}, chi_1 = {r['chi1']:.4f}, correlation at depth {P.mft_depth} = "
          f"{r['corr'][-1]:.6f}, per-layer gradient ratio (geometric mean) = {gm:.4f}")
print(f"chaotic fixed point of the correlation map c* = {c_star:.4f}")

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for sw2, r in mft.items():
    axes[0].plot(r["corr"], label=f"$\\sigma_w^2$ = {sw2} ($\\chi_1$ = {r['chi1']:.2f})")
    axes[1].plot(np.arange(1, len(r["grad_ratio"]) + 1), r["grad_ratio"], lw=1, label=f"$\\sigma_w^2$ = {sw2}")
    axes[1].axhline(r["chi1"], color="0.4", ls=":", lw=1,
                    label="thesis, Sec. 1.1: chi_1 per layer" if sw2 == next(iter(mft)) else None)
axes[0].axhline(c_star, color="0.4", ls=":", lw=1)
axes[0].set(xlabel="layer", ylabel="correlation of two inputs", title="simulated deep tanh network (synthetic inputs)")
axes[1].set(xlabel="layers back from the output", ylabel="per-layer ratio of squared gradient norms",
            title="dotted: $\\chi_1$")
axes[0].legend(fontsize=8), axes[1].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
grid_w, grid_b = [0.5, 1.5, 2.0, 3.0, 4.0], [0.0, 0.05, 0.2, 0.5]
qdev = []
for sw2 in grid_w:
    for sb2 in grid_b:
        qs = T.q_fixed_point(sw2, sb2)
        qdev += [abs(T.q_iterates(q0, sw2, sb2, 100)[-1] - qs) for q0 in (0.01, 1.0, 10.0)]
crit = T.q_iterates(1.0, 1.0, 0.0, 10_000)
print(f"largest |q^100 - q*| over {len(grid_w) * len(grid_b)} grid points x 3 starts: {max(qdev):.3g}; "
      f"at the critical point (1, 0): q^100 = {crit[100]:.4g}, q^10000 = {crit[-1]:.4g}")

# %% [markdown]
# ## Dynamical isometry (I-2) and NTK constancy (I-3)

# %%
iso = T.isometry(P.iso_width, sorted({1, 5, 10, P.iso_depth // 2, P.iso_depth}), P.seeds[0])
ntk = T.ntk_change(P.ntk_widths, P.ntk_steps, P.seeds)
print("depths", iso["depths"].tolist(), "orthogonal max |s - 1|:", [f"{v:.1e}" for v in iso["orth_max_dev"]],
      "Gaussian log10(s_max/s_median):", np.round(iso["gauss_log_spread"], 2).tolist())
print("NTK relative change by width (mean over seeds):",
      "; ".join(f"{w}: {metrics.describe_mean(c, P.level, 4)}" for w, c in zip(P.ntk_widths, ntk["change"])),
      f"slope {ntk['slope']:.3f}; loss after training / initial: {ntk['loss_ratio'].min():.3f} .. {ntk['loss_ratio'].max():.3f}")

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
axes[0].plot(iso["depths"], iso["gauss_log_spread"], "o-", label="Gaussian N(0, 1/N)")
axes[0].plot(iso["depths"], np.log10(1 + iso["orth_max_dev"]), "s-", label="orthogonal")
axes[0].axhline(np.log10(T.SOURCE_ISOMETRY_SINGULAR_VALUE), color="k", ls="--", lw=0.8,
                label="thesis, Sec. 1.2: every singular value 1")
axes[0].set(xlabel="depth", ylabel="log10(s_max / s_median) of J", title=f"deep linear networks, width {P.iso_width}")
axes[0].legend(fontsize=8)
axes[1].loglog(P.ntk_widths, ntk["change"], "o", color="tab:blue", alpha=0.5)
axes[1].loglog(P.ntk_widths, ntk["change"].mean(1), "-", color="tab:blue", label=f"fitted slope {ntk['slope']:.2f}")
axes[1].set(xlabel="width m", ylabel="||K_T - K_0||_F / ||K_0||_F",
            title=f"two-layer NTK tanh net, {P.ntk_steps} GD steps (synthetic data)")
axes[1].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Nyström (I-4), the KNS16 example (I-5) and Definition 15

# %%
X = ddata.digits(device="cpu").X
X = X / X.norm(dim=1, keepdim=True)
nys = T.nystrom(X, P.nystrom_sizes, P.seeds[0])
kns = T.kns_example()
dual = T.dual_iteration(12, P.dual_depth, P.seeds[0])
print("Nystrom relative error (digits, 1797 points):", dict(zip(P.nystrom_sizes, np.round(nys, 5).tolist())))
print(f"KNS16: worst f_(k+1)/f_k = {kns['worst_ratio']:.4f} (bound {kns['rate_bound']:.6f}); largest distance / radius "
      f"bound = {kns['worst_dist_ratio']:.3g}; empirical min f'^2/(2f) = {kns['empirical_mu']:.4f} (mu = 1/32)")
print(f"Definition 15: max off-diagonal {dual['max_offdiag'][0]:.3f} -> {dual['max_offdiag'][-1]:.3g} after "
      f"{P.dual_depth} layers; late geometric rate {dual['rate']:.3f}")

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
axes[0].semilogy(P.nystrom_sizes, nys, "o-")
axes[0].set(xlabel="landmarks |Y|", ylabel="relative Frobenius error", title="Nystrom, RBF kernel on digits")
axes[1].semilogy(dual["max_offdiag"], "o-", ms=3)
axes[1].set(xlabel="layer m", ylabel="max |off-diagonal of S^m|", title="normalised-ReLU dual iteration (synthetic inputs)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Appendix B: Lemmas 16-21
#
# Sampled constants are lower bounds of the true ones (a maximum over random pairs), so a sampled value above a
# claimed constant disproves the claim, one below it is consistent with it. Layers are $f(x)=M\tanh(x)$ with
# $M$ of entries $\mathcal N(0,1/n)$; $\max|\tanh''| = 4/(3\sqrt3)$.

# %%
l16 = T.lemma16(P.pairs, P.seeds[0])
l17 = T.lemma17(P.pairs, P.seeds[0])
l18 = T.lemma18(2 * P.pairs, P.seeds[0])
l19 = T.lemmas19_20(P.pairs, P.seeds[0])
l21 = T.lemma21(P.pairs, P.seeds[0])
print("Lemma 16:", {k: round(v, 4) for k, v in l16.items()})
print("Lemma 17:", l17)
print("Lemma 18:", l18)
print("Lemmas 19-20 (largest violations):", {k: f"{v:.2e}" for k, v in l19.items()})
print("Lemma 21:", {k: round(v, 4) for k, v in l21.items()})

# %% [markdown]
# ## Checks

# %%
ordered, chaotic = mft[0.8], mft[2.5]
claims.check("I-1/ordered-correlation", f"chi_1 = {ordered['chi1']:.3f} < 1: the correlation tends to 1 (1 - c at depth {P.mft_depth})",
             1 - ordered["corr"][-1], T.I1_ORDERED, source_value="c -> 1 (ordered phase)", valid=C.NO_TRAINING)
claims.check("I-1/chaotic-correlation", f"chi_1 = {chaotic['chi1']:.3f} > 1: the correlation stays below 1 (c at depth {P.mft_depth})",
             chaotic["corr"][-1], T.I1_CHAOTIC, source_value="c < 1 (chaotic phase)", valid=C.NO_TRAINING)
claims.check("I-1/chaotic-fixed-point", "the simulated correlation reaches the correlation map's fixed point c*",
             abs(chaotic["corr"][-1] - c_star), T.I1_FIXED_POINT, source_value="c -> c*",
             note="finite width: the simulated correlation fluctuates around c* by O(1/sqrt(width))", valid=C.NO_TRAINING)
claims.check("I-1/gradient-ratio", "per-layer ratio of back-propagated squared gradients / chi_1 (geometric mean over layers)",
             [float(np.exp(np.log(r["grad_ratio"]).mean())) / r["chi1"] for r in mft.values()], T.I1_GRADIENT_RATIO,
             source_value="q_l = q_(l+1) chi_1", valid=C.NO_TRAINING)
claims.check("Sec1.1-qstar/converges", "q^l -> q* for tanh on a (sigma_w^2, sigma_b^2) grid, 3 starts: |q^100 - q*|",
             max(qdev), T.QSTAR_CONVERGES, source_value="q^l -> q*",
             note="the grid leaves out the critical point (1, 0), checked separately below", valid=C.NO_TRAINING)
claims.check("Sec1.1-qstar/critical", "at the critical point (sigma_w^2, sigma_b^2) = (1, 0) q^l still tends to q* = 0 "
             "(monotone, q^10000)", T.monotone_end(crit), T.QSTAR_CRITICAL,
             source_value="q^l -> q*", note="algebraically (q^l ~ 1/(2l)), not within 100 iterations", valid=C.NO_TRAINING)
claims.check("I-2/orthogonal-isometry", "orthogonal weights: every singular value of J equals 1 (max |s - 1| over depths)",
             iso["orth_max_dev"].max(), T.I2_ORTHOGONAL, source_value="all singular values 1", valid=C.NO_TRAINING)
claims.check("I-2/gaussian-spread-grows", "Gaussian weights: the spread of J's singular values grows with depth "
             "(smallest increase of log10(s_max/s_median) between listed depths)",
             np.diff(iso["gauss_log_spread"]).min(), T.I2_GAUSSIAN_SPREAD, source_value="spread grows", valid=C.NO_TRAINING)
claims.check("I-3/kernel-change-vanishes", "the relative kernel change decreases with width (largest change between "
             "successive widths)", np.diff(ntk["change"].mean(1)).max(), C.below(0.0), source_value="K constant as m -> inf", valid=np.isfinite(ntk["change"]).all(0))
pl = metrics.slope_interval(np.log(np.repeat(ntk["widths"], ntk["change"].shape[1])), np.log(ntk["change"].reshape(-1)),
                            P.level)
claims.check("I-3/vanishes-power-law", f"the relative kernel change falls as a power of the width: log-log slope over every "
             f"(width, seed) {pl['slope']:.3f}, {P.level:.0%} interval [{pl['low']:.3f}, {pl['high']:.3f}] ({pl['points']} points); "
             "measured: the interval's upper end", pl["high"], T.I3_POWER_LAW,
             source_value="K constant as m -> inf", valid=np.isfinite(ntk["change"]).all(0))
claims.check("I-3/slope", "fitted log-log slope of the relative kernel change against width", ntk["slope"],
             C.within(-0.7, -0.3), source_value="(spec) about -1/2", valid=np.isfinite(ntk["change"]).all(0))
claims.check("I-4/monotone", "the Nystrom error decreases as the landmark set grows (largest successive change)",
             np.diff(nys).max(), C.below(0.0), source_value="decreases", valid=C.NO_TRAINING)
claims.check("I-5/rate", "GD with step 1/L contracts f by gamma = 1 - mu/L each step (worst f_(k+1)/f_k - gamma)",
             kns["worst_ratio"] - kns["rate_bound"], T.I5_RATE, source_value="(4.3)", valid=kns["finite"])
claims.check("I-5/radius", "the iterates stay within sqrt(2 f(x0)/L) / (1 - sqrt(gamma)) (largest distance / bound)",
             kns["worst_dist_ratio"], T.I5_RADIUS, source_value="(4.4), corrected", valid=kns["finite"])
claims.check("I-5/pl-constant", "f is 1/32-PL: min over a grid of f'^2 / (2 f)", kns["empirical_mu"],
             T.I5_PL_CONSTANT, source_value="mu = 1/32", valid=C.NO_TRAINING)
claims.check("I-5/smoothness", "f is 8-smooth: max f'' on a grid", kns["max_curvature"], T.I5_SMOOTHNESS,
             source_value="L = 8", valid=C.NO_TRAINING)
claims.check("Def15/offdiag-depth30", f"max |off-diagonal| of the iterated normalised-ReLU dual kernel at depth {P.dual_depth}",
             dual["max_offdiag"][min(30, P.dual_depth)], T.DEF15_OFFDIAG, source_value="shrinks geometrically",
             note="start: largest cosine similarity 0.95", valid=C.NO_TRAINING)
claims.check("Def15/diagonal", "the diagonal stays at 1 (max deviation over layers)", dual["diag_dev"].max(),
             T.DEF15_DIAGONAL, source_value="1", valid=C.NO_TRAINING)
claims.check("Def15/geometric", "late geometric rate of the largest off-diagonal entry", dual["rate"], T.DEF15_GEOMETRIC,
             source_value="< 1", valid=C.NO_TRAINING)
claims.check("Lemma16/lipschitz", "sampled Lipschitz ratio of g o f / (G_g G_f)", l16["G_ratio"] / l16["G_bound"],
             C.below(1.0, strict=False), source_value="G_h <= G_g G_f", valid=C.NO_TRAINING)
claims.check("Lemma16/smoothness", "sampled smoothness ratio of g o f / (G_f^2 L_g + G_g L_f), corrected layer L",
             l16["L_ratio"] / l16["L_bound"], C.below(1.0, strict=False), source_value="L_h <= G_f^2 L_g + G_g L_f",
             note="layer smoothness sigma_max(M) max|phi''| (Lemma 21's (B.18) is not valid for the vector map)", valid=C.NO_TRAINING)
claims.check("Lemma17/gradient-identity", "MSE: ||grad l||^2 = 2 l (largest relative error)", l17["identity_err"],
             C.below(1e-12), source_value="(proof)", valid=C.NO_TRAINING)
claims.check("Lemma17/hessian-identity", "MSE: the Hessian is the identity (largest entry error)", l17["hessian_err"],
             C.below(1e-12), source_value="1-strongly convex, Hessian I", valid=C.NO_TRAINING)
claims.check("Lemma17/literal-G", "the statement 'G <= 2 MSE(x)' read as ||grad l|| <= 2 l: violating draws",
             l17["literal_violations"], C.below(0.5), source_value="G <= 2 MSE(x)",
             note=f"violated exactly when l < 1/2 (largest violating loss {l17['min_loss_violating']:.3f}); "
                  "the proof shows ||grad l||^2 = 2 l", valid=C.NO_TRAINING)
claims.check("Lemma18/gradient", "cross-entropy: max ||grad l||^2", l18["grad_sq_max"], C.below(2 + 1e-12, strict=False),
             source_value="<= 2", valid=C.NO_TRAINING)
claims.check("Lemma18/hessian", "cross-entropy: max ||H||_F^2", l18["hess_fro_sq_max"], C.below(2.0, strict=False),
             source_value="<= 2", valid=C.NO_TRAINING)
claims.check("Lemma18/psd", "cross-entropy Hessian diag(p) - p p^T is PSD (min eigenvalue)", l18["hess_min_eig"],
             C.above(-1e-12), source_value="weakly convex", valid=C.NO_TRAINING)
for k in range(1, 6):
    claims.check(f"Lemma19/fact{k}", f"matrix norm fact {k}, p in {{1, 2, inf}}: largest relative violation",
                 l19[f"fact{k}"], C.below(1e-12), source_value="holds" if k < 4 else "identity", valid=C.NO_TRAINING)
for k in (1, 5):
    claims.check(f"Lemma19/fact{k}-control", f"negative control of fact {k}: the same comparison on a false statement "
                 "(fact 1: p paired with itself; fact 5: the column-sum formula) must show a large gap",
                 l19[f"fact{k}_control"], C.above(1e-3), source_value="false statement", valid=C.NO_TRAINING)
claims.check("Lemma20/interpolation", "||A||_2^2 <= ||A||_p ||A||_q: largest relative violation", l19["lemma20"],
             C.below(1e-12), source_value="(B.15)", valid=C.NO_TRAINING)
claims.check("Lemma21/coordinate", "(B.18) bounds every coordinate's Hessian: max_ij |M_ij phi''(x_j)| / (B.18)",
             l21["coord_hessian"] / l21["b18"], C.below(1 + 1e-12, strict=False), source_value="(B.18)", valid=C.NO_TRAINING)
claims.check("Lemma21/lipschitz", "(B.17) bounds the layer's Lipschitz ratio ||f(x) - f(x')|| / ||x - x'||: sampled ratio "
             "(random pairs and a pair along M's top singular vector at 0) / (B.17)",
             max(l21["lipschitz_random"], l21["lipschitz_aligned"]) / l21["b17"], T.LEMMA21_B17,
             source_value="G_f = sigma_max(M) max|phi'|", valid=C.NO_TRAINING)
claims.check("Lemma21/vector-map", "(B.18) bounds the smoothness of the vector map: sampled ratio / (B.18)",
             max(l21["random_ratio"], l21["aligned_ratio"]) / l21["b18"], C.below(1.0, strict=False),
             source_value="L_f = max|M_ij| max|phi''|", note="expected to fail (spec erratum 6)", valid=C.NO_TRAINING)
claims.check("Lemma21/corrected", "sigma_max(M) max|phi''| bounds it: sampled ratio / corrected constant",
             max(l21["random_ratio"], l21["aligned_ratio"]) / l21["corrected"], T.LEMMA21_CORRECTED,
             source_value="(spec) corrected constant", valid=C.NO_TRAINING)

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
display(Markdown(T.findings(claims, ntk, l17, l21)))
