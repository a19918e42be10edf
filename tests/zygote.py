"""A "zygote" for the tests: `python -c code args...` run in a child forked from one Python that has imported torch
(and never touched CUDA), not in a fresh Python each time.

Notebook 05's `find_failing_cell` answers run the cells of each notebook the check writes in a fresh process
(`utils.processes.run_process`): about 25 processes for its registered answers, each spending about 1.5 s of CPU on
`import torch` alone, and doing nothing else of note. Forked from a process that imported torch already, each child
runs the same code from the same state as a fresh `python -c` would: `__main__` a new module, `sys.argv` as
`-c args...`, the caller's working directory and environment (as run_process computes it), stdout and stderr to
their own files, an uncaught exception's traceback printed without the zygote's own frame (the cells' frames are
`File "<string>"`, as under `-c`), non-daemon threads joined and atexit's functions run before the exit, and the
exit status as subprocess reports it (negative: a signal). What differs: torch was imported under the zygote's
environment (run_process's `env=` and `unset=` reach the cells, not torch's import-time reads), and every child
shares one hash seed. No registered answer's verdict depends on either (tests/test_exercises.py compared them).

Written by hand: multiprocessing's forkserver (with `set_forkserver_preload(["torch"])`) runs a picklable function
in a child whose `__main__` is the parent's script and whose exit is multiprocessing's, not `python -c` code with its
own `__main__`, argv, streams, traceback and exit status, which is what run_process's callers compare.

Used on a machine without CUDA only (`side_by_side_outcomes`); with a GPU the answers keep their fresh processes
(a fork after CUDA is initialized would break it, and the zygote never initializes it, but a GPU run's time is not
the CPU suite's).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from utils import processes

_SERVER = r'''
import builtins, json, os, socket, struct, sys, threading, traceback, types, atexit
import torch  # what each fresh process of the answers spends its CPU on; CUDA is never touched here

def _read(conn):
    size = struct.unpack("!Q", conn.recv(8, socket.MSG_WAITALL))[0]
    return json.loads(conn.recv(size, socket.MSG_WAITALL))

def _work(request):
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path in ((1, request["out"]), (2, request["err"])):
        opened = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = ["-c", *request["args"]]
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(request["code"], "<string>", "exec"), main.__dict__)
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException as error:
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code & 0xFF)

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(64)
print("ready", flush=True)
while True:
    conn, _ = listener.accept()
    request = _read(conn)
    if request is None:  # the last request: every child waited for (their CPU time counted as the caller's)
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                os._exit(0)
    if os.fork() == 0:  # a monitor: forks the worker, waits for it, reports its status
        listener.close()
        worker = os.fork()
        if worker == 0:
            conn.close()
            _work(request)
        conn.sendall(struct.pack("!q", worker))
        _, status = os.waitpid(worker, 0)
        conn.sendall(struct.pack("!q", os.waitstatus_to_exitcode(status)))
        conn.close()
        os._exit(0)
    conn.close()
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:  # the monitors done so far
            pass
    except ChildProcessError:
        pass
'''


class Zygote:
    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="zygote-")
        self.path = str(Path(self._dir.name) / "socket")
        self.server = subprocess.Popen([sys.executable, "-c", _SERVER, self.path], stdout=subprocess.PIPE, text=True)
        assert self.server.stdout is not None and self.server.stdout.readline().strip() == "ready"

    def close(self) -> None:
        """Stop the zygote once every child is done, and wait for it: their CPU time is then this process's
        children's (resource.getrusage), as the fresh processes' was."""
        stop = json.dumps(None).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.path)
            conn.sendall(struct.pack("!Q", len(stop)) + stop)
        self.server.wait()
        self._dir.cleanup()

    def run_process(self, code: str, *args: str, env: Mapping[str, str] | None = None, unset: Iterable[str] = (),
                    timeout: float = 300, prefix: Sequence[str] = ()) -> processes.Finished:
        """As utils.processes.run_process, in a child forked from the zygote (a `prefix`: a fresh process)."""
        if prefix:
            return processes.run_process(code, *args, env=env, unset=unset, timeout=timeout, prefix=prefix)
        with tempfile.TemporaryDirectory(prefix="zygote-run-") as where:
            out, err = Path(where) / "out", Path(where) / "err"
            out.touch()
            err.touch()
            request = json.dumps({"code": code, "args": list(args), "env": processes._environment(env, unset),
                                  "cwd": os.getcwd(), "out": str(out), "err": str(err)}).encode()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(self.path)
                conn.sendall(struct.pack("!Q", len(request)) + request)
                conn.settimeout(timeout)
                worker = struct.unpack("!q", conn.recv(8, socket.MSG_WAITALL))[0]
                try:
                    returncode = struct.unpack("!q", conn.recv(8, socket.MSG_WAITALL))[0]
                except TimeoutError:
                    os.kill(worker, 9)
                    raise subprocess.TimeoutExpired([sys.executable, "-c", code, *args], timeout) from None
            return processes.Finished(returncode, out.read_text(), err.read_text())


_LOCK = threading.Lock()


@contextmanager
def answers_forked(module: object) -> Iterator[Zygote]:
    """`module.run_process` (an answers module's) replaced by a zygote's for the block."""
    zygote = Zygote()
    with _LOCK:
        before = module.run_process  # type: ignore[attr-defined]
        module.run_process = zygote.run_process  # type: ignore[attr-defined]
    try:
        yield zygote
    finally:
        module.run_process = before  # type: ignore[attr-defined]
        zygote.close()
