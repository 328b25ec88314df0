"""The sandbox's fork server: runs untrusted Python programs, one forked child per run.

Why a fork server: a fresh ``python -I`` costs ~20 ms of start-up, so 16 runs of one
program cost ~250 ms on 2 cores (measured; ``benchmarks/rgp_run.py``). This process
starts once (``python -I`` on this file, in its own session, with an empty environment:
no API key is ever in its memory) and forks a child per run; the child isolates itself
and executes the program in the freshly forked interpreter (~3 ms with the isolation).

It imports only the standard library and never the harness: ``sessions/sandbox.py``
talks to it over JSON lines on stdin/stdout.

One piece: ``python -I`` runs this file alone, its folder not on sys.path, so parts split off would load by file path.

- ``{"op": "run", "id", "program", "stdin", "limits": {...}}`` -> ``{"id", "stdout",
  "stderr", "exit_code", "signal", "timed_out", "killed_by", "wall_s", ...}``
- EOF on stdin (the harness went away) -> every child is killed and the server exits.

Isolation, set up once and reported in the first line it prints (``{"hello": ...}``);
``Isolation`` probes each piece in a throwaway child and keeps only what works:

- network: the server moves into a fresh network namespace (no interface but a down
  loopback), shared by its children; as non-root it first enters a user namespace.
  (Not ``unshare -rn``: run as root, it maps the program to uid 0 outside.)
- uid (root only): each concurrent run gets its own unprivileged uid from a range that
  names no account (not ``nobody``: a shared uid lets runs signal one another, shares
  one RLIMIT_NPROC count and can reach other ``nobody`` daemons). RLIMIT_NPROC is 1 by
  default, so a program can create no process or thread and nothing outlives its run;
  with a higher limit, every process of that uid is killed after the run (``kill(-1)``
  from a helper that has become that uid), however it left the process group;
- files: each child gets a private mount namespace with small tmpfs mounts over the
  world-writable directories (/tmp, /var/tmp, /dev/shm, /run/lock) and over every
  directory others may not traverse (such as root's home), freed with the run; the
  directories on ``sys.path`` that this hides are put back read-only (``FileView``).
  Without a mount namespace: a private temporary directory, removed afterwards;
- per child: a new session (its process group is killed on timeout or output overflow),
  rlimits (CPU, address space, file size, open files, processes, no core dumps),
  ``PR_SET_NO_NEW_PRIVS`` (setuid binaries do not elevate), a minimal environment, every
  descriptor but 0/1/2 closed, and death with the server (``PR_SET_PDEATHSIG``).

The server is a child subreaper, so orphans of a run come back to it to be reaped.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import io
import json
import os
import pwd
import resource
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
import types

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
SYS_OPEN_TREE, SYS_MOVE_MOUNT = 428, 429  # the same number on every architecture
OPEN_TREE_CLONE, AT_RECURSIVE, O_CLOEXEC, AT_FDCWD, MOVE_MOUNT_F_EMPTY_PATH = 1, 0x8000, 0o2000000, -100, 4

UID_BASE = 2_000_000_000  # above systemd's container range (up to 0x6FFFFFFF); names no account
LOCK_DIR = "/run/n2f-sandbox"  # root-only: which uid blocks running servers hold
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
SETUP_FAILED = 125
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
GRACE_S = 1.0  # after a run's main process is gone or killed, how long its pipes may stay open
SWEEP_S = 1.0  # without a uid per run: how often orphans that belong to no live run are killed
READ_CHUNK = 65536

libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def unshare(flags: int) -> None:
    _check(libc.unshare(flags), "unshare")


def prctl(option: int, value: int) -> None:
    _check(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                      ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


# ----------------------------------------------------------------- isolation


class Isolation:
    """What this server could set up, probed once at start."""

    def __init__(self, host_netns: int, slots: int):
        self.slots = slots
        self.userns = False
        self.netns = False
        self.mntns = False
        self.uid_base = 0  # 0: runs keep the server's uid
        self._lock_fd = -1
        self.notes: list[str] = []
        self.view = FileView(sys.path)
        self._enter_network_namespace(host_netns)
        self._probe_children()

    def _enter_network_namespace(self, host_netns: int) -> None:
        in_init_userns = _read("/proc/self/uid_map").split() == ["0", "0", "4294967295"]
        flags = CLONE_NEWNET if os.geteuid() == 0 and in_init_userns else CLONE_NEWUSER | CLONE_NEWNET
        uid, gid = os.geteuid(), os.getegid()
        try:
            unshare(flags)
            if flags & CLONE_NEWUSER:  # map ourselves, or files could not even be created in the new namespace
                for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                                   ("/proc/self/gid_map", f"{gid} {gid} 1")):
                    with open(path, "w") as f:
                        f.write(text)
        except OSError as exc:
            self.notes.append(f"no network namespace ({exc.strerror})")
            return
        self.userns = bool(flags & CLONE_NEWUSER)
        interfaces = [name for _, name in socket.if_nameindex()]
        self.netns = os.stat("/proc/self/ns/net").st_ino != host_netns and interfaces in ([], ["lo"])
        if not self.netns:
            self.notes.append(f"network namespace not in force (interfaces: {', '.join(interfaces)})")

    def _probe_children(self) -> None:
        """Do, in a throwaway child, what each run's child will do; keep only what worked.

        Exit bits: 1 the mount view failed, 2 the uid switch failed, 4 the import
        directories were unreadable afterwards (then a run could not even import).
        """
        uid = self._claim_uid_block() if os.geteuid() == 0 and not self.userns else 0
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                self.view.apply(16)
            except OSError:
                code |= 1
            if uid:
                try:
                    become(uid)
                    code |= 0 if os.getuid() == uid and os.geteuid() == uid else 2
                except OSError:
                    code |= 2
            if not all(os.access(d, os.R_OK | os.X_OK) for d in sys.path if os.path.isdir(d)):
                code |= 4
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            code = 7
        self.mntns = not code & 1
        if not self.mntns:
            self.notes.append("no private mount namespace: scratch files go to a temporary directory")
        if uid and not code & 6:
            self.uid_base = uid
        elif uid:
            self.notes.append("runs keep this uid: an unprivileged uid could not switch or not read the Python installation")

    def _claim_uid_block(self) -> int:
        """A block of ``slots`` uids that names no account and no other server here is using.

        Each server holds an flock on ``/run/n2f-sandbox/<base>.lock`` for its lifetime
        (released by the kernel when it dies), so concurrent harnesses never share a uid.
        """
        base = _free_uid_block(UID_BASE, self.slots)
        try:
            os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
        except OSError as exc:
            self.notes.append(f"uid block not locked ({exc.strerror}): another harness may share it")
            return base
        while True:
            fd = os.open(f"{LOCK_DIR}/{base}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                base = _free_uid_block(base + self.slots, self.slots)
                continue
            self._lock_fd = fd  # kept open for the server's lifetime
            return base

    def uid(self, slot: int) -> int:
        return self.uid_base + slot if self.uid_base else 0

    @property
    def level(self) -> str:
        if not self.netns and not self.uid_base and not self.userns:
            return "rlimits only (no user/network isolation available)"
        parts = ["rlimits", "userns" * self.userns, "netns" * self.netns, "private-tmpfs" * self.mntns,
                 "unprivileged-uid" * bool(self.uid_base)]
        missing = ["network not isolated"] * (not self.netns) + ["same uid as the harness"] * (not self.uid_base)
        return "+".join(p for p in parts if p) + (f" ({'; '.join(missing)})" if missing else "")

    def to_json(self) -> dict:
        return {"level": self.level, "netns": self.netns, "userns": self.userns, "mntns": self.mntns,
                "uid_base": self.uid_base, "slots": self.slots, "hidden": sorted(self.view.masks) if self.mntns else [],
                "notes": self.notes}


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _free_uid_block(base: int, size: int) -> int:
    """The first block of ``size`` uids from ``base`` on that names no account."""
    while True:
        taken = [u for u in range(base, base + size) if _uid_exists(u)]
        if not taken:
            return base
        base = taken[-1] + 1


def _uid_exists(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


class FileView:
    """What a child's private mount namespace looks like, planned once from this interpreter's paths.

    Small tmpfs mounts hide the world-writable directories (scratch space that vanishes
    with the run) and every directory an unprivileged uid could not traverse anyway
    (e.g. root's home, where pyenv puts Python). The directories imports read from
    (``sys.path``) that end up hidden are cloned before the masks go on and put back,
    read-only, at the same paths, so the program can import what ``python -I`` could.
    """

    def __init__(self, import_dirs: list[str]):
        self.masks: dict[str, str] = {d: "1777" for d in SCRATCH_DIRS if os.path.isdir(d) and not os.path.islink(d)}
        dirs = sorted({os.path.realpath(d) for d in import_dirs if os.path.isdir(d)})
        dirs = [d for d in dirs if not any(_under(d, other) for other in dirs if other != d)]
        for d in dirs:
            blocking = _first_closed_ancestor(d)
            if blocking and not any(_under(blocking, m) for m in self.masks):
                self.masks[blocking] = "755"
        self.masks = {m: mode for m, mode in self.masks.items()
                      if not any(_under(m, other) for other in self.masks if other != m)}
        self.exposed = [d for d in dirs if any(_under(d, m) for m in self.masks)]

    def apply(self, size_mb: int) -> None:
        unshare(CLONE_NEWNS)
        mount("none", "/", None, MS_REC | MS_PRIVATE, None)
        clones = [(d, open_tree(d)) for d in self.exposed]
        for path, mode in self.masks.items():
            mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode={mode}")
        for path, fd in clones:
            os.makedirs(path, 0o755, exist_ok=True)
            move_mount(fd, path)
            os.close(fd)
            mount("none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _first_closed_ancestor(path: str) -> str:
    """The topmost directory on the way to ``path`` that others may not traverse ('' if none)."""
    current = ""
    for part in path.strip("/").split("/"):
        current += "/" + part
        try:
            if not os.stat(current).st_mode & 0o001:
                return current
        except OSError:
            return ""
    return ""


def open_tree(path: str) -> int:
    """A detached recursive clone of the mount tree at ``path`` (Linux >= 5.2), as a descriptor."""
    fd = libc.syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | AT_RECURSIVE | O_CLOEXEC)
    if fd < 0:
        _check(-1, f"open_tree {path}")
    return fd


def move_mount(fd: int, target: str) -> None:
    _check(libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH),
           f"move_mount {target}")


def become(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


# ----------------------------------------------------------------------- child


def child_main(request: dict, fds: dict[str, int], uid: int, workdir: str, iso: Isolation, server: int) -> None:
    """Runs in the forked child: isolate, report setup on fd 3, execute the program. Never returns."""
    limits = request["limits"]
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        os.dup2(fds["stdin"], 0)
        os.dup2(fds["stdout"], 1)
        os.dup2(fds["stderr"], 2)
        os.dup2(fds["status"], 3)
        os.closerange(4, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        if iso.mntns:
            iso.view.apply(int(limits["scratch_mb"]))
            workdir = "/tmp/run"
            os.mkdir(workdir, 0o700)
            if uid:
                os.chown(workdir, uid, uid)
        os.chdir(workdir)
        set_limits(limits, uid)
        if uid:
            become(uid)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid switch, which clears it
        if os.getppid() != server:
            os._exit(SETUP_FAILED)
        os.environ.clear()
        os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir,
                           "TMPDIR": "/tmp" if iso.mntns else workdir, **ONE_THREAD})
        os.write(3, b"ok")
        os.close(3)
    except BaseException as exc:  # noqa: BLE001 - anything here is a sandbox failure, not the program's
        try:
            os.write(3, f"sandbox setup failed: {exc!r}".encode()[:2000])
        finally:
            os._exit(SETUP_FAILED)
    os._exit(run_program(request["program"]))


def set_limits(limits: dict, uid: int) -> None:
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"],) * 2)
    processes = int(limits["processes"])
    if not uid:  # the server's own uid: count the processes it already has
        processes += _processes_of(os.getuid())
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"],) * 2)


def _processes_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                count += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                continue
    return count


def run_program(source: str) -> int:
    """Execute the program as ``python -I main.py`` would; returns the exit status."""
    import linecache

    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                                 encoding="utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                                   encoding="utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                                                   encoding="utf-8", errors="backslashreplace",
                                                   line_buffering=True)
    sys.argv = ["main.py"]
    main = types.ModuleType("__main__")
    main.__file__ = "main.py"
    sys.modules["__main__"] = main
    linecache.cache["main.py"] = (len(source), None, source.splitlines(True), "main.py")
    code = 0
    try:
        exec(compile(source, "main.py", "exec"), main.__dict__)  # noqa: S102 - this is the sandboxed child
    except SystemExit as exc:
        code = _exit_status(exc.code)
    except BaseException as exc:  # noqa: BLE001 - an uncaught exception ends the program with status 1
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)  # from the program's frame on
        code = 1
    if "threading" in sys.modules:
        try:
            sys.modules["threading"]._shutdown()  # wait for non-daemon threads, as the interpreter does
        except BaseException:  # noqa: BLE001
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - as CPython: a failed final flush is status 120
            code = code or 120
    return code


def _exit_status(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    try:
        sys.stderr.write(f"{value}\n")
    except BaseException:  # noqa: BLE001
        pass
    return 1


# ---------------------------------------------------------------------- server


class Run:
    """One program execution in flight."""

    def __init__(self, request: dict, slot: int):
        self.id = request["id"]
        self.limits = request["limits"]
        self.slot = slot
        self.pid = 0
        self.workdir = ""
        self.started = time.monotonic()
        self.deadline = self.started + float(self.limits["timeout_s"])
        self.grace_until = 0.0  # set once killed or exited: how long the pipes may stay open
        self.out = bytearray()
        self.err = bytearray()
        self.status_text = bytearray()
        self.stdin = request.get("stdin", "").encode("utf-8", "surrogateescape")
        self.open_fds: dict[int, str] = {}  # parent ends still open -> stream name
        self.exit_status: int | None = None
        self.ended = 0.0
        self.killed_by = ""
        self.cleanup = ""  # "" not started | "running" (a uid killer is at work) | "done"

    @property
    def finished(self) -> bool:
        return self.exit_status is not None and not self.open_fds and self.cleanup == "done"

    def wake_at(self) -> float | None:
        """When the loop must look at this run again without any I/O."""
        if self.exit_status is None and not self.killed_by:
            return self.deadline
        if self.exit_status is None or self.open_fds:
            return self.grace_until
        return None


class Server:
    def __init__(self, iso: Isolation):
        self.iso = iso
        self.sel = selectors.DefaultSelector()
        self.free_slots = list(range(iso.slots))
        self.queue: list[dict] = []
        self.runs: dict[int, Run] = {}  # pid -> run
        self.uid_killers: dict[int, Run] = {}  # pid of a uid killer -> the run it cleans up after
        self.control = bytearray()
        self.closing = False
        self.next_sweep = 0.0
        self.pid = os.getpid()
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self.sel.register(wake_r, selectors.EVENT_READ, ("wake", None))
        self.sel.register(0, selectors.EVENT_READ, ("control", None))

    # -- main loop

    def serve(self) -> None:
        while not (self.closing and not self.runs):
            wakes = [t for t in (r.wake_at() for r in self.runs.values()) if t is not None]
            if not self.iso.uid_base:
                wakes.append(self.next_sweep)
            timeout = max(0.0, min(wakes) - time.monotonic()) if wakes else None
            for key, mask in self.sel.select(timeout):
                kind, run = key.data
                if kind == "control":
                    self._read_control()
                elif kind == "wake":
                    _drain(key.fd)
                elif kind == "stdin":
                    self._feed(run)
                else:
                    self._read_output(run, key.fd, kind)
            self._reap()
            if not self.iso.uid_base and time.monotonic() >= self.next_sweep:
                self._kill_stray_orphans()  # a run's escaped descendants reach us only once their parents die
                self.next_sweep = time.monotonic() + SWEEP_S
            self._enforce_deadlines()
            for run in [r for r in self.runs.values() if r.exit_status is not None and not r.cleanup]:
                self._clean_up_after(run)
            for run in [r for r in self.runs.values() if r.finished]:
                self._finish(run)
            self._start_queued()

    def _read_control(self) -> None:
        try:
            data = os.read(0, READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.sel.unregister(0)
            self.closing = True
            self.queue.clear()
            for run in self.runs.values():
                self._kill(run, "shutdown")
            return
        self.control += data
        while b"\n" in self.control:
            line, _, rest = bytes(self.control).partition(b"\n")
            self.control = bytearray(rest)
            if line.strip():
                self._accept(json.loads(line))

    def _accept(self, request: dict) -> None:
        if request.get("op") == "run":
            self.queue.append(request)

    def _start_queued(self) -> None:
        while self.queue and self.free_slots and not self.closing:
            self._start(self.queue.pop(0), self.free_slots.pop(0))

    # -- one run

    def _start(self, request: dict, slot: int) -> None:
        run = Run(request, slot)
        uid = self.iso.uid(slot)
        if not self.iso.mntns:
            run.workdir = tempfile.mkdtemp(prefix="n2f-sandbox-")
            if uid:
                os.chown(run.workdir, uid, uid)
        pipes = {name: os.pipe() for name in ("stdin", "stdout", "stderr", "status")}
        child_ends = {"stdin": pipes["stdin"][0], "stdout": pipes["stdout"][1],
                      "stderr": pipes["stderr"][1], "status": pipes["status"][1]}
        pid = os.fork()
        if pid == 0:
            child_main(request, child_ends, uid, run.workdir, self.iso, self.pid)
        run.pid = pid
        for fd in child_ends.values():
            os.close(fd)
        for name in ("stdout", "stderr", "status"):
            fd = pipes[name][0]
            os.set_blocking(fd, False)
            run.open_fds[fd] = name
            self.sel.register(fd, selectors.EVENT_READ, (name, run))
        stdin_fd = pipes["stdin"][1]
        os.set_blocking(stdin_fd, False)
        run.open_fds[stdin_fd] = "stdin"
        self.runs[pid] = run
        self._feed(run, stdin_fd)

    def _feed(self, run: Run, fd: int | None = None) -> None:
        fd = fd if fd is not None else next(f for f, n in run.open_fds.items() if n == "stdin")
        try:
            while run.stdin:
                written = os.write(fd, run.stdin[:READ_CHUNK])
                run.stdin = run.stdin[written:]
        except BlockingIOError:
            if fd not in self.sel.get_map():
                self.sel.register(fd, selectors.EVENT_WRITE, ("stdin", run))
            return
        except OSError:  # the program closed its stdin: the rest is not wanted
            run.stdin = b""
        self._close(run, fd)

    def _read_output(self, run: Run, fd: int, name: str) -> None:
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(run, fd)
            return
        if name == "status":
            run.status_text += data[:4000]
            return
        buf = run.out if name == "stdout" else run.err
        room = int(run.limits["output_bytes"]) - len(buf)
        buf += data[:max(room, 0)]
        if len(data) > room and not run.killed_by:
            self._kill(run, "output_limit")

    def _close(self, run: Run, fd: int) -> None:
        if fd in self.sel.get_map():
            self.sel.unregister(fd)
        os.close(fd)
        run.open_fds.pop(fd, None)

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            helped = self.uid_killers.pop(pid, None)
            if helped is not None:
                helped.cleanup = "done"
            run = self.runs.get(pid)
            if run is not None and run.exit_status is None:
                run.exit_status = status
                run.ended = time.monotonic()
                run.grace_until = run.ended + GRACE_S

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for run in self.runs.values():
            if run.exit_status is None and not run.killed_by and now >= run.deadline:
                self._kill(run, "timeout")
            elif run.exit_status is None and run.killed_by and now >= run.grace_until:
                self._kill(run, run.killed_by)  # still alive after SIGKILL: try again a second later
            elif run.exit_status is not None and run.open_fds and now >= run.grace_until:
                for fd in list(run.open_fds):  # a descendant holds the pipes open and will not die
                    self._close(run, fd)

    def _kill(self, run: Run, why: str) -> None:
        run.killed_by = run.killed_by or why
        run.grace_until = time.monotonic() + GRACE_S
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except OSError:
            pass

    def _clean_up_after(self, run: Run) -> None:
        """Kill whatever the run left behind: its process group, its uid, orphans it handed to us."""
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except OSError:
            pass
        uid = self.iso.uid(run.slot)
        if uid and int(run.limits["processes"]) > 1:
            self.uid_killers[start_uid_killer(uid)] = run
            run.cleanup = "running"
            return
        if not uid:
            self._kill_stray_orphans()
        # with its own uid and RLIMIT_NPROC 1 the run could not create a single process: nothing is left
        run.cleanup = "done"

    def _kill_stray_orphans(self) -> None:
        """Without a uid per run: orphans reparented to this subreaper belong to no live run's session."""
        live = {run.pid for run in self.runs.values() if run.exit_status is None}
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in self.runs:
                continue
            fields = _read(f"/proc/{name}/stat").rpartition(")")[2].split()
            if len(fields) > 3 and int(fields[1]) == self.pid and int(fields[3]) not in live:
                try:
                    os.kill(int(name), signal.SIGKILL)
                except OSError:
                    pass

    def _finish(self, run: Run) -> None:
        del self.runs[run.pid]
        self.free_slots.append(run.slot)
        if run.workdir:
            shutil.rmtree(run.workdir, ignore_errors=True)
        status = run.exit_status if run.exit_status is not None else 0
        exit_code = os.waitstatus_to_exitcode(status)
        setup = run.status_text.decode("utf-8", "replace")
        reply = {
            "id": run.id,
            "stdout": run.out.decode("utf-8", "replace"),
            "stderr": run.err.decode("utf-8", "replace"),
            "exit_code": exit_code if exit_code >= 0 else None,
            "signal": signal.Signals(-exit_code).name if exit_code < 0 and -exit_code in signal.valid_signals() else "",
            "timed_out": run.killed_by == "timeout",
            "killed_by": run.killed_by or _limit_signal(exit_code),
            "wall_s": round((run.ended or time.monotonic()) - run.started, 4),
            "sandbox_error": "" if setup == "ok" else (setup or "the child died before its sandbox was set up"),
        }
        _write_line(reply)


def _limit_signal(exit_code: int) -> str:
    if exit_code == -signal.SIGXCPU:
        return "cpu_limit"
    if exit_code == -signal.SIGXFSZ:
        return "file_size_limit"
    return ""


def start_uid_killer(uid: int) -> int:
    """Fork a helper that SIGKILLs every process of ``uid`` (it becomes ``uid`` and calls kill(-1)).

    kill(-1) as root would kill the whole machine, so the helper checks that it really
    is ``uid`` (and not root) before sending anything. Returns the helper's pid; the
    server reaps it like any child.
    """
    pid = os.fork()
    if pid == 0:
        try:
            if uid > 0:
                become(uid)
                if os.getuid() == uid and os.geteuid() == uid and os.getuid() != 0:
                    for _ in range(2):  # twice: a process caught mid-fork may leave a child behind
                        os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    return pid


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _write_line(obj: dict) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        try:
            data = data[os.write(1, data):]
        except InterruptedError:
            continue
        except BrokenPipeError:
            os._exit(0)


def main() -> None:
    host_netns, slots = int(sys.argv[1]), int(sys.argv[2])
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    os.set_blocking(0, False)
    iso = Isolation(host_netns, slots)
    _write_line({"hello": iso.to_json()})
    try:
        Server(iso).serve()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise


if __name__ == "__main__":
    main()
