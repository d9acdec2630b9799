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
# # Quantitative early alignment: Theorem 1
#
# **Source:** `002_2857c8c2774dfa04.txt` {cite:p}`boursier2024early`, Section 3 (Definition 1, eq. (7), Lemmas 2-3, Theorem 1, Remark 1),
# Section 4.1 (Lemmas 5-6), Appendix E (Theorem 3).
# **Targets:** Def1, Lem2, Lem3, Thm1(i), Thm1(ii), Rem1, Lem5 and Lem6 (their dependence on $\lambda$),
# S5-omni, Thm3 (general dimension), Ex1 (Example 1 of Appendix E.1).
# **Computed by:** {py:func}`shallowflow.experiments.early_alignment.alignment.run_sweep`,
# {py:func}`~shallowflow.experiments.early_alignment.theory.critical_points_2d`,
# {py:func}`~shallowflow.experiments.early_alignment.alignment.run_general_d`,
# {py:func}`~shallowflow.experiments.early_alignment.alignment.example1`.
#
# The statements below are reconstructions [R]: the text keeps their structure and the stripped symbols are
# restored in the standard way (Maennel et al. 2018; the specification of this source, section 2.3-2.4):
#
# - **eq. (7)** [R]: $G(w)=-\frac1n\sum_k\partial_1\ell(0,y_k)\,\sigma(\langle w,x_k\rangle)$; for the mean squared
#   error of the authors' code, $G(w)=\frac2n\sum_k y_k\,\mathrm{relu}(\langle w,x_k\rangle)$. On an
#   activation cone $A$ it is linear, $G(w)=\langle D_A,w\rangle$ with $D_A=\frac2n\sum_{k\in A}y_kx_k$.
# - **Definition 1** [R]: $D_A$ is *extremal* when it is a critical point of $G$ on the sphere: $D_A/\|D_A\|$
#   lies in its own cone (a maximum) or $-D_A/\|D_A\|$ does (a minimum); on a cone boundary the minimal-norm
#   subgradient plays the role of $D_A$.
# - **Theorem 1** [T structure, R constants], with $\tau_\varepsilon=\varepsilon\ln(1/\lambda)/\|D\|$ (the
#   constant is stripped; $\|D\|$ is the growth rate of an aligned balanced neuron): (i) the output weights
#   stay within a factor $\lambda^{-\varepsilon}$ of their initial values until $\tau_\varepsilon$, so the network
#   output stays of order $\lambda^{2(1-\varepsilon)}$; (ii) a neuron with $a_j>0$ ends aligned with a local
#   maximum of $G$ (or switched off), one with $a_j<0$ with a local minimum, with an error polynomial in
#   $\lambda$. For a balanced neuron with $h\approx0$ on one cone,
#   $\tan(\theta_j/2)=\tan(\theta_j(0)/2)\,e^{-\|D\|t}$, so at $\tau_\varepsilon$:
#   $1-\cos\theta_j\propto\lambda^{2\varepsilon}$ [R, the specification's prediction].
#
# Times are flow times of the mean squared error (one step of size `lr` is `lr` units); under the $\frac12$
# convention every time doubles and $\|D\|$ halves, so $\tau_\varepsilon$ and the exponents are unchanged.

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 1000  # m of the lambda sweep
scales = [1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-12]  # lambda of the sweep (float64 throughout)
seeds = [0, 1]  # every seed at every scale, one ensemble
epsilons = [0.25, 0.5, 0.75]  # the epsilons of Theorem 1
lr = 1e-3  # the authors' step on the mean squared error
time = 45.0  # flow time: past the end of Phase 2b for the smallest lambda
monitor_every = 50  # iterations between two observations
eps2 = 1e-2  # Phase 2a threshold (spec's choice)
eps3 = 1e-2  # Phase 2b threshold (spec's choice)
random_datasets = 1000  # random 2-D datasets per size for Lemmas 2-3
random_sizes = [3, 10, 40]  # their sizes n
general_dims = [3, 5]  # input dimensions of the general-d runs
general_n = [10, 20]  # their numbers of points
general_width = 500  # their width
general_scale = 1e-100  # their lambda (float64 holds it: squares stay above 1e-300)
general_eps = 0.5  # their epsilon
general_seeds = [0, 1, 2]  # one dataset and one network per seed
general_lr = 2e-3  # their step
example_steps = 2000  # Example 1: iterations
example_lr = 1e-2  # Example 1: step on the mean squared error
example_leave_at = [0, 500, 1000]  # Example 1: iterations at which one step with derivative 1 at 0 leaves the boundary
resume = False  # keep each finished ensemble on disk and resume an interrupted run (on in the paper profile only)
sections = ["census", "sweep", "general-d", "example1"]  # parts to run (G on the Figure 2 data always runs)

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.engine import data as datasets
from shallowflow.experiments.early_alignment import alignment as ex
from shallowflow.experiments.early_alignment import findings as fnd
from shallowflow.experiments.early_alignment import theory as th
from shallowflow.params import validate

P = validate(globals(), ex.SCHEMA, ex.RULES)
plots.setup()
claims = C.Claims(source="002", chapter="book/early-alignment/alignment", profile=P.profile, sections=P.sections,
                  sections_all=ex.SECTIONS)

# %% [markdown]
# ## $G$ and its critical points on the Figure 2 data
#
# On the circle, the $2n$ directions orthogonal to the data cut $G$ into linear pieces. Enumerating the pieces
# and the boundaries gives every critical point exactly; a grid of $10^6$ angles is the cross-check.

# %%
data = datasets.get("ea-three-point", device="cpu")
crit = th.critical_points(data)
flat = th.flat_arcs(data)
grid = th.grid_extrema(data)
D = th.key_vector(data.X, data.y)
angle_D = math.atan2(float(D[1]), float(D[0])) % (2 * math.pi)
print(config.describe())
print(f"seeds: sweep {list(P.seeds)} (every scale), general-d {list(P.general_seeds)}; Lemmas 2-3 datasets from seed 0")
print(f"sections run: {list(P.sections)}")
for c in crit:
    print(f"critical point: angle {c.angle:.6f} rad, {c.kind} ({c.where}), G = {c.G:.6f}, active points {c.pattern}, "
          f"D^0 = {c.D.tolist()}")
print(f"flat arcs (G = 0): {[(round(a, 4), round(b, 4)) for a, b in flat]}")
print(f"grid: argmax {grid['argmax']:.7f} (D at {angle_D:.7f}); strict maxima {grid['maxima'].tolist()}, "
      f"strict minima {grid['minima'].tolist()}; min G {float(grid['G'].min()):.3g}")
fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(grid["phi"][::200].numpy(), grid["G"][::200].numpy(), color="tab:blue")
for c in crit:
    ax.axvline(c.angle, color="tab:purple" if c.kind == "max" else "tab:red", ls="--", lw=1)
for a, b in flat:
    ax.axvspan(a % (2 * math.pi), min(b, 2 * math.pi), color="0.85")
    if b > 2 * math.pi:
        ax.axvspan(0, b - 2 * math.pi, color="0.85")
for t in torch.atan2(data.X[:, 1], data.X[:, 0]).tolist():
    for s_ in (-math.pi / 2, math.pi / 2):
        ax.axvline((t + s_) % (2 * math.pi), color=plots.DATA_COLOUR, ls=":", lw=1)
ax.set_xlabel("direction angle (rad)")
ax.set_ylabel("G")
ax.set_title("G on the circle: cone boundaries (dotted), critical points (dashed), G = 0 (grey)", fontsize=10)
fig.tight_layout()
plt.show()

# %% [markdown]
# Lemmas 2 and 3 on random data ($x\sim\mathcal N(0,I_2)$, $y\sim\mathcal N(0,1)$, [choice]): every dataset has
# at least one extremal vector, and no $D_A$ lies on a cone boundary.

# %%
if "census" in P.sections:
    census = ex.lemma23_census(P.random_sizes, P.random_datasets)
    display(pd.DataFrame({n: dict(datasets=P.random_datasets, min_extremal=int(v["count"].min()),
                                  mean_extremal=float(v["count"].double().mean()),
                                  mean_maxima=float(v["n_max"].double().mean()), mean_minima=float(v["n_min"].double().mean()),
                                  min_boundary_cos=v["min_boundary"], min_pair_det=v["min_det"])
                          for n, v in census.items()}).T)

# %% [markdown]
# ## The $\lambda$ sweep
#
# Balanced runs of width `width` at every scale and seed, one ensemble, observed every `monitor_every`
# iterations; parameters are kept at $\tau_\varepsilon$ for every $\varepsilon$ and scale.
#
# Data: the three-point data set of 002 Section 6 (Figure 2; n = 3 points with a bias coordinate).

# %%
if "sweep" in P.sections:
    sw = ex.run_sweep(P)
    # every trained run of the chapter: one whose loss or parameters stopped being finite fails the checks, named
    ok_sweep = metrics.finite_runs(sw.run.loss, sw.run.final)
    pt = ex.sweep_phase_times(sw)
    print(f"{sw.lam.numel()} runs x {int(round(P.time / P.lr))} iterations in {sw.run.seconds:.1f} s")
    rows = []
    for e in P.epsilons:
        a = sw.at_tau[e]
        for r in range(sw.lam.numel()):
            rows.append(dict(eps=e, lam=float(sw.lam[r]), seed=int(sw.seed[r]), tau=float(a["k"][r]) * P.lr,
                             R=float(a["a_ratio"][r]), lam_pow=float(sw.lam[r]) ** (-e), h_max=float(a["h_max"][r]),
                             med=float(a["med"][r]), max=float(a["max"][r]), aligned=float(a["plus_aligned"][r]),
                             neg_off=float(a["minus_inactive"][r])))
    table = pd.DataFrame(rows)
    display(table.style.format({"lam": "{:.0e}", "tau": "{:.2f}", "R": "{:.4g}", "lam_pow": "{:.4g}", "h_max": "{:.2e}",
                                "med": "{:.2e}", "max": "{:.2e}", "aligned": "{:.3f}", "neg_off": "{:.3f}"}))

# %%
if "sweep" in P.sections:
    lam = sw.lam.numpy()
    small = lam <= 1e-3
    slopes = {}
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for e in P.epsilons:
        a = sw.at_tau[e]
        med, mx = a["med"].numpy(), a["max"].numpy()
        slopes[e] = ex.sweep_exponents(sw, e)
        axes[0].loglog(lam, med, "o", label=f"median, eps {e:g} (slope {slopes[e]['med']:.3f})")
        axes[0].loglog(lam, mx, "x", label=f"max, eps {e:g} (slope {slopes[e]['max']:.3f})")
        axes[1].loglog(lam, a["a_ratio"].numpy() * lam ** e, "o", label=f"eps {e:g}")
        axes[2].loglog(lam, a["h_max"].numpy(), "o", label=f"eps {e:g} (slope {slopes[e]['h']:.3f})")
    axes[0].set_ylabel(r"$1-\cos(w_j(\tau_\varepsilon), D)$ over $S_+$")
    axes[1].set_ylabel(r"$\max_j |a_j(\tau_\varepsilon)|/|a_j(0)|\ \times\ \lambda^{\varepsilon}$")
    axes[1].axhline(1.0, color="0.4", ls="--", lw=1)
    axes[2].set_ylabel(r"$\max_k |h(x_k)|$ at $\tau_\varepsilon$")
    for ax in axes:
        ax.set_xlabel(r"$\lambda$")
        ax.legend(fontsize=6)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ### Phases 2a and 2b against $\lambda$
#
# $\tau_2$: the first time $\sum_{S_+}\|w_j\|^2\ge$ `eps2`; $\tau_3$: the first time
# $\|\sum_{S_+}a_jw_j-\beta^*\|\le$ `eps3` [spec's choices]. The growth of an aligned neuron is
# $e^{\|D\|t}$, so $\tau_2\approx\ln(1/\lambda)/\|D\|+$ const, and Phase 2b (a linear regression of the
# data) does not depend on $\lambda$.

# %%
if "sweep" in P.sections:
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ln = torch.log(1 / sw.lam).numpy()
    ax.plot(ln, pt["tau2"].numpy(), "o", label=r"$\tau_2$")
    ax.plot(ln, pt["tau3"].numpy(), "s", label=r"$\tau_3$")
    xx = np.linspace(0, ln.max() * 1.05, 10)
    ax.plot(xx, pt["slope"] * xx + pt["intercept"], "--", color="0.4", label=f"fit: slope {pt['slope']:.4f} (1/|D| = {pt['predicted_slope']:.4f})")
    ax.set_xlabel(r"$\ln(1/\lambda)$")
    ax.set_ylabel("flow time")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Beyond two dimensions (Theorem 1 (ii), Theorem 3)
#
# Gaussian data in $d=3$ and $5$ (where $G$ may have saddles, Theorem 3 of Appendix E), balanced runs up to
# $\tau=\varepsilon\ln(1/\lambda)/C$ with the Grönwall-safe $C=\frac2n\sum_k|y_k|\|x_k\|$ [R]. A tiny
# $\lambda$ (float64 allows $10^{-100}$) gives the weak extremal directions time to attract their neurons.
# The neurons active on some point are clustered by direction ($1-\cos\le10^{-3}$); a cluster that holds at
# least 2% of them should sit at a fixed point of the direction flow, $\cos(c,\pm D^0_c)\ge1-10^{-3}$, where
# $D^0_c$ is the minimal-norm subgradient at the centre $c$ (+ for $a_j>0$, - for $a_j<0$) [spec's criterion].
# Clusters whose norm shrinks ($a_jG(c)<0$: they go to zero, they are not "Condition 2" neurons [R]) are shown
# but not checked.

# %%
if "general-d" in P.sections:
    gen = ex.run_general_d(P)
    rows = []
    for res_ in gen:
        for c in res_["clusters"]:
            rows.append(dict(d=res_["d"], n=res_["n"], seed=res_["seed"], tau=res_["tau"], sign=c["sign"],
                             share=c["share"], one_minus_cos=c["fixed"], local_extremum=c["extremum"], grows=c["grows"],
                             G=c["G"]))
    gtab = pd.DataFrame(rows)
    display(gtab.style.format({"tau": "{:.1f}", "share": "{:.3f}", "one_minus_cos": "{:.2e}", "G": "{:.3f}"}))
    grow = gtab[gtab["grows"]]
    fixed_share = float((grow["one_minus_cos"] <= 1e-3).mean()) if len(grow) else math.nan
    ext_share = float(grow["local_extremum"].mean()) if len(grow) else math.nan
    print(f"growing clusters: {len(grow)}; at a fixed point (1 - cos <= 1e-3): {fixed_share:.3f}; "
          f"at a local extremum of G of their sign: {ext_share:.3f}")

# %% [markdown]
# ## Example 1: which solution of the flow gradient descent picks
#
# Theorem 3 needs Condition 2: a neuron "does not spontaneously leave an activation manifold when it can remain
# inside" (Example 1, eq. (37) [R]). With one data point $x=e_1$, $y=1$, and one balanced neuron with $a>0$
# started on its boundary, $w(0)=(0,\lambda)$, the Clarke flow has a whole family of solutions: stay at $w(0)$
# until any time $t_0$, then grow along $x$. The library's gradient descent uses $\sigma'(0)=0$; a step with
# $\sigma'(0)=1$ has the $w$-gradient $2(h-y)\,a\,x=-2a\,x$ instead of 0 and leaves. "Leave at $k_0$" runs
# $k_0$ iterations of the library's descent, then one such step, then the library's descent again.

# %%
if "example1" in P.sections:
    ex1 = ex.example1(P.example_steps, P.example_lr, P.example_leave_at)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    axes[0].plot(ex1["iterations"], ex1["z_stay"], color="k", lw=2, label="sigma'(0) = 0 (the library): stays")
    for k0, v in ex1["leaving"].items():
        axes[0].plot(ex1["iterations"], v["z"], lw=1, label=f"sigma'(0) = 1 step at k = {k0}")
        axes[1].semilogy(ex1["iterations"], v["loss"], lw=1, label=f"leaves at {k0}")
    axes[1].semilogy(ex1["iterations"], ex1["loss_stay"], color="k", lw=2, label="stays")
    axes[0].set(xlabel="iteration", ylabel="<w, x>", title="Example 1: distance from the boundary")
    axes[1].set(xlabel="iteration", ylabel="loss (mean squared error)", title="loss")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Checks

# %% tags=["remove-cell"]
e_main = 0.5 if 0.5 in P.epsilons else P.epsilons[0]
crit_grid = sorted(grid["maxima"].tolist() + grid["minima"].tolist())
crit_enum = sorted(c.angle for c in crit)
match = (len(crit_grid) == len(crit_enum)) and all(float(th.angle_distance(a, b)) <= 3 * 2 * math.pi / 1e6
                                                   for a, b in zip(crit_grid, crit_enum))
if "sweep" in P.sections:
    lam_min = float(sw.lam.min())
    at_min = sw.lam == lam_min
    le4 = sw.lam <= 1e-4

# %%
claims.check("Def1/argmax-is-D", "the maximiser of G on a 10^6-point grid is the direction of D (rad)",
             float(th.angle_distance(grid["argmax"], angle_D)), C.below(1e-5), source_value="atan2(1.3333, -0.51667)", valid=C.NO_TRAINING)
claims.check("Def1/enumeration-matches-grid", "the enumerated critical points are the grid's strict extrema",
             float(match), C.is_true("same count, within 3 grid steps"), source_value="critical points = extremal vectors",
             valid=C.NO_TRAINING)
claims.check("Def1/single-extremal", "the Figure 2 data have exactly one extremal vector (count)", len(crit),
             C.within(1, 1), source_value="a single extremal vector [T]", valid=C.NO_TRAINING)
claims.check("Def1/flat-minimum", "G is >= 0 and vanishes on one arc (all points inactive): min of G on the grid",
             float(grid["G"].min()), C.above(0.0), source_value="spec", note=f"{len(flat)} flat arc(s)", valid=C.NO_TRAINING)
if "census" in P.sections:
    claims.check("Lem3/at-least-one", "every random dataset has an extremal vector (min count per size)",
                 [int(v["count"].min()) for v in census.values()], ex.LEM3_AT_LEAST_ONE, source_value="almost surely [T]",
                 note=f"{P.random_datasets} datasets per n in {P.random_sizes}", valid=C.NO_TRAINING)
    claims.check("Lem2/generic-position", "no D_A on a cone boundary: min |cos(D_A, x_k)| over cones and points",
                 [v["min_boundary"] for v in census.values()], ex.LEM2_GENERIC, source_value="almost surely [T]",
                 valid=C.NO_TRAINING)
    claims.check("Lem2/independent-pairs", "every pair of inputs is independent: min |det(x_k, x_l)| (unit inputs)",
                 [v["min_det"] for v in census.values()], ex.LEM2_INDEPENDENT, source_value="almost surely [T]",
                 valid=C.NO_TRAINING)

if "sweep" in P.sections:
    ratio = ex.output_growth(sw, P.epsilons)
    claims.check("Thm1(i)/bound", "max_j |a_j(tau_eps)| / |a_j(0)| <= lambda^(-eps) (times 1.05), every run and eps",
                 ratio, ex.THM1_BOUND, source_value="lambda^(-eps) [R]", note="measured: ratio times lambda^eps", valid=ok_sweep)
    for e in P.epsilons:
        claims.check(f"Thm1(i)/exponent-eps{e:g}", f"eps = {e:g}: fitted exponent of that ratio in 1/lambda",
                     slopes[e]["R"], ex.ratio_exponent_criterion(e), source_value=f"{e:g} [R]", valid=ok_sweep)
        claims.check(f"Thm1(i)/output-eps{e:g}", f"eps = {e:g}: fitted exponent of max_k |h(x_k)| at tau_eps in lambda",
                     slopes[e]["h"], ex.output_exponent_criterion(e), source_value=f"2(1 - eps) = {2 * (1 - e):g} [R]", valid=ok_sweep)
        claims.check(f"Thm1(ii)/median-exponent-eps{e:g}", f"eps = {e:g}: exponent of the median 1 - cos over S+ (all lambda)",
                     slopes[e]["med"], ex.alignment_exponent_criterion(e), source_value=f"2 eps = {2 * e:g} [R]", valid=ok_sweep)
        claims.check(f"Thm1(ii)/max-exponent-eps{e:g}", f"eps = {e:g}: exponent of the max 1 - cos over S+ (lambda <= 1e-3)",
                     slopes[e]["max"], ex.alignment_exponent_criterion(e), source_value=f"2 eps = {2 * e:g} [R]", valid=ok_sweep)
    def per_eps(key):
        return ", ".join(f"eps {e:g}: " + "/".join(f"{v:.4f}" for v in sw.at_tau[e][key][at_min].tolist()) for e in P.epsilons)


    claims.check("Thm1(ii)/positive-to-maximum", f"eps = {e_main:g}, lambda = {lam_min:g}: share of S+ in the cone of the maximum D",
                 sw.at_tau[e_main]["plus_in_max_cone"][at_min], ex.POSITIVE_TO_MAXIMUM, source_value="a_j > 0: local maximum of G [T]",
                 note="every eps: " + per_eps("plus_in_max_cone"), valid=ok_sweep)
    claims.check("Thm1(ii)/negative-to-minimum", f"eps = {e_main:g}, lambda = {lam_min:g}: share of S- switched off (G's flat minimum, D_j = 0)",
                 sw.at_tau[e_main]["minus_inactive"][at_min], ex.NEGATIVE_TO_MINIMUM, source_value="a_j < 0: local minimum of G [T]",
                 note="every eps: " + per_eps("minus_inactive") + " (negative neurons that start next to the maximum D, where "
                      "the descent of G is slowest, violate Condition 1 and need more time)", valid=ok_sweep)
    claims.check("Thm1(ii)/switched-off-never-move", "neurons inactive on every point at tau_eps never move again (max change)",
                 torch.stack([sw.at_tau[e]["frozen_moved"] for e in P.epsilons]).flatten(), ex.SWITCHED_OFF_FROZEN,
                 source_value="D_j = 0: never moves (Lemma 11) [T]", valid=ok_sweep)
    share = ex.aligned_shares(sw, e_main)
    claims.check("Rem1/aligned-share-grows", f"eps = {e_main:g}: share of S+ within 1e-3 of D at tau_eps grows as lambda "
                 "decreases (its rise from the largest to the smallest lambda; minus the largest drop if it ever drops)",
                 ex.share_growth(share), ex.REM1_GROWS, source_value="Condition 1 covers all neurons as lambda -> 0 [T]",
                 note="shares from the largest to the smallest lambda: " + ", ".join(f"{v:.3f}" for v in share.tolist()), valid=ok_sweep)
    claims.check("Rem1/all-aligned-smallest", f"eps = {e_main:g}, lambda = {lam_min:g}: share of S+ within 1e-3 of D at tau_eps "
                 "(per run)", sw.at_tau[e_main]["plus_aligned"][at_min], ex.REM1_ALL_AT_SMALLEST,
                 source_value="Condition 1 covers all neurons as lambda -> 0 [T]", valid=ok_sweep,
                 note="with aligned-share-grows: a share that grows could stop short of every neuron")
    claims.check("Lem5/tau2-linear", "tau_2 is linear in ln(1/lambda) (R^2)", pt["r2"], ex.TAU2_LINEAR, source_value="Lemma 5 (1)", valid=ok_sweep)
    claims.check("Lem5/tau2-slope", "its slope against 1/|D| (ratio)", pt["slope"] / pt["predicted_slope"],
                 ex.TAU2_SLOPE, source_value=f"1/|D| = {pt['predicted_slope']:.4f}", valid=ok_sweep)
    claims.check("Lem5/pairwise", "at tau_2 and lambda <= 1e-4 the S+ neurons are pairwise aligned (min pairwise cos)",
                 th.series_at_capture(sw.run, sw.captures, "tau2", "pair_min_cos")[le4], ex.PAIRWISE_ALIGNED,
                 source_value="Lemma 5 (3)", valid=ok_sweep)
    dur = pt["duration"]
    claims.check("Lem6/duration", "tau_3 - tau_2 does not depend on lambda: (max - min) / mean",
                 float((dur.max() - dur.min()) / dur.mean()), C.below(0.2), source_value="Lemma 6, O(ln 1/eps_2)", valid=ok_sweep)
    claims.check("Lem6/pairwise", "at tau_3 and lambda <= 1e-4 the S+ neurons are still pairwise aligned (min pairwise cos)",
                 th.series_at_capture(sw.run, sw.captures, "tau3", "pair_min_cos")[le4], ex.PAIRWISE_ALIGNED,
                 source_value="Lemma 6 (2)", valid=ok_sweep)
    spread = ex.spread_arc(sw, e_main)
    claims.check("S5-omni/spread-exponent", f"eps = {e_main:g}: the arc covered by S+ around D shrinks as lambda^eps "
                 "(fitted exponent, lambda <= 1e-3)", ex.loglog_slope(lam[small], spread.numpy()[small])[0],
                 ex.spread_exponent_criterion(e_main), source_value="a very small cone around D [T]",
                 note=f"largest arc at lambda = {lam_min:g}: {float(spread[at_min].max()):.2e} rad", valid=ok_sweep)
if "general-d" in P.sections:
    claims.check("Thm3/fixed-points", "general d: share of growing clusters at a fixed point of the direction flow",
                 fixed_share, C.above(1.0), source_value="spec: every cluster centre, cos >= 1 - 1e-3",
                 note=f"d in {P.general_dims}; local extremum of G: {ext_share:.2f} of them",
                 valid=torch.tensor([r_["finite"] for r_ in gen]))
if "example1" in P.sections:
    first = ex1["leaving"][min(ex1["leaving"])]
    claims.check("Ex1/stays", f"sigma'(0) = 0 (the library's GD): largest change of the boundary neuron over "
                 f"{P.example_steps} iterations", ex1["moved"], C.below(0.0, strict=False),
                 source_value="the solution that stays (Condition 2) [R]", valid=ex1["finite"][:1])
    claims.check("Ex1/leaves", f"sigma'(0) = 1 at the first step: loss after {P.example_steps} iterations over the initial loss",
                 float(first["loss"][-1] / first["loss"][0]), C.below(1e-6),
                 source_value="another Clarke solution: leaves at t_0 = 0 [R]", valid=ex1["finite"][1:2])
    claims.check("Ex1/shifted-family", "leaving at k_0 is the same path shifted by k_0 iterations (max |z difference|)",
                 ex1["shift_error"], C.below(1e-15, strict=False), source_value="one solution per t_0 [R]",
                 note=f"k_0 in {sorted(ex1['leaving'])}", valid=ex1["finite"][1:])

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
display(Markdown(fnd.findings_alignment(claims, *((sw, pt, slopes) if "sweep" in P.sections else (None, None, None)), P)))
