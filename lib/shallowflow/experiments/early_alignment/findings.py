"""002 (early alignment): the findings text of the chapters, written from each execution's checks and
measurements (Markdown).
"""
from __future__ import annotations

from typing import Sequence

import torch

from .alignment import Sweep
from .spurious import Figure2Run
from .theory import SUCCESS


def summarise(claims, lines: Sequence[str] = ()) -> str:
    """One bullet per target (checks passed, failing checks with their measured values), then ``lines``."""
    from ...verdicts import target_verdict

    targets = {}
    for c in claims.checks:
        targets.setdefault(c.target, []).append(c)
    out = []
    for t, cs in targets.items():
        v = target_verdict([c.verdict for c in cs])
        failed = [c for c in cs if c.verdict != "pass"]
        txt = f"- **{t}: {v}** ({len(cs) - len(failed)}/{len(cs)} checks)"
        if failed:
            txt += "; failing: " + "; ".join(f"`{c.name}` measured {c.measured} (criterion {c.criterion})" for c in failed)
        out.append(txt + ".")
    return "\n".join(out + list(lines))


def findings_spurious(claims, fr: Figure2Run, pt: dict, sad: dict, lm: dict, P) -> str:
    by = {c.id: c for c in claims.checks}
    lines = [
        f"- The run (m = {P.width}, lambda = {P.init_scale:g}, {P.steps} steps of {P.lr:g}) ends at L = "
        f"{float(fr.run.series['loss'][0, -1]):.10f} against L_lin* = {float(fr.ols.loss):.10f}; a two-neuron network "
        f"reaches {by['E2/two-neuron-interpolator'].measured}. Phase times (flow time of the mean squared error): "
        f"tau_eps = {fr.tau_eps:.2f} [R], tau_2 = {float(pt['tau2'][0]):.2f}, tau_3 = {float(pt['tau3'][0]):.2f}.",
        f"- Nature of the limit: the balanced limit's smallest neuron has norm {sad['neuron_norm']:.2g}, and "
        f"replacing it by rho (1, (1, 0)) changes L by {sad['dL'][0]:.4g} at rho = {sad['rho'][0]:g} "
        f"(prediction {sad['predicted'][0]:.4g})"
        + (": a saddle" if by.get("S5-limit/saddle-descent") is not None and by["S5-limit/saddle-descent"].verdict == "pass"
           else ": this perturbation does not show a saddle")
        + f". The dominated limit keeps min |a_j| = {lm['min_abs_a']:.3g}; random perturbations of norm "
        f"0.1 delta_0 = {lm['radius']:.2g} lower L by at most {max(-lm['min_dL'], 0.0):.2g}.",
    ]
    if "E2/negative-none-all-active" in by and by["E2/negative-none-all-active"].verdict == "fail":
        c = by["E2/negative-none-all-active"]
        lines.append(
            f"- {c.measured} negative neuron(s) end in the all-active cone (with |a_j| <= {by['E2/negative-small'].measured})"
            + (f"; registered cause: {c.cause}: {c.why}" if c.cause else "") + ".")
    return summarise(claims, lines)


def findings_failure(claims, res: dict, lam_star: dict, disagree: int, P) -> str:
    g = res["balanced"]
    n_runs = sum(len(o) for o in g.outcome.values())
    invalid = sum(sum(v == "invalid" for v in o) for o in g.outcome.values())
    fails = sum(sum(v not in SUCCESS and v != "invalid" for v in o) for o in g.outcome.values())
    lines = [
        f"- {n_runs} balanced runs (widths {g.widths}, scales {g.scales}); {fails} end at a spurious point"
        + (f", {invalid} are invalid (non-finite loss or parameters: they count neither way and fail the checks "
           "that rest on them)" if invalid else "") + ". The largest grid scale at which every run fails is, per "
        "width: " + ", ".join(f"m = {m}: {v:g}" for m, v in lam_star.items()) + ".",
        f"- With a {P.step_check_factor}x smaller step at m = {P.step_check_width}, {disagree} run(s) change outcome.",
    ]
    return summarise(claims, lines)


def findings_alignment(claims, sw: Sweep | None, pt: dict | None, slopes: dict | None, P) -> str:
    """The alignment chapter's findings; without the sweep (``sw`` None: the section was skipped) only the targets."""
    if sw is None:
        return summarise(claims, [])
    lines = [f"- Fitted exponents against lambda at tau_eps (median / max of 1 - cos over S+, theory 2 eps [R]): "
             + "; ".join(f"eps = {e:g}: {slopes[e]['med']:.3f} / {slopes[e]['max']:.3f}" for e in P.epsilons) + ".",
             f"- tau_2 = {pt['slope']:.4f} ln(1/lambda) + {pt['intercept']:.3f} (R^2 = {pt['r2']:.6f}; 1/|D| = "
             f"{pt['predicted_slope']:.4f}); tau_3 - tau_2 between {float(torch.nanquantile(pt['duration'], 0)):.2f} and "
             f"{float(torch.nanquantile(pt['duration'], 1)):.2f}."]
    return summarise(claims, lines)
