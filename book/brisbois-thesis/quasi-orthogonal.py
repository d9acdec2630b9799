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
# # Quasi-orthogonal data: Figures 3.25, 3.26 and the delta sweep
#
# **Source:** `000_5bec2764affd87f0.txt`, Brisbois, master's thesis {cite:p}`brisbois2024thesis`, Section 3.2.
# **Targets:** Figs 3.25 and 3.26 (with the sweep over $\delta$ the text reports).
# **Computed by:** {py:func}`shallowflow.experiments.brisbois_thesis.quasi_orthogonal.run_quasi`.
#
# Datasets 1.2.x move the first input of Dataset 1.1.0: $x_1=(-0.5\pm\delta/2,\ 1)$, $y_1=-1$, $x_2=(2,1)$,
# $y_2=1$, so $\langle x_1,x_2\rangle=\pm\delta$ exactly. The thesis (ReLU, $m=60$, $\alpha=10^{-3}$,
# $\lambda=10^{-10}$) claims: the results of [5] "still hold for $\delta$ of order $\lambda$"; for every tested
# $\delta$ with one input on each side of 0 the loss keeps its initial and intermediate plateaus and the neurons
# align with $D_\pm\propto y_kx_k$, i.e. at orientations $-1/\bar x_k$, which are no longer the data abscissae
# (Fig. 3.25, $\delta=1$: orientations $-0.5$ for $s_j=+1$ and $1$ for $s_j=-1$; the text swaps the two labels,
# an erratum the spec records). With both inputs positive (Fig. 3.26, $\delta=10$, $x_1=(4.5,1)$) a new
# slowdown appears, one direction sits at the smaller abscissa, the other in the negative half-line, and the
# **negative label is fitted first**, the model moving away from it later. The text also says neurons of both
# signs grow along both directions.
#
# :::{admonition} Conventions and unstated choices
# :class: note
# **Loss:** mean squared error $\frac1n\sum_k(h-y)^2$ (the thesis's experiments). **Plateaus:** the thesis's
# detector (App. C, eq. (C.1)) as the spec reads it: blocks of $\max(1,\lfloor T/100\rfloor)$ epochs, $T$ the
# epoch of $L<0.01$, a block slow when $\log_{10}L$ changes by less than 0.01, a plateau two or more slow blocks.
# **Fit epochs:** the first stored epoch from which on $|h(x_k)-y_k|<0.1|y_k|$. **Grown neurons:**
# $\|w_j\|>5\%$ of the largest. **Seeds:** not given by the thesis; five here, every check over all of them.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m
init_scale = 1e-10  # lambda
lr = 1e-3  # alpha
steps = 300_000  # epochs (the thesis's budget for two points)
seeds = [0, 1, 2, 3, 4]  # one run per seed and dataset
deltas = [1e-8, 1e-6, 1e-4, 1e-2, 1.0, 10.0, 100.0]  # the sweep (sign minus)
delta_a = 1.0  # Fig 3.25
delta_b = 10.0  # Fig 3.26 (sign plus)
snap_every = 250  # epochs between stored parameters
grown_rel = 0.05  # grown neurons: norm above this fraction of the largest

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.site import plots
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import quasi_orthogonal as Q
from shallowflow.engine.models import Network
from shallowflow.params import validate

P = validate(globals(), Q.SCHEMA, Q.RULES)
plots.setup()
claims = C.Claims(source="000", chapter="book/brisbois-thesis/quasi-orthogonal", profile=P.profile)

# %% [markdown]
# ## Training
# Every dataset and seed is one run of a single ensemble (per-run data) on the kernel.

# %%
run = Q.run_quasi(P)
print(f"{run.traj.runs} runs x {P.steps} epochs in {run.traj.seconds:.1f} s (ReLU, MSE loss)")
M = {i: Q.measure(run, i, P.grown_rel) for i in range(len(run.labels))}
for i, (lab, d) in enumerate(zip(run.labels, run.deltas)):
    m = M[i]
    print(f"  {lab:5s} delta {d:+8.0e}: +fit {m['pos'].tolist()}, -fit {m['neg'].tolist()}, plateaus "
          f"{m['plateaus'].tolist()}, final L max {float(m['final_loss'].max()):.1e}")

# %% [markdown]
# ## Loss curves over delta
#
# Data: Datasets 1.2.x of the thesis (2 points, $x_1$ of Dataset 1.1.0 moved by $\delta$): left, one data set per $\delta$ in
# `deltas` ($x_1$ stays negative); right, those of Figs 3.25 (`delta_a`) and 3.26 (`delta_b`).

# %% tags=["hide-input"]
fig, ax = plt.subplots(1, 2, figsize=(11, 3.6))
cmap = plt.get_cmap("viridis")
sw = [i for i, l in enumerate(run.labels) if l == "sweep"]
for c_, i in enumerate(sw):
    tr = M[i]["traj"]
    ax[0].plot(tr.loss_steps, tr.loss[0], color=cmap(c_ / max(len(sw) - 1, 1)), label=f"delta {abs(run.deltas[i]):g}")
for i, lab in ((Q.entry(run, "a"), f"Fig 3.25 (delta {P.delta_a:g})"), (Q.entry(run, "b"), f"Fig 3.26 (delta {P.delta_b:g})")):
    tr = M[i]["traj"]
    ax[1].plot(tr.loss_steps, tr.loss[0], label=lab)
for a in ax:
    a.set_yscale("log"); a.set_xlabel("epoch"); a.set_ylabel("MSE"); a.legend(fontsize=7); a.set_xlim(0, min(P.steps, 60_000))
fig.tight_layout(); plt.show()

# %% [markdown]
# ## Figures 3.25 and 3.26: the network at four epochs (first seed)
#
# Data: Datasets 1.2.x of the thesis (2 points each): Fig. 3.25 with $\delta$ = `delta_a` ($x_1$ stays negative),
# Fig. 3.26 with $\delta$ = `delta_b` (both inputs positive).
# On the last panel of Fig. 3.25 (at the thesis's $\delta=1$): the alignment directions the thesis's text states for it.

# %% tags=["hide-input"]
for i, title in ((Q.entry(run, "a"), "Fig 3.25"), (Q.entry(run, "b"), "Fig 3.26")):
    m = M[i]
    tr = m["traj"]
    pick = [0, int(m["pos"][0]) if m["pos"][0] > 0 else P.snap_every, int(m["neg"][0]) if m["neg"][0] > 0 else 2 * P.snap_every, P.steps]
    pick = sorted({min(tr.snap_steps, key=lambda s: abs(s - k)) for k in pick})
    fig, axes = plt.subplots(1, len(pick), figsize=(4.2 * len(pick), 3.4))
    xs = m["data"].x1d.cpu()
    for ax, k in zip(np.atleast_1d(axes), pick):
        plots.neurons_and_function(ax, tr.at(k), m["data"].to("cpu"), Network("relu"), run=0,
                                   xlim=(float(xs.min()) - 1.5, float(xs.max()) + 1.5), title=f"{title}, epoch {k}")
    if title == "Fig 3.25" and P.delta_a == Q.SOURCE_FIG325["delta"]:
        last = np.atleast_1d(axes)[-1]
        for (name, o), ls in zip(Q.SOURCE_FIG325["directions"].items(), ("--", ":")):
            last.axvline(o, color="k", ls=ls, lw=0.8, label=f"thesis, Fig. 3.25 text: {name} = {o:g}")
        last.legend(fontsize=6, loc="upper left")
    fig.tight_layout(); plt.show()

# %% [markdown]
# ## Checks

# %%
a, b = M[Q.entry(run, "a")], M[Q.entry(run, "b")]
claims.check("Fig3.25/orientation-plus", f"delta = {P.delta_a:g}: grown s=+1 neurons at orientation -1/xbar_2 = "
             f"{a['pred_plus']:g} (max deviation)", a["dev_plus"], Q.ORIENTATION, source_value="D_+ (text: 'D~_+ = 1', swapped)",
             valid=a["valid"])
claims.check("Fig3.25/orientation-minus", f"delta = {P.delta_a:g}: grown s=-1 neurons at orientation -1/xbar_1 = "
             f"{a['pred_minus']:g} (max deviation)", a["dev_minus"], Q.ORIENTATION, source_value="D_- (text: -0.5, swapped)",
             valid=a["valid"])
claims.check("Fig3.25/two-plateaus", f"delta = {P.delta_a:g}: the loss has an initial and an intermediate plateau "
             "(plateaus detected)", a["plateaus"], Q.TWO_PLATEAUS, source_value="unchanged profile", valid=a["valid"])
if P.delta_a == Q.SOURCE_FIG325["delta"]:  # the text's printed directions are those of delta = 1
    txt = Q.SOURCE_FIG325["directions"]
    claims.check("Fig3.25/as-printed", f"delta = {P.delta_a:g}: grown s=+1 neurons at the text's D~_+ = {txt['D~_+']:g} and "
                 f"s=-1 neurons at its D~_- = {txt['D~_-']:g} (max deviation over both signs)", Q.as_printed_deviation(a),
                 Q.ORIENTATION, source_value="'D~_+ = 1 and D~_- = -0.5' (000:1471)", valid=a["valid"])
sweep = [M[i] for i in sw]
claims.check("Fig3.25/delta-sweep", f"every delta in {P.deltas} (sign -): two plateaus (count per run)",
             torch.cat([m["plateaus"] for m in sweep]), Q.TWO_PLATEAUS, source_value="for all tested delta",
             valid=torch.cat([m["valid"] for m in sweep]))
claims.check("Fig3.25/delta-sweep-directions", f"every delta in {P.deltas}: grown neurons at -1/xbar_k "
             "(max deviation over both signs)", torch.cat([torch.maximum(m["dev_plus"], m["dev_minus"]) for m in sweep]),
             Q.ORIENTATION, source_value="D_+/- = y_k x_k", valid=torch.cat([m["valid"] for m in sweep]))
claims.check("Fig3.25/both-signs-both-directions", "grown neurons of one sign on the other sign's direction "
             "(count within 0.05)", Cm.converged_only(a["cross"], a["T"]), C.above(1), source_value="'both neurons with s_j = +-1 grow along both "
             "alignment directions'", valid=a["valid"], note="nan: a run that never reached L < 0.01 (its neurons are the initial draw)")
claims.check("Fig3.26/negative-first", f"delta = {P.delta_b:g} (both inputs positive): -fit epoch minus +fit epoch",
             (b["neg"] - b["pos"]).double(), Q.NEGATIVE_FIRST, source_value="negative label fitted first",
             valid=b["valid"] & (b["pos"] > 0) & (b["neg"] > 0))
small = float(b["data"].x1d.min())
claims.check("Fig3.26/orientation-2", f"delta = {P.delta_b:g}: grown s=-1 neurons at the smaller abscissa {small:g} "
             "(max deviation)", (b["k_minus"] - small).abs().nan_to_num(0.0).amax(1), Q.ORIENTATION_2, source_value="one direction at the smaller abscissa", valid=b["valid"])
claims.check("Fig3.26/other-negative", f"delta = {P.delta_b:g}: the s=+1 direction lies in the negative half-line "
             "(largest grown s=+1 orientation)", b["k_plus"].nan_to_num(-1e9).amax(1), Q.OTHER_NEGATIVE,
             source_value="other direction negative", valid=b["valid"])
claims.check("Fig3.26/moves-away", f"delta = {P.delta_b:g}: after the negative point is fitted the model moves away "
             "from it (largest later residual there)", b["later_neg"], Q.MOVES_AWAY, source_value="moves away later",
             valid=b["valid"])
claims.check("Fig3.26/slowdown", f"delta = {P.delta_b:g}: a new slowdown between the initial and intermediate plateaus "
             "(plateaus detected)", b["plateaus"], Q.SLOWDOWN, source_value="a new slowdown", valid=b["valid"]);

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
display(Markdown(Q.findings(claims, P)))
