"""The planted code change of bench/paired_power.sh: one MLP exported three times under one
name (`mlp`), the second and third with about 5% and 10% more work (a wider hidden layer).

    .venv/bin/python scripts/export-model.py bench/paired_power_models.py:base --name mlp ...
"""
import torch


def _mlp(hidden, batch=256):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 512))
    return model.eval(), (torch.randn(batch, 512),)


def base(batch=256):
    """512-1024-512 at batch 256 (the issue's MLP)."""
    return _mlp(1024, batch)


def plus5(batch=256):
    """About 5% more work: hidden 1075 = 1.05 x 1024."""
    return _mlp(1075, batch)


def plus10(batch=256):
    """About 10% more work: hidden 1126 = 1.1 x 1024."""
    return _mlp(1126, batch)
