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
# # The PL analysis and the quoted optimisation results
#
# **Source:** Brisbois, master's thesis {cite:p}`brisbois2024thesis` (`000_5bec2764affd87f0.txt`), Chapter 1 (Props 1-2,
# Theorems 1-2), Chapter 2 (Props 3-4, Theorem 3, Corollary 4, Chizat et al.'s criterion) and Chapter 4 (Definition 5,
# Theorem 7, Lemma 8, the non-PL result, Fig. 4.1).
# **Targets:** Fig 4.1, PL-rate, PL1, PL2, PL3, T2, Thm7, Lemma8, Prop1, Prop2, Thm1, Thm2, Prop3, Prop4, Thm3, Cor4,
# Chizat-kappa. **Computed by:** {py:mod}`shallowflow.experiments.brisbois_thesis.pl_analysis`.
#
# A function is $\mu$-PL if $F(\theta)-\inf F\le\frac1{2\mu}\|\nabla F(\theta)\|^2$ (Definition 5); then every stationary
# point is a global minimiser (Lemma 8) and GD converges linearly. Theorem 7 (from Liu, Zhu and Belkin): for
# $F=\frac1{2n}\|h(\theta)-y\|^2$, $\lambda_{\min}(J_rJ_r^\top)\ge\mu$ everywhere implies PL. The thesis's own result: the
# square loss of $h_\theta(x)=\sum_ja_j\sigma(w_j^\top x)$ is **not** PL on $\mathbb R^D$: at $\theta=0$ the gradient vanishes
# (ReLU, Tanh; Sigmoid when $\sum_ky_k=0$) while $L(0)>0$; for Tanh $\theta=0$ is a saddle; for Sigmoid $\lambda_{\min}(JJ^\top)=0$
# at $\theta=0$ (the Sylvester argument of its Theorem 9).
#
# **Errata checked here** (the spec, section 4): the displayed chain of Theorem 7 drops the $1/n$ factors
# (correctly $\|\nabla F\|^2\ge\frac{2\lambda_{\min}}nF$, a PL constant $\lambda_{\min}/n$); Proposition 2 as transcribed calls a
# point with $\nabla F=0$ and $\nabla^2F\succeq0$ a local minimum (false: $\theta^3$ at 0).
#
# :::{admonition} Which loss?
# :class: note
# Formulas: the $\frac1{2n}$ loss of Chapter 4. The GD runs (PL1, T2) train on the MSE $\frac1n\|r\|^2$ of the experiments and
# evaluate the $\frac1{2n}$ quantities on their iterates; the spec's T2 rate $\alpha\frac8n\min_k|y_k|\|x_k\|$ is the MSE's.
# Oymak and Soltanolkotabi's Theorem 3 is stated for $\frac12\|h(\theta)-y\|^2$, which its run uses.
# :::

# %% tags=["parameters"]
profile = "book"  # which registry verdicts to compare against: book, smoke, paper or custom
width = 60  # m
lr = 1e-3  # GD step on the MSE (PL1, T2)
steps = 40_000  # epochs of the PL1/T2 runs
pl_scales = [1e-6, 1.0]  # rich and lazy lambda (PL1)
every = 100  # epochs between PL1 evaluations
lazy_steps = 2000  # GD steps of the Oymak-Soltanolkotabi run (Tanh, lambda 1)
kappa_scales = [1e-3, 1e-2, 1e-1, 0.3, 1.0, 3.0, 10.0]  # Chizat et al.'s kappa at initialisation
samples = 256  # random points for Props 3-4
widths = [1, 10, 60]  # PL3

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from shallowflow import verdicts as C
from shallowflow.engine import config, data as datasets, metrics
from shallowflow.site import plots
from shallowflow.experiments.brisbois_thesis import pl_analysis as PL
from shallowflow.experiments.brisbois_thesis import theory as T
from shallowflow.params import validate

P = validate(globals(), PL.SCHEMA)
plots.setup()
claims = C.Claims(source="000", chapter="book/brisbois-thesis/pl-analysis", profile=P.profile)
print(config.describe())
data = datasets.get("brisbois-orthogonal", device="cpu")

# %% [markdown]
# ## Fig. 4.1: $F(\theta)=\theta^2+3\sin^2\theta$, and the PL rate
#
# Data: none; $F$ is a function of one variable (the thesis's example).

# %% tags=["hide-input"]
ex = PL.pl_example()
rate = PL.pl_rate()
t = np.linspace(-10, 10, 2001)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
axes[0].plot(t, T.pl_function(t)[0])
axes[0].set_title("Fig. 4.1: F(theta) = theta^2 + 3 sin^2 theta")
for t0, curve in rate["curves"].items():
    axes[1].semilogy(np.maximum(curve, 1e-300), label=f"GD from {t0:g}")
axes[1].semilogy((1 - rate["mu"] / rate["beta"]) ** np.arange(501) * T.pl_function(-10.0)[0], "k--", label="(1 - mu/beta)^t F(-10)")
axes[1].set_ylim(1e-30, 1e3)
axes[1].legend(fontsize=7)
fig.tight_layout()
plt.show()
print(f"mu = min F'^2/(2F) = {ex['mu']:.6f} at theta = {ex['argmin']:.4f}; min F'' = {ex['min_d2']:.6f}; beta = max F'' = {ex['beta']:.6f}")
print(f"stationary points on [-50, 50] (sign changes of F'): {np.round(ex['stationary'], 5).tolist()}, F there {ex['stationary_values'].tolist()}")
print(f"GD with alpha = 1/beta: largest F(theta^t) / ((1 - mu/beta)^t F(theta^0)) = {rate['ratio']:.6f}; "
      f"Theorem 2's bound used at most {rate['thm2_ratio']:.3f} of its value")

# %% [markdown]
# ## PL2 and PL3: the loss at $\theta = 0$ (Dataset 1.1.0, $m = 3$; Sigmoid also on Dataset 1.1.2, $\sum_ky_k=2$)

# %%
z = {act: PL.at_zero(data, act, 3) for act in T.ACTIVATIONS}
for act, v in z.items():
    print(f"{act:8s}: ||grad L(0)|| = {v['grad']:.3g}, L(0) = {v['loss']:.3g}, eig Hess L(0) = {np.round(v['eig'], 6).tolist()}")
pred = T.tanh_zero_spectrum(data, 3)
print("Tanh spectrum predicted +-||v||, ||v|| =", float(T.key_vectors(data)[2].norm()), ":", pred.tolist())
d112 = datasets.get("brisbois-orthogonal", variant="1.1.2", device="cpu")
z112 = PL.at_zero(d112, "sigmoid", 3)
print(f"Sigmoid on Dataset 1.1.2: ||grad L(0)|| = {z112['grad']:.6f} (sqrt(m) sigma(0) |sum y| / n = {np.sqrt(3) * 0.5 * 2 / 2:.6f})")
lam3 = {}
for m in P.widths:
    lo, hi = PL.jjt_min(torch.zeros(1, 3 * m, dtype=torch.float64), data, "sigmoid", m)
    lam3[m] = (float(lo), float(hi))
print("Sigmoid lambda_min, lambda_max of J(0) J(0)^T per width:", lam3)

# %% [markdown]
# ## PL1 and Theorem 7: the local PL ratio along GD
#
# Data: Dataset 1.1.0 of the thesis (2 points).
#
# $\mu_t = \|\nabla L(\theta^t)\|^2/(2L(\theta^t))$ against $\nu_t = \lambda_{\min}(JJ^\top)(\theta^t)/n$; Theorem 7 (corrected)
# says $\mu_t\ge\nu_t$ at every point; its printed chain says $\mu_t\ge\lambda_{\min}$.

# %% tags=["hide-input"]
pl = PL.run_pl1(P)
fig, axes = plt.subplots(1, 3, figsize=(14, 3.3))
for ax, act in zip(axes, T.ACTIVATIONS):
    v = pl[act]
    for r, mt in enumerate(v["ens"].meta):
        ax.semilogy(v["steps"], np.maximum(v["mu"][:, r], 1e-30), label=f"mu_t, lambda {mt['scale']:g}")
        ax.semilogy(v["steps"], np.maximum(v["nu"][:, r], 1e-30), "--", label=f"nu_t, lambda {mt['scale']:g}")
    ax.set_title(f"PL1: {act}")
    ax.set_xlabel("epoch")
    ax.legend(fontsize=6)
fig.tight_layout()
plt.show()
gap, printed, mins, rates = {}, {}, {}, {}
for act in T.ACTIVATIONS:
    v = pl[act]
    lmax = np.max(np.abs(v["lmin"]))  # scale for the eigenvalue accuracy
    fin = np.isfinite(v["mu"]) & (v["loss"] > 0)
    gap[act] = PL.inequality_gap(v)
    printed[act] = float(np.min((v["mu"] / np.where(v["lmin"] > 0, v["lmin"], np.nan))[fin & (v["lmin"] > 0)]))
    mins.update({(act, lam): x for lam, x in PL.min_mu(v).items()})
    r_rich = v["ens"].runs(scale=min(P.pl_scales))[0]
    rates[act] = PL.final_rate(v["ens"].traj.loss[r_rich].numpy())
    print(f"{act:8s}: min (mu_t - nu_t) / max nu = {gap[act]:.2e}; min mu_t / lambda_min = {printed[act]:.6f}; "
          f"min mu_t: {[f'lambda {k[1]:g}: {x:.3e}' for k, x in mins.items() if k[0] == act]}; final-phase rate {rates[act]:.4e} per epoch")
print(f"T2 prediction (ReLU, MSE): alpha 8/n min |y_k| ||x_k|| = {T.final_rate(data, P.lr):.4e}")

# %% [markdown]
# ## Theorem 3 and Corollary 4 (Oymak and Soltanolkotabi) in the lazy regime
#
# Tanh, $m=60$, $\lambda = 1$, GD with step $\alpha$ on $\frac12\|h(\theta)-y\|^2$, every iterate kept; $a$ and $b$ are the
# smallest and largest singular values of $J_h$ along the path. Checked: (2.33) $\|r_t\|^2\le(1-\alpha a^2/2)^t\|r_0\|^2$,
# (2.34) $\frac a4\|\theta^t-\theta^0\|+\|r_t\|\le\|r_0\|$, (2.35) path length $\le4\|r_0\|/a$, (2.36) $\|\theta^t-\theta^0\|\le\frac{4b}a\|\theta^*-\theta^0\|$.
# The same run at $\lambda = 10^{-6}$ shows why the theorem says nothing in the rich regime ($a\approx0$ near the saddle).

# %%
oy = PL.oymak_run("tanh", 1.0, P.width, P.lazy_steps, P.lr)
oy_rich = PL.oymak_run("tanh", 1e-6, P.width, P.lazy_steps, P.lr)
tol = 1 + 1e-12
c233 = float(np.max(oy["r"][1:] ** 2 / oy["rate_bound"][1:]))  # t >= 1 (t = 0 is an equality)
c234 = float(np.max(((oy["a"] / 4) * oy["dist"][1:] + oy["r"][1:]) / oy["r"][0]))
c235 = oy["length"] / (4 * oy["r"][0] / oy["a"])
c236 = float(np.max(oy["dist"]) / (4 * oy["b"] / oy["a"] * oy["dist"][-1]))
print(f"lazy: a = {oy['a']:.4f}, b = {oy['b']:.4f}, final ||r|| = {oy['r'][-1]:.2e}; (2.33) uses {c233:.3f} of its bound, "
      f"(2.34) {c234:.3f}, (2.35) {c235:.3f}, (2.36) {c236:.3f}; rich lambda 1e-6: a = {oy_rich['a']:.2e} (bound 4||r0||/a = {4 * oy_rich['r'][0] / oy_rich['a']:.2e})")

# %% [markdown]
# ## Propositions 1-4, Theorems 1-2 and Chizat et al.'s criterion, on the network

# %%
# Prop. 1 at a local minimum found by GD (Tanh, lambda 1e-6, the PL1 run's end): gradient ~ 0, Hessian PSD
e = pl["tanh"]["ens"]
r = e.runs(scale=min(P.pl_scales))[0]
th_star = e.traj.final.select(r).flat()
star_valid = e.valid()[[r]]  # Props 1 and 3 stand on this trained run
g_star = float(T.gradient(th_star, data.X.cpu(), data.y.cpu(), "tanh", P.width).norm())
H_star = torch.linalg.eigvalsh(T.hessian(th_star, data.X.cpu(), data.y.cpu(), "tanh", P.width)[0])
print(f"Prop. 1 at GD's interpolator: ||grad L|| = {g_star:.2e}, smallest Hessian eigenvalue {float(H_star[0]):.2e} "
      f"(largest {float(H_star[-1]):.3f})")
# Prop. 2 as transcribed, on F(theta) = theta^3 at 0
eps = 1e-3
print(f"theta^3 at 0: F' = 0, F'' = 0 (PSD); F(-{eps}) = {(-eps) ** 3:.1e} < F(0) = 0")
# Prop. 3: Hessian eigenvalues around the interpolator
nonconv = {rad: PL.local_nonconvexity(th_star[0], data, "tanh", P.width, rad, P.samples) for rad in (1e-2, 1e-3)}
neg_tol = 1e-8 * float(H_star[-1])  # eigenvalues below -1e-8 lambda_max are not rounding
print("Prop. 3: fraction of points theta* + r u with a Hessian eigenvalue below -1e-8 lambda_max:",
      {rad: float((v < -neg_tol).mean()) for rad, v in nonconv.items()}, "; smallest eigenvalues:",
      {rad: float(v.min()) for rad, v in nonconv.items()})
lipr = {act: PL.lipschitz_ratios(act, P.width, P.samples) for act in T.ACTIVATIONS}
print("Prop. 4: largest |h(x)-h(x')| / (||x-x'|| ||a|| ||W||_2):", {k: round(float(v.max()), 4) for k, v in lipr.items()})
armijo = PL.armijo_gd("tanh", 10, 2000)
print(f"Theorem 1 (Armijo GD, Tanh, m = 10): ||grad L|| from {armijo[0]:.3f} to {armijo[-1]:.2e}")
kap = {act: PL.kappa(act, P.width, P.kappa_scales) for act in T.ACTIVATIONS}
for act, k in kap.items():
    print(f"kappa(theta^0), {act:8s}:", " ".join(f"{s:g}: {x:.3g}" for s, x in zip(P.kappa_scales, k)))

# %% [markdown]
# ## Checks

# %% tags=["remove-cell"]
claims.check("Fig4.1/pl", "F is PL: mu = min F'^2/(2F) over [-50, 50] (theta != 0)", ex["mu"], C.above(0.0, strict=True),
             source_value="PL, nonconvex", valid=C.NO_TRAINING)
claims.check("Fig4.1/nonconvex", "F is nonconvex: min F''", ex["min_d2"], C.below(0.0), source_value="nonconvex", valid=C.NO_TRAINING)
claims.check("PL-rate/bound", "GD with alpha = 1/beta from -10, 3, 7: largest F(theta^t) / ((1 - mu/beta)^t F(theta^0)), t <= 500",
             rate["ratio"], C.below(1 + 1e-12, strict=False), source_value="linear rate (1 - mu/beta)^t", valid=rate["finite"])
claims.check("Thm2/bound", "Theorem 2 on F (beta-smooth, alpha = 1/beta): min_s F'(theta^s)^2 / (2 beta F(theta^0)/(t+1)), largest over t",
             rate["thm2_ratio"], C.below(1.0, strict=False), source_value="||grad F|| -> 0", valid=rate["finite"])
claims.check("Lemma8/stationary-global", "on F (PL): every stationary point found on [-50, 50] is a global minimiser (largest F there)",
             float(np.max(ex["stationary_values"])), C.below(1e-6), source_value="PL => stationary points are global minima", valid=C.NO_TRAINING)
claims.check("Lemma8/network-not-pl", "the network loss has a non-optimal stationary point: ||grad L(0)|| (ReLU, Sigmoid, Tanh; Dataset 1.1.0) "
             "while L(0) = 0.5", max(v["grad"] for v in z.values()), C.below(1e-15, strict=False), source_value="not PL on R^D", valid=C.NO_TRAINING)
claims.check("PL2/tanh-saddle", "Tanh: the Hessian at 0 has eigenvalues +-||v|| (m each), largest deviation",
             float(np.abs(np.sort(z["tanh"]["eig"]) - pred).max()), C.below(1e-8), source_value="saddle, +-1.25", valid=C.NO_TRAINING)
claims.check("PL2/sigmoid-saddle", "Sigmoid (sum y = 0): smallest Hessian eigenvalue at 0 (a saddle)", float(z["sigmoid"]["eig"].min()),
             C.below(0.0), source_value="saddle", valid=C.NO_TRAINING)
claims.check("PL2/sigmoid-1.1.2", "Sigmoid on Dataset 1.1.2: ||grad L(0)|| / (sqrt(m) sigma(0) |sum y| / n)",
             z112["grad"] / (np.sqrt(3) * 0.5 * 2 / 2), C.close_to(1.0, rtol=1e-12), source_value="gradient != 0", valid=C.NO_TRAINING)
claims.check("PL3/sigmoid-singular", "Sigmoid: lambda_min(J(0) J(0)^T) / lambda_max, every width", [lo / hi for lo, hi in lam3.values()],
             C.below(1e-14, strict=False), source_value="lambda_min = 0 (Theorem 9)", valid=C.NO_TRAINING)
claims.check("PL3/positive-away", "Sigmoid along its rich GD path: lambda_min(J J^T) at the end of training",
             float(pl["sigmoid"]["lmin"][-1, pl["sigmoid"]["ens"].runs(scale=min(P.pl_scales))[0]]), C.above(1e-3),
             source_value="positive away from 0", valid=pl["sigmoid"]["ens"].valid()[:1])
pv = np.concatenate([pl[a]["ens"].valid() for a in T.ACTIVATIONS])
claims.check("PL1/inequality", "mu_t >= nu_t along every run: min (mu_t - nu_t) / max_t nu_t", min(gap.values()), PL.PL1_INEQUALITY,
             source_value="Theorem 7", valid=pv, note="eigenvalues are accurate relative to the largest, hence the normalisation")
claims.check("Thm7/corrected", "||grad L||^2 >= (2 lambda_min / n) L holds along the runs (the PL1 check)", claims.passed("PL1/inequality"),
             C.is_true(), source_value="lambda_min >= mu => PL", valid=pv)
# independent of the runs' ratios: the printed chain's first equality ||grad F||^2 = ||J_r^T r||^2, at random points
# (autograd of the loss against the closed-form Jacobian); for F = ||r||^2 / (2n) the two differ by 1/n^2
_gen = torch.Generator().manual_seed(0)
_th = (0.5 * torch.randn(5, P.width * (data.d + 1), generator=_gen, dtype=torch.float64)).requires_grad_(True)
_gF, = torch.autograd.grad(T.loss_of_flat(_th, data.X.cpu(), data.y.cpu(), "tanh", P.width).sum(), _th)
_r, _J = T.jacobian(_th.detach(), data.X.cpu(), data.y.cpu(), "tanh", P.width)
_first = ((_gF ** 2).sum(1) / (torch.einsum("rnd,rn->rd", _J, _r) ** 2).sum(1)).numpy()
claims.check("Thm7/first-equality", f"Tanh, 5 random points: ||grad F||^2 (autograd) / ||J_r^T r||^2, against 1/n^2 = {1 / data.n ** 2:g}",
             _first, C.close_to(1 / data.n ** 2, rtol=1e-10), source_value="printed: equal (ratio 1)", valid=np.isfinite(_first))
claims.check("Thm7/as-printed", "the printed chain ||grad L||^2 >= 2 lambda_min L: smallest mu_t / lambda_min(J J^T) along the runs",
             min(printed.values()), C.above(1.0 - 1e-9), source_value="mu = lambda_min", valid=pv)
rich_min = [mins[(a, min(P.pl_scales))] for a in T.ACTIVATIONS]
lazy_min = [mins[(a, max(P.pl_scales))] for a in T.ACTIVATIONS]
claims.check("PL1/rich-saddle", f"rich (lambda {min(P.pl_scales):g}): min_t mu_t, three activations (~0 on the saddle plateau)",
             rich_min, PL.RICH_SADDLE, source_value="mu_t ~ 0 on plateaus", valid=np.concatenate([pl[a]["ens"].valid()[pl[a]["ens"].runs(scale=min(P.pl_scales))] for a in T.ACTIVATIONS]))
claims.check("PL1/lazy-bounded", f"lazy (lambda {max(P.pl_scales):g}): min_t mu_t, three activations", lazy_min, PL.LAZY_BOUNDED,
             source_value="bounded away from 0", valid=np.concatenate([pl[a]["ens"].valid()[pl[a]["ens"].runs(scale=max(P.pl_scales))] for a in T.ACTIVATIONS]))
claims.check("T2/relu-rate", "ReLU final-phase decay rate / alpha (8/n) min_k |y_k| ||x_k|| - 1",
             abs(rates["relu"] / T.final_rate(data, P.lr) - 1), PL.T2_RATE, source_value="(derived) local PL rate",
             valid=pl["relu"]["ens"].valid()[:1])
claims.check("Thm3/rate", "(2.33) ||r_t||^2 <= (1 - alpha a^2/2)^t ||r_0||^2: largest ratio along the lazy run, t >= 1", c233, C.below(tol, strict=False),
             source_value="linear rate", valid=[oy["finite"]])
claims.check("Thm3/decrease", "(2.34) (a/4)||theta_t - theta_0|| + ||r_t|| <= ||r_0||: largest ratio, t >= 1", c234, C.below(tol, strict=False),
             source_value="(2.34)", valid=[oy["finite"]])
claims.check("Thm3/path-length", "(2.35) path length / (4 ||r_0|| / a)", c235, C.below(1.0, strict=False), source_value="(2.35)",
             valid=[oy["finite"]])
claims.check("Cor4/distance", "(2.36) max_t ||theta_t - theta_0|| / ((4b/a) ||theta* - theta_0||)", c236, C.below(1.0, strict=False),
             source_value="(2.36)", valid=[oy["finite"]])
claims.check("Prop1/necessary", "at GD's Tanh interpolator: smallest Hessian eigenvalue / largest (PSD up to rounding)",
             float(H_star[0] / H_star[-1]), C.above(-1e-8), source_value="grad = 0, Hessian PSD", note=f"||grad L|| = {g_star:.1e}", valid=star_valid)
claims.check("Prop1/first-order", "at the same interpolator: ||grad L|| / (largest Hessian eigenvalue x ||theta*||) (zero up to rounding)",
             g_star / (float(H_star[-1]) * float(th_star.norm())), PL.PROP1_FIRST_ORDER, source_value="grad F(theta*) = 0 (1.16)",
             note=f"||grad L|| = {g_star:.1e}, ||theta*|| = {float(th_star.norm()):.3g}", valid=star_valid)
claims.check("Prop2/as-transcribed", "theta^3 at 0 meets the transcribed conditions (F' = 0, F'' >= 0): is it a local minimum? "
             f"(F(-{eps}) >= F(0))", (-eps) ** 3 >= 0.0, C.is_true(), source_value="PSD Hessian sufficient", valid=C.NO_TRAINING)
# in scope: the counterexample meets the proposition's hypotheses, computed on it (autograd, float64): F(theta) = theta^3
# is twice continuously differentiable and at 0 its gradient is 0 and its Hessian (0) positive semidefinite
_th = torch.zeros((), dtype=torch.float64, requires_grad=True)
_g, = torch.autograd.grad(_th ** 3, _th, create_graph=True)
_h, = torch.autograd.grad(_g, _th)
claims.check("Prop2/counterexample-in-scope", "theta^3 at 0 satisfies Prop. 1's first and second order necessary conditions "
             "(the hypotheses of Prop. 2): max(|F'(0)|, -F''(0)) by autograd", max(abs(float(_g)), -float(_h)), C.below(0.0, strict=False),
             source_value="grad F = 0, Hessian PSD", valid=C.NO_TRAINING)
claims.check("Prop2/strict", "the correct sufficient condition: F(theta) = theta^2 + 3 sin^2 theta at 0 has F'' = 8 > 0 and F >= F(0) nearby",
             bool(T.pl_function(0.0)[2] > 0 and np.all(T.pl_function(np.linspace(-0.1, 0.1, 201))[0] >= 0)), C.is_true(),
             source_value="Hessian positive definite", valid=C.NO_TRAINING)
claims.check("Thm1/armijo", "GD with an Armijo line search (Tanh, m = 10): final ||grad L||", armijo[-1], C.below(1e-8),
             source_value="limit points stationary", valid=metrics.finite_runs(torch.as_tensor(armijo)[None]))
claims.check("Prop3/nonconvex", "around GD's interpolator, points with a negative Hessian eigenvalue at r = 1e-2 and 1e-3 (fraction, smallest)",
             min(float((v < -neg_tol).mean()) for v in nonconv.values()), C.above(0.0, strict=True), source_value="not locally convex", valid=star_valid)
claims.check("Prop4/lipschitz", "|h(x) - h(x')| / ||x - x'|| <= ||a|| ||W||_2: largest ratio over random networks and inputs",
             max(float(v.max()) for v in lipr.values()), C.below(1.0, strict=False), source_value="L_h <= product of layer norms", valid=C.NO_TRAINING)
for act in T.ACTIVATIONS:
    claims.check(f"Chizat-kappa/{act}", f"{act}: kappa(theta^0) decreases as lambda grows ({P.kappa_scales})",
                 PL.kappa_decreasing(kap[act]), PL.KAPPA_DECREASES, source_value="lazy for large scale",
                 note="values " + ", ".join(f"{x:.3g}" for x in kap[act]), valid=C.NO_TRAINING)

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
lines = [
    f"- Fig. 4.1's function is PL with mu = {ex['mu']:.4f} (at theta = {ex['argmin']:.2f}) and nonconvex (min F'' = {ex['min_d2']:.3f}).",
    f"- At theta = 0 the gradient vanishes for the three activations on Dataset 1.1.0 while L(0) = {z['relu']['loss']:g}: the loss "
    f"{'is not' if claims.passed('Lemma8/network-not-pl') else 'may be'} PL on R^D.",
    f"- Along GD, mu_t >= lambda_min/n holds to {min(gap.values()):.0e}; the printed constant lambda_min would need mu_t / lambda_min >= 1, "
    f"measured down to {min(printed.values()):.3f} = 1/n.",
    f"- ReLU's final phase decays at {rates['relu']:.4e} per epoch against the predicted {T.final_rate(data, P.lr):.4e}.",
    f"- kappa(theta^0) at lambda = {P.kappa_scales}: " + "; ".join(f"{a} " + ", ".join(f"{x:.2g}" for x in kap[a]) for a in T.ACTIVATIONS) + ".",
]
display(Markdown("\n".join(lines)))
