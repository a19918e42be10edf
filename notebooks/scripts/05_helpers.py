"""Notebook 05: read what a fresh process printed, and start the fresh processes of sections 2 to 5.

Like scripts/03_helpers.py, this one runs in the notebook's own process, into a dict of its own, from
which the notebook keeps the functions:
    helpers = {}
    exec(utils.script("05_helpers.py"), helpers)

`utils.run_process(code, *args, env=..., unset=..., prefix=...)` runs `python -c code` and returns its exit
status, its output, its error output, and `.traceback`, the lines of the last Python traceback it printed.
The child runs `python -c`, so the frames of the script itself read `File "<string>", line N`, with N
counted from the script's first line: `line_of` finds a line by a marker, never by counting by hand.
"""

import importlib.util
import re
from concurrent.futures import Future, ThreadPoolExecutor

import utils

# unset in the fresh processes: the defaults
ASYNC_ENV_VARS = ["CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "PYTORCH_USE_CUDA_DSA"]


def line_of(script: str, marker: str) -> int:
    """The number of the script's line that holds `marker` (1-based, as a traceback counts)."""
    return next(n for n, line in enumerate(script.splitlines(), 1) if marker in line)


def script_lines(done: utils.Finished) -> list[int]:
    """The line numbers of the traceback's frames that are in the script itself (File "<string>")."""
    return [int(n) for n in re.findall(r'File "<string>", line (\d+)', "\n".join(done.traceback))]


def error_message(done: utils.Finished) -> str:
    """The exception's own text: the traceback from its `SomeError: ...` line on."""
    tb = done.traceback
    start = next((i for i, line in enumerate(tb) if re.match(r"[\w.]+(Errors?|Exception)\b", line)), len(tb))
    return "\n".join(tb[start:])


def tidy(text: str) -> str:
    """A tool's text without the folders of its paths (this machine's, or PyTorch's build machine's)."""
    return re.sub(r"(?<![\w.:/])(?:\.{0,2}/[\w.+-]+)+/([\w.+-]+)", r"\1", text)


def show(text: str, lines: int = 8, width: int = 100) -> None:
    """Print the first `lines` lines of a tool's output, each cut to `width` characters."""
    for line in tidy(text).strip().splitlines()[:lines]:
        print("  | " + (line if len(line) <= width else line[: width - 3] + "..."))


def start_processes(embedding_script: str) -> tuple[dict[str, Future], Future]:
    """Start, in the background, the fresh processes of sections 2 to 4 that nothing times, and
    compute-sanitizer's self-test of section 5: `.result()` of each waits for it."""
    started = {  # utils.start_process: run_process in the background, a few at a time
        "as it is": utils.start_process(embedding_script, unset=ASYNC_ENV_VARS, timeout=120),
        "CUDA_LAUNCH_BLOCKING=1": utils.start_process(embedding_script, env={"CUDA_LAUNCH_BLOCKING": "1"},
                                                      unset=ASYNC_ENV_VARS, timeout=120),
    }
    if importlib.util.find_spec("nbclient") is not None:  # section 3.1: a notebook run by a Jupyter kernel
        # ipykernel forwards descriptor 2 only outside pytest (iostream.py): the notebook may run under it (nbval)
        started["three-cell notebook"] = utils.start_process(
            utils.script("05_three_cells.py"), unset=[*ASYNC_ENV_VARS, "PYTEST_CURRENT_TEST"], timeout=150)
    started["sticky"] = utils.start_process(utils.script("05_sticky.py"), timeout=120)  # section 3
    if importlib.util.find_spec("cupy") is not None and not utils.device.shared_through_mps():  # section 3.2
        for kind in ("illegal address", "misaligned address"):
            started[kind] = utils.start_process(utils.script("05_kernel_faults.py"), kind, timeout=120)
    started["torch._assert_async"] = utils.start_process(utils.script("05_assert_async.py"),
                                                         unset=ASYNC_ENV_VARS, timeout=120)  # section 3.4
    started["DSA variables"] = utils.start_process(  # section 4
        embedding_script, env={"TORCH_USE_CUDA_DSA": "1", "PYTORCH_USE_CUDA_DSA": "1"},
        unset=["CUDA_LAUNCH_BLOCKING"], timeout=120)
    # section 5 (optional) asks whether compute-sanitizer can check a program here: it runs one, so ask now
    sanitizer_check = ThreadPoolExecutor(max_workers=1).submit(utils.sanitizer_status)
    return started, sanitizer_check


def time_waits(train, factors, steps: int = 30, turns: int = 5) -> tuple[float, dict]:
    """Section 7: `train(steps, wait, gpu_work)` timed with and without its waits, in turns, with extra GPU work a
    step of each factor times the host's time a step (measured first: no waits, no extra work).  Returns that host
    time and {(factor, wait): [seconds a step, one per turn]}."""
    import statistics

    utils.timing.gpu_cycles_per_second()  # gpu_sleep's one-time calibration, before anything is timed

    def per_step(wait: bool, gpu_work: float) -> float:
        with utils.timer(verbose=False) as elapsed:
            train(steps, wait, gpu_work)
        return elapsed.seconds / steps

    for wait in (True, False):
        per_step(wait, 1e-4)  # warm-up
    host = statistics.median(per_step(False, 0.0) for _ in range(5))
    timed: dict = {(f, wait): [] for f in factors for wait in (True, False)}
    for turn in range(turns):
        for f in factors:
            for wait in ((True, False) if turn % 2 else (False, True)):  # which goes first alternates
                timed[f, wait].append(per_step(wait, f * host))
    return host, timed


def plot_waits(cost: dict, title: str) -> None:
    """Section 7's plot: for each factor, the per-turn ratios with/without (sorted): their median, their range, and
    (host + GPU) / max(host, GPU), the ratio if host and GPU took turns with the waits and overlapped without."""
    import statistics

    import matplotlib.pyplot as plt

    factors = sorted(cost)
    medians = [statistics.median(cost[f]) for f in factors]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.errorbar(factors, medians, yerr=[[m - cost[f][0] for m, f in zip(medians, factors)],
                                        [cost[f][-1] - m for m, f in zip(medians, factors)]],
                fmt="o-", capsize=4, label="measured: median of the turns, and their range")
    ax.plot(factors, [(1 + f) / max(1.0, f) for f in factors], "k--", label="(host + GPU) / max(host, GPU)")
    ax.axhline(1.0, color="grey", linewidth=1)
    ax.set_xlabel("extra GPU work a step, in multiples of the host's time a step")
    ax.set_ylabel("time with the waits / without")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)  # below: not over the peak
    fig.tight_layout()
    plt.show()
