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
# # The PL lemmas, checked exactly
#
# **Source:** `004_ded8060f0425b0a2.txt`, Balboni's thesis {cite:p}`balboni2025thesis`, Chapter 4
# (Lemma 1, the Sec. 4.2 minibatch identity, the Sec. 4.3 Weyl step, (4.11), Lemma 3), Section 6.2
# (Lemma 11) and Appendix B (Lemma 22).
# **Targets:** Lemma1, Sec4.2-id, Sec4.3-Weyl, Eq4.11, Lemma3, Lemma11, Lemma22.
# **Computed by:** the functions of {py:mod}`shallowflow.experiments.balboni_thesis.pl_lemmas`.
#
# The statements (spec section 4):
#
# - **Lemma 1** ([KNS16]): for $f$ $\mu$-PL and $L$-smooth, gradient descent with step $1/L$ has
#   $f(x^{k+1})-f^*\le(1-\mu/L)(f(x^k)-f^*)$ (4.3) and stays within
#   $\|x^{k+1}-x^0\|\le\sqrt{2(f(x^0)-f^*)/L}/(1-\sqrt{\gamma})$ (4.4, with the spurious $1/L$ on the left
#   removed, spec erratum 1).
# - **Sec. 4.2**: $\mathbb E_I[\langle\nabla f,\nabla f_I\rangle]=\|\nabla f\|^2$ for uniformly drawn minibatches.
# - **Sec. 4.3** (Weyl): $|\lambda_{\min}(K_k)-\lambda_{\min}(K_0)|\le\|K_k-K_0\|_2$ for the tangent kernel along training.
# - **(4.11)**: $|\sigma_{\min}(A)-\sigma_{\min}(B)|\le\|A-B\|_{op}\le\|A-B\|_F$.
# - **Lemma 3** ([CP18]): under $\mu$-PL risk, the pointwise stability obeys
#   $\beta\le2\sqrt{\varepsilon_A}\sqrt{2G^2/\mu}+2G^2/((n-1)\mu)$ (4.12).
# - **Lemma 11** (the thesis's contribution): with step $1/L$, $f(x_k)-f^*\le(f(x_0)-f^*)\prod_{i<k}(1-\mu(x_i)/L)$
#   (6.5) with the local coefficient (6.2).
# - **Lemma 22** ([CR17]): on weakly-PL functions, $f(x_{k+1})-f^*\le\bigl(1-\mu(f(x_k)-f^*)/(2L\|x_k-x^*\|^2)\bigr)(f(x_k)-f^*)$ (B.27).

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
lemma1_steps = 3000  # GD steps on the PL example (the spec: 3000)
ls_steps = 2000  # GD steps on least squares (the spec: 2000)
matrix_trials = 1000  # random matrix pairs for (4.11)
ridge_datasets = 20  # resampled datasets for Lemma 3 (the spec: 20)
net_steps = 30  # GD steps of the network check of Lemma 11
net_width = 256  # width of its one-hidden-layer Tanh network (the spec: 256)
weyl_steps = 15  # GD steps along which the Weyl step is checked
seeds = [0, 1, 2]  # each draws a least-squares problem; the first seeds the single-draw problems

# %% tags=["remove-cell"]
import numpy as np
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config
from shallowflow.experiments.balboni_thesis import pl_lemmas as X
from shallowflow.params import validate

P = validate(globals(), X.SCHEMA, X.RULES)
claims = C.Claims(source="004", chapter="book/balboni-thesis/pl-lemmas", profile=P.profile)
print(config.describe(), f"; seeds {P.seeds} (the first seeds the single-draw problems)")

# %% [markdown]
# ## Lemma 1
#
# (a) The PL example of [KNS16], $f(x)=x^2+3\sin^2x$ ($\mu=1/32$, $L=8$, step $1/8$), from five starts in
# $[-100,100]$; (b) over-parameterised least squares $\frac12\|Ax-b\|^2$, $A$ of size $50\times200$,
# $\mu=\lambda_{\min}(AA^\top)$, $L=\lambda_{\max}(A^\top A)$, stopped where the residual reaches float64 round-off.

# %%
kns = X.kns_example(P)
ls = X.least_squares(P)
print(f"(a) worst f_(k+1)/f_k = {kns['worst_ratio']:.4f} against gamma = {kns['rate']:.6f}; "
      f"largest distance / bound = {kns['dist_over_bound']:.4f}")
print(f"(b) worst ratio - gamma = {ls['worst_ratio_minus_rate']:.3e}; distance / bound = {ls['dist_over_bound']:.4f}")
claims.check("Lemma1/rate-pl-example", "f_(k+1) / f_k <= 1 - mu/L (+1e-12) at every step, f = x^2 + 3 sin^2 x",
             kns["worst_ratio"] - kns["rate"], X.LEMMA1_RATE, source_value="(4.3), gamma = 1 - 1/256", valid=kns["finite"])
claims.check("Lemma1/radius-pl-example", "the iterates stay within the radius (4.4) (largest distance / bound)",
             kns["dist_over_bound"], X.LEMMA1_RADIUS, source_value="(4.4) without the spurious 1/L", valid=kns["finite"])
claims.check("Lemma1/rate-least-squares", "f_(k+1) / f_k <= 1 - mu/L on least squares (worst ratio - gamma)",
             ls["worst_ratio_minus_rate"], X.LEMMA1_RATE, source_value="(4.3)", valid=ls["finite"])
claims.check("Lemma1/radius-least-squares", "least squares: within the radius (4.4)", ls["dist_over_bound"],
             X.LEMMA1_RADIUS, source_value="(4.4)", valid=ls["finite"]);

# %% [markdown]
# ## Lemma 11 (local PL rate)

# %%
net = X.lemma11_network(P)
print(f"least squares: largest f_k / (f_0 prod(1 - mu_i/L)) - 1 = {ls['lemma11_excess']:.3e}")
print(f"network: {net['fraction']:.3f} of {P.net_steps} steps satisfy the one-step bound; loss ratio final/initial {net['final_over_initial']:.3g}")
claims.check("Lemma11/least-squares-exact", "f_k <= f_0 prod_i (1 - mu(x_i)/L) at every step on least squares (relative excess)",
             ls["lemma11_excess"], X.LEMMA11_EXACT, source_value="(6.5)", valid=ls["finite"])
claims.check("Lemma11/network-steps", "one-hidden-layer Tanh network, steps 1/L_k (HVP power iteration): "
             "f_(k+1) <= (1 - mu_k/L_k) f_k in >= 95% of steps", net["fraction"], X.LEMMA11_NETWORK_STEPS, source_value="(6.5), local", valid=net["finite"])
claims.check("Lemma11/network-trains", "and the loss decreases (final / initial < 1)", net["final_over_initial"], X.LEMMA11_NETWORK_TRAINS,
             source_value="convergence", valid=net["finite"]);

# %% [markdown]
# ## Sec. 4.2 identity, Sec. 4.3 Weyl step and (4.11)

# %%
mb = X.minibatch_identity(seed=P.seeds[0])
weyl = X.weyl_along_training(P)
pert = X.perturbation_411(P)
print(f"minibatch identity: relative error {mb:.2e} over all C(8, 3) minibatches")
print(f"Weyl along {P.weyl_steps} GD steps (tangent kernel by torch.func.jacrev, lambda_min(K_0) = {weyl['K0_lmin']:.3g}): "
      f"largest excess {weyl['excess']:.2e}")
print(f"(4.11) over {P.matrix_trials} pairs: largest excesses {pert['weyl_excess']:.2e}, {pert['fro_excess']:.2e}")
claims.check("Sec4.2-id/expectation", "E_I[<grad f, grad f_I>] = ||grad f||^2 over every minibatch (relative error)", mb,
             C.below(1e-12, strict=False), source_value="identity", valid=C.NO_TRAINING)
claims.check("Sec4.3-Weyl/along-training", "|lambda_min(K_k) - lambda_min(K_0)| - ||K_k - K_0||_2 <= 1e-10 along GD",
             weyl["excess"], C.below(1e-10, strict=False), source_value="Weyl", valid=weyl["finite"])
claims.check("Eq4.11/weyl", "|s_min(A) - s_min(B)| - ||A - B||_op <= 1e-12 on random pairs", pert["weyl_excess"],
             C.below(1e-12, strict=False), source_value="(4.11)", valid=C.NO_TRAINING)
claims.check("Eq4.11/op-below-frobenius", "||A - B||_op - ||A - B||_F <= 1e-12", pert["fro_excess"], C.below(1e-12, strict=False),
             source_value="(4.11)", valid=C.NO_TRAINING);

# %% [markdown]
# ## Lemma 3 on ridge regression, and Lemma 22

# %%
ridge = X.ridge_stability(P)
l22 = X.lemma22(P)
print(f"Lemma 3: measured leave-one-out stability / bound (4.12) at most {ridge['ratio']:.3f} over {P.ridge_datasets} datasets")
print(f"Lemma 22: largest (f_(k+1) - bound) / f_k = {l22['excess']:.3e}")
claims.check("Lemma3/ridge-stability", "leave-one-out pointwise stability <= (4.12) on ridge regression (largest ratio)",
             ridge["ratio"], C.below(1, strict=False), source_value="(4.12) with eps_A = 0", valid=C.NO_TRAINING)
gen = X.ridge_generalisation(P)
print(f"Lemma 3 (4.13): share of {gen['sets']} training sets whose gap |R_D - R_S| exceeds the bound (delta = "
      f"{gen['delta']}): {gen['share_over']:.3f}; largest gap / bound {gen['max_ratio']:.3f}")
claims.check("Lemma3/generalisation", f"(4.13) with delta = {gen['delta']}: share of ridge training sets (one fixed "
             "distribution) whose |R_D(w_S) - R_S(w_S)| exceeds sqrt((M^2 + 12 M n beta) / (2 n delta))",
             gen["share_over"], C.below(gen["delta"], strict=False), source_value="with probability >= 1 - delta",
             note=f"beta the measured leave-one-out stability, M the largest per-example loss drawn (the squared loss "
                  f"is unbounded); largest gap / bound {gen['max_ratio']:.3g} over {gen['sets']} sets",
             valid=C.NO_TRAINING)
claims.check("Lemma22/log-cosh", "(B.27) holds at every step on log cosh objectives (relative excess <= 1e-12)",
             l22["excess"], X.LEMMA22_BOUND, source_value="[CR17, Lemma 3]", valid=l22["finite"]);

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
display(Markdown("\n".join(f"- **{t}: {claims.target_verdict(t)}**" for t in
                           ("Lemma1", "Lemma11", "Sec4.2-id", "Sec4.3-Weyl", "Eq4.11", "Lemma3", "Lemma22"))))
