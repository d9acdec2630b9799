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
# # "For any m": failure rates over width and scale
#
# **Source:** `002_2857c8c2774dfa04.txt` {cite:p}`boursier2024early`, Theorem 2 and Section 5 ("Scale of initialisation", "Generality of
# Theorem 2", leaky ReLU and footnote 7).
# **Targets:** Thm2 (the protocol of the specification: width $\times$ scale), S5-unbal, S5-leaky, and the
# dominated initialisation of Section 5.
# **Computed by:** {py:func}`shallowflow.experiments.early_alignment.failure_rates.run_failure_rates`.
#
# Theorem 2 [T structure, R statement]: there is a $\lambda^*>0$ depending only on the data such that for
# **every** width $m$ and every $\lambda\le\lambda^*$ gradient flow from a balanced initialisation converges to
# a spurious stationary point. As stated, this is not a statement with a probability: below $\lambda^*$ *every*
# seed should fail, at every width, and the failure rate should be 100%. Which spurious point is reached
# depends on the draw: the OLS fit when some positive neuron is active on a data point at initialisation, the
# zero network otherwise (likely only at tiny widths).
#
# Every run below is classified by its final loss $L$ (mean squared error, the authors' convention; see
# {doc}`spurious` for the factor 2 of the other one): **global** ($L<10^{-6}$), **escaping** (below the OLS
# loss, $L<L^*_{\rm lin}-10^{-5}$, not yet global), **ols** ($|L-L^*_{\rm lin}|\le10^{-5}$), **zero**
# ($|L-\overline{y^2}|\le10^{-5}$) or **other** (a different value, e.g. a single neuron fitting two points).
# A run *fails* when it is neither global nor escaping.
#
# :::{admonition} Reduced scale and step size
# :class: warning
# The specification's full protocol uses the authors' step $10^{-3}$ and $10^5$-$10^6$ iterations. Here every
# run trains for the same flow time `time` with step `lr` $=10^{-2}$ (one ensemble per width; seeds and scales
# are runs of it). The step size matters near $\lambda^*$: a second grid at width `step_check_width` repeats
# the computation with a four times smaller step, and the disagreements are counted. The largest width has
# the seeds `large_seeds` per scale instead of `seeds`.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
widths = [1, 2, 5, 10, 100, 1000, 10000]  # widths m of the phase diagram
scales = [1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0]  # initialisation scales lambda
seeds = list(range(20))  # seeds of every (width, scale) cell
large_width = 5000  # widths from this one on use the seeds large_seeds
large_seeds = [0, 1]  # seeds of every cell at the large widths
lr = 1e-2  # step on the mean squared error (the authors' is 1e-3)
time = 100.0  # flow time of every run (10,000 steps of 1e-2)
step_check_width = 100  # width of the step-size check
step_check_factor = 4  # the check uses lr / step_check_factor
step_check_seeds = list(range(10))  # seeds of every scale of the check (compared with the same seeds)
contrast_widths = [10, 100, 1000]  # widths of the unbalanced, dominated and leaky contrasts
contrast_scales = [1e-3, 1e-2, 1e-1, 1.0]  # their scales
contrast_seeds = list(range(5))  # their seeds of every (width, scale)
contrast_time = 400.0  # their flow time (the escapes take longer)
leak = 0.1  # gamma of the leaky ReLU (spec's choice)
leaky_small_scales = [1e-3, 1e-9, 1e-30, 1e-60]  # fixed-width leaky runs towards small lambda (footnote 7)
level = 0.95  # level of the Wilson intervals of the shares of runs (Section 5 contrasts)
data = "ea-three-point"  # the data: the source's three points (with a bias coordinate), or a .npz / .csv file
sections = ["grid", "contrasts"]  # parts to run: grid (phase diagram and step-size check), contrasts (Section 5)
resume = False  # keep each finished ensemble on disk and resume an interrupted run (on in the paper profile only)

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config
from shallowflow.site import plots
from shallowflow.experiments.early_alignment import failure_rates as ex
from shallowflow.experiments.early_alignment import findings as fnd
from shallowflow.experiments.early_alignment import theory as th
from shallowflow.params import validate

P = validate(globals(), ex.SCHEMA, ex.RULES)
plots.setup()
claims = C.Claims(source="002", chapter="book/early-alignment/failure-rates", profile=P.profile, sections=P.sections,
                  sections_all=ex.SECTIONS)

# %%
res = ex.run_failure_rates(P)
g = res.get("balanced")
Ls = float(res["ols"].loss)
print(config.describe())
print(f"seeds: {list(P.seeds)} per cell below width {P.large_width}, {list(P.large_seeds)} from it; "
      f"step check {list(P.step_check_seeds)}; contrasts {list(P.contrast_seeds)}")
print(f"sections run: {list(P.sections)}")
print(f"data: {P.data} ({res['data'].n} points, input dimension {res['data'].d})")
print(f"L_lin* = {Ls:.8f}, zero network {float((res['data'].y ** 2).mean()):.4f}; flow time {P.time} at lr {P.lr}")
for name in [n_ for n_ in ("balanced", "step_check", "unbalanced", "dominated", "leaky", "leaky_small") if n_ in res]:
    print(f"{name:12s} seconds per width: " + ", ".join(f"m={m}: {s:.1f}" for m, s in res[name].seconds.items()))

# %% [markdown]
# ## The table: outcomes per width and scale
#
# Each cell counts the runs ending at `ols / zero / other / escaping / global`.

# %%
if "grid" in P.sections:
    display(ex.grid_table(g))

# %% [markdown]
# ## The phase diagram
#
# The share of failing runs at every (scale, width). Theorem 2 predicts a failure region $\lambda\le\lambda^*$
# that does not move with $m$: a boundary that is a horizontal line in this picture (tiny widths aside, where
# there are few neurons to escape with).

# %%
if "grid" in P.sections:
    F = np.array([[g.failing(m, sc) for sc in g.scales] for m in g.widths])
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(g.widths) + 1.5))
    im = ax.imshow(F, cmap="RdYlGn_r", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(g.scales)), [f"{s:g}" for s in g.scales])
    ax.set_yticks(range(len(g.widths)), [f"m = {m}" for m in g.widths])
    ax.set_xlabel(r"initialisation scale $\lambda$")
    for i, m in enumerate(g.widths):
        for j, sc in enumerate(g.scales):
            ax.text(j, i, f"{F[i, j]:.2f}", ha="center", va="center", fontsize=8)
        lam_star = ex.empirical_lambda_star(g, m)
        if lam_star in g.scales:
            ax.plot([g.scales.index(lam_star) + 0.5] * 2, [i - 0.5, i + 0.5], color="black", lw=2)
    fig.colorbar(im, ax=ax, label="share of failing runs")
    ax.set_title(f"balanced ReLU, data {res['data'].name}: failing share (black bar: largest scale with 100% failure)", fontsize=10)
    fig.tight_layout()
    plt.show()
    lam_star = {m: ex.empirical_lambda_star(g, m) for m in g.widths}
    print("largest grid scale at which every run fails, per width:", lam_star)

# %% [markdown]
# The escapes that do happen above $\lambda^*$ leave the OLS plateau at a finite time; their flow times.
# Data: the chapter's `data` (by default the three-point data set of 002 Section 6, n = 3).

# %%
if "grid" in P.sections:
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for m in g.widths:
        xs, ys = [], []
        for sc in g.scales:
            e = g.escape[(m, sc)]
            e = e[torch.isfinite(e)]
            xs += [sc] * e.numel()
            ys += e.tolist()
        if xs:
            ax.scatter(np.array(xs) * (1 + 0.05 * g.widths.index(m)), ys, s=12, label=f"m = {m}")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\lambda$")
    ax.set_ylabel("flow time of L < 0.99 L*")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Step size
#
# The same grid at width `step_check_width` with the step divided by `step_check_factor`:

# %%
if "grid" in P.sections:
    sc_grid = res["step_check"]
    m0 = P.step_check_width
    display(ex.grid_table(sc_grid))
    disagree, disagree_theorem = 0, 0
    if m0 in g.widths:
        common = [s for s in P.step_check_seeds if s in g.seeds[m0]]  # compared run for run, seed by seed
        print(f"seeds compared: {common}")
        for sc in g.scales:
            a = [o in th.SUCCESS for o in g.outcomes_of(m0, sc, common)]
            b = [o in th.SUCCESS for o in sc_grid.outcomes_of(m0, sc, common)]
            d = sum(x != y for x, y in zip(a, b))
            disagree += d
            disagree_theorem += d if sc <= 1e-2 else 0
            if d:
                print(f"lambda = {sc:g}: {d} of {len(b)} runs change outcome with the smaller step")
    print(f"disagreements: {disagree} in total, {disagree_theorem} at lambda <= 1e-2")

# %% [markdown]
# ## Contrasts of Section 5
#
# - **Unbalanced** initialisation ($\tilde a_j\sim\mathcal N(0,1)$ independent of $\tilde w_j$ [C]): output
#   weights can change sign during the early phase, omnidirectionality survives, and on this example "the
#   parameters thus converge towards a global minimum" [T].
# - **Dominated** initialisation ($|\tilde a_j|>\|\tilde w_j\|$ [C]) satisfies eq. (4): Theorem 2 applies and
#   the limit is a local minimum (see {doc}`spurious`).
# - **Leaky ReLU** ($\gamma=$ `leak`): "omnidirectionality would be preserved during the early alignment phase
#   and convergence towards an interpolator still happens" [T], for large widths; footnote 7: Theorem 2 still
#   holds if $\lambda^*$ may depend on $m$, i.e. at a fixed width a small enough scale fails again.

# %%
if "contrasts" in P.sections:
    for name in ("unbalanced", "dominated", "leaky", "leaky_small"):
        print(f"{name} ({res[name].activation}, flow time {res[name].time:g}): ols/zero/other/escaping/global")
        display(ex.grid_table(res[name]))
    ub, lk = res["unbalanced"], res["leaky"]
    mx = max(P.contrast_widths)
    t_ub = ub.escape[(mx, min(P.contrast_scales))]
    print(f"unbalanced, m = {mx}, lambda = {min(P.contrast_scales):g}: final losses {[f'{v:.2g}' for v in ub.loss[(mx, min(P.contrast_scales))].tolist()]}, "
          f"OLS plateau left at t = {t_ub.tolist()}")

# %% [markdown]
# ## Checks

# %% tags=["remove-cell"]
if "grid" in P.sections:
    small = [sc for sc in g.scales if sc <= 1e-2]
    big_m = [m for m in g.widths if m >= 100]
    esc_small = ex.escapes_below_ols(g, g.widths, small, Ls)
    ols_frac = ex.ols_fraction(g, [m for m in g.widths if m >= 10], small)
    tiny = [m for m in g.widths if m <= 5]
    tiny_spurious = ex.tiny_spurious_share(g, tiny, small)
    stars_big = [lam_star[m] for m in big_m]
    top = max(g.scales)
    # the runs each check rests on: a run whose loss or parameters stopped being finite makes it fail, named
    ok_grid = g.valid_runs()
    ok_small = g.valid_runs(scales=small)
    ok_step = torch.cat([g.valid_runs([m0], small), sc_grid.valid_runs(scales=small)]) if m0 in g.widths else sc_grid.valid_runs(scales=small)
if "contrasts" in P.sections:
    lmin = min(P.contrast_scales)
    dom = res["dominated"]
    dom_small = [sc for sc in P.contrast_scales if sc <= 1e-2]

# %%
if "grid" in P.sections:
    claims.check("Thm2/no-escape-small-scales", "at lambda <= 1e-2 no run of any width ends below the OLS loss (count)",
                 esc_small, ex.NO_ESCAPE, source_value="for any m and lambda <= lambda*",
                 note=f"widths {g.widths}, scales {small}; spec: 0 runs with L < L* - 1e-5", valid=ok_small)
    claims.check("Thm2/ols-fraction", "at m >= 10 and lambda <= 1e-2 the runs end at the OLS loss (smallest share per cell)",
                 ols_frac, ex.OLS_FRACTION, source_value="spec: >= 95%", valid=ok_small)
    if tiny:
        claims.check("Thm2/tiny-widths-spurious", "at m <= 5 and lambda <= 1e-2 every run ends at the OLS fit or the zero "
                     "network (smallest share per cell; a cell counts when some of its runs reached the OLS fit: an "
                     "untrained network is the zero network)", tiny_spurious, ex.TINY_SPURIOUS, source_value="failure (spec's table)",
                     valid=g.valid_runs(tiny, small))
    claims.check("Thm2/lambda-star-common", "a scale below which every width fails: min over m of the largest all-fail "
                 "scale, in the spec's band", min(lam_star.values()), ex.LAMBDA_STAR_BAND, source_value="lambda* independent "
                 "of m; spec: lambda* in [3e-2, 1e-1]", note=f"per width: {lam_star}", valid=ok_grid)
    claims.check("Thm2/lambda-star-width-independent", "the largest all-fail scale is the same for every m >= 100 "
                 "(max / min over widths; counted when every width escapes at some scale: a boundary to compare)",
                 ex.width_independence(g, big_m),
                 ex.LAMBDA_STAR_SAME, source_value="horizontal boundary", note=f"m >= 100: {dict(zip(big_m, stars_big))}",
                 valid=ok_grid)
    claims.check("Thm2/escape-large-scale", f"at lambda = {top:g} and m >= 100 every run reaches a global minimum "
                 "(share with final L < 1e-6)", min((g.fraction(m, top, ("global",)) for m in big_m), default=math.nan),
                 ex.ESCAPE_SHARE, source_value="spec: lambda >= 1 global min", valid=g.valid_runs(big_m, [top]),
                 note="escaping runs that are still above L = 1e-6 at the end do not count: " + ", ".join(
                     f"m = {m}: {g.fraction(m, top):.2f} escape" for m in big_m))
    d_step, n_step = ex.step_disagreements(g, sc_grid, m0, small, P.step_check_seeds)
    claims.check("Thm2/step-size", "lambda <= 1e-2: outcomes unchanged with a 4x smaller step (disagreements; counted only "
                 "when every compared run of both steps trained: ended at the OLS loss or below)",
                 d_step if small else math.nan, ex.STEP_SIZE, source_value="GD approximates GF",
                 note=f"{n_step} runs compared; all scales: {disagree} disagreement(s)", valid=ok_step)
if "contrasts" in P.sections:
    claims.check("Thm2/dominated-fails", "dominated initialisation (eq. (4) holds) at lambda <= 1e-2: share ending at the OLS loss",
                 min((dom.fraction(m, sc, ("ols",))
                      for m in P.contrast_widths for sc in dom_small), default=math.nan),
                 C.above(1.0), source_value="spurious (local minimum) [T]", valid=dom.valid_runs(scales=dom_small))
    # Section 5 describes what happens "on this example": a typical behaviour, stated as a share of runs
    conv_ub = ub.loss[(mx, lmin)] < 1e-6
    low, text = th.typical_share(conv_ub, P.level)
    claims.check("S5-unbal/converges", f"unbalanced, m = {mx}, lambda = {lmin:g}: share of runs with final loss < 1e-6, "
                 f"lower end of its {P.level:.0%} Wilson interval", low, th.TYPICAL, source_value="global minimum [T]",
                 note=f"{text}; final losses {C.fmt(ub.loss[(mx, lmin)])}; flow time {P.contrast_time:g}; spec: L <= 1e-6 "
                      "within flow time 500 at m >= 500", valid=ub.valid[(mx, lmin)])
    esc_ub = torch.isfinite(t_ub) & (t_ub < P.contrast_time)
    low, text = th.typical_share(esc_ub, P.level)
    claims.check("S5-unbal/escape-in-time", "unbalanced runs leave the OLS plateau (L < 0.99 L*) within the flow time: share "
                 f"of runs, lower end of its {P.level:.0%} Wilson interval", low, th.TYPICAL, source_value="converges",
                 note=f"{text}; flow times {C.fmt(t_ub)}", valid=ub.valid[(mx, lmin)])
    conv_lk = lk.loss[(mx, lmin)] < 1e-8
    low, text = th.typical_share(conv_lk, P.level)
    claims.check("S5-leaky/converges", f"leaky ReLU (gamma = {P.leak:g}), m = {mx}, lambda = {lmin:g}: share of runs with "
                 f"final loss < 1e-8, lower end of its {P.level:.0%} Wilson interval", low, th.TYPICAL,
                 source_value="interpolates [T]", note=f"{text}; final losses {C.fmt(lk.loss[(mx, lmin)])}; spec: L <= 1e-8",
                 valid=lk.valid[(mx, lmin)])
    ls = res["leaky_small"]
    m_small = min(P.contrast_widths)
    claims.check("S5-leaky/fixed-width-small-scale", f"footnote 7: leaky ReLU at m = {m_small}, lambda = "
                 f"{min(P.leaky_small_scales):g}: share of failing runs (counted when some run of that width succeeds at "
                 "a larger scale: an untrained network fails by itself)", ex.fixed_width_failing(ls, m_small),
                 ex.FIXED_WIDTH_FAILS, source_value="Theorem 2 with lambda* depending on m",
                 note="failing shares per scale: " + ", ".join(f"{sc:g}: {ls.failing(m_small, sc):.2f}" for sc in ls.scales),
                 valid=ls.valid[(m_small, min(P.leaky_small_scales))])

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
display(Markdown(fnd.findings_failure(claims, res, lam_star, disagree, P) if "grid" in P.sections
                 else fnd.summarise(claims, [])))
