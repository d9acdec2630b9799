"""Cost of the paper edition (``--profile paper``), chapter by chapter, and the verdicts it changes.

    python benchmarks/paper_scale.py                       # write benchmarks/paper_scale.json and .md
    python benchmarks/paper_scale.py --run CHAPTER ...     # run chapters at paper scale first (nice 19, one
                                                           # kernel each, cheapest first), then write both files
    python benchmarks/paper_scale.py --run --all --hours 6 # every chapter whose record is missing or stale,
                                                           # cheapest first, as far as 6 hours allow
    python benchmarks/paper_scale.py --plan                # what --run --all would run, in order, and why
    python benchmarks/paper_scale.py --claims DIR --runs FILE   # other measurements (another machine's)

For every chapter (``shallowflow.params.chapters.all_chapters()``) the JSON gives ``book_s`` (its book-scale time
from ``params/timings.json``) and ``paper``:

- ``none``: the chapter has no ``params/paper/`` file (its book scale is the source's);
- ``refused``: its paper profile is refused by its own rules on this machine (validated in this process,
  as ``shallowflow run CHAPTER --profile paper`` does before a kernel starts); ``basis`` is the one-line
  reason (a memory estimate above ``SHALLOWFLOW_MEMORY_GB``, a work estimate above
  ``SHALLOWFLOW_WORK_BUDGET``, ...);
- ``ran``: measured by a paper run recorded in the runs file (``--run`` appends to it): ``seconds`` is
  the CLI's own execution time of the chapter; the basis adds the CPU seconds of the run's process
  tree, the load average and what the extrapolation below had estimated;
- ``estimated``: ``seconds`` = book_s x (paper work / book work), the work being the chapter's own
  ``Rule.work`` estimate (``params.gd_work`` units) at both parameter sets, as
  ``shallowflow run CHAPTER --profile paper --estimate`` prints it (``shallowflow.executor.estimate``).  Work estimates count every run to its step cap: chapters whose runs stop at
  convergence cost less (the measured runs show by how much).

``memory_gb`` is the largest ``Rule.memory`` estimate at paper scale (GiB).  ``verdict_changes`` lists
every check whose paper verdict (the run's claims record, kept in ``benchmarks/paper_claims/``) differs from the registry's book verdict
(``verdicts/<source>.yml``), a registered check the paper run did not run included.

``--run --all`` (:func:`pending`, :func:`run_all`) runs every chapter with a paper profile that this machine accepts
and whose last successful record is missing or *stale* (its digest, :func:`shallowflow.verdicts.digest.chapter_digest`,
differs from the current code's), in order of cost (the last measured run's seconds where one exists, else the
estimate), as far as ``--hours`` allows: a chapter expected to take longer than the time left is not started unless its
paper profile resumes (``resume: true``: its finished ensembles are checkpoints, :mod:`shallowflow.engine.checkpoint`,
so a stopped run continues there in the next sitting); a run still going at the limit is stopped (SIGTERM: the CLI
shuts its kernel down) and recorded as stopped, with the checkpoints it left.  Then both files are written at HEAD.

Run it with the package of the commit the runs used (``PYTHONPATH=<worktree>/lib``, from that worktree);
``--out`` names where the two files go (default: ``benchmarks/`` beside this script).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from shallowflow.verdicts.digest import chapter_digest  # what a record's numbers depend on (its key to the code)

HERE = Path(__file__).resolve().parent
DEFAULT_RUNS = HERE / "paper_scale.runs.jsonl"
DEFAULT_CLAIMS = HERE / "paper_claims"  # the claims record of each successful paper run, kept with the runs file


# ------------------------------------------------------------------------------------------------
# measurements
# ------------------------------------------------------------------------------------------------
def machine() -> str:
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    gpu = "no GPU"
    try:
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return (f"{cpu or platform.processor()} ({os.cpu_count()} cores), {mem:.0f} GiB, {gpu}, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}; shared with other jobs")


def commit(root: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "lib", "book", "params"],
                               capture_output=True, text=True).stdout
        files = [l[3:] for l in dirty.splitlines() if l.strip()]
        more = f" and {len(files) - 3} more" if len(files) > 3 else ""
        return out + (f" (+ uncommitted: {', '.join(files[:3])}{more})" if files else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# nice 19 alone does not yield to other sessions where the kernel groups processes by session (autogroup,
# /proc/sys/kernel/sched_autogroup_enabled = 1): each session's group gets an equal share whatever its nice value, and a
# Jupyter kernel starts a session of its own.  The wrapper therefore runs in a new session whose group it lowers to nice
# 19, and every few seconds lowers the group of each of its descendants (the kernel) as well: a paper run then takes
# only the CPU nobody else wants.
_WRAP = """
import json, os, resource, subprocess, sys, time
def lower(pid):
    try:
        with open(f"/proc/{pid}/autogroup", "w") as fh:
            fh.write("19")
    except OSError:
        pass
def descendants(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out
import signal
signal.signal(signal.SIGTERM, lambda *a: None)  # a stop at the time limit reaches the CLI too: wait for its clean-up
try:
    os.setsid()
except OSError:
    pass
lower(os.getpid())
p = subprocess.Popen(sys.argv[1:])
while p.poll() is None:
    for pid in descendants(os.getpid()):
        lower(pid)
    time.sleep(3)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(dict(rc=p.returncode, cpu_s=r.ru_utime + r.ru_stime, peak_rss_gb=r.ru_maxrss / 2 ** 20)), file=sys.stderr)
"""


GRACE_S = 120  # how long a run stopped at the time limit may take to shut its kernel down before it is killed


def _wait(p: subprocess.Popen, timeout: float | None, stop) -> tuple[str | None, str | None, str]:
    """``(stdout, stderr, "")`` when ``p`` ends by itself, ``(None, None, why)`` at ``timeout`` seconds or when the
    ``stop`` event is set (looked at every second)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = None if stop is None else 1.0
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None, None, f"time limit ({timeout:.0f} s)"
            step = left if step is None else min(step, left)
        try:
            out, err = p.communicate(timeout=step)
            return out, err, ""
        except subprocess.TimeoutExpired:
            if stop is not None and stop.is_set():
                return None, None, "stop requested"


def _stop(p: subprocess.Popen) -> tuple[str, str]:
    """Stop a run (SIGTERM to the wrapper's session, the wrapper and the CLI: the CLI shuts its kernel down), killed
    after :data:`GRACE_S` more; its output."""
    try:
        os.killpg(p.pid, signal.SIGTERM)  # the wrapper made a session of its own
    except OSError:
        p.terminate()
    try:
        return p.communicate(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            p.kill()
        return p.communicate()


def run_chapter(chapter: str, runs_file: Path, root: Path, timeout: float | None = None, profile: str = "paper",
                exe: Path | None = None, stop=None) -> dict:
    """Run one chapter at paper scale (nice 19, one kernel) and append its record to ``runs_file``: the CLI's
    output, wall time, and the CPU seconds and peak resident memory of its processes (the CLI and its kernel,
    measured by a wrapper process of their own).  A run still going after ``timeout`` seconds is stopped (SIGTERM
    to the wrapper's session: the CLI shuts its kernel down; killed after :data:`GRACE_S` more) and recorded with
    ``stopped`` and ``checkpoints``, the chunks it finished (kept for the next sitting where its profile resumes);
    so is one whose ``stop`` (a :class:`threading.Event`) is set.  ``profile`` and ``exe`` (the ``shallowflow``
    command) are for tests."""
    from shallowflow.engine import checkpoint

    exe = exe or Path(sys.executable).with_name("shallowflow")
    env = dict(os.environ, SHALLOWFLOW_PROGRESS="0")
    # the code the run starts with: a record is keyed to it only where the code is the same when the run ends (an
    # edit during a run leaves a record that no digest matches, i.e. stale)
    digest0 = chapter_digest(chapter, profile, root)
    t0, l0 = time.time(), os.getloadavg()[0]
    p = subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", _WRAP, str(exe), "run", chapter, "--profile",
                          profile, "--workers", "1", "--quiet"], cwd=root, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        out, err, stopped = _wait(p, timeout, stop)
    except BaseException:  # Ctrl-C of this script (the run's own session does not get it): the run must not outlive it
        _stop(p)
        raise
    if stopped:
        out, err = _stop(p)
    t1, l1 = time.time(), os.getloadavg()[0]
    usage = {}
    for line in reversed(err.splitlines()):
        if line.startswith("{") and '"peak_rss_gb"' in line:
            usage = json.loads(line)
            break
    rec = dict(chapter=chapter, rc=usage.get("rc", p.returncode), wall_s=round(t1 - t0, 1), cpu_s=round(usage.get("cpu_s", float("nan")), 1),
               peak_rss_gb=round(usage.get("peak_rss_gb", float("nan")), 3),
               load_start=l0, load_end=l1, started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
               commit=commit(root), machine=machine(), stdout=out[-1500:], stderr=err[-3000:],
               digest=chapter_digest(chapter, profile, root))
    if rec["digest"] != digest0:
        rec.update(digest=None, code_changed="the code it depends on changed while it ran: keyed to no code")
    if stopped:
        rec.update(stopped=stopped, checkpoints=checkpoint.progress(chapter, since=t0))
    with open(runs_file, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    if rec["rc"] == 0:
        keep_claims(chapter, root / "artifacts" / "claims" / profile, runs_file.parent / DEFAULT_CLAIMS.name)
    return rec


def _resumes(chapter: str, profile: str) -> bool:
    from shallowflow.params import chapters

    try:
        return (yaml.safe_load(chapters.profile_file(chapter, profile).read_text()) or {}).get("resume") is True
    except (OSError, yaml.YAMLError, AttributeError):
        return False


def pending(runs_file: Path, profile: str = "paper", only: list[str] | None = None) -> tuple[list[dict], list[dict]]:
    """``(to_run, left)``: the chapters (of ``only``, else all) with a ``profile`` file whose last successful record in
    ``runs_file`` is missing or stale, cheapest first, each ``dict(chapter, seconds, basis, why, resumes)``
    (``seconds``: the last measured run's executed seconds where one exists, else the package's estimate, else
    unknown: ``inf``, last); ``left``: those this machine refuses (``dict(chapter, why)``).  Starts nothing."""
    from shallowflow.params import chapters
    from shallowflow.executor import estimate as E
    from shallowflow.verdicts.digest import changed

    runs = load_runs(runs_file)
    to_run, left = [], []
    for ch in only or chapters.all_chapters():
        if not chapters.profile_file(ch, profile).exists():
            continue
        rec = runs.get(ch)
        ok = rec if rec and rec["rc"] == 0 else None
        if ok:
            what = changed(ok.get("digest"), chapter_digest(ch, profile))
            if not what:
                continue  # a current record
            why = ("stale: " + what[0] if not ok.get("digest") else
                   "stale: changed " + ", ".join(what[:4]) + (f" and {len(what) - 4} more" if len(what) > 4 else ""))
        else:
            why = "missing" + (f" (the last run ended without a result: {rec.get('stopped') or failure_line(rec)})"
                               if rec else "")
        try:
            e = E.estimate(ch, profile)
        except E.ChapterError as err:
            left.append(dict(chapter=ch, why=" ".join(str(err).split())))
            continue
        if e.refusal:
            left.append(dict(chapter=ch, why=" ".join(e.refusal.split())))
            continue
        if ok:
            seconds, basis = executed_seconds(ok), f"measured {ok.get('started', '?')}"
        elif e.seconds is not None:
            seconds, basis = float(e.seconds), "estimated"
        else:
            seconds, basis = math.inf, "unknown (no Rule.work)"
        to_run.append(dict(chapter=ch, seconds=seconds, basis=basis, why=why, resumes=_resumes(ch, profile)))
    to_run.sort(key=lambda r: (r["seconds"], r["chapter"]))
    return to_run, left


def run_all(plan: list[dict], limit_s: float | None, run, clock=time.monotonic, say=print) -> list[dict]:
    """Run ``plan`` (from :func:`pending`) in its order as far as ``limit_s`` seconds allow (None: no limit):
    ``run(chapter, timeout)`` runs one chapter (``timeout``: the seconds left, or None).  A chapter expected to take
    longer than the time left is not started unless it resumes (its progress is kept: it is started with the time
    left and stopped there); once no time is left nothing more starts.  Returns one row per chapter of the plan:
    ``dict(chapter, done)``, ``done`` one of ``ran`` (with ``rc``), ``stopped``, ``skipped`` (with why)."""
    t0, out = clock(), []
    for item in plan:
        ch = item["chapter"]
        left = None if limit_s is None else limit_s - (clock() - t0)
        if left is not None and left <= 0:
            out.append(dict(chapter=ch, done="skipped", why="no time left"))
            continue
        if left is not None and item["seconds"] > left and not item["resumes"]:
            out.append(dict(chapter=ch, done="skipped",
                            why=f"expected {_fmt_s(item['seconds'])} ({item['basis']}), {_fmt_s(left)} left, "
                                "and its profile does not resume"))
            continue
        say(f"{ch}: {item['why']}; expected {_fmt_s(item['seconds'])} ({item['basis']})"
            + (f", {_fmt_s(left)} left" if left is not None else ""))
        rec = run(ch, left)
        done = "stopped" if rec.get("stopped") else "ran"
        out.append(dict(chapter=ch, done=done, rc=rec.get("rc"), checkpoints=rec.get("checkpoints")))
        say(f"{ch}: rc {rec.get('rc')}, {rec.get('wall_s')} s" + (
            f"; stopped at the {rec['stopped']}, {rec.get('checkpoints', 0)} chunk(s) kept for the next sitting"
            if rec.get("stopped") else ""))
    for row in out:
        if row["done"] == "skipped":
            say(f"{row['chapter']}: not started: {row['why']}")
    return out


def keep_claims(chapter: str, claims_dir: Path, store: Path) -> None:
    """Copy the paper run's claims record next to the runs file, so the verdicts of a run outlive the worktree
    it ran in (written to a temporary name first: a half-written record never replaces a whole one)."""
    found = claims_record(claims_dir, chapter, with_path=True)
    if found:
        d, p = found
        store.mkdir(parents=True, exist_ok=True)
        tmp = store / (p.name + ".tmp")
        tmp.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, store / p.name)


def load_runs(path: Path) -> dict:
    """chapter -> its last record (a later success replaces a failure, a later failure is kept only when no
    success exists)."""
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        prev = out.get(r["chapter"])
        if prev is None or r["rc"] == 0 or prev["rc"] != 0:
            out[r["chapter"]] = r
    return out


def executed_seconds(rec: dict) -> float:
    m = re.search(r"executed \S+ \(paper\) in ([0-9.]+) s", rec.get("stdout", ""))
    return float(m.group(1)) if m else float(rec["wall_s"])


def failure_line(rec: dict) -> str:
    lines = [l.strip() for l in (rec.get("stderr", "") + "\n" + rec.get("stdout", "")).splitlines()
             if l.strip() and not l.strip().startswith("{")]  # not the wrapper's usage record
    pick = [l for l in lines if "failed" in l or "Error" in l or "died" in l or l.startswith("shallowflow:")]
    return (pick or lines or [f"exit status {rec['rc']}"])[-1][:300]


# ------------------------------------------------------------------------------------------------
# verdicts
# ------------------------------------------------------------------------------------------------
def registry(root: Path) -> dict:
    out = {}
    for p in sorted((root / "verdicts").glob("*.yml")):
        doc = yaml.safe_load(p.read_text()) or {}
        out[p.stem] = doc.get("targets") or {}
    return out


def scale_decides(reg: dict) -> dict:
    """chapter -> the checks whose registered cause is ``scale`` with ``decide:`` naming its paper profile."""
    out: dict = {}
    for source, targets in reg.items():
        for target, entry in targets.items():
            for check, c in ((entry or {}).get("checks") or {}).items():
                if isinstance(c, dict) and c.get("cause") == "scale" and c.get("decide"):
                    ch = str(c["decide"]).removeprefix("params/paper/").removesuffix(".yml")
                    out.setdefault(ch, []).append(f"{source}:{target}/{check}")
    return out


def book_verdict(reg: dict, source: str, check_id: str) -> tuple[str, str] | None:
    """(verdict, cause) the registry expects at book scale for ``TARGET/check``."""
    for target, entry in (reg.get(source) or {}).items():
        if check_id.startswith(target + "/"):
            c = (entry.get("checks") or {}).get(check_id[len(target) + 1:])
            if isinstance(c, dict):
                return str(c.get("book")), str(c.get("cause") or "")
    return None


def claims_record(claims_dir: Path, chapter: str, with_path: bool = False):
    """The chapter's claims record in ``claims_dir`` (with its path when ``with_path``), or None."""
    for p in sorted(claims_dir.glob("*.json")):
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if d.get("chapter", "").removeprefix("book/") == chapter:
            return (d, p) if with_path else d
    return None


def verdict_changes(reg: dict, rec: dict) -> list[dict]:
    out = []
    for c in rec.get("checks", []):
        exp = book_verdict(reg, rec["source"], c["id"])
        if exp is None:
            out.append(dict(check=f"{rec['source']}:{c['id']}", book="not in the registry",
                            paper=f"{c['verdict']} (measured {c.get('measured', '')})"))
        elif exp[0] != c["verdict"]:
            book = exp[0] + (f" (cause: {exp[1]})" if exp[1] else "")
            out.append(dict(check=f"{rec['source']}:{c['id']}", book=book,
                            paper=f"{c['verdict']} (measured {c.get('measured', '')}; criterion {c.get('criterion', '')})"))
    for n in rec.get("not_run", []):
        cid = n if isinstance(n, str) else n.get("id", str(n))
        exp = book_verdict(reg, rec["source"], cid)
        if exp and exp[0] != "not-run":
            out.append(dict(check=f"{rec['source']}:{cid}", book=exp[0], paper="not-run"))
    return out


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
def _fmt_s(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def build(root: Path, runs_file: Path, claims_dir: Path) -> dict:
    from shallowflow.params import chapters
    from shallowflow.executor import estimate as E

    timings = json.loads((root / "params" / "timings.json").read_text()).get("book", {})
    runs, reg = load_runs(runs_file), registry(root)
    out = {"machine": machine(), "commit": commit(root), "chapters": {}, "_decides": scale_decides(reg), "_paper_verdicts": {}}
    for ch in chapters.all_chapters():
        book_s = timings.get(ch)
        row = {"book_s": float(book_s) if book_s is not None else None}
        if not chapters.profile_file(ch, "paper").exists():
            row["paper"] = dict(status="none", seconds=None, where="", memory_gb=None, verdict_changes=[],
                                basis="no params/paper file: the book's parameters are the source's scale")
            out["chapters"][ch] = row
            continue
        try:  # the package's own estimate, as `shallowflow run CHAPTER --profile paper --estimate` prints it
            e = E.estimate(ch, "paper")
        except E.ChapterError as err:  # refused for another reason than this machine's budgets
            e, why = None, " ".join(str(err).split())
        else:
            why = " ".join(e.refusal.split())
        mem_gb = e.memory / 2 ** 30 if e is not None and e.memory is not None else None
        est = round(e.seconds, 1) if e is not None and e.seconds is not None else None
        basis_est = "no estimate: " + (why if e is None else "the chapter declares no Rule.work")
        if est is not None:
            basis_est = (f"estimate: book {book_s:.1f} s (params/timings.json) x work ratio {e.ratio:.3g} "
                         f"({e.work:.3g} / {e.book_work:.3g} units, the chapter's Rule.work)")
        where_est = "" if e is None else e.where + (f", about {_fmt_s(est)} here unloaded" if est is not None else "")
        rec = runs.get(ch)
        claims = claims_record(claims_dir, ch)
        changes = verdict_changes(reg, claims) if (claims and rec and rec["rc"] == 0) else []
        if claims:
            out["_paper_verdicts"].setdefault(ch, {}).update(
                {f"{claims['source']}:{c['id']}": f"{c['verdict']} (measured {c.get('measured', '')})" for c in claims["checks"]})
        mem = round(mem_gb, 3) if mem_gb is not None else None
        if why:
            paper = dict(status="refused", seconds=est, where=where_est, basis=why,
                         memory_gb=mem, verdict_changes=[])
        elif rec and rec["rc"] == 0:
            s = executed_seconds(rec)
            paper = dict(status="ran", seconds=s,
                         where=(f"{rec['machine'].split(';')[0]}, " if rec.get("machine") else "this machine, ")
                               + f"nice 19, one kernel, shared (load average {rec['load_start']:.1f} at "
                               f"start, {rec['load_end']:.1f} at end)",
                         basis=f"measured {rec['started']} at {rec.get('commit', '?')}: {s:.1f} s executed, "
                               f"{rec['cpu_s']:.1f} CPU-s" + (f", peak RSS {rec['peak_rss_gb']:.2f} GiB" if rec.get('peak_rss_gb') else "")
                               + "; the extrapolation had estimated "
                               f"{_fmt_s(est)} ({basis_est.removeprefix('estimate: ')})",
                         memory_gb=mem, verdict_changes=changes, verdicts_compared=claims is not None)
        else:
            failed = (f"; a paper run here ended without a result after {rec['wall_s']:.0f} s ({rec['cpu_s']:.0f} CPU-s, a "
                      f"lower bound of its cost): {failure_line(rec)}") if rec else ""
            if rec and rec.get("stopped"):
                failed = (f"; a paper run here was stopped at the {rec['stopped']} of --run --all after "
                          f"{rec['wall_s']:.0f} s, leaving {rec.get('checkpoints', 0)} finished chunk(s) in "
                          "artifacts/checkpoints (a resumed run continues there)")
            paper = dict(status="estimated", seconds=est, where=where_est, basis=basis_est + failed,
                         memory_gb=mem, verdict_changes=[])
        row["paper"] = paper
        row["_estimate_s"] = est  # for the table only (removed from the JSON)
        row["_cpu_s"] = rec["cpu_s"] if rec and rec["rc"] == 0 else None
        row["_stopped"] = rec if rec and rec["rc"] != 0 and not why else None
        out["chapters"][ch] = row
    return out


def markdown(data: dict) -> str:
    ch = data["chapters"]
    lines = ["# Paper edition: cost and verdicts per chapter", "",
             "Generated by `benchmarks/paper_scale.py` (do not edit by hand). "
             f"Machine: {data['machine']}. Code: {data['commit']}.", "",
             "*ran*: measured by `shallowflow run CHAPTER --profile paper` (nice 19, one kernel, the machine shared "
             "with other jobs, so wall times are upper bounds); *estimated*: book time x the ratio of the chapter's "
             "work estimate at paper and book parameters (an estimate, basis in the column); *refused*: the "
             "profile's own rules refuse it on this machine; *none*: no paper profile (the book runs at the "
             "source's scale).", "",
             "| chapter | book s | paper | paper time | where | memory (GiB) | basis | verdicts that differ from book |",
             "|---|---|---|---|---|---|---|---|"]
    for name, row in ch.items():
        p = row["paper"]
        vc = "; ".join(f"`{c['check']}` {c['book']} -> {c['paper']}" for c in p["verdict_changes"]) or \
             ("-" if p["status"] != "ran" else "none" if p.get("verdicts_compared", True) else
              "not known: the run's claims record was not kept (it ran before records were kept in "
              "benchmarks/paper_claims/); run it again to compare")
        mem = f"{p['memory_gb']:.2g}" if p["memory_gb"] is not None else "-"
        book = f"{row['book_s']:.1f}" if row["book_s"] is not None else "-"
        basis = p["basis"].replace("|", "/")
        lines.append(f"| {name} | {book} | {p['status']} | {_fmt_s(p['seconds'])} | {p['where']} | {mem} | "
                     f"{basis} | {vc.replace('|', '/')} |")
    decides = data.get("_decides", {})
    if decides:
        lines += ["", "## Checks whose registered cause is `scale`, and the paper profile that decides them", "",
                  "| paper profile | status | checks (book verdict: fail, cause: scale) -> paper verdict where it ran |",
                  "|---|---|---|"]
        paper_v = data.get("_paper_verdicts", {})
        for name, ids in sorted(decides.items()):
            st = ch.get(name, {}).get("paper", {}).get("status", "missing")
            got = paper_v.get(name, {}) if st == "ran" else {}
            cells = [f"`{i}`" + (f" -> {got[i]}" if i in got else "") for i in ids]
            lines.append(f"| {name} | {st} | {', '.join(cells)} |")
    ran = [(n, r) for n, r in ch.items() if r["paper"]["status"] == "ran"]
    stopped = [(n, r) for n, r in ch.items() if r.get("_stopped")]
    if ran or stopped:
        lines += ["", "## The extrapolation against the measured runs", "",
                  "The estimate is unloaded time (book_s was measured on the CI machine); the executed time here is "
                  "inflated by the other jobs (nice 19), so the CPU seconds of the run's processes (the CLI and its "
                  "kernel) are the fairer comparison.", "",
                  "| chapter | estimated | executed | CPU s of the run | executed / estimated | CPU / estimated |",
                  "|---|---|---|---|---|---|"]
        for n, r in ran:
            est, s, cpu = r.get("_estimate_s"), r["paper"]["seconds"], r.get("_cpu_s")
            ratio = f"{s / est:.2f}" if est else "-"
            cratio = f"{cpu / est:.2f}" if est and cpu is not None else "-"
            lines.append(f"| {n} | {_fmt_s(est)} | {s:.1f} s | {cpu} | {ratio} | {cratio} |")
        for n, r in stopped:
            est, rec = r.get("_estimate_s"), r["_stopped"]
            ratio = f"> {rec['wall_s'] / est:.2f}" if est else "-"
            cratio = f"> {rec['cpu_s'] / est:.2f}" if est else "-"
            lines.append(f"| {n} (ended without a result) | {_fmt_s(est)} | > {rec['wall_s']:.0f} s | > {rec['cpu_s']} | "
                         f"{ratio} | {cratio} |")
    total = sum(r["paper"]["seconds"] or 0 for r in ch.values() if r["paper"]["status"] in ("estimated", "refused"))
    lines += ["", f"Estimated paper time of the chapters not run: {total / 3600:.1f} hours on this machine, unloaded "
              "(an estimate; refused chapters included at their estimated time).", ""]
    notes = HERE / "paper_scale.notes.md"
    if notes.exists():
        lines += ["## Notes (benchmarks/paper_scale.notes.md)", "", notes.read_text().strip(), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", nargs="*", default=None, metavar="CHAPTER", help="run these chapters at paper scale first")
    ap.add_argument("--all", action="store_true",
                    help="with --run: every chapter whose record is missing or stale, cheapest first")
    ap.add_argument("--hours", type=float, default=None,
                    help="with --run --all: stop starting (and stop a run still going) after this many hours")
    ap.add_argument("--plan", action="store_true", help="say what --run --all would run, in order, and stop")
    ap.add_argument("--runs", type=Path, default=DEFAULT_RUNS, help="the runs file (JSON lines)")
    ap.add_argument("--claims", type=Path, default=None,
                    help="claims records of the paper runs (default: paper_claims/ beside the runs file)")
    ap.add_argument("--out", type=Path, default=HERE, help="folder for paper_scale.json and .md")
    a = ap.parse_args(argv)
    from shallowflow.verdicts import repo_root

    root = repo_root()
    claims = a.claims or a.runs.parent / DEFAULT_CLAIMS.name
    if a.hours is not None and not (a.hours > 0 and math.isfinite(a.hours)):
        ap.error(f"--hours must be a positive number of hours, got {a.hours}")
    if a.plan or a.all:
        if a.all and a.run is None:
            ap.error("--all goes with --run (--run --all)")
        plan, left = pending(a.runs, only=a.run or None)
        for item in plan:
            print(f"{item['chapter']}: {item['why']}; expected {_fmt_s(item['seconds'])} ({item['basis']})"
                  + ("; resumes" if item["resumes"] else ""))
        for item in left:
            print(f"{item['chapter']}: not on this machine: {item['why']}")
        if a.plan:
            return 0
        run_all(plan, None if a.hours is None else a.hours * 3600,
                lambda ch, timeout: run_chapter(ch, a.runs, root, timeout=timeout))
    else:
        for chapter in a.run or []:
            rec = run_chapter(chapter, a.runs, root)
            print(f"{chapter}: rc {rec['rc']}, {rec['wall_s']} s")
    data = build(root, a.runs, claims)
    md = markdown(data)
    data.pop("_decides", None)
    data.pop("_paper_verdicts", None)
    cpu_ratios = [r["_cpu_s"] / r["_estimate_s"] for r in data["chapters"].values()
                  if r.get("_cpu_s") and r.get("_estimate_s")]
    if cpu_ratios:  # CPU seconds of the measured runs over their estimate (read by shallowflow run --estimate)
        data["extrapolation_spread"] = dict(low=round(min(cpu_ratios), 2), high=round(max(cpu_ratios), 2),
                                            runs=len(cpu_ratios), measure="CPU seconds of the run / estimate")
    for row in data["chapters"].values():
        row.pop("_estimate_s", None)
        row.pop("_cpu_s", None)
        row.pop("_stopped", None)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "paper_scale.json").write_text(json.dumps(data, indent=1) + "\n")
    (a.out / "paper_scale.md").write_text(md)
    print(f"wrote {a.out / 'paper_scale.json'} and {a.out / 'paper_scale.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
