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
# # Ten-point non-orthogonal data: Datasets 1.3.1 and 1.3.2 (Figures 3.30-3.32, C.20-C.29)
#
# **Source:** `000_5bec2764affd87f0.txt`, Brisbois, master's thesis {cite:p}`brisbois2024thesis`, Section 3.3 and
# Appendix C.3. **Targets:** Figs 3.30, 3.31, 3.32, C.20-C.29.
# **Computed by:** {py:func}`shallowflow.experiments.brisbois_thesis.ten_point_data.run_ten_point`.
#
# Both datasets use the same ten abscissas in $[-2,2]$ ("randomly generated"; printed in the thesis); Dataset
# 1.3.1 labels each point by the sign of $\bar x$, Dataset 1.3.2 has "random" labels (five $-1$, then five
# $+1$). The thesis claims, at $m=60$, $\alpha=10^{-3}$: loss curves with the same $-\ln\lambda$ dependence as
# before; for **Sigmoid** on 1.3.2 "the loss did not decrease at all after $10^6$ epochs for $\lambda=10^{-6}$"
# (Fig. 3.30); **ReLU** groups of aligned neurons change direction together during training, against [34]'s
# align-then-grow picture (Fig. 3.31); **Tanh** at $\lambda=10^{-6}$: one orientation and small norms up to
# 400,000 epochs, a bell by 950,000, then a deformed S-curve (Fig. 3.32); on 1.3.1 with $m=1000$,
# $\lambda=10^{-2}$ ReLU neurons align, grow and move in groups and Sigmoid/Tanh neurons tend to align
# (C.21-C.26); on 1.3.2 the width dependence is that of the orthogonal case (C.27); balancedness holds as for
# orthogonal data, with doubts for Sigmoid/Tanh (C.28, C.29 at $\lambda=10^{-4}$).
#
# :::{admonition} Conventions, unstated choices and the reduced scale
# :class: note
# **Loss:** mean squared error $\frac1n\sum_k(h-y)^2$. **Budget:** the thesis trains in blocks of $10^6$ epochs
# "until convergence" ("several millions"); here every run has at most `steps` epochs and stops once
# $L<$ `stop_below`; *converged* means a final loss below $10^{-5}$, the thesis's accuracy goal for $n=10$.
# **Typical runs:** the thesis shows one curve per $\lambda$, so its $-\ln\lambda$ law and its stuck Sigmoid are read per seed
# over `law_seeds` and checked as a share of seeds whose 95% Wilson interval must lie above one half (seeds outside the
# grid train only until their initial plateau ends).
# **Reduced at book scale** (the thesis's scale is in `params/paper/`): one seed and three $\lambda$ on the grid,
# $m=200$ instead of 1000 for C.21-C.26, widths up to 200 for C.27, and Dataset 1.3.1's grid stops at `steps_131`
# epochs: C.20 reads only its plateau ends off it, which come within a few thousand epochs (printed below), so its
# curves are shorter than Dataset 1.3.2's, whose Figs 3.30-3.32 are read at $10^6$ epochs. **Seeds** are not given by the thesis.
# **Initialisation:** balanced only (the thesis's curves also vary the initialisation type).
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m
lr = 1e-3  # alpha
steps = 1_200_000  # epochs at most on Dataset 1.3.2's grid (Fig 3.32 needs about 1e6)
steps_131 = 100_000  # epochs at most on Dataset 1.3.1's grid (only C.20's plateau ends are read off it)
stop_below = 1e-10  # a run stops once its loss is below this
goal = 1e-5  # converged: final loss below this (the thesis's goal for ten points)
scales = [1e-6, 1e-4, 1e-2]  # lambda grid (Fig 3.30, C.20)
seeds = [0]  # seeds of the grid
law_seeds = [0, 1, 2, 3]  # seeds of the per-seed readings of Figs 3.30/C.20 (a share of seeds; the grid's seeds reuse its runs)
wide_width = 200  # m of C.21-C.26 (thesis 1000)
wide_scale = 1e-2  # lambda of C.21-C.26
wide_steps = 300_000  # epochs at most for C.21-C.26
widths = [10, 30, 60, 100, 200]  # m of C.27
width_scale = 1e-6  # lambda of C.27
width_steps = 1_000_000  # epochs at most for C.27
balance_scale = 1e-4  # lambda of C.28, C.29
fig32_scale = 1e-6  # lambda of Figs 3.30 (Sigmoid), 3.31, 3.32
sections = ["grid", "wide", "widths"]  # parts to run: grid (Figs 3.30-3.32, C.20, C.28, C.29), wide (C.21-C.26), widths (C.27)
resume = False  # keep each finished ensemble on disk and read it back (the paper profile: its run spans sittings)

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import metrics
from shallowflow.site import plots
from shallowflow.experiments.brisbois_thesis import measures
from shallowflow.experiments.brisbois_thesis import ten_point_data as T
from shallowflow.params import profile_values, validate

P = validate(globals(), T.SCHEMA, T.RULES)
plots.setup()
claims = C.Claims(source="000", chapter="book/brisbois-thesis/ten-point-data", profile=P.profile, sections=P.sections,
                  sections_all=T.SECTIONS)

# %% [markdown]
# ## Training

# %%
run = T.run_ten_point(P)
secs = sum(e.traj.seconds for e in run["grid"].values()) + sum(t.seconds for t in run["wide"].values()) \
    + sum(t.seconds for t in run["widths"].values())
law = T.run_law(P, run)
print(f"sections run: {P.sections}; trained in {secs:.1f} s, and the law seeds' own runs ({T.law_extra_seeds(P)}, each until "
      f"its plateau ends) in {sum(l.seconds for l in law.values()):.1f} s")
for (w, act), e in run["grid"].items():
    ends = T.plateau_end(e.traj)
    print(f"Dataset {w} {act:8s}: " + "; ".join(f"lambda {l:g}: L {float(e.traj.loss[i, -1]):.1e} (stopped {int(e.traj.stopped_at[i])}, "
                                                f"plateau ended {int(ends[i])})" for i, l in enumerate(e.scales)))

# %% [markdown]
# ### What the thesis's scale would cost here
#
# The paper profile (`params/paper/brisbois-thesis/ten-point-data.yml`) is the thesis's scale: its $\lambda$ grid and
# seeds, $m=1000$ for C.21-C.26, its widths up to 1000 for C.27, budgets of millions of epochs. Each of its training
# calls is timed here over a short sample with this book's kernel and its per-epoch time multiplied by its budget (an
# upper bound: runs stop once converged); the same estimate for this run's own parameters is printed beside it.

# %%
paper = profile_values("paper", T.SCHEMA, {})
cost, cost_here = T.thesis_cost(P, paper), T.thesis_cost(P, vars(P))
print(f"paper profile: about {cost['total']:.0f} s on this machine ({cost['total'] / 3600:.1f} h: grid {cost['grid']:.0f} s, "
      f"wide m = {paper['wide_width']} runs {cost['wide']:.0f} s, width sweep {cost['widths']:.0f} s, the law's own seeds "
      f"{cost['law']:.0f} s); this run's parameters by the "
      f"same estimate: {cost_here['total']:.0f} s, so the paper scale costs {cost['total'] / cost_here['total']:.1f} times as much")

# %% [markdown]
# ## Figures 3.30 and C.20: loss curves over lambda
#
# On the Tanh panel of Dataset 1.3.2: the epochs the thesis's text states for Fig. 3.32 (where the run is that long).

# %% tags=["hide-input"]
if "grid" in P.sections:
    fig, axes = plt.subplots(2, 3, figsize=(15, 6.4))
    for row, w in zip(axes, T.DATASETS):
        for ax, act in zip(row, T.ACTS):
            e = run["grid"][(w, act)]
            for i, l in enumerate(e.scales):
                ax.plot(e.traj.loss_steps, e.traj.loss[i], lw=1, label=f"{l:g}")
            ax.set_yscale("log"); ax.set_title(f"Dataset {w}, {act}"); ax.set_xlabel("epoch")
            if (w, act) == ("1.3.2", "tanh") and any(np.isclose(l, T.SOURCE_FIG332_SCALE) for l in e.scales):
                shown = [(what, k) for what, k in T.SOURCE_FIG332_EPOCHS.items() if k <= P.steps]
                for (what, k), ls in zip(shown, ("--", ":")):
                    ax.axvline(k, color="k", ls=ls, lw=0.8, label=f"thesis, Fig. 3.32 (lambda {T.SOURCE_FIG332_SCALE:g}): {what} epoch {k:,}")
                if shown:
                    ax.legend(fontsize=6)
        row[0].legend(title="lambda", fontsize=7)
    fig.tight_layout(); plt.show()

# %% [markdown]
# ## Figures 3.31 and 3.32: ReLU clusters and the Tanh timeline on Dataset 1.3.2

# %%
if "grid" in P.sections:
    eR = run["grid"][("1.3.2", "relu")]
    eT = run["grid"][("1.3.2", "tanh")]
    iR = T.grid_runs(eR, P.fig32_scale)
    iT = T.grid_runs(eT, P.fig32_scale)
    ends_R = T.plateau_end(eR.traj)
    turns = [T.cluster_turn(eR.traj, r, int(ends_R[r])) if ends_R[r] > 0 else [] for r in iR]
    for r, tu in zip(iR, turns):
        print(f"ReLU run {r}: clusters (size, turn rad, final circ. std, max circ. std): "
              + ", ".join(f"({n}, {c:.3f}, {s1:.3f}, {s2:.3f})" for n, c, s1, s2 in tu))
    trT = eT.traj
    def at_or_last(k):
        ks = [s for s in trT.snap_steps if s <= k]
        return ks[-1]
    k1, k4 = at_or_last(100_000), at_or_last(400_000)
    conc = measures.axial_concentration(trT.at(k1).W)[iT]
    L0 = trT.loss[iT, 0]
    rec = trT.loss_steps
    Lk4 = trT.loss[iT, int(torch.searchsorted(rec, torch.tensor(k4)))]
    wmax4 = trT.at(k4).W[iT].norm(dim=-1).amax(-1)
    half = metrics.first_below(trT.loss[iT], 0.5 * L0, rec)
    print(f"Tanh lambda {P.fig32_scale:g}: axial concentration at {k1}: {conc.tolist()}; L({k4})/L0 {(Lk4 / L0).tolist()}; "
          f"max ||w|| at {k4}: {wmax4.tolist()}; first epoch L < L0/2: {half.tolist()}")

# %% tags=["hide-input"]
if "grid" in P.sections:
    snaps = [k for k in trT.snap_steps if k > 0]
    show = [snaps[int(j)] for j in np.linspace(0, len(snaps) - 1, 6)]
    fig, axes = plt.subplots(1, len(show), figsize=(3 * len(show), 3))
    for ax, k in zip(axes, show):
        q = trT.at(k)
        W = q.W[iT[0]].numpy()
        ax.scatter(-W[:, 1] / W[:, 0], metrics.signed_norms(q)[iT[0]].numpy(), s=6)
        ax.set_xlim(-4, 4); ax.set_title(f"epoch {k}", fontsize=9)
    axes[0].set_ylabel(r"$s_j\|w_j\|$")
    fig.suptitle("Fig 3.32: Tanh, orientation plane"); fig.tight_layout(); plt.show()

# %% [markdown]
# ## Figures C.21-C.26 (Dataset 1.3.1, wide networks), C.27 (width) and C.28/C.29 (balancedness)

# %%
wide = {}
for act, tr in run["wide"].items():
    e = T.plateau_end(tr)
    k = min(tr.snap_steps, key=lambda s: abs(s - int(e[0]))) if e[0] > 0 else tr.snap_steps[-1]
    wide[act] = T.wide_measures(tr)
    grown, dirs, dirs2 = wide[act]["grown"], wide[act]["dirs"], wide[act]["dirs2"]
    print(f"{act:8s} m = {P.wide_width}: final L {float(wide[act]['L'][0]):.1e}; {int(grown[0])} grown neurons (10% of the "
          f"largest) in {int(dirs[0])} directions (cos > 0.999), {int(dirs2[0])} (cos > 0.99); norm-weighted axial "
          f"concentration {float(wide[act]['conc'][0]):.3f}")
if "widths" in P.sections:
    Tw = torch.stack([measures.epochs_to(run["widths"][m].loss, run["widths"][m].loss_steps, 0.01) for m in P.widths])  # (M, R)
    print("C.27 epochs to L < 0.01 per width:", {m: Tw[j].tolist() for j, m in enumerate(P.widths)})
if "grid" in P.sections:
    bal = {act: T.balance_error(run["grid"][("1.3.2", act)].traj.select(T.grid_runs(run["grid"][("1.3.2", act)], P.balance_scale)))
           for act in T.ACTS}
    print("C.28 max l1 balance error / mean|a|:", {a: [f"{float(v):.2e}" for v in b[0]] for a, b in bal.items()})

# %% tags=["hide-input"]
if "grid" in P.sections:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.3))
    for ax, act in zip(axes, T.ACTS):
        e = run["grid"][("1.3.2", act)]
        i = T.grid_runs(e, P.balance_scale)[0]
        ks = e.traj.snap_steps
        A = torch.stack([e.traj.at(k).a[i] for k in ks]).numpy()
        ax.plot(ks, A, lw=0.6)
        ax.set_xscale("symlog", linthresh=100); ax.set_title(f"C.29 {act}: a_j(t)"); ax.set_xlabel("epoch")
    fig.tight_layout(); plt.show()

# %% [markdown]
# ## Checks

# %%
def ok(tr, idx=None):
    v = measures.finite_runs(tr.loss, tr.final)
    return v if idx is None else v[idx]

if "grid" in P.sections:
    for w, tgt in (("1.3.2", "Fig3.30"), ("1.3.1", "C.20")):
        for act in ("relu", "tanh"):
            lw = law[(w, act)]
            r2 = T.law_r2(lw)
            slopes = T.ln_lambda_slopes_per_seed(lw.scales, lw.seeds, lw.values)
            low, text = metrics.typical_share(T.per_seed_flags(r2, T.LN_LAMBDA))
            claims.check(f"{tgt}/{act}-ln-lambda", f"Dataset {w}, {act}: the share of seeds whose end of the initial plateau is "
                         f"linear in ln(1/lambda) (R^2 {T.LN_LAMBDA.text}, positive slope), {text}; measured: the interval's "
                         "lower end (typical: above one half)", low, T.TYPICAL, source_value="-ln(lambda) dependence",
                         note=f"R^2 per seed {dict(zip(dict.fromkeys(lw.seeds), (round(v, 4) for v in r2)))}; slopes "
                              f"{', '.join(f'{v:.3g}' for v in slopes)} epochs per unit (nan R^2 unless the slope is positive); "
                              f"without lambda = {max(P.scales):g} (nan: fewer than three lambda left): "
                              f"{[round(v, 4) for v in T.law_r2(lw, below=max(P.scales))]}",
                         valid=lw.valid)
    lS = law[("1.3.2", "sigmoid")]
    stuck = torch.tensor(lS.values, dtype=torch.float64)
    low_s, text_s = metrics.typical_share(T.per_seed_flags(lS.values, T.STUCK))
    claims.check("Fig3.30/sigmoid-stuck", f"Sigmoid, Dataset 1.3.2, lambda = {P.fig32_scale:g}: the share of seeds whose L at epoch "
                 f"{T.SOURCE_SIGMOID_STUCK_EPOCH:,} (the thesis's) / L(0) is {T.STUCK.text}, {text_s}; measured: the interval's lower "
                 f"end (typical: above one half; nan: the budget of {P.steps} epochs stops earlier)",
                 low_s if bool(torch.isfinite(stuck).all()) else float("nan"), T.TYPICAL,
                 source_value="no decrease after 1e6 epochs",
                 note=f"L(10^6)/L(0) per seed {dict(zip(lS.seeds, (round(float(v), 5) for v in stuck)))}", valid=lS.valid)
    best_turn = T.largest_tight_turn(turns)
    claims.check("Fig3.31/groups-turn", "ReLU, Dataset 1.3.2: largest turn (rad) of a cluster's mean direction after the alignment, "
                 "among clusters that end tight (circular std < 0.05)", best_turn, T.GROUPS_TURN,
                 source_value="groups change direction together", valid=ok(eR.traj, iR))
    claims.check("Fig3.32/one-orientation", f"Tanh, lambda = {P.fig32_scale:g}: axial concentration of neurons at epoch {k1}", conc,
                 T.ONE_ORIENTATION, source_value="one orientation (epochs < 400,000)", valid=ok(trT, iT))
    claims.check("Fig3.32/small-until-400k", f"Tanh: L({k4}) / L(0)", Lk4 / L0, T.SMALL_UNTIL_400K,
                 source_value="small norm, no fit yet", valid=ok(trT, iT))
    claims.check("Fig3.32/small-norm-400k", f"Tanh: largest ||w_j|| at epoch {k4}", wmax4, C.below(0.2),
                 source_value="small in norm", valid=ok(trT, iT))
    claims.check("Fig3.32/main-drop", "Tanh: first epoch with L < L(0)/2 (-1: not within the budget)", half,
                 C.within(600_000, 2_000_000), source_value="bell by 950,000, then the fit", valid=ok(trT, iT))
if "wide" in P.sections:
    for act, (tl, tr_) in {"relu": ("C.21", "C.22"), "sigmoid": ("C.23", "C.24"), "tanh": ("C.25", "C.26")}.items():
        claims.check(f"{tl}/converges", f"{act}, Dataset 1.3.1, m = {P.wide_width}, lambda = {P.wide_scale:g}: final loss",
                     wide[act]["L"], C.below(P.goal), source_value="trained (loss panel)", valid=wide[act]["valid"],
                     note=f"trained {wide[act]['epochs']:,} epochs; over the last tenth of them the loss changed by a factor "
                          f"{float(wide[act]['fall'][0]):.3g}: {T.trend_word(float(wide[act]['fall'][0]))}")
        if act == "relu":
            claims.check(f"{tr_}/align", "ReLU: grown neurons gather in few directions (their distinct directions within cos "
                         "0.99 at the end / those of the same neurons at initialisation)", wide[act]["gathered"],
                         T.WIDE_ALIGN_RELU, source_value="neurons align, then grow",
                         note="the thesis gives no measure; at most one final direction per two initial ones (per grown "
                              "neuron, the count held by construction in the plane: the untrained draw passed)",
                         valid=wide[act]["valid"])
        else:
            claims.check(f"{tr_}/align", f"{act}: the weight mass lies along one line (norm-weighted axial concentration)",
                         wide[act]["conc"], T.WIDE_ALIGN, source_value="tendency to align",
                         note="the thesis gives no measure; random directions give about 1/sqrt(m)", valid=wide[act]["valid"])
    claims.check("C.22/groups", f"ReLU, m = {P.wide_width}: distinct directions of grown neurons at the end (at most 2n)",
                 wide["relu"]["dirs"], T.WIDE_GROUPS, source_value="move in groups", valid=wide["relu"]["valid"])
if "widths" in P.sections:
    ratios = [float(Tw[j + 1][r] / Tw[j][r]) for j in range(len(P.widths) - 1) for r in range(Tw.shape[1])
              if Tw[j][r] > 0 and Tw[j + 1][r] > 0]
    claims.check("C.27/width", f"ReLU, Dataset 1.3.2, lambda = {P.width_scale:g}: epochs to L < 0.01 do not increase with m "
                 "(largest ratio between consecutive widths)", max(ratios) if ratios else float("nan"), C.below(1.1),
                 source_value="as in the orthogonal case", valid=torch.cat([ok(run["widths"][m]) for m in P.widths]))
    claims.check("C.27/all-reach", "every width reaches L < 0.01 within the budget", bool((Tw > 0).all()), C.is_true(),
                 source_value="curves reach zero loss", valid=torch.cat([ok(run["widths"][m]) for m in P.widths]))
if "grid" in P.sections:
    for act in T.ACTS:
        e = run["grid"][("1.3.2", act)]
        ib = T.grid_runs(e, P.balance_scale)
        if act == "relu":
            claims.check("C.28/relu-balanced", f"ReLU, Dataset 1.3.2, lambda = {P.balance_scale:g}: max over epochs of the l1 "
                         "balance error / mean|a|", bal[act][0], C.below(1e-6), source_value="balanced, as for orthogonal data",
                         valid=ok(e.traj, ib))
        else:
            claims.check(f"C.28/{act}-doubts", f"{act}: the balance error is not negligible (max over epochs of the l1 error / "
                         "mean|a|)", bal[act][0], T.DOUBTS, source_value="'doubts about the balancedness'",
                         note="the spec gives no criterion (expected O(1e-2)); 'doubt' is read as an error above 0.1%",
                         valid=ok(e.traj, ib))
    so = T.relu_balance_step_order(P, run["data"]["1.3.2"], float(bal["relu"][0][0]))
    claims.check("C.28/relu-step-order", f"ReLU, Dataset 1.3.2, lambda = {P.balance_scale:g}, seed {P.seeds[0]}: log-log slope of the "
                 f"balance error against the step at lr = {', '.join(f'{v:g}' for v in so['lrs'])} over the same flow time",
                 so["slope"], T.STEP_ORDER, source_value="'a step size that is too large to accurately approximate the Gradient Flow'",
                 note="errors " + ", ".join(f"{e:.3g}" for e in so["errors"]), valid=[so["finite"]])
    claims.check("C.29/relu-signs", "ReLU: every a_j keeps its initial sign at every stored epoch", bool(bal["relu"][1].all()),
                 T.SIGNS_KEPT, source_value="a_j trajectories do not cross 0",
                 valid=ok(run["grid"][("1.3.2", "relu")].traj, T.grid_runs(run["grid"][("1.3.2", "relu")], P.balance_scale)));

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
display(Markdown(T.findings(claims, P.sections)))
