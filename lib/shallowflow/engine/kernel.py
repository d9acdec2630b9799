"""A fused CPU kernel for two-layer networks: the whole gradient-descent loop in C.

The networks of the sources are tiny (m ~ 10-200 neurons, n ~ 2-200 samples), so a torch step costs
a dozen operator dispatches of 2-5 us each while the arithmetic takes well under a microsecond.
This module removes the dispatches: a small C file (embedded below, no dependency but a C compiler)
is compiled once per machine with the system ``cc`` into a cache directory and called through
``ctypes`` on the float64 storage of the tensors.  One call trains every run of an ensemble for a
chunk of iterations, writes the loss history and the snapshots into preallocated buffers, and
stops runs that converge or diverge at the exact iteration where they do.

Runs are independent loops inside the kernel (optionally split over OpenMP threads), so a run's
trajectory is bit-for-bit the same whether it is trained alone or in an ensemble of any size.

Conventions are those of :mod:`shallowflow.engine.models` (sigma'(0) = 0 for ReLU, ``leak`` for leaky
ReLU below 0, output factor c_m, loss factor 1/2 or 1).  The kernel is used on the CPU when a C
compiler is found; ``SHALLOWFLOW_KERNEL=torch`` disables it.  :func:`available` says whether it
loaded, :func:`reason` why not, :func:`engine_line` which engine runs and why.

A cached library is verified before it is loaded: the SHA-256 recorded next to it at build
(``kernel-<key>-<n>.so.sha256``) must match, and the library must export :data:`SYMBOLS`.  A
truncated, replaced or foreign file is rebuilt once, with one line on stderr saying so; the verified
bytes are loaded from a private copy, so a later change to the cache file cannot crash a running
process (SIGBUS).

The cache is used only in a folder this user owns that no one else may write (:func:`_private`: not a
symlink, owned by the current user, not writable by group or others), and only files of the same kind
are read from it: a library planted by another user, with a checksum beside it, is never loaded.  When
neither ``SHALLOWFLOW_CACHE`` (or the checkout's ``artifacts/cache/kernel``, ``~/.cache/shallowflow`` for an
installed package) nor ``$TMPDIR/shallowflow-<uid>`` is such a
folder, the library is built in a fresh private folder (``mkdtemp``) that is removed once it is loaded.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import torch

from .environ import kernel_from_env

ACT_CODES = {"relu": 0, "leaky_relu": 1, "sigmoid": 2, "tanh": 3}

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* Per run, the step works on scratch arrays laid out sample-major so that the inner loops run over
   the m neurons (contiguous, vectorisable):  Z, S, D (n x m) = <w_j, x_k>, sigma, sigma'.
   ReLU: sigma'(0) = 0; leaky ReLU: slope `leak` for z <= 0. */
#define ACT_RELU(z, s, ds)    { ds = (z) > 0.0 ? 1.0 : 0.0; s = (z) * ds; }
#define ACT_LEAKY(z, s, ds)   { ds = (z) > 0.0 ? 1.0 : leak; s = (z) * ds; }
#define ACT_SIGMOID(z, s, ds) { double e_ = 1.0 / (1.0 + exp(-(z))); s = e_; ds = e_ * (1.0 - e_); }
#define ACT_TANH(z, s, ds)    { double t_ = tanh(z); s = t_; ds = 1.0 - t_ * t_; }

/* forward pass of one run; res (n) = c h - y.  Returns sum_k res_k^2. */
#define FORWARD_BODY(ACT)                                                                          \
    for (i64 k = 0; k < n; k++) {                                                                  \
        const double *x = X + k * d;                                                               \
        double *Sk = S + k * m, *Dk = D + k * m;                                                   \
        for (i64 j = 0; j < m; j++) Sk[j] = 0.0;                                                   \
        for (i64 i = 0; i < d; i++) {                                                              \
            const double xi = x[i];                                                                \
            for (i64 j = 0; j < m; j++) Sk[j] += W[j * d + i] * xi;                                \
        }                                                                                          \
        double h0 = 0.0, h1 = 0.0, h2 = 0.0, h3 = 0.0;                                             \
        i64 j = 0;                                                                                 \
        for (; j < m; j++) { double z = Sk[j], s_, ds_; ACT(z, s_, ds_); Sk[j] = s_; Dk[j] = ds_; } \
        for (j = 0; j + 4 <= m; j += 4) {                                                          \
            h0 += a[j] * Sk[j]; h1 += a[j + 1] * Sk[j + 1];                                        \
            h2 += a[j + 2] * Sk[j + 2]; h3 += a[j + 3] * Sk[j + 3];                                \
        }                                                                                          \
        for (; j < m; j++) h0 += a[j] * Sk[j];                                                     \
        res[k] = c * ((h0 + h1) + (h2 + h3)) - y[k];                                               \
    }

static double forward(int kind, double leak, i64 m, i64 n, i64 d, const double *a, const double *W,
                      const double *X, const double *y, double c, double *S, double *D, double *res) {
    switch (kind) {
    case 0: FORWARD_BODY(ACT_RELU) break;
    case 1: FORWARD_BODY(ACT_LEAKY) break;
    case 2: FORWARD_BODY(ACT_SIGMOID) break;
    default: FORWARD_BODY(ACT_TANH) break;
    }
    double ss = 0.0;
    for (i64 k = 0; k < n; k++) ss += res[k] * res[k];
    return ss;
}

/* gradients of one run from the forward quantities; g (n) = dL/dh:
   dL/da_j = c sum_k S_kj g_k,  dL/dw_j = c a_j sum_k D_kj g_k x_k.
   ga (m) and V (m x d, the sum) are scratch/outputs.  When lr != 0 the run is updated in place
   (W -= lr gW with the old a, then a -= lr ga); otherwise gW = c a V is written to gW. */
static void backward(i64 m, i64 n, i64 d, double *a, double *W, const double *X, const double *S,
                     const double *D, const double *g, double c, double lr, double *ga, double *V,
                     double *gW) {
    for (i64 j = 0; j < m; j++) ga[j] = 0.0;
    for (i64 q = 0; q < m * d; q++) V[q] = 0.0;
    for (i64 k = 0; k < n; k++) {
        const double gk = g[k];
        const double *Sk = S + k * m, *Dk = D + k * m, *x = X + k * d;
        for (i64 j = 0; j < m; j++) ga[j] += Sk[j] * gk;
        for (i64 i = 0; i < d; i++) {
            const double xi = x[i] * gk;
            for (i64 j = 0; j < m; j++) V[j * d + i] += Dk[j] * xi;
        }
    }
    if (lr != 0.0) {
        const double lc = lr * c;
        for (i64 j = 0; j < m; j++) {
            const double caj = lc * a[j];
            for (i64 i = 0; i < d; i++) W[j * d + i] -= caj * V[j * d + i];
        }
        for (i64 j = 0; j < m; j++) a[j] -= lc * ga[j];
    } else {
        for (i64 j = 0; j < m; j++) {
            const double caj = c * a[j];
            for (i64 i = 0; i < d; i++) gW[j * d + i] = caj * V[j * d + i];
            ga[j] *= c;
        }
    }
}

/* Loss (R) and gradients (R x m, R x m x d) of R runs.  xs, ys: run strides of X and y (0: shared). */
int sf_grad(i64 R, i64 m, i64 n, i64 d, const double *a, const double *W, const double *X, i64 xs,
            const double *y, i64 ys, int kind, double leak, double c, double lf,
            double *L, double *ga, double *gW, int nthreads) {
    int fail = 0;
    #pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1 && R > 1)
    for (i64 r = 0; r < R; r++) {
        double *buf = (double *)malloc(sizeof(double) * (2 * m * n + 2 * n + m * d));
        if (!buf) { fail = 1; continue; }
        double *S = buf, *D = buf + m * n, *res = D + m * n, *g = res + n, *V = g + n;
        const double ss = forward(kind, leak, m, n, d, a + r * m, W + r * m * d, X + r * xs, y + r * ys,
                                  c, S, D, res);
        L[r] = lf * ss / (double)n;
        const double f = 2.0 * lf / (double)n;
        for (i64 k = 0; k < n; k++) g[k] = f * res[k];
        backward(m, n, d, (double *)(a + r * m), (double *)(W + r * m * d), X + r * xs, S, D, g, c, 0.0,
                 ga + r * m, V, gW + r * m * d);
        free(buf);
    }
    return fail;
}

/* The gradient-flow field of one run on a packed state th (m x q, q = 1 + d, rows (a_j, w_j)):
   out = -grad L (same layout); returns L.  w: scratch of 2 m n + 2 n + 3 m d + 2 m doubles. */
static double field1(int kind, double leak, i64 m, i64 n, i64 d, const double *th, const double *X,
                     const double *y, double c, double lf, double *out, double *w) {
    const i64 q = d + 1;
    double *S = w, *D = w + m * n, *res = D + m * n, *g = res + n, *V = g + n;
    double *a = V + m * d, *W = a + m, *ga = W + m * d, *gW = ga + m;
    for (i64 j = 0; j < m; j++) {
        a[j] = th[j * q];
        for (i64 i = 0; i < d; i++) W[j * d + i] = th[j * q + 1 + i];
    }
    const double L = lf * forward(kind, leak, m, n, d, a, W, X, y, c, S, D, res) / (double)n;
    const double f = 2.0 * lf / (double)n;
    for (i64 k = 0; k < n; k++) g[k] = f * res[k];
    backward(m, n, d, a, W, X, S, D, g, c, 0.0, ga, V, gW);
    for (i64 j = 0; j < m; j++) {
        out[j * q] = -ga[j];
        for (i64 i = 0; i < d; i++) out[j * q + 1 + i] = -gW[j * d + i];
    }
    return L;
}

/* Loss and -grad L of R runs on packed states (R x m x q); runs with skip[r] != 0 are left out. */
int sf_field(i64 R, i64 m, i64 n, i64 d, const double *th, const double *X, i64 xs, const double *y,
             i64 ys, int kind, double leak, double c, double lf, double *L, double *out,
             const int32_t *skip, int nthreads) {
    int fail = 0;
    const i64 q = d + 1;
    #pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1 && R > 1)
    for (i64 r = 0; r < R; r++) {
        if (skip && skip[r]) continue;
        double *w = (double *)malloc(sizeof(double) * (2 * m * n + 2 * n + 3 * m * d + 2 * m));
        if (!w) { fail = 1; continue; }
        L[r] = field1(kind, leak, m, n, d, th + r * m * q, X + r * xs, y + r * ys, c, lf, out + r * m * q, w);
        free(w);
    }
    return fail;
}

/* Dormand-Prince 5(4) with per-run adaptive steps and per-neuron relative error control: see
   shallowflow.engine.flow.gradient_flow, whose torch loop this mirrors step for step.  Per run r:
   th (m x q) in/out, t, h in/out, status: 0 running, 1 reached T, 2 L < stop_below, 3 step-size
   underflow.  Records (t, L) of accepted points into rec_t/rec_L (R x cap) at count[r]; returns to
   the caller when a run's records are full (status stays 0) or after maxit attempts. */
static const double DP_A[7][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
static const double DP_E[7] = {71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200,
                               22.0 / 525, -1.0 / 40};

/* Store run r's packed state x (m x (d+1)) into every snapshot slot whose time has come (snaps[ns] <= t);
   returns the next pending slot. */
static i64 snap_due(i64 R, i64 m, i64 d, i64 r, const double *x, double t, const double *snaps, i64 S,
                    i64 ns, double *snap_a, double *snap_W) {
    const i64 q = d + 1;
    while (ns < S && t >= snaps[ns]) {
        for (i64 j = 0; j < m; j++) {
            snap_a[(ns * R + r) * m + j] = x[j * q];
            for (i64 i = 0; i < d; i++) snap_W[((ns * R + r) * m + j) * d + i] = x[j * q + 1 + i];
        }
        ns++;
    }
    return ns;
}

int sf_flow(i64 R, i64 m, i64 n, i64 d, double *th, const double *X, i64 xs, const double *y, i64 ys,
            int kind, double leak, double c, double lf, double *t, double *h, const double *T,
            const double *snaps, i64 S, i64 *next_snap, double *snap_a, double *snap_W,
            double *rec_t, double *rec_L, i64 cap, i64 *count, double *Lcur, int32_t *status,
            double *stopped_at, i64 *nacc, i64 *nrej, double rtol, double atol, double stop_below,
            i64 maxit, int nthreads) {
    int fail = 0;
    const i64 q = d + 1, mq = m * q;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) if (nthreads > 1 && R > 1)
    for (i64 r = 0; r < R; r++) {
        if (status[r] != 0) continue;
        double *buf = (double *)malloc(sizeof(double) * (9 * mq + 2 * m * n + 2 * n + 3 * m * d + 2 * m + m));
        if (!buf) { fail = 1; continue; }
        double *K = buf, *Y = K + 7 * mq, *Ev = Y + mq, *nrm = Ev + mq, *w = nrm + m;
        double *x = th + r * mq;
        const double *Xr = X + r * xs, *yr = y + r * ys;
        double tr = t[r], hr = h[r];
        const double Tr = T[r];
        i64 ns = next_snap[r], cnt = count[r];
        double L = field1(kind, leak, m, n, d, x, Xr, yr, c, lf, K, w);
        if (cnt == 0) {  /* the starting point: record, snapshots at t = 0, stop tests */
            rec_t[r * cap] = tr; rec_L[r * cap] = L; cnt = 1;
            ns = snap_due(R, m, d, r, x, tr, snaps, S, ns, snap_a, snap_W);
            if (L < stop_below) { status[r] = 2; stopped_at[r] = tr; }
            else if (tr >= Tr) status[r] = 1;
        }
        for (i64 j = 0; j < m; j++) {
            double s2 = 0.0;
            for (i64 i = 0; i < q; i++) s2 += x[j * q + i] * x[j * q + i];
            nrm[j] = sqrt(s2);
        }
        for (i64 it = 0; it < maxit && status[r] == 0 && cnt < cap; it++) {
            const double target = (ns < S && snaps[ns] < Tr) ? snaps[ns] : Tr;
            const double hs = hr < target - tr ? hr : target - tr;
            double Lnew = 0.0;
            for (i64 st = 1; st < 7; st++) {
                for (i64 p = 0; p < mq; p++) {
                    double acc = x[p];
                    for (i64 j = 0; j < st; j++)
                        if (DP_A[st][j] != 0.0) acc += DP_A[st][j] * K[j * mq + p] * hs;
                    Y[p] = acc;
                }
                Lnew = field1(kind, leak, m, n, d, Y, Xr, yr, c, lf, K + st * mq, w);
            }
            for (i64 p = 0; p < mq; p++) {
                double e = 0.0;
                for (i64 j = 0; j < 7; j++)
                    if (DP_E[j] != 0.0) e += DP_E[j] * K[j * mq + p];
                Ev[p] = e;
            }
            double E = 0.0;
            int finite = isfinite(Lnew);
            for (i64 j = 0; j < m; j++) {
                double e2 = 0.0, y2 = 0.0;
                for (i64 i = 0; i < q; i++) { e2 += Ev[j * q + i] * Ev[j * q + i]; y2 += Y[j * q + i] * Y[j * q + i]; }
                const double en = sqrt(e2) * fabs(hs);
                const double yn = sqrt(y2);
                const double sc = atol + rtol * (nrm[j] > yn ? nrm[j] : yn);
                const double ratio = en == 0.0 ? 0.0 : en / sc;
                if (!isfinite(ratio)) finite = 0;
                if (ratio > E || ratio != ratio) E = ratio;
            }
            if (!isfinite(E)) finite = 0;
            const int accept = finite && E <= 1.0;
            double fac = E > 0.0 ? 0.9 * pow(E, -0.2) : 5.0;
            if (!finite) fac = 0.2;
            double hnew;
            if (accept) {
                const double grow = fac < 0.2 ? 0.2 : (fac > 5.0 ? 5.0 : fac);
                hnew = hs * grow;
                if (hs < hr && hr > hnew) hnew = hr;
            } else {
                const double grow = fac < 0.2 ? 0.2 : (fac > 1.0 ? 1.0 : fac);
                hnew = hs * grow;
            }
            if (hnew == 0.0 || hnew <= 1e-15 * fabs(tr)) { status[r] = 3; break; }
            if (accept) {
                memcpy(x, Y, sizeof(double) * mq);
                memcpy(K, K + 6 * mq, sizeof(double) * mq);
                for (i64 j = 0; j < m; j++) {
                    double s2 = 0.0;
                    for (i64 i = 0; i < q; i++) s2 += x[j * q + i] * x[j * q + i];
                    nrm[j] = sqrt(s2);
                }
                L = Lnew;
                tr = (hs == target - tr) ? target : tr + hs;
                nacc[r]++;
                rec_t[r * cap + cnt] = tr; rec_L[r * cap + cnt] = L; cnt++;
                ns = snap_due(R, m, d, r, x, tr, snaps, S, ns, snap_a, snap_W);
                if (L < stop_below) { status[r] = 2; stopped_at[r] = tr; }
                else if (tr >= Tr) status[r] = 1;
            } else {
                nrej[r]++;
            }
            hr = hnew;
        }
        t[r] = tr; h[r] = hr; next_snap[r] = ns; count[r] = cnt; Lcur[r] = L;
        free(buf);
    }
    return fail;
}

/* Gradient descent, iterations k in [k0, k1) of a run of `steps` iterations.  At iteration k, per run:
   snapshot (if k is in snaps), loss L_k, record (if k % rec == 0), stop tests, then (k < steps) the
   update.  status: 0 active, 1 converged (L < stop_below), 2 diverged (non-finite or L > explode L0).
   masked = 0: a diverged run stops and its bad loss is recorded (the caller raises);
   masked = 1: it stops and NaN is recorded from then on.  Stopped runs keep their parameters. */
int sf_gd(i64 R, i64 m, i64 n, i64 d, double *a, double *W, const double *X, i64 xs, const double *y,
          i64 ys, const double *lr, int kind, double leak, double c, double lf,
          i64 k0, i64 k1, i64 steps, i64 rec, double *hist, i64 K,
          const i64 *snaps, i64 nsnap, double *snap_a, double *snap_W,
          int32_t *status, i64 *stopped_at, double *L0, double *Llast,
          double stop_below, double explode, int masked, int nthreads) {
    int fail = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) if (nthreads > 1 && R > 1)
    for (i64 r = 0; r < R; r++) {
        double *buf = (double *)malloc(sizeof(double) * (2 * m * n + 2 * n + m * d + m));
        if (!buf) { fail = 1; continue; }
        double *S = buf, *D = buf + m * n, *res = D + m * n, *g = res + n, *V = g + n, *ga = V + m * d;
        double *ar = a + r * m, *Wr = W + r * m * d;
        const double *Xr = X + r * xs, *yr = y + r * ys;
        const double lrr = lr[r], f = 2.0 * lf / (double)n;
        i64 si = 0;
        while (si < nsnap && snaps[si] < k0) si++;
        for (i64 k = k0; k < k1; k++) {
            if (si < nsnap && snaps[si] == k) {
                memcpy(snap_a + (si * R + r) * m, ar, sizeof(double) * m);
                memcpy(snap_W + (si * R + r) * m * d, Wr, sizeof(double) * m * d);
                si++;
            }
            if (status[r] != 0) {  /* stopped: frozen parameters, frozen (or NaN) loss */
                if (k % rec == 0) hist[r * K + k / rec] = (status[r] == 1) ? Llast[r] : NAN;
                if (!masked && status[r] == 2) break;
                continue;
            }
            const double L = lf * forward(kind, leak, m, n, d, ar, Wr, Xr, yr, c, S, D, res) / (double)n;
            if (k == 0) L0[r] = L;
            Llast[r] = L;
            int bad = !isfinite(L) || L > explode * L0[r];
            if (k % rec == 0) hist[r * K + k / rec] = (bad && masked) ? NAN : L;
            if (bad) { status[r] = 2; stopped_at[r] = k; if (!masked) break; continue; }
            if (L < stop_below) { status[r] = 1; stopped_at[r] = k; continue; }
            if (k >= steps) continue;
            for (i64 q = 0; q < n; q++) g[q] = f * res[q];
            backward(m, n, d, ar, Wr, Xr, S, D, g, c, lrr, ga, V, NULL);
        }
        free(buf);
    }
    return fail;
}
"""

_lock = threading.Lock()
_lib = None
_reason = "not loaded yet"
_tried = False
_flags_used = ""


def _cache_dir() -> Path:
    """SHALLOWFLOW_CACHE; else the checkout's ``artifacts/cache/kernel`` (nothing outside the repository is written);
    else, for an installed package, ``$XDG_CACHE_HOME/shallowflow`` (``~/.cache``)."""
    if os.environ.get("SHALLOWFLOW_CACHE"):
        return Path(os.environ["SHALLOWFLOW_CACHE"])
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file() and (checkout / "lib" / "shallowflow").is_dir():
        return checkout / "artifacts" / "cache" / "kernel"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "shallowflow"


def _private(path: Path, folder: bool = True) -> str | None:
    """Why ``path`` may not be trusted (None when it may): it must not be a symlink, must be owned by this
    user and not writable by group or others (checked with lstat: a link is never followed)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"{path}: {e.strerror}"
    import stat

    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symlink"
    if folder != stat.S_ISDIR(st.st_mode):
        return f"{path} is not a {'folder' if folder else 'file'}"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} is owned by uid {st.st_uid}, not by this user ({os.getuid()})"
    if st.st_mode & 0o022:
        return f"{path} is writable by {'group and others' if st.st_mode & 0o022 == 0o022 else 'group' if st.st_mode & 0o020 else 'others'} (mode {st.st_mode & 0o777:o})"
    return None


def _private_dir(path: Path) -> str | None:
    """Create ``path`` (mode 700) when missing, then :func:`_private`; None when it may hold the cache."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        return f"{path}: {e.strerror}"
    return _private(path)


def _extra_flags() -> list[str]:
    """Extra compiler flags from SHALLOWFLOW_CFLAGS (part of the cache key)."""
    return os.environ.get("SHALLOWFLOW_CFLAGS", "").split()


def _cpu_id() -> str:
    """What -march=native depends on: the CPU model and flags (part of the cache key)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [l for l in f.read().splitlines() if l.startswith(("model name", "flags"))]
        return "\n".join(sorted(set(lines)))
    except OSError:
        return os.uname().machine


SYMBOLS = ("sf_grad", "sf_field", "sf_flow", "sf_gd")  # what a cached library must export


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sidecar(so: Path) -> Path:
    """The checksum recorded at build, next to the library."""
    return so.with_name(so.name + ".sha256")


def _compile(src: str, out: Path, flags: list[str]) -> None:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("no C compiler (cc, gcc or clang) on PATH")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        c_file = Path(tmp) / "kernel.c"
        c_file.write_text(src)
        so = Path(tmp) / out.name
        # relative names from inside the folder: the library's bytes do not depend on the temporary path, so
        # concurrent builders write identical files (and identical checksums)
        cmd = [cc, "-O3", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC", *flags, *_extra_flags(),
               c_file.name, "-o", so.name, "-lm"]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        sums = Path(tmp) / "sum"
        sums.write_text(_digest(so.read_bytes()) + "\n")
        os.chmod(so, 0o755)  # whatever the umask: a group-writable file would not be trusted (_private)
        os.chmod(sums, 0o644)
        # atomic: concurrent processes never see a half-written library or checksum (a race between two
        # builders can pair one's checksum with the other's library: the next load rebuilds once)
        os.replace(sums, _sidecar(out))
        os.replace(so, out)


def _verified_bytes(so: Path) -> bytes:
    """The library's bytes if they match the checksum recorded at build (RuntimeError saying why not)."""
    for path in (so, _sidecar(so)):
        if os.path.lexists(path) and (why := _private(path, folder=False)):
            raise RuntimeError(f"not trusted: {why}")
    data = so.read_bytes()
    side = _sidecar(so)
    if not side.exists():
        raise RuntimeError("no checksum recorded at build")
    if _digest(data) != side.read_text().strip():
        raise RuntimeError(f"checksum mismatch ({len(data)} bytes: truncated, replaced or corrupt)")
    if not data.startswith(b"\x7fELF") and sys.platform.startswith("linux"):
        raise RuntimeError("not an ELF shared library")
    return data


def _open_verified(so: Path):
    """dlopen a private copy of the verified bytes, so that nothing done to the cache file later (a
    truncation, a rebuild) can reach the mapped library (no SIGBUS); then check the symbols."""
    data = _verified_bytes(so)
    try:
        fd, tmp = tempfile.mkstemp(prefix=so.stem + "-", suffix=".so", dir=so.parent)
    except OSError:  # a read-only cache: the private copy goes to the temporary folder
        fd, tmp = tempfile.mkstemp(prefix=so.stem + "-", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        lib = ctypes.CDLL(tmp)
    finally:
        os.unlink(tmp)  # the mapping stays valid; nothing is left behind
    missing = [name for name in SYMBOLS if not hasattr(lib, name)]
    if missing:
        raise RuntimeError(f"missing symbol(s) {', '.join(missing)}")
    return lib


def _load_or_build(so: Path, flags: list[str]):
    """Load the cached library after verifying it; a missing one is built, one that fails verification
    (or loading) is rebuilt once, with one line on stderr saying so."""
    if not so.exists():
        _compile(SOURCE, so, flags)
        return _open_verified(so), "built"
    try:
        return _open_verified(so), "cached"
    except (OSError, RuntimeError) as e:
        why = str(e).splitlines()[0]
    print(f"shallowflow: the cached kernel {so} failed verification ({why}); rebuilding it", file=sys.stderr)
    _compile(SOURCE, so, flags)
    return _open_verified(so), f"rebuilt: the cached file failed verification ({why})"


def _load():
    global _lib, _reason, _tried, _flags_used
    with _lock:
        if _tried:
            return _lib
        _tried = True
        if kernel_from_env() == "torch":
            _reason = "disabled by SHALLOWFLOW_KERNEL"
            return None
        key = hashlib.sha256((SOURCE + sys.platform + _cpu_id() + " ".join(_extra_flags())).encode()
                             ).hexdigest()[:16]
        errors = []
        uid = os.getuid() if hasattr(os, "getuid") else 0
        for base in (_cache_dir(), Path(tempfile.gettempdir()) / f"shallowflow-{uid}", None):
            if base is None:  # no trusted cache: a fresh private folder, removed once the library is loaded
                try:
                    with tempfile.TemporaryDirectory(prefix="shallowflow-kernel-") as fresh:
                        if _try_load(Path(fresh), key, errors, "no trusted cache; built in a private folder"):
                            return _lib
                except OSError as e:
                    errors.append(str(e).splitlines()[0])
                break
            why = _private_dir(base)
            if why:
                errors.append(f"cache not used: {why}")
                continue
            if _try_load(base, key, errors):
                return _lib
        _reason = "; ".join(errors) or "unknown failure"
        return None


def _try_load(base: Path, key: str, errors: list, note: str = "") -> bool:
    """Load (or build) the library in the trusted folder ``base``; True when it loaded."""
    global _lib, _reason, _flags_used
    # -march=native: ~25% faster steps (AVX); -fopenmp: runs split over threads when asked
    for flags in (["-march=native", "-fopenmp"], ["-fopenmp"], []):
        so = base / f"kernel-{key}-{len(flags)}.so"
        try:
            lib, how = _load_or_build(so, flags)
        except (OSError, RuntimeError) as e:
            errors.append(str(e).splitlines()[0])
            continue
        _declare(lib)
        _lib, _reason = lib, (note or f"{how} {so}") + (f" ({' '.join(flags)})" if flags else "")
        _flags_used = " ".join(flags)
        return True
    return False


def _reset() -> None:
    """Forget the loaded library (tests: load again from another cache)."""
    global _lib, _reason, _tried
    with _lock:
        _lib, _reason, _tried = None, "not loaded yet", False


def _declare(lib) -> None:
    i64, dbl, ptr, i32 = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int
    lib.sf_grad.argtypes = [i64, i64, i64, i64, ptr, ptr, ptr, i64, ptr, i64, i32, dbl, dbl, dbl,
                            ptr, ptr, ptr, i32]
    lib.sf_grad.restype = i32
    lib.sf_field.argtypes = [i64, i64, i64, i64, ptr, ptr, i64, ptr, i64, i32, dbl, dbl, dbl, ptr, ptr,
                             ptr, i32]
    lib.sf_field.restype = i32
    lib.sf_flow.argtypes = [i64, i64, i64, i64, ptr, ptr, i64, ptr, i64, i32, dbl, dbl, dbl, ptr, ptr, ptr,
                            ptr, i64, ptr, ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr, ptr, ptr, ptr, dbl, dbl, dbl,
                            i64, i32]
    lib.sf_flow.restype = i32
    lib.sf_gd.argtypes = [i64, i64, i64, i64, ptr, ptr, ptr, i64, ptr, i64, ptr, i32, dbl, dbl, dbl,
                          i64, i64, i64, i64, ptr, i64, ptr, i64, ptr, ptr, ptr, ptr, ptr, ptr,
                          dbl, dbl, i32, i32]
    lib.sf_gd.restype = i32


def available() -> bool:
    """Whether the compiled kernel can be used (compiling it on first call)."""
    return _load() is not None


def reason() -> str:
    """Why the kernel is (not) available."""
    _load()
    return _reason


def engine_line(device: torch.device | str = "cpu") -> str:
    """Which two-layer engine ``engine="auto"`` runs on ``device`` and why (for config.describe())."""
    if torch.device(device).type != "cpu":
        return f"torch on {device} (the C kernel runs on the CPU only)"
    if available():
        return f"C kernel ({_flags_used or 'no extra flags'})"
    return f"torch (the C kernel is unavailable: {_reason})"


def usable(*tensors: torch.Tensor) -> bool:
    """The kernel applies to contiguous float64 CPU tensors."""
    return all(t.device.type == "cpu" and t.dtype == torch.float64 for t in tensors) and available()


def _ptr(t: torch.Tensor | None):
    return None if t is None else t.data_ptr()


def run_strides(X: torch.Tensor, y: torch.Tensor, R: int):
    """Contiguous X, y and their run strides (0 when shared by all runs)."""
    X, y = X.contiguous(), y.contiguous()
    n, d = X.shape[-2], X.shape[-1]
    xs = n * d if X.ndim == 3 else 0
    ys = n if y.ndim == 2 else 0
    if X.ndim == 3 and X.shape[0] != R or y.ndim == 2 and y.shape[0] != R:
        raise ValueError(f"per-run data must have {R} runs, got X {tuple(X.shape)}, y {tuple(y.shape)}")
    return X, y, xs, ys


def threads(R: int) -> int:
    """OpenMP threads for an ensemble: torch's intra-op count (1 by default, see config)."""
    return max(1, min(torch.get_num_threads(), R))


def grad(a, W, X, y, kind: int, leak: float, c: float, lf: float, out=None):
    """Loss (R,) and gradients (R, m), (R, m, d) of every run, through the kernel."""
    lib = _load()
    R, m, d = W.shape
    X, y, xs, ys = run_strides(X, y, R)
    n = X.shape[-2]
    if X.shape[-1] != d or a.shape != (R, m):
        raise ValueError(f"shapes disagree: a {tuple(a.shape)}, W {tuple(W.shape)}, X {tuple(X.shape)}")
    a, W = a.contiguous(), W.contiguous()
    if out is None:
        out = (torch.empty(R, dtype=a.dtype), torch.empty_like(a), torch.empty_like(W))
    L, ga, gW = out
    fail = lib.sf_grad(R, m, n, d, _ptr(a), _ptr(W), _ptr(X), xs, _ptr(y), ys, kind, leak, c, lf,
                       _ptr(L), _ptr(ga), _ptr(gW), threads(R))
    if fail:
        raise MemoryError("shallowflow kernel: allocation failed")
    return L, ga, gW


def field(theta, X, y, xs, ys, kind: int, leak: float, c: float, lf: float, L, out, skip=None):
    """-grad L (packed layout (R, m, 1+d)) and L (R,) into ``out`` and ``L``; X, y from run_strides."""
    lib = _load()
    R, m, q = theta.shape
    fail = lib.sf_field(R, m, X.shape[-2], q - 1, _ptr(theta), _ptr(X), xs, _ptr(y), ys, kind, leak, c, lf,
                        _ptr(L), _ptr(out), _ptr(skip), threads(R))
    if fail:
        raise MemoryError("shallowflow kernel: allocation failed")


def flow_chunk(theta, X, xs, y, ys, kind, leak, c, lf, t, h, T, snaps, next_snap, snap_a, snap_W,
               rec_t, rec_L, count, Lcur, status, stopped_at, nacc, nrej, rtol, atol, stop_below, maxit):
    """Up to ``maxit`` Dormand-Prince attempts per run (see the C source); all tensors contiguous."""
    lib = _load()
    R, m, q = theta.shape
    fail = lib.sf_flow(R, m, X.shape[-2], q - 1, _ptr(theta), _ptr(X), xs, _ptr(y), ys, kind, leak, c, lf,
                       _ptr(t), _ptr(h), _ptr(T), _ptr(snaps), snaps.numel(), _ptr(next_snap), _ptr(snap_a),
                       _ptr(snap_W), _ptr(rec_t), _ptr(rec_L), rec_t.shape[1], _ptr(count), _ptr(Lcur),
                       _ptr(status), _ptr(stopped_at), _ptr(nacc), _ptr(nrej), rtol, atol, stop_below, maxit,
                       threads(R))
    if fail:
        raise MemoryError("shallowflow kernel: allocation failed")


def gd_chunk(lib, R, m, n, d, a, W, X, xs, y, ys, lr, kind, leak, c, lf, k0, k1, steps, rec, hist,
             snaps, snap_a, snap_W, status, stopped_at, L0, Llast, stop_below, explode, masked, nthreads):
    """Iterations [k0, k1) of gradient descent (see the C source); tensors must be contiguous."""
    fail = lib.sf_gd(R, m, n, d, _ptr(a), _ptr(W), _ptr(X), xs, _ptr(y), ys, _ptr(lr), kind, leak, c, lf,
                     k0, k1, steps, rec, _ptr(hist), hist.shape[1], _ptr(snaps), snaps.numel(),
                     _ptr(snap_a), _ptr(snap_W), _ptr(status), _ptr(stopped_at), _ptr(L0), _ptr(Llast),
                     stop_below, explode, int(masked), nthreads)
    if fail:
        raise MemoryError("shallowflow kernel: allocation failed")
