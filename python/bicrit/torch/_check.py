"""Input checks of :mod:`bicrit.torch`: shapes, dtypes and devices, with errors that name the
argument (``bicrit.errors.InvalidInputError``, a ``ValueError``)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from bicrit.errors import InvalidInputError, InvalidParameterError

REDUCTIONS = ("none", "sum", "mean", "token_mean")


def reduction(value: str) -> str:
    if value not in REDUCTIONS:
        raise InvalidParameterError(f"reduction must be one of {REDUCTIONS}, got {value!r}")
    return value


def floating(name: str, t: Any, ndim: tuple[int, ...]) -> Tensor:
    if not isinstance(t, Tensor):
        raise InvalidInputError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise InvalidInputError(f"{name} must be a floating-point tensor, got dtype {t.dtype}")
    if t.dim() not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise InvalidInputError(f"{name} must be {want}, got shape {tuple(t.shape)}")
    return t


def integer(name: str, t: Any, shape: tuple[int, ...], like: Tensor) -> Tensor:
    if not isinstance(t, Tensor):
        t = torch.as_tensor(t, device=like.device)
    if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
        raise InvalidInputError(f"{name} must be an integer tensor, got dtype {t.dtype}")
    if tuple(t.shape) != shape:
        raise InvalidInputError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
    same_device(name, t, like)
    assert isinstance(t, Tensor)
    return t


def same_device(name: str, t: Tensor, like: Tensor) -> None:
    if t.device != like.device:
        raise InvalidInputError(f"{name} is on {t.device} but the scores are on {like.device}")


def same_float(
    name: str, t: Tensor | None, like: Tensor, shape: tuple[int, ...] | None = None
) -> None:
    if t is None:
        return
    floating(name, t, (t.dim(),))
    same_device(name, t, like)
    if t.dtype != like.dtype:
        raise InvalidInputError(f"{name} has dtype {t.dtype} but the scores have {like.dtype}")
    if shape is not None and tuple(t.shape) != shape:
        raise InvalidInputError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")


def lengths_of(lengths: Any, mask: Any, b: int, t: int, like: Tensor, what: str = "T") -> Tensor:
    """Lengths [B] from `lengths` or a pytorch-crf style `mask` [B, T] (a prefix of True)."""
    if lengths is not None and mask is not None:
        raise InvalidInputError("give lengths or mask, not both")
    if mask is not None:
        if not isinstance(mask, Tensor):
            mask = torch.as_tensor(mask, device=like.device)
        if tuple(mask.shape) != (b, t):
            raise InvalidInputError(f"mask must have shape [{b}, {t}], got {list(mask.shape)}")
        same_device("mask", mask, like)
        m = mask.to(torch.bool)
        lens = m.sum(1)
        prefix = torch.arange(t, device=m.device).unsqueeze(0) < lens.unsqueeze(1)
        if not bool((prefix == m).all()):
            raise InvalidInputError(
                "mask must be a prefix of True per row (padding at the end only)"
            )
        lengths = lens
    if lengths is None:
        return torch.full((b,), t, dtype=torch.int64, device=like.device)
    checked: Tensor = integer("lengths", lengths, (b,), like).to(torch.int64)
    if b and (int(checked.min()) < 1 or int(checked.max()) > t):
        raise InvalidInputError(
            f"lengths must be between 1 and {what} = {t}, got {checked.tolist()}"
        )
    return checked


def reduce(loss: Tensor, how: str, tokens: Tensor | None) -> Tensor:
    if how == "none":
        return loss
    if how == "sum":
        return loss.sum()
    if how == "mean":
        return loss.mean()
    if tokens is None:
        raise InvalidParameterError(
            "reduction='token_mean' needs per-token lengths (chains and trees)"
        )
    return loss.sum() / tokens.sum().clamp_min(1).to(loss.dtype)


def ids(t: Any, b: int) -> Tensor:
    """Example ids [B] for the warm-start cache, as a CPU int64 tensor (any device accepted:
    only the ids cross to the host)."""
    x: Tensor = t if isinstance(t, Tensor) else torch.as_tensor(t)
    if x.dtype == torch.bool or x.is_floating_point() or x.is_complex():
        raise InvalidInputError(f"ids must be an integer tensor, got dtype {x.dtype}")
    if tuple(x.shape) != (b,):
        raise InvalidInputError(f"ids must have shape [{b}], got {list(x.shape)}")
    return x.detach().to(device="cpu", dtype=torch.int64)
