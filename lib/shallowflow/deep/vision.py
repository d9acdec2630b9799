"""Small vision models for Chapter 7 of source 004 (ADLER): a CNN, the same CNN with residual blocks, a tiny ViT.

The thesis compares its optimizer on "convolutional architectures with and without residual connections and on
Vision Transformers [...] of different widths and number of layers, different activation functions". It gives no
widths, depths, patch sizes or normalisation layers, so these models are the spec's defaults: 3x3 convolutions,
no BatchNorm (the text never mentions normalisation layers), global average pooling, a linear head; a ViT with
patch embedding, learned positions, pre-LayerNorm blocks and mean pooling. Every model is a plain
``torch.nn.Module`` with a selectable activation (``"relu"``, ``"sigmoid"``, ``"tanh"``) and works with
``torch.func`` (``functional_call``, ``jvp``, ``vmap``), which the optimizers of :mod:`shallowflow.deep.optim`
rely on. (torchvision is not used: it does not import beside the pinned torch.)
"""
from __future__ import annotations

import math

import torch
from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}
MODELS = ("cnn", "resnet", "vit")


def activation(name: str) -> nn.Module:
    """The activation module called ``name`` (relu, sigmoid or tanh)."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[name]()


class ResidualBlock(nn.Module):
    """x + conv(act(conv(x))), then the activation: two 3x3 convolutions at constant width."""

    def __init__(self, channels: int, act: str):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.act1, self.act2 = activation(act), activation(act)

    def forward(self, x):
        return self.act2(x + self.conv2(self.act1(self.conv1(x))))


class SmallCNN(nn.Module):
    """Convolutional classifier: a 3x3 stem, one stride-2 stage per extra width, and a linear head on the
    flattened feature map (``image`` is the input's side length). With ``residual=True`` every stage is followed by a :class:`ResidualBlock` (the thesis's
    "CNN+ResNet" rows pool both kinds)."""

    def __init__(self, in_channels: int = 1, classes: int = 10, widths=(16, 32), act: str = "relu",
                 residual: bool = False, image: int = 8):
        super().__init__()
        if not widths or any(int(w) < 1 for w in widths):
            raise ValueError(f"widths must be positive integers, got {widths!r}")
        if classes < 2 or in_channels < 1:
            raise ValueError(f"need classes >= 2 and in_channels >= 1, got {classes}, {in_channels}")
        layers: list[nn.Module] = []
        c, side = in_channels, image
        for i, w in enumerate(widths):
            side = side if i == 0 else (side + 1) // 2
            layers += [nn.Conv2d(c, w, 3, stride=1 if i == 0 else 2, padding=1), activation(act)]
            if residual:
                layers.append(ResidualBlock(w, act))
            c = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c * side * side, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


class _Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):  # x: (batch, tokens, dim)
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, t, d))


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int, act: str):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = _Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), activation(act), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    """A Vision Transformer [Dos+20] in miniature: non-overlapping ``patch`` x ``patch`` patches, a linear
    embedding, learned positions, ``depth`` pre-LayerNorm blocks (``heads``-head attention, an MLP with the
    chosen activation), mean pooling over tokens and a linear head."""

    def __init__(self, image: int = 8, in_channels: int = 1, classes: int = 10, patch: int = 2, dim: int = 32,
                 depth: int = 2, heads: int = 4, mlp_ratio: int = 2, act: str = "relu"):
        super().__init__()
        if image % patch:
            raise ValueError(f"the patch size {patch} must divide the image size {image}")
        if dim % heads:
            raise ValueError(f"dim {dim} must be divisible by heads {heads}")
        if depth < 1 or classes < 2:
            raise ValueError(f"need depth >= 1 and classes >= 2, got {depth}, {classes}")
        self.patch = patch
        tokens = (image // patch) ** 2
        self.embed = nn.Linear(in_channels * patch * patch, dim)
        self.pos = nn.Parameter(0.02 * torch.randn(tokens, dim))
        self.blocks = nn.Sequential(*[_Block(dim, heads, mlp_ratio, act) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):  # x: (batch, channels, H, W)
        p = self.patch
        b, c, h, w = x.shape
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, (h // p) * (w // p), c * p * p)
        x = self.blocks(self.embed(x) + self.pos)
        return self.head(self.norm(x).mean(dim=1))


def build(kind: str, act: str, classes: int, image: int = 8, in_channels: int = 1, width: int = 16,
          vit_dim: int = 32, vit_depth: int = 2, seed: int = 0, dtype=torch.float32) -> nn.Module:
    """One model of Chapter 7's comparison, initialised from ``seed``: ``kind`` is ``"cnn"``,
    ``"resnet"`` (the CNN with residual blocks) or ``"vit"``; ``width`` is the first CNN stage's width (the
    second is twice it)."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}")
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        if kind == "vit":
            model = TinyViT(image=image, in_channels=in_channels, classes=classes, patch=2 if image <= 16 else 4,
                            dim=vit_dim, depth=vit_depth, heads=4, act=act)
        else:
            model = SmallCNN(in_channels, classes, (width, 2 * width), act, residual=kind == "resnet", image=image)
    finally:
        torch.random.set_rng_state(gen_state)
    return model.to(dtype)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
