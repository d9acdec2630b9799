"""ADLER (Algorithm 1 of source 004) and the Gauss-Newton learning rates, as ``torch.optim.Optimizer`` s.

Every optimizer here takes a plain gradient step ``theta <- theta - eta_hat * G`` on a minibatch and differs only
in how the step size ``eta_hat`` is chosen:

* :class:`Adler` (ADaptive LEarning Rate SGD): with ``G`` the minibatch gradient and ``v = J_I G`` the
  output-space directional derivative (one forward-mode ``torch.func.jvp``), the per-minibatch rate
  ``eta = G^T G / (v^T Q v + eps G^T G)`` minimises the quadratic model of the loss along ``-G`` with the
  kernel-driven Hessian ``Q = J^T (d^2 L / d yhat^2) J`` (Sec. 7.7); ``eta_hat`` is the geometric mean of the
  past ``eta`` with discount ``beta`` (Algorithm 1: ``s <- beta s + log eta``, ``c <- beta c + 1``,
  ``eta_hat = exp(s / c)``);
* :class:`GaussNewton`: the same with the output Hessian replaced by outer products of loss gradients
  (footnote 10) and an arithmetic mean (footnote 12). The thesis's variant is underspecified; ``"per-example"``
  (default) uses ``(1/b) sum_i (grad l_i . v_i)^2`` (BHHH), ``"literal"`` the full outer product, whose rate is
  exactly ``1 / (||G||^2 + eps)``;
* :class:`FixedRate`: plain SGD with a constant rate (the grid of the comparison), so that every method runs
  through the same step interface and the same pass counters.

The step takes a closure, as LBFGS does, that returns the minibatch inputs and the loss as a function of the
model's outputs (mean over the batch, e.g. ``F.cross_entropy``)::

    opt = Adler(model)                                   # any nn.Module
    for xb, yb in batches:
        loss = opt.step(lambda: (xb, lambda out: F.cross_entropy(out, yb)))

Each step records ``eta``, ``eta_hat``, ``G^T G`` and ``v^T Q v`` in ``opt.history`` and counts passes in
``opt.passes`` (one forward and one backward per step, plus one JVP for the adaptive rates).
"""
from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn
from torch.func import functional_call, grad, jvp

LossFn = Callable[[torch.Tensor], torch.Tensor]


def output_quadratic_form(loss_fn: LossFn, out: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``v^T (d^2 loss / d out^2) v`` at ``out``, by a forward-over-reverse product in output space (exact for
    any twice-differentiable loss; the cost is that of the loss, not of the network)."""
    _, hv = jvp(grad(loss_fn), (out.detach(),), (v.detach(),))
    return (v * hv).sum()


def cross_entropy_quadratic_form(out: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Closed form of ``v^T Q v`` for the batch-mean cross-entropy: ``(1/b) sum_i Var_{p_i}(v_i)`` with
    ``p_i = softmax(out_i)`` (the Hessian of one example is ``diag(p) - p p^T``)."""
    p = torch.softmax(out, dim=-1)
    mean = (p * v).sum(-1)
    return ((p * v * v).sum(-1) - mean ** 2).sum() / out.shape[0]


def geometric_mean_update(s: float, c: float, eta: float, beta: float) -> tuple[float, float, float]:
    """One step of Algorithm 1's average: returns ``(s', c', eta_hat)`` with ``s' = beta s + log eta``."""
    s, c = beta * s + math.log(eta), beta * c + 1.0
    return s, c, math.exp(s / c)


def arithmetic_mean_update(s: float, c: float, eta: float, beta: float) -> tuple[float, float, float]:
    """Footnote 12's average for Gauss-Newton: ``eta_hat = sum beta^(k-i) eta_i / sum beta^(k-i)``."""
    s, c = beta * s + eta, beta * c + 1.0
    return s, c, s / c


class _RateOptimizer(torch.optim.Optimizer):
    """A minibatch gradient step whose rate a subclass chooses; bookkeeping shared by all methods."""

    needs_jvp = True

    def __init__(self, model: nn.Module, defaults: dict):
        if not isinstance(model, nn.Module):
            raise TypeError(f"{type(self).__name__} needs the nn.Module itself (it evaluates the model "
                            f"functionally for the JVP), got {type(model).__name__}")
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not named:
            raise ValueError("the model has no trainable parameters")
        super().__init__([p for _, p in named], defaults)
        self.model = model
        self._names = [n for n, _ in named]
        self.passes = {"forward": 0, "backward": 0, "jvp": 0}
        self.history: list[dict] = []

    def _rate(self, G2: torch.Tensor, out, gout, v, loss_fn) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    @torch.no_grad()
    def _apply(self, params, grads, eta_hat: float):
        torch._foreach_add_(params, grads, alpha=-eta_hat)

    def step(self, closure):  # type: ignore[override]
        """One step on the minibatch the closure names; returns the minibatch loss before the step."""
        if closure is None:
            raise ValueError(f"{type(self).__name__}.step needs a closure returning (inputs, loss_fn)")
        got = closure()
        if not (isinstance(got, tuple) and len(got) == 2 and callable(got[1])):
            raise ValueError("the closure must return (inputs, loss_fn): the minibatch inputs and the loss as a "
                             "function of the model's outputs")
        x, loss_fn = got
        inputs = x if isinstance(x, tuple) else (x,)
        params = self.param_groups[0]["params"]
        with torch.enable_grad():
            out = self.model(*inputs)
            loss = loss_fn(out)
            gout, *G = torch.autograd.grad(loss, [out, *params])
        self.passes["forward"] += 1
        self.passes["backward"] += 1
        G2 = sum((g * g).sum() for g in G)
        v = None
        if self.needs_jvp:
            primals = tuple(p.detach() for p in params)
            names = self._names

            def f(*ps):
                return functional_call(self.model, dict(zip(names, ps)), inputs)

            _, v = jvp(f, primals, tuple(G))
            self.passes["jvp"] += 1
        record = self._rate(G2, out.detach(), gout.detach(), v, loss_fn)
        record["loss"] = float(loss.detach())
        record["G2"] = float(G2)
        self.history.append(record)
        self._apply(params, G, record["eta_hat"])
        return loss.detach()


class Adler(_RateOptimizer):
    """ADLER, Algorithm 1 of Balboni's thesis (ADaptive LEarning Rate SGD).

    :param model: the network (any ``nn.Module``); its trainable parameters are optimised.
    :param beta: discount factor of the geometric mean of the per-minibatch rates, in (0, 1) (thesis: 0.99).
    :param eps: Hessian regularisation, >= 0 (thesis: 1e-10); it caps the rate at 1/eps.
    :param quadratic_form: ``None`` (default) computes ``v^T Q v`` from the loss's own output Hessian by autodiff;
        ``"cross_entropy"`` uses the closed form of :func:`cross_entropy_quadratic_form`.
    """

    def __init__(self, model: nn.Module, beta: float = 0.99, eps: float = 1e-10, quadratic_form: str | None = None):
        if not 0.0 < beta < 1.0:
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
        if not (eps >= 0.0 and math.isfinite(eps)):
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        if quadratic_form not in (None, "cross_entropy"):
            raise ValueError(f"quadratic_form must be None or 'cross_entropy', got {quadratic_form!r}")
        super().__init__(model, dict(beta=beta, eps=eps))
        self.quadratic_form = quadratic_form
        self._s, self._c = 0.0, 0.0

    def _rate(self, G2, out, gout, v, loss_fn):
        beta, eps = self.defaults["beta"], self.defaults["eps"]
        if self.quadratic_form == "cross_entropy":
            q = cross_entropy_quadratic_form(out, v)
        else:
            q = output_quadratic_form(loss_fn, out, v)
        q, g2 = float(q), float(G2)
        if g2 == 0.0:  # a stationary minibatch: no step, no new estimate
            eta_hat = math.exp(self._s / self._c) if self._c > 0 else 0.0
            return dict(eta=float("nan"), eta_hat=eta_hat, vQv=q)
        eta = g2 / (q + eps * g2)
        if not (math.isfinite(eta) and eta > 0):
            raise FloatingPointError(f"ADLER step {len(self.history)}: the rate G^T G / (v^T Q v + eps G^T G) = "
                                     f"{eta!r} is not a positive number (v^T Q v = {q!r}, G^T G = {g2!r})")
        self._s, self._c, eta_hat = geometric_mean_update(self._s, self._c, eta, beta)
        return dict(eta=eta, eta_hat=eta_hat, vQv=q)


class GaussNewton(_RateOptimizer):
    """The Gauss-Newton learning rate of Chapter 7 (footnotes 10 and 12): ADLER's formula with the output
    Hessian replaced by outer products of loss gradients, averaged arithmetically.

    ``variant="per-example"`` (default): ``v^T Q v = (1/b) sum_i (grad l_i . v_i)^2``, assuming the loss is a
    mean over the first (batch) dimension of the outputs; ``variant="literal"``: the full outer product
    ``(grad L . v)^2 = (G^T G)^2``, which makes the rate ``1 / (G^T G + eps)``."""

    VARIANTS = ("per-example", "literal")

    def __init__(self, model: nn.Module, beta: float = 0.99, eps: float = 1e-10, variant: str = "per-example"):
        if not 0.0 < beta < 1.0:
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
        if not (eps >= 0.0 and math.isfinite(eps)):
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        if variant not in self.VARIANTS:
            raise ValueError(f"variant must be one of {self.VARIANTS}, got {variant!r}")
        super().__init__(model, dict(beta=beta, eps=eps))
        self.variant = variant
        self._s, self._c = 0.0, 0.0

    def _rate(self, G2, out, gout, v, loss_fn):
        beta, eps = self.defaults["beta"], self.defaults["eps"]
        b = out.shape[0]
        if self.variant == "literal":
            q = float((gout * v).sum()) ** 2
        else:  # grad of l_i w.r.t. out_i is b * gout_i for a batch-mean loss
            q = float(((b * gout * v).reshape(b, -1).sum(1) ** 2).sum() / b)
        g2 = float(G2)
        if g2 == 0.0:
            return dict(eta=float("nan"), eta_hat=self._s / self._c if self._c > 0 else 0.0, vQv=q)
        eta = g2 / (q + eps * g2)
        if not (math.isfinite(eta) and eta > 0):
            raise FloatingPointError(f"Gauss-Newton step {len(self.history)}: rate {eta!r} is not a positive number")
        self._s, self._c, eta_hat = arithmetic_mean_update(self._s, self._c, eta, beta)
        return dict(eta=eta, eta_hat=eta_hat, vQv=q)


class FixedRate(_RateOptimizer):
    """Plain SGD with a constant rate ``lr`` (no momentum, no weight decay: the thesis's baseline), with the
    same step interface and pass counters as :class:`Adler`."""

    needs_jvp = False

    def __init__(self, model: nn.Module, lr: float):
        if not (lr > 0 and math.isfinite(lr)):
            raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
        super().__init__(model, dict(lr=lr))

    def _rate(self, G2, out, gout, v, loss_fn):
        return dict(eta=self.defaults["lr"], eta_hat=self.defaults["lr"], vQv=float("nan"))


def make(method: str, model: nn.Module, lr: float | None = None, beta: float = 0.99, eps: float = 1e-10):
    """The optimizer named ``method``: ``"sgd"`` (needs ``lr``), ``"adler"``, ``"gn"`` (per-example) or
    ``"gn-literal"``."""
    if method == "sgd":
        if lr is None:
            raise ValueError("method 'sgd' needs lr")
        return FixedRate(model, lr)
    if method == "adler":
        return Adler(model, beta=beta, eps=eps)
    if method == "gn":
        return GaussNewton(model, beta=beta, eps=eps)
    if method == "gn-literal":
        return GaussNewton(model, beta=beta, eps=eps, variant="literal")
    raise ValueError(f"unknown method {method!r}; expected sgd, adler, gn or gn-literal")
