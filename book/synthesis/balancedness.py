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
# # Balancedness across the sources
#
# **Sources:** all five. 003 {cite:p}`boursier2022orthogonal`, 002, 001: Lemma 1; 000: Lemma 5 and Section 3.1.1 (iv);
# 004: no statement. **Computed by:** {py:func}`shallowflow.experiments.synthesis.balancedness.run_balancedness`.
#
# Three sources state the same lemma, and a fourth proves it: for a one-hidden-layer **ReLU** network
# $h_\theta(x) = \sum_j a_j\sigma(\langle w_j, x\rangle)$ trained by gradient flow, every neuron keeps
# $b_j = a_j^2 - \|w_j\|^2$ constant. The reason is one identity: along the flow
#
# $$ \frac{d}{dt}\big(a_j^2 - \|w_j\|^2\big) = -2\,a_j \sum_k \partial_h \ell_k\,
#    \big[\sigma(z_{jk}) - z_{jk}\,\sigma'(z_{jk})\big], \qquad z_{jk} = \langle w_j, x_k\rangle $$
#
# ({py:func}`shallowflow.engine.theory.balancedness_rate`), and $\sigma(z) = z\sigma'(z)$ holds for ReLU (and leaky ReLU), not for
# sigmoid ($\sigma - z\sigma' = \tfrac12 + z^3/24 + \dots$) or tanh ($\tfrac23 z^3 + \dots$). Gradient descent adds a
# drift of order $\eta^2$ per step, so of order $\eta$ over a fixed flow time (000's specification, check B1,
# derived). The 000 thesis measured sigmoid and tanh networks as well and read their deviations as numerical; that
# reading is judged on 000's own target (its check B2); this chapter tests the lemma itself and its failure off ReLU.
#
# **One experiment on every source's data.** For each source's dataset (table below) and each activation, the same
# balanced initialisation $w_j = \lambda g_j$, $a_j = s_j\|w_j\|$ is trained by the exact gradient flow (adaptive
# Dormand-Prince, relative tolerance `rtol` per neuron) and by gradient descent at every step size of `lrs` (seeds
# $\times$ step sizes as one ensemble), over the same flow time $T$. The drift is
# $\max_t \max_j |b_j(t) - b_j(0)|$ over the recorded states, relative to the largest $a_j^2 + \|w_j\|^2$ met. The
# exact ReLU flow is run where it is a classical ODE, on orthogonal inputs (003's data): on the other sources' data
# a neuron can slide along a data point's hyperplane, where the field jumps, and the ReLU flow is approached by
# gradient descent as $\eta \to 0$: a drift proportional to $\eta$ is a drift that vanishes along the flow.

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
sources = [0, 1, 2, 3, 4]  # the sources whose data are used (0 for 000, ..., 4 for 004)
width = 10  # m, hidden neurons
init_scale = 0.1  # lambda
lrs = [0.004, 0.01]  # gradient-descent step sizes
time = 40.0  # flow time T over which the drift is measured
seeds = [0, 1, 2]  # one run per seed and step size
rtol = 1e-10  # relative tolerance per neuron of the exact flow
snapshots = 1601  # states recorded along the exact flow (the drift law needs a fine grid)

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, metrics
from shallowflow.site import plots
from shallowflow.experiments.synthesis import balancedness as ex
from shallowflow.experiments.synthesis.sources import data_rows, html_table
from shallowflow.params import validate

P = validate(globals(), ex.SCHEMA, ex.RULES)
plots.setup()
claims = C.Claims(source="syn", chapter="book/synthesis/balancedness", profile=P.profile)

# %% [markdown]
# ## The data

# %% tags=["remove-input"]
display(HTML(html_table(data_rows(P.sources))))

# %% [markdown]
# ## Training

# %%
run = ex.run_balancedness(P)
print(config.describe())
print(f"{len(run.sources)} datasets x 3 activations, each: {len(P.seeds)} exact flows and {len(P.seeds) * len(run.lrs)} "
      f"gradient-descent runs over flow time {P.time:g}, in {run.seconds:.1f} s")

# %% [markdown]
# ## The drift, against step size and activation
#
# Relative drift of $a_j^2 - \|w_j\|^2$ over $[0, T]$ (median over seeds); *flow* is the exact flow, the other
# columns gradient descent; the ratio column is the drift at the largest step over the drift at the smallest.
# A drift proportional to the step gives the ratio of the steps, a drift that belongs to the flow gives 1.

# %% tags=["remove-input"]
display(HTML(html_table(ex.table(run), digits=3)))

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
xs = np.arange(len(run.sources))
for ax, act in zip(axes, ex.ACTIVATIONS):
    for i, lr in enumerate(run.lrs):
        ax.plot(xs, [float(run.gd[k, act][i].median()) for k in run.sources], "o-", label=f"GD step {lr:g}")
    fl = [float(run.flow[k, act].median()) if (k, act) in run.flow else math.nan for k in run.sources]
    ax.plot(xs, fl, "k*", ms=11, label="exact flow")
    if act == "relu" and len(run.lrs) > 1:
        i0 = int(np.argmin(run.lrs))
        others = [i for i in range(len(run.lrs)) if i != i0]
        for i in others:
            ax.plot(xs, [float(run.gd[k, act][i0].median()) * run.lrs[i] / run.lrs[i0] for k in run.sources], "--",
                    color=f"C{i}", lw=0.8,
                    label="sources' prediction (Lemma 1): drift ~ step" if i == others[0] else None)
    ax.set_yscale("log")
    ax.set_xticks(xs, run.sources)
    ax.set_xlabel("source whose data are trained on")
    ax.set_title(act)
axes[0].set_ylabel("relative drift of $a_j^2 - \\|w_j\\|^2$")
axes[0].legend(fontsize=8)
fig.suptitle(f"data: each source's dataset (table above); m = {P.width}, lambda = {P.init_scale:g}, T = {P.time:g}",
             fontsize=9)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Checks
#
# Criteria fixed in advance: a drift of first order in the step makes the ratio of drifts equal the ratio of steps,
# so their quotient is within $[0.8, 1.25]$ (000's specification, B2's band); a drift that belongs to the flow
# makes gradient descent at a small step drift as much as the exact flow (their quotient in the same band); an exact flow *conserves* a quantity when its drift stays below
# $100 \times$ `rtol`, and *moves* it when the drift is above $10^{-4}$ (a hundred times the largest conserved
# drift the default tolerance allows); the measured drift *is* the source term's integral when they agree to 1%.

# %% tags=["remove-cell"]
ratio_of_steps = run.lrs[-1] / run.lrs[0] if len(run.lrs) > 1 else math.nan
keys = run.sources


def gd_values(act, f):
    """f applied per source, concatenated over sources, with the validity of both step sizes per seed."""
    vals = np.concatenate([np.asarray(f(k)).reshape(-1) for k in keys])
    ok = np.concatenate([run.gd_ok[k, act].all(0).numpy() for k in keys])
    return vals, ok


conserved = ex.conserved(P.rtol)
moves = ex.MOVES
first_order = ex.FIRST_ORDER
criteria = {}

# %%
if len(run.lrs) > 1:
    v, ok = gd_values("relu", lambda k: ex.step_ratio(run, k, "relu") / ratio_of_steps)
    claims.check("Balance/relu-gd-first-order", "ReLU: the drift under GD is of first order in the step, so it "
                 "vanishes along the flow: (drift ratio) / (step ratio), every source's data and seed", v, first_order,
                 source_value="constant along the flow (001, 002, 003 Lemma 1; 000 Lemma 5)", valid=ok)
    criteria["relu-ratio"] = ("Balance/relu-gd-first-order", first_order)
    sv, sok = [], []
    for act in ("sigmoid", "tanh"):
        for k in run.flows(act):
            sv.append((run.gd[k, act][0] / run.flow[k, act]).numpy())
            sok.append((run.gd_ok[k, act][0] & run.flow_ok[k, act]).numpy())
    if sv:
        claims.check("Balance/smooth-gd-matches-flow", "sigmoid and tanh: gradient descent at the smallest step drifts as "
                     "much as the exact flow (GD drift / flow drift), every source's data and seed", np.concatenate(sv),
                     first_order, source_value="O(1) drift even for the flow (000 spec, B2)", valid=np.concatenate(sok))
        criteria["smooth-ratio"] = ("Balance/smooth-gd-matches-flow", first_order)
if run.flows("relu"):
    ks = run.flows("relu")
    claims.check("Balance/relu-flow-conserved", f"ReLU, exact flow on orthogonal inputs (data of {', '.join(ks)}): "
                 "relative drift of a_j^2 - ||w_j||^2", np.concatenate([run.flow[k, "relu"].numpy() for k in ks]),
                 conserved, source_value="constant (003 Lemma 1)",
                 valid=np.concatenate([run.flow_ok[k, "relu"].numpy() for k in ks]))
    criteria["relu-flow"] = ("Balance/relu-flow-conserved", conserved)
for act in ("sigmoid", "tanh"):
    ks = run.flows(act)
    if ks:
        claims.check(f"Balance/{act}-flow-drifts", f"{act}, exact flow: relative drift of a_j^2 - ||w_j||^2, every "
                     "source's data and seed", np.concatenate([run.flow[k, act].numpy() for k in ks]), moves,
                     source_value="not conserved: sigma(z) - z sigma'(z) != 0 (000 spec, B2)",
                     valid=np.concatenate([run.flow_ok[k, act].numpy() for k in ks]))
        criteria[f"{act}-flow-drifts"] = (f"Balance/{act}-flow-drifts", moves)
smooth = [(k, a) for a in ("sigmoid", "tanh") for k in run.flows(a)]
if smooth:
    ok_s = np.concatenate([run.flow_ok[k, a].numpy() for k, a in smooth])
    claims.check("Balance/drift-law", "sigmoid and tanh, exact flow: the drift is the integral of "
                 "-2 a_j sum_k dl_k [sigma(z_jk) - z_jk sigma'(z_jk)] (largest gap over largest drift, Simpson's rule)",
                 np.concatenate([run.law[k, a].numpy() for k, a in smooth]), ex.DRIFT_LAW,
                 source_value="d/dt (a_j^2 - ||w_j||^2) (000 spec, B2, derived)", valid=ok_s)

# %% [markdown]
# ### Verdicts

# %% tags=["nbval-check-output"]
print(claims.report())

# %% tags=["remove-input"]
display(HTML(claims._repr_html_()))
claims.finish();

# %% [markdown]
# ## What each source says, what the book measures
#
# Each row is one source's statement; the measurement is on that source's own data (median over seeds), and the
# last column applies the check's criterion to those data alone.

# %% tags=["remove-input"]
display(HTML(html_table(ex.source_rows(run, criteria))))

# %% [markdown]
# ## What we find

# %% tags=["remove-input"]
lines = []
if "Balance/relu-gd-first-order" in {c.id for c in claims.checks}:
    lines.append("For ReLU, gradient descent's drift " + (
        f"is proportional to the step on the data of {', '.join(run.sources)}, so it vanishes along the flow: the lemma "
        "of 001, 002, 003 and 000 holds on each of these datasets, not only on the orthogonal inputs of 003."
        if claims.passed("Balance/relu-gd-first-order") else
        "is not proportional to the step on every source's data (see the check)."))
if smooth:
    both = all(claims.passed(f"Balance/{a}-flow-drifts") for a in ("sigmoid", "tanh") if run.flows(a))
    lines.append("For sigmoid and tanh the exact flow " + (
        "moves a_j^2 - ||w_j||^2 on every source's data" if both else "does not move a_j^2 - ||w_j||^2 everywhere")
        + (", by exactly the integral of the source term sigma(z) - z sigma'(z)" if claims.passed("Balance/drift-law")
           else "") + ".")
    lines.append("The exact flow has no step and no rounding beyond its tolerance, so a drift it shows is the "
                 "activation's own; 000's reading of its sigmoid and tanh deviations as numerical error or the finite step "
                 "is judged on 000's own target, check B2 of the Brisbois thesis chapter on balancedness, with "
                 "measurements independent of these.")
lines.append(f"This execution took {run.seconds:.1f} s of training ({P.profile} profile; the synthesis part's "
             "budget on the 2-core CI machine is 90 s for all its chapters at book scale and 10 s per chapter at smoke scale).")
display(Markdown(" ".join(lines)))
