"""Two-layer networks h(x) = c_m * sum_j a_j sigma(<w_j, x>), batched over independent runs.

Parameters carry a leading *runs* dimension: ``a`` has shape (R, m) and ``W`` shape (R, m, d).
Inputs are either shared, ``X`` of shape (n, d), or per run, (R, n, d); labels likewise (n,) or
(R, n).  Every function here is written once for the whole ensemble: there is no loop over runs or
neurons, so R seeds (or scales, or step sizes) cost one tensor computation.

Conventions, stated once:

- the ReLU derivative at 0 is 0 (sigma'(x) = 1{x > 0}), as in the sources and in torch;
- ``output_scaling`` is the factor c_m: "none" (1), "sqrt" (1/sqrt(m)) or "mean" (1/m);
- the loss is ``"half"``, L = 1/(2n) sum_k (h(x_k) - y_k)^2 (the papers' convention), or ``"mean"``,
  L = 1/n sum_k (...)^2 (torch's MSELoss).  Gradient descent with step eta on "mean" is gradient
  descent with step 2*eta on "half"; :func:`flow_time_per_step` makes that explicit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

ACTIVATIONS = ("relu", "leaky_relu", "sigmoid", "tanh")
OUTPUT_SCALINGS = ("none", "sqrt", "mean")
LOSSES = ("half", "mean")
EVAL_CHUNK_BYTES = 2 ** 27  # Network.evaluate: the largest block of pre-activations held at once (128 MiB)


@dataclass
class Params:
    """The state of R two-layer networks of width m on inputs of dimension d."""

    a: torch.Tensor  # (R, m)
    W: torch.Tensor  # (R, m, d)

    @property
    def runs(self) -> int:
        return self.a.shape[0]

    @property
    def width(self) -> int:
        return self.a.shape[1]

    @property
    def dim(self) -> int:
        return self.W.shape[2]

    def clone(self) -> "Params":
        return Params(self.a.clone(), self.W.clone())

    def to(self, *args, **kwargs) -> "Params":
        return Params(self.a.to(*args, **kwargs), self.W.to(*args, **kwargs))

    def select(self, runs) -> "Params":
        """The sub-ensemble of the given run indices (an int keeps the runs dimension)."""
        if isinstance(runs, int):
            runs = [runs]
        return Params(self.a[runs], self.W[runs])

    def flat(self) -> torch.Tensor:
        """All parameters of each run as one vector, shape (R, m + m*d)."""
        return torch.cat([self.a, self.W.reshape(self.runs, -1)], dim=1)


@dataclass(frozen=True)
class Network:
    """The architecture shared by all runs of an ensemble (the parameters live in :class:`Params`)."""

    activation: str = "relu"
    output_scaling: str = "none"
    leak: float = 0.01  # slope of leaky ReLU for negative inputs

    def __post_init__(self):
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.output_scaling not in OUTPUT_SCALINGS:
            raise ValueError(f"output_scaling must be one of {OUTPUT_SCALINGS}, got {self.output_scaling!r}")

    def with_(self, **changes) -> "Network":
        return replace(self, **changes)

    # -- activation and its derivative -------------------------------------------------------
    def sigma(self, z: torch.Tensor) -> torch.Tensor:
        if self.activation == "relu":
            return torch.clamp_min(z, 0.0)
        if self.activation == "leaky_relu":
            return torch.where(z > 0, z, self.leak * z)
        if self.activation == "sigmoid":
            return torch.sigmoid(z)
        return torch.tanh(z)

    def dsigma(self, z: torch.Tensor) -> torch.Tensor:
        """sigma'(z), with the convention sigma'(0) = 0 for ReLU (and `leak` for leaky ReLU)."""
        if self.activation == "relu":
            return (z > 0).to(z.dtype)
        if self.activation == "leaky_relu":
            return torch.where(z > 0, torch.ones_like(z), torch.full_like(z, self.leak))
        if self.activation == "sigmoid":
            s = torch.sigmoid(z)
            return s * (1 - s)
        return 1 - torch.tanh(z) ** 2

    def scale(self, m: int) -> float:
        return {"none": 1.0, "sqrt": 1.0 / math.sqrt(m), "mean": 1.0 / m}[self.output_scaling]

    # -- forward, loss, gradients ------------------------------------------------------------
    def preactivations(self, p: Params, X: torch.Tensor) -> torch.Tensor:
        """<w_j, x_k> for every run, neuron and sample: shape (R, m, n)."""
        return p.W @ X.transpose(-1, -2)

    def forward(self, p: Params, X: torch.Tensor) -> torch.Tensor:
        """h(x_k) for every run and sample: shape (R, n).  X may be (n, d), (R, n, d) or a grid."""
        Z = self.preactivations(p, X)
        return self.scale(p.width) * torch.einsum("rm,rmn->rn", p.a, self.sigma(Z))

    def evaluate(self, p: Params, X: torch.Tensor, max_bytes: float = EVAL_CHUNK_BYTES) -> torch.Tensor:
        """:meth:`forward` on a large evaluation grid, the runs taken in blocks so that no block's (r, m, n)
        pre-activations exceed ``max_bytes``: the same values (bit for bit for per-run inputs, to rounding for a
        shared one), memory bounded whatever R x m x n is (at 500 runs of width 1000 on 721 circle points,
        ``forward`` holds 2 x 2.9 GB at once).  For evaluation, not training."""
        R, m = p.runs, p.width
        n = X.shape[-2]
        per_run = X.dim() == 3 and X.shape[0] == R
        block = self._eval_block(m, n, max_bytes, p.W.element_size())
        if block >= R or not (per_run or X.dim() == 2):
            return self.forward(p, X)
        return torch.cat([self.forward(Params(p.a[lo:lo + block], p.W[lo:lo + block]),
                                       X[lo:lo + block] if per_run else X) for lo in range(0, R, block)], dim=0)

    @staticmethod
    def _eval_block(width: int, points: int, max_bytes: float, itemsize: int = 8) -> int:
        """Runs per block of :meth:`evaluate` (at least one): the one definition its memory estimate also reads."""
        return max(1, int(max_bytes // max(1, width * points * itemsize)))

    @staticmethod
    def evaluate_bytes(runs: int, width: int, points: int, max_bytes: float = EVAL_CHUNK_BYTES) -> float:
        """The most bytes :meth:`evaluate` holds at once (one block's pre-activations and activations, float64): the
        memory rules' estimate of an evaluation on ``points`` inputs."""
        return 2 * 8.0 * width * points * min(runs, Network._eval_block(width, points, max_bytes))

    def loss(self, p: Params, X: torch.Tensor, y: torch.Tensor, loss: str = "half") -> torch.Tensor:
        """The training loss of each run, shape (R,)."""
        r = self.forward(p, X) - y
        return loss_factor(loss) * (r ** 2).mean(dim=-1)

    def gradients(self, p: Params, X: torch.Tensor, y: torch.Tensor, loss: str = "half"):
        """Loss (R,) and the hand-derived gradients (dL/da (R, m), dL/dW (R, m, d)).

        With r_k = h(x_k) - y_k and g_k = dL/dh(x_k) = 2 * loss_factor * r_k / n:
        dL/da_j = c_m sum_k g_k sigma(<w_j, x_k>) and dL/dw_j = c_m a_j sum_k g_k sigma'(<w_j, x_k>) x_k,
        which for ReLU and loss "half" is the paper's -D_j a_j (003, eq. (3)).
        """
        Z = self.preactivations(p, X)
        S = self.sigma(Z)
        c = self.scale(p.width)
        r = c * torch.einsum("rm,rmn->rn", p.a, S) - y
        n = r.shape[-1]
        L = loss_factor(loss) * (r ** 2).mean(dim=-1)
        g = (2.0 * loss_factor(loss) / n) * r  # (R, n)
        ga = c * torch.einsum("rmn,rn->rm", S, g)
        gW = (c * p.a).unsqueeze(-1) * ((self.dsigma(Z) * g.unsqueeze(-2)) @ X)
        return L, ga, gW


def loss_factor(loss: str) -> float:
    """L = loss_factor * mean_k (h - y)^2: 1/2 for the papers' "half" convention, 1 for "mean"."""
    if loss == "half":
        return 0.5
    if loss == "mean":
        return 1.0
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def flow_time_per_step(lr: float, loss: str) -> float:
    """Gradient-flow time (of the papers' 1/(2n) loss) covered by one GD step of size lr on `loss`."""
    return lr * loss_factor(loss) / loss_factor("half")
