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
# # Initialisation: the well-initialisation event, Assumption 1 and the kink (Lemma 5, Prop. 3, App. C.2)
#
# **Source:** `001_429d00d8b34a8574.txt` {cite:p}`dana2025weakly`, Section 3 (Lemma 5 and the remark after
# it), Appendix A (proof of Lemma 5), Appendix C.1 (Proposition 3), Appendix C.2.
# **Targets:** Lemma5, Lemma5-iff, Prop3, C.2. (Gradient descent against the library's Dormand-Prince flow is
# studied where the flow crosses no kink: the chapter on phase transitions, check Fig2/gd-order.)
# **Computed by:** {py:func}`shallowflow.experiments.weakly_interacting.initialisation.run_lemma5` and the other
# functions of {py:mod}`shallowflow.experiments.weakly_interacting.initialisation`.
#
# **Lemma 5.** With $\mathcal I=\{\forall i\ \exists j:\ \langle w_j(0)|x_i\rangle>0,\ a_j(0)y_i>0\}$: if
# $p\ge4\log(n/\varepsilon)$ then $P(\mathcal I)\ge1-\varepsilon$ (the proof: $P(\mathcal I)\ge1-n(3/4)^p$), and
# if $p\le3\log(n/\varepsilon)-2$ then $P(\mathcal I)\le1-\varepsilon$. For orthogonal inputs and rotation-invariant
# $w$ the events are independent across examples and [derived in the spec]
# $P(\mathcal I)=\sum_k\binom pk2^{-p}(1-2^{-k})^{n_+}(1-2^{-(p-k)})^{n_-}$. The spec finds the necessity proof
# wrong (an inequality that goes the other way, and independence across $i$ that only orthogonal data
# have): with $n$ identical inputs and positive labels $P(\mathcal I)=1-(3/4)^p$.
#
# **The "iff" remark**: on orthogonal data "the residual $r_i$ goes to zero if and only if a neuron gets
# initialized as $a_jy_i>0$ and $\langle w_j|x_i\rangle>0$ for each $i$".

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
lemma5_ns = [10, 100, 1000, 10000, 1000000]  # Lemma 5: dataset sizes
lemma5_eps = [0.01, 0.05, 0.1, 0.5]  # Lemma 5: failure probabilities
mc_ns = [10, 100, 1000]  # Monte Carlo dataset sizes
mc_draws = 5000  # Monte Carlo draws per (n, p)
iff_n = 200  # iff claim: n
iff_p = 18  # iff claim: width
iff_seeds = [3000, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008, 3009, 3010, 3011, 3012, 3013, 3014, 3015, 3016, 3017, 3018, 3019, 3020, 3021, 3022, 3023, 3024, 3025, 3026, 3027, 3028, 3029, 3030, 3031, 3032, 3033, 3034, 3035, 3036, 3037, 3038, 3039]  # iff claim: the runs' seeds
iff_horizon = 10.0  # iff claim: horizon in units of t_n
prop3_lr = 1e-3  # Prop. 3: GD step
prop3_time = 400.0  # Prop. 3: flow time

# %% tags=["remove-cell"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config
from shallowflow.site import plots
from shallowflow.experiments.weakly_interacting import initialisation as IN
from shallowflow.params import validate

P = validate(globals(), IN.SCHEMA, IN.RULES)
plots.setup()
claims = C.Claims(source="001", chapter="book/weakly-interacting/initialisation", profile=P.profile)
print(config.describe())

# %% [markdown]
# ## Lemma 5: exact probabilities and Monte Carlo

# %%
l5 = IN.run_lemma5(P)
for r in l5:
    print(f"n = {r['n']:8d}, eps = {r['eps']:.2f}: p_nec = {r['p']['nec']:3d} -> P(I) = {r['P']['nec']:.4f}; authors' p = "
          f"{r['p']['code']:3d} -> {r['P']['code']:.4f}; p_suf = {r['p']['suf']:3d} -> {r['P']['suf']:.4f} (proof's bound "
          f"{r['bound']:.4f}); identical inputs at p_nec: {r['identical']:.4f}")
mc = IN.run_mc(P)
for r in mc:
    print(f"MC n = {r['n']}, p = {r['p']} ({r['key']}): {r['mc']:.4f} against exact {r['exact']:.4f} ({r['z']:.2f} standard errors)")

# %% tags=["hide-input"]
fig, ax = plt.subplots(figsize=(6.5, 3.6))
for i, eps in enumerate(P.lemma5_eps):
    sel = [r for r in l5 if r["eps"] == eps]
    ax.semilogx([r["n"] for r in sel], [r["P"]["nec"] for r in sel], "o--", color=f"C{i}", label=f"eps {eps:g}: p = 3 log(n/eps) - 2")
    ax.semilogx([r["n"] for r in sel], [r["P"]["suf"] for r in sel], "s-", color=f"C{i}", label=f"eps {eps:g}: p = 4 log(n/eps)")
    ax.axhline(IN.SOURCE_LEMMA5_LEVEL(eps), color=f"C{i}", lw=0.8, ls=":", label=f"paper, Lemma 5: level 1 - eps = {IN.SOURCE_LEMMA5_LEVEL(eps):g}")
ax.set(xlabel="n", ylabel="P(I), orthogonal data", title="Data: n orthogonal inputs (exact probabilities, any d >= n)")
ax.legend(fontsize=6, ncol=2)
plt.show()

# %% [markdown]
# ## Orthogonal data: the residuals vanish iff $\mathcal I$ holds
#
# App-B initialisation with a width at which $P(\mathcal I)$ is near $1/2$, trained for `iff_horizon` $t_n$
# (lr 1). *Fitted* means $\max_i|r_i|/|y_i|<10^{-3}$.

# %%
iff = IN.run_iff(P)
print(f"seeds {iff['seeds']}")
print(f"n = {iff['n']}, p = {iff['p']}: exact P(I) = {iff['predicted']:.3f}; event I in {int(iff['event'].sum())} of "
      f"{len(iff['event'])} runs; fitted {int(iff['fitted'].sum())}; agreement {int((iff['event'] == iff['fitted']).sum())}")
bad = ~iff["event"]
if bad.any():
    print(f"runs without I: final L in [{float(iff['L'][bad].min()):.2e}, {float(iff['L'][bad].max()):.2e}], "
          f"unfit points (|r_i| > |y_i|/2) per run: {iff['unfit'][bad].tolist()}")

# %% [markdown]
# ## Proposition 3 (App. C.1): without Assumption 1 the second layer can collapse
#
# $d=n=p=2$, $x_i=e_i$, $y=(20,-10)$, $w_1(0)=(0.10,0.10)$, $w_2(0)=(0.11,0.09)$, $a(0)=(10^{-3},-10^{-3})$
# (the spec's instance; eq. (89) holds), trained by GD with step $10^{-3}$ to $T=400$; the control uses the
# same $w$ with $|a_j(0)|=\|w_j(0)\|+0.5$. The proof predicts $L\to y_2^2/4=25$ with both $a_j>0$.

# %%
p3 = IN.run_prop3(P)
print(f"condition (89): {p3['condition'][0]:.3f} <= {p3['condition'][1]} <= {p3['condition'][2]:.3f}")
print(f"violating run: L = {float(p3['L'][0]):.8f}, a = {p3['a'][0].tolist()}, <w_j, x_2> = {p3['Zx2'][0].tolist()}")
print(f"control: L = {float(p3['L'][1]):.3e}")

# %% [markdown]
# ## App. C.2: the kink convention
#
# A pair sits at $\langle w_1|x_1\rangle=0$ with $a_1r_1>0$. The paper selects the trajectory on which it does
# not reactivate, "the small-step GD limit".

# %%
kink = IN.run_kink()
print(f"a_1 r_1 = {kink['a_r']:.3f} > 0; with sigma'(0) = 0 (library, torch) max |<w_1, x_1>| over 200 steps = "
      f"{kink['max_zero_path']:.1e}; with sigma'(0) = 1 it regrows to {kink['regrown']:.4f}")

# %% [markdown]
# ## Checks

# %%
claims.check("Lemma5/exact-vs-mc", "the exact P(I) formula agrees with Monte Carlo (largest deviation in standard errors)",
             max(r["z"] for r in mc), IN.EXACT_VS_MC, source_value="[derived] exact formula", valid=C.NO_TRAINING)
claims.check("Lemma5/sufficient", "p >= 4 log(n/eps) gives P(I) >= 1 - eps (margin P - (1 - eps), whole grid)",
             [r["P"]["suf"] - (1 - r["eps"]) for r in l5], IN.MARGIN, source_value=">= 1 - eps", valid=C.NO_TRAINING)
claims.check("Lemma5/sufficient-code", "the authors' p = floor(log(n/eps)/log(4/3)) + 1 gives P(I) >= 1 - eps (margin)",
             [r["P"]["code"] - (1 - r["eps"]) for r in l5], IN.MARGIN, source_value=">= 1 - eps", valid=C.NO_TRAINING)
# The proof's union bound (17), P(I) >= 1 - n (3/4)^p (001:532), is shown, not checked: it holds for every n and p
# (each example misses every neuron with probability (3/4)^p), so the exact P(I) cannot fall below it
# (tests/test_controls_h13.py); the lemma's sufficiency is decided by Lemma5/sufficient and sufficient-code.
_gaps = [r["P"]["suf"] - r["bound"] for r in l5]
print(f"P(I) - (1 - n (3/4)^p) at p = 4 log(n/eps), the proof's union bound (17): {C.fmt(min(_gaps))} .. "
      f"{C.fmt(max(_gaps))} over {len(_gaps)} grid points (n, eps)")
claims.check("Lemma5/necessary-orthogonal", "p <= 3 log(n/eps) - 2 gives P(I) <= 1 - eps on orthogonal data (margin (1 - eps) - P)",
             [(1 - r["eps"]) - r["P"]["nec"] for r in l5], C.above(0.0), source_value="<= 1 - eps",
             valid=C.NO_TRAINING)
claims.check("Lemma5/necessary-general", "the same for any data: identical inputs with positive labels, P(I) = 1 - (3/4)^p "
             "(margin (1 - eps) - P)", [(1 - r["eps"]) - r["identical"] for r in l5], C.above(0.0), source_value="<= 1 - eps",
             valid=C.NO_TRAINING, note="the spec's counterexample to the necessity half for correlated data")
# the proof's last steps, eq. (18): (1 - 2^-p)^n <= (1 - 4 (eps/n)^(3 log 2))^n <= (1 - 4 eps/n)^n; as 3 log 2 > 1,
# (eps/n)^(3 log 2) < eps/n and the second step runs the other way: its log ratio, left over right, is positive
step = [r["n"] * (math.log1p(-4 * (r["eps"] / r["n"]) ** (3 * math.log(2))) - math.log1p(-4 * r["eps"] / r["n"])) for r in l5]
claims.check("Lemma5/proof-step", "the proof's step (1 - 4(eps/n)^(3 log 2))^n <= (1 - 4 eps/n)^n (eq. (18)) runs the other way: "
             "log of left over right, every (n, eps) of the grid (positive: the printed inequality is false)", step,
             C.above(0.0, strict=True), source_value="<= (eq. (18))", valid=C.NO_TRAINING)
ident = [r for r in mc if r["key"] == "identical"]
# Assumption 2, eq. (4): ||X^T X - D_X|| < (C_x^-)^2 / (2 sqrt(n)) C_y^- / C_y^+; for n identical unit inputs with
# labels 1, X^T X - D_X = J - I: its norm over the bound, per n of the Monte Carlo grid (above 1: outside Assumption 2)
a2 = [float(np.linalg.norm(np.ones((r["n"], r["n"])) - np.eye(r["n"]), 2) / (1.0 / (2 * math.sqrt(r["n"])))) for r in ident]
claims.check("Lemma5/counterexample-outside-A2", "the identical-inputs counterexample violates Assumption 2: ||X^T X - D_X|| over "
             "eq. (4)'s bound, every n of the Monte Carlo grid", a2, C.above(1.0, strict=True),
             source_value="Assumption 2 (the data of Theorem 1)", valid=C.NO_TRAINING)
claims.check("Lemma5/counterexample", "identical inputs, positive labels, p = floor(3 log(n/eps) - 2), eps = 0.05: the Monte "
             "Carlo P(I) exceeds 1 - eps (margin P - (1 - eps), every n of the Monte Carlo grid)",
             [r["mc"] - 0.95 for r in ident], IN.EXCEEDS, source_value="P(I) <= 1 - eps (Lemma 5, any data)", valid=C.NO_TRAINING,
             note="Monte Carlo with App-B initialisations, independent of the formula 1 - (3/4)^p: "
                  + ", ".join(f"n = {r['n']}, p = {r['p']}: {r['mc']:.4f}" for r in ident))
agree = (iff["event"] == iff["fitted"]).double()
claims.check("Lemma5-iff/agreement", "orthogonal data: residuals vanish iff I holds (fraction of runs that agree)",
             float(agree.mean()), C.close_to(1.0, atol=1e-12), source_value="iff", valid=iff["finite"])
claims.check("Lemma5-iff/both-cases", "both cases occur (runs with I, runs without)",
             bool(iff["event"].any() and (~iff["event"]).any()), IN.IFF_BOTH_CASES, source_value="P(I) near 1/2",
             valid=C.NO_TRAINING)
claims.check("Prop3/collapse", "without Assumption 1 the loss stays at y_2^2/4 = 25", abs(float(p3["L"][0]) - 25.0),
             IN.PROP3_COLLAPSE, source_value="L >= y_2^2/4", valid=p3["finite"][:1])
claims.check("Prop3/signs", "both a_j > 0 and <w_j, x_2> <= 0 at the end",
             bool((p3["a"][0] > 0).all() and (p3["Zx2"][0] <= 0).all()), IN.PROP3_SIGNS, source_value="collapse of the second layer",
             valid=p3["finite"][:1])
claims.check("Prop3/control", "the same w with Assumption 1 reaches L < 1e-20", float(p3["L"][1]), IN.PROP3_CONVERGES,
             source_value="converges", valid=p3["finite"][1:])
claims.check("C.2/no-reactivation", "sigma'(0) = 0: a neuron at the kink with a_j r_i > 0 stays there (max |<w, x>|)",
             kink["max_zero_path"], IN.NO_REACTIVATION, source_value="no reactivation",
             valid=kink["finite_zero"])
claims.check("C.2/regrows", "sigma'(0) = 1: the same neuron regrows (<w, x> after 200 steps)", kink["regrown"], IN.REGROWS,
             source_value="other trajectories exist", valid=kink["finite_one"])

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
display(Markdown(IN.findings(claims, iff, p3)))
