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
# # Multidimensional data: Figures 3.33-3.39 and the two-neuron reduction
#
# **Source:** `000_5bec2764affd87f0.txt`, Brisbois, master's thesis {cite:p}`brisbois2024thesis`, Section 3.4.
# **Targets:** Figs 3.33-3.39, check C4. **Computed by:**
# {py:func}`shallowflow.experiments.brisbois_thesis.multidimensional.run_multid`.
#
# The thesis trains $m=200$ networks on five points in $\mathbb R^5$ (last coordinate 1). On its printed
# **orthogonal** dataset (labels from a small random teacher), PCA of the final hidden weights $W^*_{GD}$ shows
# that "the first two dimensions fully explain the total variance" for ReLU ($\lambda=10^{-22}$): the network
# reduces to two neurons (Figs 3.33, 3.34, two rays in the plane of the first two components); for Sigmoid
# ($\lambda=10^{-6}$) and Tanh ($\lambda=10^{-10}$) the first component dominates and the second is "small but
# non-zero", with an S-curve in the projection (Figs 3.35, 3.36). On **non-orthogonal** data ($\lambda=10^{-12}$,
# Figs 3.37-3.39) the variance spreads over more components, so the two-neuron reduction does not hold.
#
# :::{admonition} Conventions and unstated choices
# :class: warning
# **Loss:** mean squared error $\frac1n\sum_k(h-y)^2$, $\alpha=10^{-3}$. **PCA:** uncentred (the principal
# directions of the rows of $W$, as neurons are rays from 0), explained-variance ratio $s_i^2/\sum s^2$.
# **The non-orthogonal data are not printed.** The text says the inputs were drawn from $U(-1,1)$ and each row
# divided by its last element, with labels from a teacher as for the orthogonal data ("normal distribution with
# fixed variance (typically 0.1)", width 10, activation not stated). The book builds them
# ({py:func}`shallowflow.engine.data.brisbois_multid_nonorthogonal`): rows re-drawn while $|x_{k,5}|<0.1$, a ReLU teacher,
# and seeds `data_seeds`; the teacher's weight scale is read as standard deviation 0.1 (labels of the size of the
# printed orthogonal ones) and, for ReLU, also as variance 0.1 (std 0.316). Every non-orthogonal result below is
# over all these generated datasets, so the reader sees how much it depends on the choice.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 200  # m
lr = 1e-3  # alpha
steps = 1_000_000  # epochs at most
stop_below = 1e-12  # a run stops once its loss is below this
relu_scale = 1e-22  # lambda of Figs 3.33, 3.34
sigmoid_scale = 1e-6  # lambda of Fig 3.35
tanh_scale = 1e-10  # lambda of Fig 3.36
nonorth_scale = 1e-12  # lambda of Figs 3.37-3.39
data_seeds = [0, 1, 2]  # generated non-orthogonal datasets
teacher = "relu"  # the teacher's activation (not stated in the thesis)
teacher_stds = [100]  # teacher weight std in units of 1e-3 (0.1)
relu_extra_stds = [316]  # for ReLU also std sqrt(0.1), the other reading of the thesis's variance 0.1
seeds = [0]  # initialisation seeds on the orthogonal data
goal = 1e-8  # converged: final loss below this
sections = ["orthogonal", "non-orthogonal"]  # parts to run: orthogonal (Figs 3.33-3.36, C4), non-orthogonal (Figs 3.37-3.39)

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import metrics
from shallowflow.site import plots
from shallowflow.experiments.brisbois_thesis import multidimensional as MD
from shallowflow.params import validate

P = validate(globals(), MD.SCHEMA, MD.RULES)
plots.setup()
claims = C.Claims(source="000", chapter="book/brisbois-thesis/multidimensional", profile=P.profile, sections=P.sections,
                  sections_all=MD.SECTIONS)

# %% [markdown]
# ## Training

# %%
res = MD.run_multid(P)
G = res["orth_data"].X @ res["orth_data"].X.T
print(f"sections run: {P.sections}")
print(f"orthogonal data: largest off-diagonal |<x_k, x_l>| = {float((G - torch.diag(torch.diag(G))).abs().max()):.1e}")
for kind in ("orth", "nonorth"):
    for act, r in res[kind].items():
        print(f"{kind:8s} {act:8s}: {r.traj.runs} runs in {r.traj.seconds:.1f} s; final L {[f'{float(v):.1e}' for v in r.traj.loss[:, -1]]}, "
              f"stopped at {r.traj.stopped_at.tolist()}")

# %% [markdown]
# ## Figures 3.33-3.36: loss and explained variance on the orthogonal data

# %% tags=["hide-input"]
if "orthogonal" in P.sections:
    fig, axes = plt.subplots(2, 3, figsize=(14, 6.4))
    for col, act in enumerate(MD.ACTS):
        r = res["orth"][act]
        for i in range(r.traj.runs):
            axes[0, col].plot(r.traj.loss_steps, r.traj.loss[i], lw=1)
        axes[0, col].set_yscale("log"); axes[0, col].set_title(f"{act}: MSE"); axes[0, col].set_xlabel("epoch")
        W = r.traj.final.W[0]
        pr = MD.projections(W).numpy()
        axes[1, col].scatter(pr[:, 0], pr[:, 1], s=8)
        axes[1, col].set_title("EVR " + ", ".join(f"{float(v):.1e}" for v in r.evr[0]), fontsize=8)
        axes[1, col].set_xlabel("PC1"); axes[1, col].set_ylabel("PC2")
    fig.tight_layout(); plt.show()
    for act in MD.ACTS:
        print(act, "EVR per seed:", [[f"{float(v):.2e}" for v in e] for e in res["orth"][act].evr])

# %% [markdown]
# ## Figures 3.37-3.39: the generated non-orthogonal data
# One row per generated dataset (data seed, teacher std): the EVR of the final weights per activation.

# %%
if "non-orthogonal" in P.sections:
    for act in MD.ACTS:
        for j, (s, v, d) in enumerate(res["nonorth_data"][act]):
            r = res["nonorth"][act]
            print(f"{act:8s} data seed {s}, teacher std {v:.3f} (|y| max {float(d.y.abs().max()):.3f}): EVR1+2 "
                  f"{float(r.evr[j, :2].sum()):.4f}, EVR {[f'{float(x):.1e}' for x in r.evr[j]]}, final L {float(r.traj.loss[j, -1]):.1e}")

# %% tags=["hide-input"]
if "non-orthogonal" in P.sections:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.4))
    for ax, act in zip(axes, MD.ACTS):
        r = res["nonorth"][act]
        for j, (s, v, _) in enumerate(res["nonorth_data"][act]):
            ax.plot(range(1, r.evr.shape[1] + 1), r.evr[j].clamp_min(1e-18), "o-", lw=1, label=f"seed {s}, std {v:.2f}")
        ax.set_yscale("log"); ax.set_title(f"{act}: EVR of W*"); ax.set_xlabel("component")
    axes[0].legend(fontsize=6)
    fig.tight_layout(); plt.show()

# %% [markdown]
# ## Checks

# %%
if "orthogonal" in P.sections:
    o = res["orth"]
    e_r = o["relu"].evr
    claims.check("Fig3.33/two-components", "ReLU, orthogonal data: EVR_1 + EVR_2 of the final weights", MD.two_components(o["relu"]),
                 MD.TWO_COMPONENTS, source_value="first two fully explain the variance", valid=o["relu"].valid)
    claims.check("Fig3.33/zero-loss", f"ReLU: the loss reaches {P.goal:g} within {P.steps} epochs", o["relu"].traj.loss[:, -1],
                 MD.zero_loss(P.goal), source_value="trained to zero loss", valid=o["relu"].valid)
    claims.check("Fig3.34/two-rays", "ReLU: grown neurons (5% of the largest) point in at most two directions "
                 "(distinct directions within cos 0.99)", metrics.distinct_directions(o["relu"].traj.final.W, grown_rel=0.05,
                 cos_tol=1e-2), C.below(2, strict=False), source_value="two rays from the origin", valid=o["relu"].valid)
    for act, fig in (("sigmoid", "Fig3.35"), ("tanh", "Fig3.36")):
        e = o[act].evr
        claims.check(f"{fig}/one-component", f"{act}: EVR_1 of the final weights", e[:, 0], MD.ONE_COMPONENT,
                     source_value="PC1 dominates", valid=o[act].valid)
        # the spec's window [1e-12, 1e-4] for EVR_2 came from its own reference run, not from the thesis (which states no
        # size): it is shown in the note, not judged; the thesis's words are the check
        spec_window = C.within(1e-12, 1e-4)
        claims.check(f"{fig}/second-nonzero-as-stated", f"{act}: EVR_2 above float64 noise (the thesis: 'although small, is non-zero'; "
                     f"small: {fig}/one-component)", e[:, 1], MD.SECOND_NONZERO, source_value="'small, [but] non-zero'", valid=o[act].valid,
                     note=f"the spec's window {spec_window.text} (from its own reference run; the thesis states no size) "
                          f"{'holds' if spec_window(e[:, 1]) else 'does not hold'} here: not a claim of the thesis, not judged")
        claims.check(f"{fig}/zero-loss", f"{act}: the loss reaches {P.goal:g}", o[act].traj.loss[:, -1], MD.zero_loss(P.goal),
                     source_value="trained to zero loss", valid=o[act].valid)
        claims.check(f"{fig}/s-curve", f"{act}: the final neurons on the first two principal components lie on a two-{act} "
                     "curve after rotation (least-squares R^2 of the form of Sec. 3.1.4, as Fig3.18)", MD.scurve_r2(o[act], act),
                     MD.SCURVE, source_value="final neuron disposition: S-curve, as for unidimensional data",
                     valid=o[act].valid)
if "non-orthogonal" in P.sections:
    n = res["nonorth"]
    for act, fig in (("relu", "Fig3.37"), ("sigmoid", "Fig3.38"), ("tanh", "Fig3.39")):
        labels = [f"data seed {s}, std {v:.3f}" for s, v, _ in res["nonorth_data"][act]]
        claims.check(f"{fig}/spread", f"{act}, generated non-orthogonal data (every dataset): EVR_1 + EVR_2 of the runs that "
                     f"reached L < {P.goal:g} (nan: none did; an untrained network's weights spread too)",
                     MD.spread(n[act]), MD.SPREAD, source_value="variance spread over more components",
                     note="the data are the book's construction (seeded), not the thesis's; " + MD.spread_note(n[act], labels),
                     valid=n[act].valid)
if "orthogonal" in P.sections:
    allC4 = torch.cat([MD.two_components(o[a]) for a in MD.ACTS])
    claims.check("C4/two-neurons", "orthogonal data, every activation and seed: EVR_1 + EVR_2", allC4, MD.TWO_COMPONENTS,
                 source_value="two-neuron equivalence", valid=torch.cat([o[a].valid for a in MD.ACTS]));

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
display(Markdown(MD.findings(claims, res)))
