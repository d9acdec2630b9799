"""003 (orthogonal inputs): the findings text of the chapters, written from each execution's checks and
measurements (Markdown), and the record of verdicts per step size (:class:`StepSizes`).
"""
from __future__ import annotations

import math

import torch

from ...engine.config import DTYPE
from .implicit_bias import ImplicitRun, stray_exponents
from .phases import PhasesRun
from .toy import ToyRun


def split_verdict(values: torch.Tensor, lrs: torch.Tensor, criterion) -> dict:
    """The criterion's verdict on the values of each step size separately: {lr: bool}."""
    return {round(float(lr), 12): bool(criterion(values[lrs == lr])) for lr in lrs.unique().tolist()}


class StepSizes:
    """Records the verdict of every check separately at each step size (the discretisation test).

    ``check(claims, id, claim, values, lrs, criterion, ...)`` records the check on all runs (as
    :meth:`Claims.check`) and keeps the criterion's verdict on each step size's runs alone;
    :meth:`disagreements` lists the checks whose verdict depends on the step size.
    """

    def __init__(self):
        self.verdicts: dict = {}

    def check(self, claims, id: str, claim: str, values, lrs, criterion, **kw):
        values = torch.as_tensor(values, dtype=DTYPE)
        lrs = torch.as_tensor(lrs, dtype=DTYPE)
        claims.check(id, claim, values, criterion, **kw)
        self.verdicts[id] = split_verdict(values, lrs, criterion)

    def disagreements(self) -> list[str]:
        return [i for i, v in self.verdicts.items() if len(set(v.values())) > 1]

    def table(self) -> str:
        lrs = sorted({lr for v in self.verdicts.values() for lr in v})
        head = "check".ljust(44) + "".join(f"dt = {lr:g}".ljust(14) for lr in lrs)
        rows = [i.ljust(44) + "".join(("pass" if v.get(lr) else "fail" if lr in v else "-").ljust(14) for lr in lrs)
                for i, v in self.verdicts.items()]
        return "\n".join([head, *rows])


def lam_label(lam: float) -> str:
    """A lambda as it appears in check ids: 1e-08, 1e-100."""
    return f"{lam:.0e}"


def _by(claims) -> dict:
    return {c.id: c for c in claims.checks}


def _discretisation_line(by: dict, target: str) -> list[str]:
    """The findings bullet of ``<target>/step-size-independent`` (none if the check did not run)."""
    dis = by.get(f"{target}/step-size-independent")
    if dis is None:
        return []
    return [f"- **Discretisation:** {dis.measured} check(s) change verdict between the two step sizes"
            + (f" ({dis.note})." if dis.note else ".")]


def _verdicts(by: dict, prefix: str) -> tuple[int, int, list[str]]:
    got = [c for i, c in by.items() if i.startswith(prefix)]
    failed = [c.id for c in got if c.verdict != "pass"]
    return len(got) - len(failed), len(got), failed


def phases_findings(claims, run: PhasesRun, fits: dict, theory_slope: dict) -> str:
    """The phases chapter's conclusions, written from its checks and measurements (Markdown)."""
    from ...verdicts import fmt

    by = _by(claims)
    out = []
    f = fits["exit 1"], fits["exit 2"]
    slopes = [i for i in by if i.startswith(("F1/exit1-slope", "F1/exit2-slope", "F1/plateau-slope"))]
    ok = [i for i in slopes if by[i].verdict == "pass"]
    out.append(f"- **Fact 1 (d), time scales:** exit-time slopes against -ln(lambda) on {run.ens.name}: "
               f"{fmt(f[0]['slope'])} (1/||D+|| = {theory_slope['exit 1']:.4f}) and {fmt(f[1]['slope'])} "
               f"(1/||D-|| = {theory_slope['exit 2']:.4f}); "
               + ("the saddle-to-saddle time scales reproduce (every slope check passes)." if slopes and len(ok) == len(slopes)
                  else f"{len(ok)} of {len(slopes)} slope checks pass"
                  + (f" (failing: {', '.join(i for i in slopes if i not in ok)})." if len(ok) < len(slopes) else ".")))
    fails = {lam: [i for i in by if i.endswith("-" + lam_label(lam)) and by[i].verdict == "fail"] for lam in run.lemma_lams}
    bad = {lam: v for lam, v in fails.items() if v}
    if bad:
        smallest_bad = min(bad)
        fine = [lam_label(x) for x in run.lemma_lams if x < smallest_bad]
        out.append(f"- **lambda <= lambda\\*:** per-lambda checks fail at lambda = "
                   f"{', '.join(lam_label(x) for x in sorted(bad, reverse=True))} "
                   f"({'; '.join(', '.join(v) for v in bad.values())}) and every one passes at lambda = "
                   f"{', '.join(fine) or 'none'}. The paper gives no value of lambda\\*; with eps = {run.eps:g} on "
                   f"{run.ens.name} these runs place the regime of Fact 1 and of the spec's quantisation criterion "
                   f"below lambda = {lam_label(smallest_bad)}.")
    else:
        out.append("- **Per-lambda checks** (Fact 1 (a)-(c), quantisation) pass at every lambda tried.")
    for tgt, name in (("L2/", "Lemma 2"), ("P2/", "Phase 2's logistic ODE"), ("L3/", "Lemma 3"), ("L4/", "Lemma 4")):
        n_ok, n, failed = _verdicts(by, tgt)
        if n:
            expected = [i for i in failed if "as-printed" in i]
            other = [i for i in failed if i not in expected and not any(i.endswith(lam_label(x)) for x in run.lemma_lams)]
            txt = f"- **{name}:** {n_ok} of {n} checks pass"
            if expected:
                bar = [i.replace("as-printed", "wbar") for i in expected if i.replace("as-printed", "wbar") in by]
                bar_ok = bool(bar) and all(by[i].verdict == "pass" for i in bar)
                txt += (f"; {', '.join(expected)} fail(s): read with w_j as printed, item (i) is false "
                        f"(measured min <w_j, D> - bound = {', '.join(by[i].measured for i in expected)})"
                        + (f", read with w_bar_j it holds ({', '.join(bar)} pass)" if bar_ok else "")
                        + "".join(f" [registered cause of {i}: {by[i].cause}]" for i in expected if by[i].cause))
            if other:
                txt += f"; also failing: {', '.join(other)}"
            per_lam = [i for i in failed if any(i.endswith("-" + lam_label(x)) for x in run.lemma_lams)]
            if per_lam:
                quant = all("quantisation" in i for i in per_lam)
                txt += (f"; per-lambda failures: {', '.join(per_lam)}"
                        + (" (all of them the spec's quantisation criterion, directions within 1e-2, not the lemma's "
                           "bounds)" if quant else ""))
            out.append(txt + ".")
    if "L3/sharper-exponent" in by:
        out.append(f"- **How loose are the bounds:** the positive labels' loss at the start of the plateau falls like "
                   f"lambda^{12 * run.eps:g} (fitted deviation {by['L3/sharper-exponent'].measured}), against the "
                   f"lemma's lambda^{run.eps / 5:g}.")
    out += _discretisation_line(by, "F1")
    return "\n".join(out)


def implicit_findings(claims, run: ImplicitRun, tables: dict) -> str:
    """The implicit-bias chapter's conclusions, written from its checks and measurements (Markdown)."""
    by = _by(claims)
    out = []
    n_ok, n, failed = _verdicts(by, "T1/")
    conv = [i for i in by if i.startswith("T1/convergence")]
    out.append(f"- **Theorem 1:** {n_ok} of {n} checks pass. Convergence to L < 1e-20 within the spec's time on "
               f"{', '.join(c.split('-', 1)[1] for c in conv)}: "
               f"{'yes' if all(by[c].verdict == 'pass' for c in conv) else 'no'} (largest t/T {max(max(by[c].values) for c in conv):.3g}).")
    if "T1/gap-at-min-lam-ortho-B" in by:
        out.append(f"- **Implicit bias on ORTHO-B:** rel.gap {by['T1/gap-at-min-lam-ortho-B'].measured} at the smallest "
                   f"lambda of the spec's list ({by['T1/gap-at-min-lam-ortho-B'].verdict}); the limits form a Cauchy "
                   f"sequence (last distance {by['T1/cauchy-last-ortho-B'].measured}).")
    if "T1/gap-exponent-ortho-C" in by and "ortho-C" in tables:
        e, tb = run.ens["ortho-C"], tables["ortho-C"]
        kap = stray_exponents(e.data)["subset"]
        lam_min = float(e.lams.min())
        g_min = float(tb["gap"][e.lams == lam_min].max())
        need = "" if g_min < 1e-6 else (f" Extrapolating lambda^{kap:.3f} from rel.gap {g_min:.2g} at lambda = {lam_min:.0e}, "
                                         f"rel.gap < 1e-6 would need lambda ~ 1e{math.log10(lam_min) + math.log10(1e-6 / g_min) / kap:.0f}.")
        out.append(f"- **ORTHO-C, the slow case:** rel.gap ~ lambda^kappa with kappa = {kap:.4f}, derived from neurons active "
                   f"on proper subsets of same-sign labels (relative deviation {by['T1/gap-exponent-ortho-C'].measured}, "
                   f"{by['T1/gap-exponent-ortho-C'].verdict}); the largest such neuron is active on the predicted pair "
                   f"of labels ({by['T1/stray-subset-ortho-C'].verdict}). The spec's explanation uses single labels, "
                   f"whose exponent {stray_exponents(e.data)['single']:.3f} is {stray_exponents(e.data)['single'] / kap:.1f} "
                   f"times the derived one.{need}")
    if "T1/necessity-gap" in by:
        needed = by["T1/necessity-gap"].verdict == "pass" and by["T1/necessity-converges"].verdict == "pass"
        out.append(f"- **Assumption 3:** with S+,1 empty the loss converges: {by['T1/necessity-converges'].verdict}; "
                   f"rel.gap of the limit {by['T1/necessity-gap'].measured} with {by['T1/necessity-directions'].measured} "
                   "directions: " + ("the limit is not the minimum-norm interpolator, so the bias towards minimum norm "
                                     "needs Assumption 3, as the paper says." if needed else
                                     "these runs do not show that the bias towards minimum norm needs Assumption 3."))
    if "E8/ortho-B-LP" in by:
        out.append(f"- **Eq. (8) on ORTHO-B:** LP value {by['E8/ortho-B-LP'].measured}, certificate "
                   f"{by['E8/ortho-B-certificate'].measured}, trained network {by['E8/ortho-B-trained'].measured}: "
                   f"{'equal' if all(by[i].verdict == 'pass' for i in ('E8/ortho-B-LP', 'E8/ortho-B-certificate', 'E8/ortho-B-trained')) else 'NOT equal'}.")
    traj = [i for i in by if i.startswith("L5/trajectory-")]
    passed = [i.replace("L5/trajectory-", "") for i in traj if by[i].verdict == "pass"]
    fails = [i.replace("L5/trajectory-", "") for i in traj if by[i].verdict == "fail"]
    if traj and "ortho-B" in run.ens:
        e = run.ens["ortho-B"]
        rho = 0.5 * math.sqrt(2 * e.data.n * e.k.norm_minus)
        rates = [i for i in by if i.startswith("L5/rate-") and "slowest" not in i]
        low = min(min(by[i].values) for i in rates)
        out.append(f"- **Lemma 5 (eps = {run.eps:g}):** along the ORTHO-B trajectories the PL ratio inside the ball "
                   f"lambda^(eps/40) falls below ||D-|| at lambda = {', '.join(fails) or 'none'} and stays above it at "
                   f"lambda = {', '.join(passed) or 'none'}. The ball contains balanced points on the way to the saddle "
                   f"where the ratio is 4(1-s)^2||D-|| < ||D-|| unless lambda^(eps/40) < sqrt(2n||D-||)/2 = {rho:.4f}, i.e. "
                   f"lambda < 1e{40 / run.eps * math.log10(rho):.1f} [derived]"
                   + (f"; the trajectories pass through such points at lambda = {', '.join(fails)}" if fails else "")
                   + (". Random points of the ball " + ("never find this direction" if by["L5/random-ball"].verdict == "pass"
                                                        else "also find such points")
                      + f" (min ratio / ||D-|| {by['L5/random-ball'].measured}).")
                   + " The fitted exponential rates are at least "
                   f"{low:.3g} ||D-|| ({'all pass' if all(by[i].verdict == 'pass' for i in rates) else 'NOT all pass'}); at "
                   "theta* the linearised rates are >= 2||D-|| [derived]. The paper's Remark 1 says the convergence step "
                   "built on this lemma is not proved.")
    out += _discretisation_line(by, "T1")
    return "\n".join(out)


def balance_findings(claims) -> str:
    """The balancedness chapter's conclusions, written from its checks (Markdown)."""
    by = _by(claims)
    out = []
    gf = [i for i in by if i.startswith("L1/gf-conservation")]
    gf_ok = all(by[i].verdict == "pass" for i in gf) and by["L1/gf-signs"].verdict == "pass"
    out.append(f"- **Gradient flow:** the defect relative to each neuron's size is {', '.join(by[i].measured for i in gf)} "
               f"(criterion below 1e-6: {', '.join(by[i].verdict for i in gf)}) and the signs are kept: "
               f"{by['L1/gf-signs'].verdict}. " + ("Lemma 1 reproduces." if gf_ok else "Lemma 1 is not reproduced here."))
    spec = [i for i in by if i.startswith("L1/gf-spec-normalisation")]
    if spec:
        out.append(f"- **The spec's normalisation** (by max ||w_j^0||^2) gives {', '.join(by[i].measured for i in spec)}: "
                   f"{', '.join(by[i].verdict for i in spec)}; the largest defect is at the rounding level of a grown neuron "
                   f"({', '.join(by[i.replace('spec-normalisation', 'rounding')].verdict for i in spec)})"
                   + (", so the criterion measures float64, not the flow." if all(
                       by[i.replace('spec-normalisation', 'rounding')].verdict == "pass" for i in spec) else "."))
    step = [i for i in by if i.startswith("L1/gd-step-formula-") and "1e-12" not in i]
    out.append(f"- **One GD step** changes a_j^2 - ||w_j||^2 by exactly eta^2(<D_j,w_j>^2 - a_j^2||D_j||^2), up to the "
               f"rounding of the stored iterate: {', '.join(by[i].verdict for i in step)}; to the spec's 1e-12 relative: "
               f"{', '.join(by[i.replace('formula-', 'formula-1e-12-')].verdict for i in step)}.")
    drift = [i for i in by if i.startswith("L1/gd-drift-spec")]
    fo = [i for i in by if i.startswith("L1/gd-drift-first-order")]
    out.append(f"- **Accumulated GD drift:** {', '.join(by[i].measured for i in drift)} of a neuron's size "
               f"({', '.join(by[i].verdict for i in drift)} against the spec's 1e-3); halving the step divides it by "
               f"{', '.join(by[i].measured for i in fo)} ({', '.join(by[i].verdict for i in fo)})"
               + (": a first-order discretisation effect, which vanishes in the gradient-flow limit." if fo and all(
                   by[i].verdict == "pass" for i in fo) else ".")
               + " GD keeps |a_j| <= ||w_j|| "
               f"({', '.join(by[i].verdict for i in by if i.startswith('L1/gd-drift-sign'))}).")
    return "\n".join(out)


def extras_findings(claims, targets: dict) -> str:
    """One Markdown line per target: its checks' verdicts and measured values, from this execution.

    targets: {target id: short description}."""
    by_target: dict[str, list] = {}
    for c in claims.checks:
        by_target.setdefault(c.target, []).append(c)
    out = []
    for t, what in targets.items():
        checks = by_target.get(t, [])
        if not checks:
            out.append(f"- **{t}** ({what}): not run at this scale.")
            continue
        n = sum(c.verdict == "pass" for c in checks)
        word = "reproduced" if n == len(checks) else ("not reproduced" if n == 0 else "partly reproduced")
        detail = "; ".join(f"{c.name}: {c.verdict} ({c.measured})" for c in checks)
        out.append(f"- **{t}** ({what}): {word}, {n}/{len(checks)} checks pass: {detail}.")
    return "\n".join(out)


def toy_findings(claims, run: ToyRun, first: torch.Tensor, second: torch.Tensor) -> str:
    """The chapter's conclusions, written from this execution's checks and measurements (Markdown)."""
    from ...verdicts import fmt

    by = {c.id: c for c in claims.checks}

    def verdict(*ids):
        got = [by[i].verdict for i in ids if i in by]
        return "pass" if got and all(v == "pass" for v in got) else ("fail" if got else "not run")

    out = []
    M, H = run.runs_of("mean"), run.runs_of("half")
    if M:
        e1 = ["E1/final-loss", "E1/norm", "E1/kinks", "E1/function", "E1/grown-neurons"]
        out.append(
            f"- **Figure 2d (end state), authors' loss:** checks {verdict(*e1)}; final loss "
            f"{by['E1/final-loss'].measured}, ||theta||^2 {by['E1/norm'].measured} against "
            f"{by['E1/norm'].criterion.split(' of ')[-1]}, kink deviation {by['E1/kinks'].measured}.")
        p1 = [i for i in by if i.startswith("E1/phase1")]
        failed = [i for i in p1 if by[i].verdict == "fail"]
        out.append(
            f"- **Figure 2b (end of Phase 1):** {len(p1) - len(failed)} of {len(p1)} checks pass"
            + (f"; failing: {', '.join(failed)} (measured {', '.join(by[i].measured for i in failed)})"
               + "".join(f"; registered cause of {i}: {by[i].cause}: {by[i].why}" for i in failed if by[i].cause)
               + "." if failed else "."))
        out.append(
            f"- **Figure 3, authors' loss (step {float(run.traj.lr[M[0]]):.0e} on L):** first exit "
            f"{fmt(first[M])}, second exit {fmt(second[M])} against the paper's 5000 and 11000: "
            f"{verdict('E2/first-exit', 'E2/second-exit', 'E2/exit-ratio')}.")
    if H:
        never = int((second[H] < 0).sum())
        out.append(
            f"- **Eq. (1) as printed (step {float(run.traj.lr[H[0]]):.0e} on L):** first exit {fmt(first[H])}; "
            f"the second saddle is left within {run.traj.steps} iterations by {len(H) - never} of {len(H)} runs."
            + (" The same flow is followed at half the speed (E2/convention-factor passes), so the paper's iteration "
               "counts belong to the mean-MSE loss of the authors' code, not to eq. (1)."
               if by.get("E2/convention-factor") is not None and by["E2/convention-factor"].verdict == "pass"
               and by["E2/first-exit"].verdict == "pass" and by["E2/exits-as-printed"].verdict == "fail" else ""))
    if "E8/toy-F1-equals-half-norm" in by:
        gap = [-v for v in by["E1/F1-below-linear"].values]
        out.append(f"- **Eq. (8):** the LP's minimum F1 norm over the interpolators of the data is "
                   f"{by['E8/toy-F1-equals-half-norm'].measured} (= min ||theta||^2 / 2: "
                   f"{by['E8/toy-F1-equals-half-norm'].verdict}); the linear interpolator's F1 norm on [-1.5, 3], [-5, 5], "
                   f"[-20, 20] minus the trained network's F1 cost sum |a_j| ||w_j||, every run: {min(gap):.4g} to "
                   f"{max(gap):.4g} ("
                   + ("the learned function is cheaper on each" if all(g > 0 for g in gap)
                      else "the learned function is NOT cheaper on each") + ").")
    return "\n".join(out)
