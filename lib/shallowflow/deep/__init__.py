"""Deep fully connected networks and their measurements (source 004, Balboni's thesis).

Separate from the two-layer ensemble engine of the rest of the library.  Modules, each about one idea:

- ``data``     offline datasets that say what they are: scikit-learn's digits, the synthetic sets of
               the spec (correlated "CIFAR-like" inputs, Gaussian mixtures), and a CIFAR-10/100 loader
               (python-pickle batches) used when the files are present locally
- ``models``   fully connected networks with normalised activations (ReLU, Tanh), optional per-layer
               renormalisation, N(0, 1/fan_in) init, a leading runs dimension, as ``torch.nn.Module``
- ``dual``     the infinite-width line: dual activations of normalised ReLU / Tanh and the
               feature-Gram recursion G^{m+1} = sigma_hat(G^m) (Lemma 23, (4.10)), Lemma 24's bound
- ``measure``  measurements on ``torch.func``: feature Gram matrices and their spectra (float64),
               NTK Gram, PL ratio, Hessian-vector products and power iteration, per-example gradients
- ``train``    a plain full-batch / minibatch loop over any ``torch.optim.Optimizer`` with measurement
               callbacks and per-step non-finite detection, and ``PerRunSGD`` (one step size per run)
- ``optim``    ADLER (Algorithm 1), Gauss-Newton rates and fixed-rate SGD as ``torch.optim.Optimizer`` s
- ``vision``   the small CNN, residual CNN and tiny ViT of Chapter 7
"""
from . import data, dual, measure, models, optim, train, vision  # noqa: F401
