"""Wrong answers, and other right ones, to the capstone: SPOILERS.

Exercise 1 (fast_loss) is checked on the CPU too; exercise 2 (make_fast_step) on a GPU only.  Each wrong
fast step is the solution with one wrong turn that looks right: `solution_step` builds
them from flags, so that each differs from the right answer in that one place.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import nb08


# ---------------------------------------------------------------- exercise 1: fast_loss (CPU and GPU)
def _loss(model, pooled, y, bf16):
    """The solution's tail: the model under autocast, the loss in float32."""
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def padded_mean(model, x, n, y, bf16):
    return _loss(model, x.mean(1), y, bf16)  # divides by the padded length, not each sequence's own


def kept_loop(model, x, n, y, bf16):
    pooled = torch.zeros(x.shape[0], x.shape[2], device=x.device)
    for t in range(x.shape[1]):  # right numbers, one tiny kernel per position
        pooled = pooled + x[:, t]
    return _loss(model, pooled / n[:, None], y, bf16)


# ---------------------------------------------------------------- exercise 2: make_fast_step (GPU)
def solution_step(model, data, *, stale=False, every_other=False, no_update=False, bf16_weights=False,
                  sync=False, copy_on_default=False, same_stream=False):
    """The solution of the notebook, with one wrong turn switched on by a flag."""
    fast_loss = nb08.reference_fast_loss
    if bf16_weights:
        model.to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=nb08.LR, foreach=True)
    tokens, lengths, labels = data
    host = [tokens.pin_memory(), lengths.float().pin_memory(), labels.pin_memory()]
    if bf16_weights:
        host[0] = host[0].to(torch.bfloat16).pin_memory()
    static = [t[0].to("cuda") for t in host]
    staged = [torch.empty_like(t) for t in static]
    copy_stream = torch.cuda.current_stream() if copy_on_default or same_stream else torch.cuda.Stream()
    copied, consumed = torch.cuda.Event(), torch.cuda.Event()
    kept = torch.zeros(4096, device="cuda")
    count = 0

    def train():
        loss = fast_loss(model, *static, bf16=True)
        loss.backward()
        if not no_update:
            opt.step()
        return loss

    saved = [p.detach().clone() for p in model.parameters()]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            train()
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = train()
    with torch.no_grad():
        for p, s in zip(model.parameters(), saved, strict=True):
            p.copy_(s)

    def prefetch(i):
        with torch.cuda.stream(copy_stream):
            copy_stream.wait_event(consumed)
            for dst, src in zip(staged, host, strict=True):
                dst.copy_(src[i % len(src)], non_blocking=not copy_on_default)
            copied.record(copy_stream)

    def step():
        nonlocal count
        main = torch.cuda.current_stream()
        main.wait_event(copied)
        if stale:
            static[:] = staged  # rebinds the names: the graph still reads the first batch
        else:
            for dst, src in zip(static, staged, strict=True):
                dst.copy_(src)
        consumed.record(main)
        graph.replay()
        kept[count % len(kept)].copy_(static_loss.float())
        prefetch(2 * (count + 1) if every_other else count + 1)  # every other: skips half the batches
        if sync:
            torch.cuda.synchronize()  # no .item(), but the host still waits every step
        count += 1

    prefetch(0)
    return step, lambda: kept[:min(count, len(kept))]


def _variant(**flags):
    return lambda model, data: solution_step(model, data, **flags)


WRONG = {
    "check_fast_loss": {
        "divides by the padded length": padded_mean,
        "keeps the loop over positions": kept_loop,
    },
    "check_fast_step": {
        "graph reads stale inputs (static = batch rebinds)": _variant(stale=True),
        "trains on every other batch": _variant(every_other=True),
        "optimizer.step() left out (of the graph, and of the step)": _variant(no_update=True),
        "weights and updates in bf16": _variant(bf16_weights=True),
        "torch.cuda.synchronize() every step": _variant(sync=True),
        "pinned, but copied on the default stream with non_blocking=False": _variant(copy_on_default=True),
        "pinned and non_blocking, but copied on the step's own stream": _variant(same_stream=True),
    },
}
# without a GPU the check of the fast step runs nothing, so nothing fails there
WRONG_ON_CPU: dict[str, set[str]] = {"check_fast_step": set()}
ALSO_RIGHT = {
    "check_fast_loss": {},
    "check_fast_step": {"the wrong answers' builder, nothing switched": _variant()},
}
