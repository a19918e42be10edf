"""Notebook 09, section 5's optional "A look inside with Nsight Compute": the lecture's kernels, launched under ncu.

    ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \\
        python notebooks/scripts/09_ncu_probe.py > ncu09.csv

Launches the lecture's own CUDA C (tests/test_exercises_09.py holds each kernel to the lecture's, character for
character): `silu1` at 32 to 1024 threads a block on 2**26 floats, and the gathers on 8192 x 8192 in blocks of 256:
section 4's three, and a fourth, `gather_cols_const`, which is `gather_cols` with the number of rows known when it is
compiled (`-DROWS=8192`), so that the compiler turns `% rows` and `/ rows` into a few shifts and masks: against
`gather_cols` it separates the division's cost from the order's (section 4 times it too, and the test holds that
source to this one).  Each kernel twice; the second launch is the one to
read.  The lecture's cell runs it so, in a fresh process, through `profile` below (which finds ncu, runs this script
under it and says why where it could not), and reads ncu's CSV in its own process with the functions below
(`read_ncu_csv`, `counters`, `table`, `comparisons`), which tests/test_exercises_09.py tries on a sample.
CONTRIBUTING ("The GPU regression", call BX) has the maintainers' first run of it on an H200.
"""

from __future__ import annotations

import csv
import math

RAW = r"""
extern "C" __global__ void silu1(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v / (1.0f + expf(-v)); }
}
extern "C" __global__ void gather_cols(const float* x, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) { int r = i % rows, c = i / rows; y[i] = x[r * cols + c]; }
}
extern "C" __global__ void gather_rows(const float* x, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] = x[i];
}
extern "C" __global__ void gather_rows_div(const float* x, float* y, int rows, int cols, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // with stride = rows, x[c * stride + r] is x[i]
    if (i < rows * cols) { int r = i % rows, c = i / rows; y[i] = x[c * stride + r]; }
}
"""
# gather_cols but for `rows`, a constant when compiled (the `rows` argument is still passed, and unused)
RAW_CONST = r"""
extern "C" __global__ void gather_cols_const(const float* x, float* y, int, int cols) {
    const int rows = ROWS;  // -DROWS=8192 when compiled: % and / by a constant power of two
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) { int r = i % rows, c = i / rows; y[i] = x[r * cols + c]; }
}
"""
N, ROWS, COLS = 1 << 26, 8192, 8192
SILU_THREADS = (32, 64, 128, 256, 512, 1024)
GATHERS = ("gather_rows", "gather_rows_div", "gather_cols", "gather_cols_const")
KERNELS = ("silu1", *GATHERS)  # ncu profiles CuPy's own kernels too (the random numbers): left out of the table

# ncu's own counters of the bytes DRAM read and wrote while a kernel ran (the `--metrics` of the command above)
METRICS = "dram__bytes_read.sum,dram__bytes_write.sum"

# What a row of the lecture's table shows: its heading, and ncu's metric (its "Metric Name"; "Memory Throughput"
# also names a percentage in the Speed Of Light section: the one here is Memory Workload Analysis' rate of DRAM bytes)
COLUMNS = {"µs": "Duration", "DRAM %": "DRAM Throughput", "DRAM MiB": METRICS, "L2 hit %": "L2 Hit Rate",
           "MemBusy%": "Mem Busy", "pipes %": "Mem Pipes Busy", "occup. %": "Achieved Occupancy",
           "blk/SM": "Achieved Active Warps Per SM"}
_SCALE = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def _base(value: float, unit: str) -> float:
    """A value in seconds, bytes a second or bytes, from a unit spelled either way ncu spells it (`ns`, `byte/s`:
    ncu 2025 on the H200, tests/data/ncu09_h200.csv; `usecond`, `Gbyte/second`: older versions; `Mbyte`: a
    counter's bytes, SI prefixes as in its rates); others as they are."""
    for suffix in ("byte/second", "byte/s", "second", "s", "byte"):
        if unit.endswith(suffix) and unit[: -len(suffix)] in _SCALE:
            return value * _SCALE[unit[: -len(suffix)]]
    return value


def read_ncu_csv(text: str) -> dict[tuple[str, int], dict[str, float]]:
    """ncu's `--csv` output (a line per metric of each profiled launch, among the program's own lines and ncu's
    `==PROF==` lines) read into {(kernel, threads a block): {metric name: value}}, for the last launch of each
    (kernel, block size): this probe's second.  Metric names in lower case (ncu writes "Achieved Active Warps Per
    SM" but "Theoretical Active Warps per SM"); durations in seconds, rates in bytes a second, percentages as
    printed; a value's thousands separators dropped."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    launches: dict[int, tuple[tuple[str, int], dict[str, float]]] = {}
    for row in csv.DictReader(lines):
        try:
            value = float(row["Metric Value"].replace(",", ""))
            launch = int(row["ID"])
        except (KeyError, TypeError, ValueError):  # a header repeated, an "n/a"
            continue
        unit, name = row["Metric Unit"], row["Metric Name"]
        if name == "Memory Throughput" and unit == "%":
            name = "Memory Throughput %"  # Speed Of Light's, a share of the peak
        kernel = row["Kernel Name"].split("(")[0].strip()
        if kernel not in KERNELS:
            continue
        threads = int(row["Block Size"].strip("()").split(",")[0])
        launches.setdefault(launch, ((kernel, threads), {}))[1][name.lower()] = _base(value, unit)
    return {key: metrics for _, (key, metrics) in sorted(launches.items())}  # a later launch replaces an earlier


def counters(metrics: dict[str, float], threads: int) -> dict[str, float]:
    """One row of the table: the columns of COLUMNS, in the units of their headings (NaN where ncu gave none)."""
    def get(name: str) -> float:
        return metrics.get(name.lower(), float("nan"))

    seconds = get("Duration")
    counted = get("dram__bytes_read.sum") + get("dram__bytes_write.sum")  # NaN where ncu gave either none
    return {"µs": seconds * 1e6, "DRAM %": get("DRAM Throughput"),
            "DRAM MiB": (get("Memory Throughput") * seconds if math.isnan(counted) else counted) / 2**20,
            "DRAM read MiB": get("dram__bytes_read.sum") / 2**20,
            "DRAM written MiB": get("dram__bytes_write.sum") / 2**20,
            "L2 hit %": get("L2 Hit Rate"), "MemBusy%": get("Mem Busy"), "pipes %": get("Mem Pipes Busy"),
            "occup. %": get("Achieved Occupancy"),
            "blk/SM": get("Achieved Active Warps Per SM") / (threads / 32)}  # warps an SM held / a block's


def table(read: dict[tuple[str, int], dict[str, float]]) -> list[str]:
    """The rows to print: kernel, threads a block, then COLUMNS."""
    lines = [f"{'kernel':<18}{'threads':>7}" + "".join(f"{heading:>9}" for heading in COLUMNS)]
    for (kernel, threads), metrics in read.items():
        row = counters(metrics, threads)
        lines.append(f"{kernel:<18}{threads:>7}" + "".join(f"{row[h]:>9,.1f}" for h in COLUMNS))
    return lines


def comparisons(read: dict[tuple[str, int], dict[str, float]]) -> list[str]:
    """The sentences the lecture's prose reads, computed from the counters, each with what its values favour (one
    per question; a question whose kernels ncu did not report is left out)."""
    rows = {key: counters(metrics, key[1]) for key, metrics in read.items()}
    said = []
    cols, by_rows, const, div = (rows.get((k, 256)) for k in ("gather_cols", "gather_rows", "gather_cols_const",
                                                                "gather_rows_div"))
    if cols and by_rows:
        times = cols["DRAM MiB"] / by_rows["DRAM MiB"]
        no_reuse = 9 / 2  # section 4: 9 floats an element against gather_rows' 2
        nearer = "reuse" if abs(math.log(times)) < abs(math.log(times / no_reuse)) else "no-reuse"
        said.append(
            f"DRAM bytes (reads and writes): gather_cols {cols['DRAM MiB']:,.0f} MiB, gather_rows "
            f"{by_rows['DRAM MiB']:,.0f} MiB: {times:.2f} times (DRAM throughput x duration: "
            f"{cols['DRAM %'] * cols['µs'] / (by_rows['DRAM %'] * by_rows['µs']):.2f} times); section 4's "
            f"no-reuse picture predicts {no_reuse:.1f} times, its reuse picture {1:.1f}: nearer the {nearer} picture")
        busy = {"the busiest memory unit (Mem Busy)": cols["MemBusy%"], "the memory pipes": cols["pipes %"],
                "DRAM": cols["DRAM %"]}
        said.append(
            f"gather_cols: memory units {cols['MemBusy%']:.1f}% busy (gather_rows {by_rows['MemBusy%']:.1f}%), "
            f"memory pipes {cols['pipes %']:.1f}% busy (gather_rows {by_rows['pipes %']:.1f}%), DRAM throughput "
            f"{cols['DRAM %']:.1f}% of its peak (gather_rows {by_rows['DRAM %']:.1f}%), L2 hit rate "
            f"{cols['L2 hit %']:.1f}% (gather_rows {by_rows['L2 hit %']:.1f}%); nearest its peak: "
            f"{max(busy, key=lambda k: busy[k] if busy[k] == busy[k] else -1.0)}")  # a NaN (not reported) last
    if cols and by_rows and const:
        said.append(
            f"gather_cols_const (rows known when compiled) took {const['µs']:,.0f} µs, gather_cols "
            f"{cols['µs']:,.0f} µs, gather_rows {by_rows['µs']:,.0f} µs: gather_cols took "
            f"{cols['µs'] / const['µs']:.2f} times gather_cols_const's time (the run-time division's part), and "
            f"gather_cols_const {const['µs'] / by_rows['µs']:.2f} times gather_rows' (the order's part)"
            + (f"; in order, gather_rows_div took {div['µs'] / by_rows['µs']:.2f} times gather_rows' time" if div
               else ""))
    small, large = rows.get(("silu1", 256)), rows.get(("silu1", 1024))
    if small and not math.isnan(small["DRAM read MiB"]):  # ncu's byte counters read
        said.append(
            f"silu1 at 256 threads: DRAM read {small['DRAM read MiB']:,.1f} MiB and wrote "
            f"{small['DRAM written MiB']:,.1f} MiB while it ran (dram__bytes_read.sum, dram__bytes_write.sum), "
            f"for x's {N * 4 / 2**20:,.0f} MiB read and y's {N * 4 / 2**20:,.0f} MiB written")
    if small and large:
        took, predicted = large["µs"] / small["µs"], small["occup. %"] / large["occup. %"]
        said.append(
            f"silu1 at 1024 threads against 256: achieved occupancy {large['occup. %']:.1f}% against "
            f"{small['occup. %']:.1f}% (an SM held {large['blk/SM']:.1f} blocks on average against "
            f"{small['blk/SM']:.1f}); a time that went as 1 / occupancy (bytes in flight as warps) would be "
            f"{predicted:.2f} times 256's, and it took {took:.2f} times: occupancy accounts for "
            f"{'all' if predicted >= took else 'part, not all,'} of the rise")
    return said


def profile(options: list[str], timeout: float = 120) -> tuple[dict[tuple[str, int], dict[str, float]], str]:
    """This script run under ncu with `options` (ncu's own arguments), in a fresh process, and ncu's CSV read:
    (read_ncu_csv's counters, why there are none).  ncu is found on PATH or beside compute-sanitizer (a CUDA
    toolkit's bin/); where it is missing, where the GPU is shared through MPS, where it runs past `timeout` seconds
    or prints no counters (ERR_NVGPUCTRPERM: no access to them, notebook 08's pitfalls), the counters are {} and the
    reason says which (ncu's first error line, or its exit status)."""
    import os
    import shutil
    import subprocess

    import utils  # in the lecture's process, where the course's utils is importable

    sanitizer = utils.compute_sanitizer()  # PATH, or a CUDA toolkit's bin/, where ncu lies beside it
    ncu = shutil.which("ncu") or (sanitizer and os.path.join(os.path.dirname(sanitizer), "ncu"))
    if not (ncu and os.access(ncu, os.X_OK)):
        return {}, "no ncu on PATH or in the CUDA toolkit's bin/ (ncu comes with the toolkit)"
    if utils.device.shared_through_mps():
        return {}, "this GPU is shared through MPS (as with compute-sanitizer, ncu is not run there)"
    try:
        done = utils.run_process(utils.script("09_ncu_probe.py"), timeout=timeout, prefix=[ncu, *options])
    except subprocess.TimeoutExpired:
        return {}, f"ncu took more than {timeout:g} s"
    output = (done.stdout + done.stderr).splitlines()
    errors = [line for line in output if "==ERROR==" in line or "ERR_" in line]  # ERR_NVGPUCTRPERM: no access
    why = (errors or [f"ncu exited with status {done.returncode} and printed no counters"])[0]
    return read_ncu_csv(done.stdout), why


def main() -> None:
    import cupy as cp  # on the GPU machine only

    mod = cp.RawModule(code=RAW)
    const = cp.RawModule(code=RAW_CONST, options=(f"-DROWS={ROWS}",))
    x = cp.random.standard_normal(N, dtype=cp.float32)
    y = cp.empty_like(x)
    silu1 = mod.get_function("silu1")
    for threads in SILU_THREADS:
        for _ in range(2):  # the second launch is the one to read
            silu1(((N + threads - 1) // threads,), (threads,), (x, y, cp.int64(N)))
    for name in GATHERS:
        kernel = const.get_function(name) if name == "gather_cols_const" else mod.get_function(name)
        extra = (cp.int32(ROWS),) if name == "gather_rows_div" else ()  # its stride
        for _ in range(2):
            kernel(((ROWS * COLS + 255) // 256,), (256,), (x, y, cp.int32(ROWS), cp.int32(COLS), *extra))
    cp.cuda.Device().synchronize()
    print("done")


if __name__ == "__main__":
    main()
