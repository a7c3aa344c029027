"""Small models to export with scripts/export-model.py (the tests' and the README's).

    .venv/bin/python scripts/export-model.py examples/models.py:mlp --out mlp.pt2

A factory returns the module and its example inputs (a tuple of tensors whose
first dimension is the batch).
"""
import torch


def mlp(batch=64, seed=0):
    """A 3-layer MLP on 256 features."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    return model.eval(), (torch.randn(batch, 256),)


def mlp_retrained(batch=64):
    """The same MLP with other weights: a new build of the same model."""
    return mlp(batch, seed=1)


def cnn(batch=32):
    """A small CNN on 3x32x32 images."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(64 * 8 * 8, 10))
    return model.eval(), (torch.randn(batch, 3, 32, 32),)


class WithLoss(torch.nn.Module):
    """A classifier whose forward takes the labels too and returns its loss (for --train)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, y):
        return torch.nn.functional.cross_entropy(self.net(x), y)


def mlp_with_loss(batch=64):
    """The MLP with its loss, to train (export with --train --format torchscript)."""
    model, (x,) = mlp(batch)
    return WithLoss(model), (x, torch.randint(0, 10, (batch,)))


def wide_mlp(batch=256):
    """An MLP whose call takes several milliseconds on a CPU (bench/model_vs_python.py)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 1024))
    return model.eval(), (torch.randn(batch, 1024),)
