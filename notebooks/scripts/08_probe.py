"""Notebook 08's probe: what the profiler sees of an overlap, of a slow training step and its fix,
and what profiling costs.  Run once on the reference GPU before the notebook is written:

    python notebooks/scripts/08_probe.py OUT_DIR

It prints one JSON object and writes small gzipped traces (open them in https://ui.perfetto.dev)
into OUT_DIR.  Each part runs in its own try/except, so one failure still prints the others:

  overlap   pinned host-to-device copies on a side stream beside matmuls: timed, profiled, read
            back with utils.profiling (per-stream kernels, idle time, copies under compute, waits);
  training  one step of a small MLP on synthetic variable-length data, written slow on purpose
            (pageable copies, .item() every step, float32 without TF32, a loop of tiny kernels,
            tensors whose size changes every step) and fixed (pinned memory and a prefetching
            stream, static shapes, bf16 autocast, the whole step in a CUDA graph, losses kept on
            the GPU): time per step, losses against each other, launches per step, sync debug mode;
  overhead  the same steps with and without the profiler running.

On a machine without a GPU the GPU parts say they were skipped, and the CPU parts run: the slow
and the fixed step's arithmetic (static shapes, one reduction) compared on the CPU, and the
profiler's overhead on a CPU step.
"""

import itertools
import json
import linecache
import platform
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

import utils
from utils import profiling

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="08_probe_"))
CUDA = torch.cuda.is_available()
ACTIVITIES = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if CUDA else [])
SKIPPED = "skipped: no CUDA GPU (" + utils.cuda_status().reason + ")"
if not CUDA:
    torch.set_num_threads(1)  # the CPU parts' tensors are tiny: more threads only wait for each other


def ms(seconds: float) -> float:
    return round(seconds * 1e3, 4)


def timing(t: utils.Timing) -> dict:
    """A benchmark's per-call median and spread, in ms."""
    return {"median_ms": ms(t.median), "q1_ms": ms(t.q1), "q3_ms": ms(t.q3), "blocks": len(t.times),
            "calls_per_block": t.calls_per_block}


def attempt(into: dict, key: str, fn) -> bool:
    """into[key] = fn(), or what it raised: one failure must not hide the measurements after it."""
    try:
        into[key] = fn()
        return True
    except Exception as err:  # noqa: BLE001 -- reported in the JSON instead
        into[key] = {"error": f"{type(err).__name__}: {err}"[:500], "where": traceback.format_exc().splitlines()[-6:]}
        return False


def profiled(fn, name: str, calls: int, path: Path) -> dict:
    """Run fn `calls` times under the profiler, each in record_function(name); save the trace; read it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=ACTIVITIES) as prof:
            for _ in range(calls):
                with record_function(name):
                    fn()
            if CUDA:
                torch.cuda.synchronize()
    prof.export_chrome_trace(str(path))
    trace = profiling.load_trace(path)
    found = profiling.summary(trace, step=name) if CUDA else {
        "launches_per_step": profiling.launches_per_range(trace, name)}
    found["trace"] = path.name
    found["trace_kib"] = round(path.stat().st_size / 1024, 1)
    return found


# ------------------------------------------------------------------------------------------------
# overlap: copies on a side stream, matmuls on the default stream
# ------------------------------------------------------------------------------------------------
def part_overlap() -> dict:
    if not CUDA:
        return {"skipped": SKIPPED}
    chunks, chunk = 8, 32 * 2**20 // 4  # 8 copies of 32 MiB
    host = torch.randn(chunks, chunk).pin_memory()
    dest = torch.empty(chunks, chunk, device="cuda")
    a, b = torch.randn(4096, 4096, device="cuda"), torch.randn(4096, 4096, device="cuda")
    side = torch.cuda.Stream()

    def copies():
        side.wait_stream(torch.cuda.current_stream())  # starts after what the timer queued before
        with torch.cuda.stream(side):
            for i in range(chunks):
                dest[i].copy_(host[i], non_blocking=True)
        torch.cuda.current_stream().wait_stream(side)  # the timer's end event waits for the copies

    def computes():
        for _ in range(2):
            a @ b

    def both():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(chunks):
                dest[i].copy_(host[i], non_blocking=True)
        computes()
        torch.cuda.current_stream().wait_stream(side)

    timed = {name: utils.benchmark(fn, label=name) for name, fn in
             (("copies", copies), ("computes", computes), ("both", both))}
    found = profiled(both, "both", 3, OUT / "08_overlap.json.gz")
    trace = profiling.load_trace(OUT / "08_overlap.json.gz")
    return {"timed": {name: timing(t) for name, t in timed.items()},
            "both_over_slower_alone": round(timed["both"].median / max(timed["copies"].median,
                                                                       timed["computes"].median), 3),
            "profile": found,
            "hidden_fraction_of_copies": round(found["copies_and_kernels"] / max(found["copies"], 1e-12), 3),
            "lanes": sorted({iv.lane for iv in profiling.timeline(trace)})}


# ------------------------------------------------------------------------------------------------
# training: the capstone's slow step and its fix
# ------------------------------------------------------------------------------------------------
SIZES = ({"batch": 512, "length": 64, "features": 64, "width": 1024, "classes": 10, "batches": 8} if CUDA else
         {"batch": 64, "length": 32, "features": 16, "width": 128, "classes": 10, "batches": 4})
LR = 0.01


def make_data(seed: int = 0):
    """Variable-length sequences padded with zeros to `length`, their lengths, their labels (host)."""
    s = SIZES
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randn(s["batches"], s["batch"], s["length"], s["features"], generator=g)
    lengths = torch.randint(s["length"] // 8, s["length"] + 1, (s["batches"], s["batch"]), generator=g)
    labels = torch.randint(0, s["classes"], (s["batches"], s["batch"]), generator=g)
    tokens *= (torch.arange(s["length"]) < lengths[..., None])[..., None]  # zero padding: sums ignore it
    return tokens, lengths, labels


def make_model(device: str) -> torch.nn.Module:
    s = SIZES
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(s["features"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["classes"])).to(device)


def slow_step(model, opt, data, i: int, device: str) -> float:
    """Every mistake at once: a new shape each step, pageable copies, a Python loop of tiny kernels, .item()."""
    tokens, lengths, labels = data
    longest = int(lengths[i].max())  # shapes follow the data: a new size every step
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


def fast_loss(model, x, n, y, bf16: bool):
    """The fixed step's arithmetic: one reduction over the (static) padded length, then the MLP."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


class FastStep:
    """Pinned batches prefetched on a copy stream into static buffers, and the whole step in a CUDA graph."""

    def __init__(self, model, data, bf16: bool = True, steps_kept: int = 64):
        self.model, self.bf16 = model, bf16
        self.opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=True)
        tokens, lengths, labels = data
        self.host = (tokens.pin_memory(), lengths.float().pin_memory(), labels.pin_memory())
        self.static = [t[0].to("cuda") for t in self.host]  # what the graph reads
        self.staged = [torch.empty_like(t) for t in self.static]  # what the copy stream fills
        self.copy_stream = torch.cuda.Stream()
        self.copied, self.consumed = torch.cuda.Event(), torch.cuda.Event()
        self.losses = torch.zeros(steps_kept, device="cuda")
        self.i = 0
        self.graph, self.static_loss = self._capture()
        self._prefetch(0)

    def _train(self):
        loss = fast_loss(self.model, *self.static, bf16=self.bf16)
        loss.backward()
        self.opt.step()
        return loss

    def _capture(self):
        saved = [p.detach().clone() for p in self.model.parameters()]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream, as torch.cuda.graph's documentation does
            for _ in range(3):
                self.opt.zero_grad(set_to_none=True)
                self._train()
        torch.cuda.current_stream().wait_stream(side)
        self.opt.zero_grad(set_to_none=True)  # the captured backward writes fresh gradients at each replay
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = self._train()
        with torch.no_grad():  # undo the warm-up's steps: both versions start from the same weights
            for p, s in zip(self.model.parameters(), saved):
                p.copy_(s)
        return graph, static_loss

    def _prefetch(self, i: int) -> None:
        with torch.cuda.stream(self.copy_stream):
            self.copy_stream.wait_event(self.consumed)  # the staged batch has been taken
            for dst, src in zip(self.staged, self.host):
                dst.copy_(src[i % len(src)], non_blocking=True)
            self.copied.record(self.copy_stream)

    def step(self) -> None:
        main = torch.cuda.current_stream()
        main.wait_event(self.copied)
        for dst, src in zip(self.static, self.staged):
            dst.copy_(src)  # device to device: microseconds
        self.consumed.record(main)
        self._prefetch(self.i + 1)  # the next batch crosses PCIe while this step runs
        self.graph.replay()
        self.losses[self.i % len(self.losses)].copy_(self.static_loss)  # kept on the GPU: no wait
        self.i += 1


def sync_warnings(fn, calls: int = 2) -> dict:
    """Synchronizing calls that sync debug mode flags in `calls` calls of fn, by source line."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for _ in range(calls):
                fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    lines = [f"line {w.lineno}: {linecache.getline(w.filename, w.lineno).strip()}" for w in caught
             if "synchroniz" in str(w.message)]
    return {"per_call": len(lines) / calls, "lines": sorted(set(lines))}


def relative_gap(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))


def part_training() -> dict:
    data = make_data()
    steps = 2 * SIZES["batches"]
    device = "cuda" if CUDA else "cpu"
    torch.set_float32_matmul_precision("highest")  # float32 without TF32, as the slow step is written
    slow_model = make_model(device)
    slow_opt = torch.optim.SGD(slow_model.parameters(), lr=LR, foreach=False)  # one small kernel per parameter
    slow_losses = [slow_step(slow_model, slow_opt, data, i % SIZES["batches"], device) for i in range(steps)]
    result: dict = {"sizes": SIZES, "steps_compared": steps,
                    "slow_losses_first_last": [slow_losses[0], slow_losses[-1]]}

    def eager_losses(bf16: bool) -> list[float]:
        """The fix's arithmetic alone, eagerly: static shapes and one reduction, in float32 or bf16."""
        model = make_model(device)
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        tokens, lengths, labels = data
        found = []
        for i in range(steps):
            k = i % SIZES["batches"]
            loss = fast_loss(model, tokens[k].to(device), lengths[k].float().to(device), labels[k].to(device), bf16)
            opt.zero_grad()
            loss.backward()
            opt.step()
            found.append(loss.item())
        return found

    result["eager_vs_slow_max_relative_gap"] = {"float32": relative_gap(slow_losses, eager_losses(False)),
                                                "bf16": relative_gap(slow_losses, eager_losses(True))}
    if not CUDA:
        result["gpu_parts"] = SKIPPED
        result["profile_slow_cpu"] = profiled(lambda: slow_step(slow_model, slow_opt, data, 0, "cpu"), "step", 3,
                                              OUT / "08_slow_cpu.json.gz")
        return result

    def gaps() -> dict:
        found = {}
        for bf16 in (False, True):
            graphed = FastStep(make_model("cuda"), data, bf16=bf16)
            for _ in range(steps):
                graphed.step()
            found["bf16" if bf16 else "float32"] = relative_gap(slow_losses, graphed.losses[:steps].tolist())
        return found

    attempt(result, "graphed_vs_slow_max_relative_gap", gaps)
    result["bf16_unit_roundoff"] = torch.finfo(torch.bfloat16).eps / 2

    slow_model = make_model("cuda")
    slow_opt = torch.optim.SGD(slow_model.parameters(), lr=LR, foreach=False)
    counter = itertools.count()

    def slow():
        slow_step(slow_model, slow_opt, data, next(counter) % SIZES["batches"], "cuda")

    steps_of = {"slow": slow}
    if attempt(result, "fast_step_built", lambda: FastStep(make_model("cuda"), data)):
        steps_of["fast"] = result.pop("fast_step_built").step
    for name, fn in steps_of.items():
        attempt(result.setdefault("per_step", {}), name,
                lambda fn=fn, name=name: timing(utils.benchmark(fn, label=name)))
        attempt(result.setdefault("profile", {}), name,
                lambda fn=fn, name=name: profiled(fn, "step", 5, OUT / f"08_{name}.json.gz"))
        attempt(result.setdefault("sync_debug_mode", {}), name, lambda fn=fn: sync_warnings(fn))
    medians = [result["per_step"].get(name, {}).get("median_ms") for name in ("slow", "fast")]
    if all(isinstance(m, float) and m > 0 for m in medians):
        result["speedup"] = round(medians[0] / medians[1], 2)
    return result


# ------------------------------------------------------------------------------------------------
# overhead: the same steps with and without the profiler
# ------------------------------------------------------------------------------------------------
def run_steps(step, calls: int) -> float:
    """Seconds for `calls` steps, the device idle before and after (host clock: the steps include waits)."""
    if CUDA:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    if CUDA:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def with_profiler(step, calls: int) -> tuple[float, float]:
    """(seconds of the steps inside the profiler, seconds of the profiler's start, stop and export)."""
    begin = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=ACTIVITIES) as prof:
            inside = run_steps(step, calls)
    with tempfile.TemporaryDirectory() as tmp:
        prof.export_chrome_trace(str(Path(tmp) / "t.json"))
    return inside, time.perf_counter() - begin - inside


def part_overhead() -> dict:
    data = make_data()
    device = "cuda" if CUDA else "cpu"
    model = make_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=False)
    counter = itertools.count()

    def slow():
        slow_step(model, opt, data, next(counter) % SIZES["batches"], device)

    calls = 20 if CUDA else 5

    def measure(step) -> dict:
        run_steps(step, calls)  # warm
        plain, under, around = [], [], []
        for _ in range(3):
            plain.append(run_steps(step, calls))
            inside, outside = with_profiler(step, calls)
            under.append(inside)
            around.append(outside)
        return {"per_step_ms": ms(statistics.median(plain) / calls),
                "per_step_profiled_ms": ms(statistics.median(under) / calls),
                "ratio": round(statistics.median(under) / statistics.median(plain), 3),
                "start_stop_export_ms": ms(statistics.median(around))}

    found: dict = {}
    attempt(found, "slow", lambda: measure(slow))
    if CUDA:
        attempt(found, "fast", lambda: measure(FastStep(make_model("cuda"), data).step))
    return found


def versions() -> dict:
    found = {"python": platform.python_version(), "torch": torch.__version__, "cuda_build": torch.version.cuda,
             "gpu": torch.cuda.get_device_name(0) if CUDA else None,
             "capability": list(torch.cuda.get_device_capability(0)) if CUDA else None}
    return found


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    report: dict = {"out": OUT.name}
    for name, part in (("versions", versions), ("overlap", part_overlap), ("training", part_training),
                       ("overhead", part_overhead)):
        began = time.perf_counter()
        attempt(report, name, part)
        report.setdefault("seconds", {})[name] = round(time.perf_counter() - began, 2)
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
