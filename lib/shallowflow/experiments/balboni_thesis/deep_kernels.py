"""Chapter 5 of source 004: deep kernel machines (DKMs), the rank of their kernel matrices and their landscape.

The fully connected (FC) kernel of Definition 2, ``K(x, x') y = (sum_i sigma(x_i) sigma(x'_i)) y``, makes a DKM an
FCN: with basis points ``B`` (p x s) and data ``Z`` (N x s) its kernel matrix is ``H = (sigma(B) sigma(Z)^T) (x) I_t``,
so the rank questions reduce to the p x N factor. The convolutional (Def. 3) and recurrent (Def. 4) kernels are built
entry by entry from their definitions to test Lemmas 14 and 15 as literally stated. Everything is float64.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ... import verdicts as C
from ...params import PROFILE, Int, Ints, Rule, array_bytes

SCHEMA = {
    "profile": PROFILE,
    "draws": Int("random coefficient draws for Lemma 10 / Theorem 2", low=10, high=100_000),
    "N": Int("number of data points N", low=2, high=200),
    "width": Int("layer width d_l = p_l of the wide DKM (>= N)", low=2, high=1000),
    "layers": Int("DKM depth L", low=2, high=20),
    "inits": Int("random initialisations of the Theorem 4 proxy", low=2, high=1000),
    "gd_steps": Int("L-BFGS iterations per initialisation (Theorem 4 proxy)", low=10, high=100_000),
    "seeds": Ints("seeds: the first draws the exact lemmas' problems, Lemma 4 / Theorem 3, the representer and the Lemma "
                  "10 controls (seed + 1, + 2, + 3); Theorem 2's draws and the Theorem 4 proxy's starts repeat for every "
                  "seed", low=0, high=10_000),
}
RULES = (Rule(("width", "N"), lambda P: P.width >= P.N, "Theorem 2 needs every layer at least N wide"),)


def memory_estimate(P) -> float:
    """Theorem 2's draws (N x width coefficients and N x N Gram matrices per layer, every draw at once) and the
    Theorem 4 proxy's initialisations (L-BFGS keeps about 100 copies of each)."""
    return array_bytes(P.draws, P.layers, P.N, max(P.N, P.width), copies=4) + \
        array_bytes(P.inits, P.layers, P.N, 2 * P.N, copies=100)


def work_estimate(P) -> float:
    """Theorem 2 calls (one per seed and three controls; draws x layers x N^2 x width, and N^3 eigenvalues), Lemma 4 (2000 steps) and the two
    proxies per seed (inits x gd_steps x about 20 evaluations of layers x N^3)."""
    thm2 = (3 + len(P.seeds)) * P.draws * P.layers * (P.N ** 2 * P.width + 10 * P.N ** 3)
    lem4 = 2000 * P.layers * P.N ** 2 * P.width * 10
    proxy = 1.5 * len(P.seeds) * P.inits * P.gd_steps * 20 * P.layers * 10 * P.N ** 3
    return thm2 + lem4 + proxy


NAMES = ("draws", "N", "width", "layers", "inits", "gd_steps", "seeds")
RULES = RULES + (Rule.memory(NAMES[:5], memory_estimate, what="the draws and the initialisations"),
                 Rule.work(NAMES, work_estimate, what="the chapter"))

ACT = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "softplus": torch.nn.functional.softplus, "relu": torch.relu}


def _g(seed):
    return torch.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------------------
# Lemmas 6-9 (independent points) and Lemma 8
# ------------------------------------------------------------------------------------------------
def lemma8(seed: int, trials: int = 200) -> float:
    """Largest relative error of det(B J + (A - B) I) = (A - B)^(n-1) ((n - 1) B + A), n = 2..8."""
    g = _g(seed)
    worst = 0.0
    for _ in range(trials):
        A, B = (torch.randn(2, generator=g, dtype=torch.float64) * 2).tolist()
        for n in range(2, 9):
            M = B * torch.ones(n, n, dtype=torch.float64) + (A - B) * torch.eye(n, dtype=torch.float64)
            lhs, rhs = float(torch.linalg.det(M)), (A - B) ** (n - 1) * ((n - 1) * B + A)
            worst = max(worst, abs(lhs - rhs) / max(abs(rhs), 1e-300))
    return worst


def lemma9(s: int, t: int, r: float, c: float, act: str = "tanh") -> dict:
    """The points gamma^i_j = delta_ij r + (1 - delta_ij) c: H from Definition 2 against the closed form
    delta_jw (delta_ik A + (1 - delta_ik) B), its rank (full: s t)."""
    sig = ACT[act]
    Gm = torch.full((s, s), c, dtype=torch.float64)
    Gm.fill_diagonal_(r)
    S = sig(Gm)
    H = torch.kron(S @ S.T, torch.eye(t, dtype=torch.float64))
    sr, sc = float(sig(torch.tensor(r, dtype=torch.float64))), float(sig(torch.tensor(c, dtype=torch.float64)))
    A, B = (s - 1) * sc ** 2 + sr ** 2, (s - 2) * sc ** 2 + 2 * sc * sr
    closed = torch.kron(B * torch.ones(s, s, dtype=torch.float64) + (A - B) * torch.eye(s, dtype=torch.float64),
                        torch.eye(t, dtype=torch.float64))
    return dict(err=float((H - closed).abs().max()), rank=int(torch.linalg.matrix_rank(H)), full=s * t,
                A_minus_B=A - B, factor=(sr + (s - 1) * sc))


def lemma9_symbolic() -> bool:
    """A - B = (s(r) - s(c))^2 and A + (s - 1) B = (s(r) + (s - 1) s(c))^2, symbolically (sympy)."""
    import sympy as sp

    s, a, b = sp.symbols("s a b")  # a = sigma(r), b = sigma(c)
    A = (s - 1) * b ** 2 + a ** 2
    B = (s - 2) * b ** 2 + 2 * a * b
    return bool(sp.simplify(A - B - (a - b) ** 2) == 0 and sp.simplify(A + (s - 1) * B - (a + (s - 1) * b) ** 2) == 0)


def lemma6_7(seed: int, m: int = 6, d: int = 3, t: int = 2) -> dict:
    """RBF kernel exp(-||x - x'||^2) I_t: distinct points give lambda_min(H) > 0, a duplicated point drops the
    rank by t (Lemma 7, Lemma 6). FC kernel (s = d features): m > d points have a null vector c with
    sum_i c_i f(x_i) = 0 for every f = W sigma(.) of the space (Lemma 6), m <= d points have none."""
    g = _g(seed)
    X = torch.randn(m, d, generator=g, dtype=torch.float64)
    rbf = lambda X: torch.kron(torch.exp(-torch.cdist(X, X) ** 2), torch.eye(t, dtype=torch.float64))
    lam_distinct = float(torch.linalg.eigvalsh(rbf(X))[0])
    Xd = torch.cat([X, X[:1]])
    rank_drop = m * t + t - int(torch.linalg.matrix_rank(rbf(Xd)))
    # FC kernel with s = d: sigma(X) is m x d
    Xm = torch.randn(d + 2, d, generator=g, dtype=torch.float64)  # more points than features: dependent
    S = torch.tanh(Xm)
    U, sv, Vh = torch.linalg.svd(S.T)  # null vector of S^T (d x (d+2))
    cvec = Vh[-1]
    W = torch.randn(50, d, generator=g, dtype=torch.float64)  # 50 random functions f(x) = W sigma(x)
    dep_residual = float((W @ S.T @ cvec).abs().max())
    H_dep = torch.kron(S @ S.T, torch.eye(t, dtype=torch.float64))
    dep_sing = float(torch.linalg.eigvalsh(H_dep)[0] / torch.linalg.eigvalsh(H_dep)[-1])
    Si = torch.tanh(torch.randn(d, d, generator=g, dtype=torch.float64))  # d points: independent
    ind_sing = float(torch.linalg.eigvalsh(torch.kron(Si @ Si.T, torch.eye(t, dtype=torch.float64)))[0])
    # each measurement on the other case too (the negative controls of tests/test_controls_balboni_thesis.py): the
    # duplicated set's lambda_min and the distinct set's rank drop (RBF); the independent points' smallest singular
    # vector as a would-be null vector, and the dependent points' lambda_min (FC)
    controls = dict(rbf_duplicate_lambda_min=float(torch.linalg.eigvalsh(rbf(Xd))[0]),
                    rbf_distinct_rank_drop=m * t - int(torch.linalg.matrix_rank(rbf(X))),
                    fc_independent_residual=float((W @ Si.T @ torch.linalg.svd(Si.T)[2][-1]).abs().max()),
                    fc_dependent_lambda_min=float(torch.linalg.eigvalsh(H_dep)[0]))
    return dict(rbf_lambda_min=lam_distinct, rbf_rank_drop=rank_drop, t=t, fc_dependent_residual=dep_residual,
                fc_dependent_rel_lambda_min=dep_sing, fc_independent_lambda_min=ind_sing, controls=controls)


# ------------------------------------------------------------------------------------------------
# Lemmas 14 and 15 as stated (CNN and RNN kernels)
# ------------------------------------------------------------------------------------------------
def cnn_kernel_H(points: torch.Tensor, act=torch.tanh) -> torch.Tensor:
    """Definition 3: K(x, x') e_{abg} = (sum_{i,j} sigma(x_{ijg}) sigma(x'_{(a-i)(b-j)g})) e_{abg}, outputs a in -w..w,
    b in -h..h (terms with an undefined index are null). Returns H (m*outputs x m*outputs), block-diagonal over
    outputs."""
    m, w, h, c = points.shape
    S = act(points)
    outs = [(a, b, gch) for a in range(-w, w + 1) for b in range(-h, h + 1) for gch in range(c)]
    blocks = []
    for a, b, gch in outs:
        M = torch.zeros(m, m, dtype=torch.float64)
        for i in range(w):
            for j in range(h):
                ii, jj = a - i, b - j
                if 0 <= ii < w and 0 <= jj < h:
                    M += S[:, i, j, gch][:, None] * S[:, ii, jj, gch][None, :]
        blocks.append(M)
    return torch.block_diag(*blocks)


def lemma14(w: int, h: int, c: int, seed: int) -> dict:
    """w h c points (one-hot gamma points r = 1.5, c = 0.2 and random ones): rank of H against full size."""
    m = w * h * c
    eye = torch.eye(m, dtype=torch.float64)
    onehot = (0.2 + 1.3 * eye).reshape(m, w, h, c)
    rnd = torch.randn(m, w, h, c, generator=_g(seed), dtype=torch.float64)
    H1, H2 = cnn_kernel_H(onehot), cnn_kernel_H(rnd)
    # Def. 3's structure alone: the block of output (a, b, g) is a sum of one rank-one term per defined (i, j), so
    # its rank is at most min(m, that count); H is block-diagonal over the outputs
    terms = [sum(1 for i in range(w) for j in range(h) if 0 <= a - i < w and 0 <= b - j < h)
             for a in range(-w, w + 1) for b in range(-h, h + 1) for _ in range(c)]
    return dict(rank_onehot=int(torch.linalg.matrix_rank(H1)), rank_random=int(torch.linalg.matrix_rank(H2)),
                full=H1.shape[0], bound=int(sum(min(m, t) for t in terms)), **_in_scope([onehot, rnd], [H1, H2]),
                outputs_def3=H1.shape[0] == m * (2 * w + 1) * (2 * h + 1) * c)


def _in_scope(point_sets, matrices) -> dict:
    """What the lemmas' scope asks of a counterexample, computed on it: distinct points (the smallest distance
    between two points of a set) and a symmetric H; and, reported only, its smallest eigenvalue / largest (Def. 3's
    H need not be positive semi-definite)."""
    dist = min(float(torch.pdist(P.reshape(P.shape[0], -1)).min()) for P in point_sets)
    asym = max(float((H - H.T).abs().max()) for H in matrices)
    psd = min(float(torch.linalg.eigvalsh(H)[0] / torch.linalg.eigvalsh(H)[-1]) for H in matrices)
    return dict(min_distance=dist, asymmetry=asym, min_eig_ratio=psd)


def rnn_features(Z: torch.Tensor, u: torch.Tensor, act=torch.tanh) -> torch.Tensor:
    """Phi_u(z)_{;t} = sigma(z_{;t} + u Phi_u(z)_{;t-1}), Phi_{;1} = sigma(z_{;1}); Z: (m, T, q) -> (m, T, q)."""
    out, prev = [], None
    for t in range(Z.shape[1]):
        pre = Z[:, t] if prev is None else Z[:, t] + prev @ u.T
        prev = act(pre)
        out.append(prev)
    return torch.stack(out, 1)


def lemma15(q: int, T: int, seed: int) -> dict:
    """q T random sequences: H with K_u(z, z') e_{i;t} = (Phi(z)_t . Phi(z')_t) e_{i;t}; rank against full size."""
    g = _g(seed)
    m = q * T
    Z = torch.randn(m, T, q, generator=g, dtype=torch.float64)
    u = torch.randn(q, q, generator=g, dtype=torch.float64) / math.sqrt(q)
    Phi = rnn_features(Z, u)
    blocks = [Phi[:, t] @ Phi[:, t].T for t in range(T) for _ in range(q)]
    H = torch.block_diag(*blocks)
    # each of the q T blocks is the Gram matrix of m vectors in R^q: rank at most min(m, q)
    return dict(rank=int(torch.linalg.matrix_rank(H)), full=H.shape[0], bound=len(blocks) * min(m, q), **_in_scope([Z], [H]))


# ------------------------------------------------------------------------------------------------
# Lemma 10 / Theorem 2 / Lemma 4 / Theorem 3: FC-kernel DKMs
# ------------------------------------------------------------------------------------------------
def gamma_points(s: int, r: float = 1.5, c: float = 0.2) -> torch.Tensor:
    G = torch.full((s, s), c, dtype=torch.float64)
    G.fill_diagonal_(r)
    return G


def dkm_last_factor(X, alphas, bases, act) -> torch.Tensor:
    """The p x N factor sigma(B^{L-1}) sigma(Z^{L-1})^T of the last layer's kernel matrix; layer l maps
    z -> W^l sigma(z) with W^l = alpha^l sigma(B^{l-1}) (alpha^l: d_l x p, B^{l-1}: p x d_{l-1})."""
    Z = X
    for alpha, B in zip(alphas, bases[:-1]):
        Z = act(Z) @ (alpha @ act(B)).T
    return act(bases[-1]) @ act(Z).T


# Theorem 2's criterion (the chapter's; tests/test_controls_balboni_thesis.py feeds it the false cases)
THM2_FULL_RANK = C.above(1e-10, strict=True)  # smallest sigma_N / sigma_1 of the last-layer factor over the draws
# Lemma 10's two checks: the largest rank of a layer narrower than N, minus N; the largest rank with alpha^1 = 0
LEMMA10_NARROW = C.below(0.0)
# Lemmas 6-7 (measured by lemma6_7)
LEMMA6_NULL_VECTOR = C.below(1e-12)  # largest |sum_i c_i f(x_i)| over 50 random f, c a null vector of the points' H
LEMMA6_INDEPENDENT = C.above(1e-8)  # lambda_min(H) of independent FC points
LEMMA7_DISTINCT = C.above(1e-8)  # lambda_min(H) of distinct points, RBF kernel


def lemma7_duplicate(t: int):
    """Lemma7/rbf-duplicate's criterion: a duplicated point drops rank(H) by exactly t (the output dimension)."""
    return C.close_to(t, atol=0)
LEMMA10_SPOILED = C.below(1.0, strict=False)
# Lemma 4 and Theorem 3 (measured by lemma4_theorem3; the controls feed them a last layer narrower than N, Ker H != 0)
LEMMA4_BOUND = C.below(1e-10, strict=False)  # largest ||grad_X L|| - ||grad_alpha C|| / sigma_min(M) over the GD iterates
LEMMA4_STATIONARY = C.below(1e-8)  # output gradient at the stationary point of C_alpha / at the start
THM3_SOLUTION = C.below(1e-10)  # residual of the solution V of X^L(V) = Y
THM3_MONOTONE = C.below(1e-12, strict=False)  # largest step of C(t) along the straight path / C(0)
THM3_GLOBAL = C.below(1e-20, strict=False)  # C(1) / C(0)
THM3_JENSEN = C.below(1e-12, strict=False)  # largest C(t) - ((1 - t) C(0) + t C(1)), / C(0)


def theorem2(draws: int, N: int, width: int, layers: int, seed: int, act: str = "tanh", d_last=None,
             spoil: bool = False, basis: str = "gamma", rank: bool = False) -> np.ndarray:
    """sigma_min / sigma_max of the last-layer factor over ``draws`` coefficient draws alpha ~ N(0, 1); ``d_last``
    overrides d_{L-1} (negative control N - 1), ``spoil`` sets alpha^1 = 0 (all first-layer images equal);
    ``rank=True`` returns the numerical rank of the factor instead (tolerance max(shape) x eps x sigma_max)."""
    g = _g(seed)
    f = ACT[act]
    d0 = width
    X = torch.randn(N, d0, generator=g, dtype=torch.float64)
    dims = [d0] + [width] * (layers - 1)
    if d_last is not None:
        dims[-1] = d_last
    p = width
    bases = [gamma_points(dims[l])[:p] if basis == "gamma" and dims[l] == p else
             torch.randn(p, dims[l], generator=g, dtype=torch.float64) for l in range(layers)]
    out = np.empty(draws)
    for k in range(draws):
        alphas = [torch.randn(dims[l + 1], p, generator=g, dtype=torch.float64) / math.sqrt(p) for l in range(layers - 1)]
        if spoil:
            alphas[0] = torch.zeros_like(alphas[0])
        sv = torch.linalg.svdvals(dkm_last_factor(X, alphas, bases, f))
        if rank:
            out[k] = int((sv > sv[0] * max(sv.shape) * 2.2e-16).sum()) if sv[0] > 0 else 0
        else:
            out[k] = float(sv[min(N, len(sv)) - 1] / sv[0]) if len(sv) >= N else 0.0
    return out


def lemma4_theorem3(N: int, width: int, layers: int, seed: int, steps: int = 20000, dl: int = 2, path_loss=None) -> dict:
    """Fix the inner layers of a tanh FC DKM, optimise the last coefficients alpha^L by ``steps`` GD steps on
    C = 1/2 ||X^L - Y||^2 (X^L = M alpha, M = sigma(Z) sigma(B)^T): the Lemma 4 bound ||grad_X L|| <=
    ||grad_alpha C|| / sigma_min(M) at every iterate (``bound_margin`` = largest lhs - rhs), the output gradient at
    the stationary point nearest to the start (exact least squares), and Theorem 3's path alpha(t) = (1 - t) alpha + t V (M V = Y) on 201 points.
    ``path_loss`` (a function of the residual X^L - Y, default the chapter's convex 1/2 ||.||^2) is the loss read along
    that path: the negative control passes a non-convex one, outside Theorem 3's hypothesis that L is convex."""
    g = _g(seed)
    X = torch.randn(N, width, generator=g, dtype=torch.float64)
    bases = [gamma_points(width) for _ in range(layers)]
    alphas = [torch.randn(width, width, generator=g, dtype=torch.float64) / math.sqrt(width) for _ in range(layers - 1)]
    M = dkm_last_factor(X, alphas, bases, torch.tanh).T  # N x p
    Y = torch.randn(N, dl, generator=g, dtype=torch.float64)
    sv = torch.linalg.svdvals(M)
    smin, smax = float(sv[-1]), float(sv[0])
    alpha = torch.randn(width, dl, generator=g, dtype=torch.float64)
    alpha0 = alpha.clone()
    worst, steps_done, gX0 = -float("inf"), 0, None
    for k in range(steps):
        gX = M @ alpha - Y
        ga = M.T @ gX
        gX0 = gX0 if gX0 is not None else float(gX.norm())
        worst = max(worst, float(gX.norm()) - float(ga.norm()) / smin)
        steps_done = k
        alpha = alpha - ga / smax ** 2
    # a stationary point of C_alpha: GD needs ~kappa^2 steps, so take the exact minimiser (least squares)
    V = torch.linalg.lstsq(M, Y, driver="gelsd").solution
    star = V + (torch.eye(width, dtype=torch.float64) - torch.linalg.pinv(M) @ M) @ alpha0  # nearest to alpha0
    grad_star = float((M.T @ (M @ star - Y)).norm())
    rel_out_grad = float((M @ star - Y).norm()) / gX0
    # Theorem 3: V with M V = Y (least squares, min norm), the path from alpha0
    resid = float((M @ V - Y).norm())
    ts = torch.linspace(0, 1, 201, dtype=torch.float64)
    path_loss = path_loss or (lambda R: 0.5 * (R ** 2).sum())
    C = torch.stack([path_loss(M @ ((1 - t) * alpha0 + t * V) - Y) for t in ts])
    C0, C1 = float(C[0]), float(C[-1])
    mono = float((C[1:] - C[:-1]).max()) / C0
    jensen = float((C - ((1 - ts) * C0 + ts * C1)).max()) / C0
    finite = np.array([bool(torch.isfinite(alpha).all()) and math.isfinite(worst)])  # the one GD run of Lemma 4
    return dict(bound_margin=worst, steps=steps_done, rel_out_grad=rel_out_grad, grad_alpha_star=grad_star, finite=finite,
                kappa=smax / smin, V_residual=resid, C1_over_C0=C1 / C0, max_increase=mono, jensen_gap=jensen)


def theorem4_proxy(inits: int, N: int, width: int, layers: int, steps: int, seed: int) -> np.ndarray:
    """Final / initial loss of L-BFGS on all coefficients of a tanh FC DKM (MSE, widths ``width``) from ``inits``
    random initialisations, one shared dataset."""
    g = _g(seed)
    X = torch.randn(N, width, generator=g, dtype=torch.float64)
    Y = torch.randn(N, 1, generator=g, dtype=torch.float64)
    dims = [width] * layers + [1]
    out = np.empty(inits)
    for k in range(inits):
        bases = [torch.randn(width, dims[l], generator=g, dtype=torch.float64) for l in range(layers)]
        alphas = [(torch.randn(dims[l + 1], width, generator=g, dtype=torch.float64) / math.sqrt(width)).requires_grad_()
                  for l in range(layers)]

        def loss():
            Z = X
            for alpha, B in zip(alphas, bases):
                Z = torch.tanh(Z) @ (alpha @ torch.tanh(B)).T
            return 0.5 * ((Z - Y) ** 2).sum()

        with torch.no_grad():
            L0 = float(loss())
        opt = torch.optim.LBFGS(alphas, lr=1, max_iter=steps, tolerance_grad=1e-14, tolerance_change=1e-20,
                                history_size=20, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            v = loss()
            v.backward()
            return v

        opt.step(closure)
        with torch.no_grad():
            out[k] = float(loss()) / L0
    return out


def representer(seed: int, n: int = 12, d: int = 3, lam: float = 0.1) -> float:
    """Theorem 1 for one layer: kernel ridge regression with the explicit features of (1 + x.x')^2 has its
    minimiser in the span of the data's features, w* = Phi^T (K + lam I)^{-1} y; relative distance."""
    g = _g(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    iu = torch.triu_indices(d, d)
    scale = torch.full((iu.shape[1],), math.sqrt(2.0), dtype=torch.float64)
    scale[iu[0] == iu[1]] = 1.0

    def phi(X):
        quad = (X[:, iu[0]] * X[:, iu[1]]) * scale
        return torch.cat([torch.ones(len(X), 1, dtype=torch.float64), math.sqrt(2) * X, quad], 1)

    Phi = phi(X)
    K = (1 + X @ X.T) ** 2
    k = Phi.shape[1]  # the primal ridge problem, normal equations (a 10 x 10 solve)
    w_primal = torch.linalg.solve(Phi.T @ Phi + lam * torch.eye(k, dtype=torch.float64), Phi.T @ y)
    w_rep = Phi.T @ torch.linalg.solve(K + lam * torch.eye(n, dtype=torch.float64), y)
    return float((w_primal - w_rep).norm() / w_rep.norm()) + float((Phi @ Phi.T - K).abs().max())


def findings(claims, l14: dict, l15: dict, narrow_dkm: np.ndarray) -> str:
    """The chapter's summary, from this run's verdicts and numbers."""
    lines = []
    for t in ("Lemma6", "Lemma7", "Lemma8", "Lemma9", "Lemma10", "Thm2", "Lemma4", "Thm3", "DKM-wide", "Thm1", "Lemma14", "Lemma15"):
        cs = claims.checks_of(t)
        if cs:
            lines.append(f"- **{t}**: {sum(c.verdict == 'pass' for c in cs)} of {len(cs)} checks pass.")
    cnn = "; ".join(f"(w, h, c) = {k}: rank {min(r['rank_onehot'], r['rank_random'])} of {r['full']}" for k, r in l14.items())
    rnn = "; ".join(f"(q, T) = {k}: rank {r['rank']} of {r['full']}" for k, r in l15.items())
    lines.append(f"- Lemma 14 as stated: {cnn}. Lemma 15 as stated: {rnn}.")
    stuck = int((narrow_dkm > 1e-3).sum())
    lines.append(f"- The width-2 DKM ends above 1e-3 x its initial loss from {stuck} of {len(narrow_dkm)} starts.")
    return "\n".join(lines)
