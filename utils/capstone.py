"""The capstone's given code (lecture 08 and its exercises): the data, the model and the training step written slow
on purpose.  Kept apart from the exercises' checks (utils/exercises/nb08.py, which imports these names), so that
lecture 08, which runs this code and not the checks, does not depend on the checks' code."""

import itertools

import torch
import torch.nn.functional as F

# Sizes: 8 MiB of tokens a batch on a GPU, small ones on a CPU.
GPU_SIZES = {"batch": 512, "length": 64, "features": 64, "width": 1024, "classes": 10, "batches": 8}
CPU_SIZES = {"batch": 64, "length": 32, "features": 16, "width": 128, "classes": 10, "batches": 4}
LR = 0.01


def sizes(device: str) -> dict[str, int]:
    return GPU_SIZES if device == "cuda" else CPU_SIZES


def make_data(device: str = "cuda", seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Variable-length sequences zero-padded to `length`, their lengths, their labels: on the host."""
    s = sizes(device)
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randn(s["batches"], s["batch"], s["length"], s["features"], generator=g)
    lengths = torch.randint(s["length"] // 8, s["length"] + 1, (s["batches"], s["batch"]), generator=g)
    labels = torch.randint(0, s["classes"], (s["batches"], s["batch"]), generator=g)
    tokens *= (torch.arange(s["length"]) < lengths[..., None])[..., None]  # zero padding: sums ignore it
    return tokens, lengths, labels


def make_model(device: str = "cuda", seed: int = 0) -> torch.nn.Module:
    s = sizes(device)
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(s["features"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["classes"])).to(device)


def slow_step(model, opt, data, i: int, device: str) -> float:
    """Every mistake at once: a shape read on the host, pageable copies, a Python loop of tiny kernels, .item()."""
    tokens, lengths, labels = data
    longest = int(lengths[i].max())  # the shape follows the data (can change from step to step)
    x = tokens[i, :, :longest].contiguous().to(device)  # pageable: the host waits for the copy
    n = lengths[i].to(device, torch.float32)
    y = labels[i].to(device)
    pooled = torch.zeros(x.shape[0], x.shape[2], device=device)
    for t in range(longest):  # one tiny kernel per position
        pooled = pooled + x[:, t]
    loss = F.cross_entropy(model(pooled / n[:, None]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()  # the host waits for the GPU, every step


class SlowStep:
    """The slow step as a callable: each call trains on the next batch and returns its loss (a float)."""

    def __init__(self, model: torch.nn.Module, data, device: str) -> None:
        self.model, self.data, self.device = model, data, device
        self.opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=False)  # one small kernel per parameter
        self.batches = itertools.cycle(range(len(data[0])))

    def __call__(self) -> float:
        return slow_step(self.model, self.opt, self.data, next(self.batches), self.device)
