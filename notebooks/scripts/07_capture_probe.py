"""Notebook 07, section 8: captures that break, each tried in this fresh process.

Prints, as JSON, what each capture raised, what the raised error hid (`err.__context__`), where the
failed capture left the current stream, and whether the process could still capture and replay (tested
after the current stream was set back to the default one).
"""
import contextlib
import io
import json

import torch


def capture_probe() -> dict:
    """Try captures that break, in this (fresh) process; return what each raised, as text."""
    def first_line(err) -> str:
        lines = [line for line in str(err).splitlines() if line.strip()]
        return f"{type(err).__name__}: {lines[0] if lines else ''}"[:240]

    def still_works() -> bool:
        """After a failed capture (and, in attempt, the current stream set back): can it still capture and replay?"""
        try:
            x = torch.arange(4.0, device="cuda")
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                y = x * 2
            graph.replay()
            return y.tolist() == [0.0, 2.0, 4.0, 6.0]
        except Exception:  # noqa: BLE001 - any error means it cannot
            return False

    def attempt(fn, warm: bool = True) -> dict:
        """Run fn eagerly (unless warm=False), then try to capture it."""
        if warm:
            with contextlib.redirect_stdout(io.StringIO()):
                fn()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        result = {"raised": "", "cause": ""}
        try:
            with torch.cuda.graph(graph), contextlib.redirect_stdout(io.StringIO()):
                fn()
        except Exception as err:  # noqa: BLE001 - any error is a result to report
            result["raised"] = first_line(err)
            result["cause"] = first_line(err.__context__) if err.__context__ is not None else ""
        # Where does the failed capture leave the current stream?  Put it back on the default one.
        result["stream left"] = torch.cuda.current_stream() != torch.cuda.default_stream()
        torch.cuda.set_stream(torch.cuda.default_stream())
        result["survived"] = still_works()  # after the reset above, not without it
        return result

    report = {"torch": torch.__version__}
    # The default stream, first
    graph = torch.cuda.CUDAGraph()
    try:
        graph.capture_begin()  # by hand, on the current stream: the default one
        graph.capture_end()
        report["default stream"] = {"raised": "", "cause": ""}
    except Exception as err:  # noqa: BLE001 - any error is a result to report
        report["default stream"] = {"raised": first_line(err), "cause": ""}
    report["default stream"]["survived"] = still_works()
    # Warm-up: first calls inside a capture, in a process where they never ran before
    a = torch.randn(256, 256, device="cuda")
    conv = torch.nn.Conv2d(16, 16, 3).cuda()
    image = torch.randn(8, 16, 32, 32, device="cuda")
    torch.backends.cudnn.benchmark = True
    report["warm-up"] = {
        "a first matmul, no warm-up": attempt(lambda: a @ a, warm=False),
        "a first convolution, cudnn.benchmark=True, no warm-up": attempt(lambda: conv(image), warm=False),
        "the same convolution after a warm-up": attempt(lambda: conv(image)),
    }
    # Forbidden inside a capture
    x = torch.randn(1024, device="cuda")
    report["forbidden"] = {
        "torch.cuda.synchronize()": attempt(torch.cuda.synchronize),
        "x.sum().item()": attempt(lambda: x.sum().item()),
        "print(x)": attempt(lambda: print(x)),
        "torch.nonzero(x)": attempt(lambda: torch.nonzero(x)),
        "x[x > 0]": attempt(lambda: x[x > 0]),
        "y = x * 2 if x.sum() > 0 else x": attempt(lambda: x * 2 if x.sum() > 0 else x),
        "torch.ones(4).to('cuda')   (pageable)": attempt(lambda: torch.ones(4).to("cuda")),
        "x.cpu()": attempt(lambda: x.cpu()),
    }
    # Allowed
    pinned = torch.ones(4).pin_memory()
    report["allowed"] = {
        "x * 2 + 1": attempt(lambda: x * 2 + 1),
        "torch.rand(4, device='cuda')": attempt(lambda: torch.rand(4, device="cuda")),
        "pinned.to('cuda', non_blocking=True)": attempt(lambda: pinned.to("cuda", non_blocking=True)),
    }

    # Side streams
    def on_side(fork: bool, join: bool):
        def fn():
            side, current = torch.cuda.Stream(), torch.cuda.current_stream()
            if fork:
                side.wait_stream(current)
            with torch.cuda.stream(side):
                y = x * 2
            if join:
                current.wait_stream(side)
            return y
        return fn

    report["streams"] = {
        "a side stream, forked and joined": attempt(on_side(True, True)),
        "a side stream, forked, not joined": attempt(on_side(True, False)),
        "a side stream, neither forked nor joined": attempt(on_side(False, False)),
    }

    # Bisection: which step of a pipeline breaks its capture?
    def log_statistics(t):  # forks a side stream for a statistic, and forgets to join it
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            t.abs().mean()
        return t

    pipeline = [("scale", lambda t: t * 2), ("activate", torch.tanh), ("log statistics", log_statistics),
                ("normalize", lambda t: t / (t.norm() + 1)), ("project", lambda t: t * 3)]

    def first_steps(k: int):
        def fn():
            t = x
            for _, step in pipeline[:k]:
                t = step(t)
            return t
        return fn

    bisect = {"whole": attempt(first_steps(len(pipeline))), "tried": []}
    torch.cuda.set_sync_debug_mode("error")
    try:
        first_steps(len(pipeline))()
        bisect["sync"] = ""
    except RuntimeError as err:
        bisect["sync"] = first_line(err)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    good, bad = 0, len(pipeline)  # the first `good` steps capture; the first `bad` steps do not
    while bad - good > 1:
        middle = (good + bad) // 2
        failed = bool(attempt(first_steps(middle))["raised"])
        bisect["tried"].append((middle, failed))
        good, bad = (good, middle) if failed else (middle, bad)
    bisect["culprit"] = pipeline[bad - 1][0]
    report["bisect"] = bisect
    return report


if __name__ == "__main__":
    print(json.dumps(capture_probe()))
