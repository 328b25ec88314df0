"""The Python sandbox: hostile programs are contained, tagged, and the harness carries on.

Every hostile program here runs only inside the sandbox, under its limits, with whatever
isolation this uid gets (tests/test_sandbox_user.py runs 25 escapes as a normal user and
as root). RLIMIT_NPROC is 1 and binds either way: as root each run has its own uid, as a
normal user its own user namespace.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engines import get_engine
from engines.rgp.generate import build_items
from engines.rgp.settings import RgpSettings
from sessions.tools.sandbox import Limits, RunResult, Sandbox, SandboxError
from sessions.tools.dispatch import python_sandbox

HOME = os.path.expanduser("~")
GRID_PROGRAM = "s = input().split()\nprint('\\n'.join('**..' if c in 'ACEG' else '..**' for c in s))\n"


@pytest.fixture(scope="module")
def sandbox():
    box = Sandbox()
    yield box
    box.close()


def run(sandbox: Sandbox, program: str, stdin: str = "A C E G", timeout: float = 2.0) -> RunResult:
    return sandbox.run_sync(program, stdin, Limits(timeout_s=timeout))


def sandbox_uid_processes(sandbox: Sandbox) -> list[int]:
    base = sandbox.details["uid_base"]
    if not base:
        return []
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                uid = os.stat(f"/proc/{name}").st_uid
            except OSError:
                continue
            if base <= uid < base + sandbox.details["slots"]:
                found.append(int(name))
    return found


def assert_harness_fine(sandbox: Sandbox) -> None:
    result = run(sandbox, GRID_PROGRAM)
    assert result.exit_code == 0 and result.stdout == "**..\n**..\n**..\n**..\n"
    assert sandbox_uid_processes(sandbox) == []


# ------------------------------------------------------------- basic contract


def test_runs_a_program_on_stdin(sandbox):
    result = run(sandbox, GRID_PROGRAM, "A D E H")
    assert result == RunResult(stdout="**..\n..**\n**..\n..**\n", stderr="", exit_code=0, wall_s=result.wall_s)
    assert result.wall_s > 0  # measured; how long it may take is benchmarks/rgp_run.py's figure


def test_isolation_level_is_detected_and_in_force(sandbox):
    details = sandbox.details
    level = details["level"]
    assert level == sandbox.isolation and "+allowlist-root+private-tmpfs+pidns+netns+" in level
    probe = run(sandbox, "import os, socket\nprint(os.getuid(), os.getpid())\n"
                         "print([n for _, n in socket.if_nameindex()])\n")
    ids, interfaces = probe.stdout.splitlines()
    uid, pid = map(int, ids.split())
    assert pid == 1 and interfaces in ("[]", "['lo']")  # pid 1 of its own pid namespace, no network
    if details["uid_base"]:
        assert level.startswith("uid-per-run+") and uid >= details["uid_base"]
    else:
        assert level.startswith("userns+") and details["userns"] and uid == 1000


def test_the_level_names_every_layer():
    from sessions.tools.sandbox_server import Isolation

    iso = object.__new__(Isolation)
    iso.unavailable, iso.userns, iso.seccomp = "", True, b"filter"
    assert iso.level == "userns+allowlist-root+private-tmpfs+pidns+netns+no-capabilities+seccomp+rlimits"
    iso.userns, iso.seccomp = False, b""  # no filter on an architecture whose numbers it does not know
    assert iso.level == "uid-per-run+allowlist-root+private-tmpfs+pidns+netns+no-capabilities+rlimits"
    iso.unavailable = "cannot isolate programs as a normal user (...)"
    assert iso.level == "unavailable"


def test_concurrent_servers_never_share_a_uid(sandbox):
    if not sandbox.details["uid_base"]:
        pytest.skip("no uid per run here")
    other = Sandbox()
    try:
        a, b = sandbox.details["uid_base"], other.details["uid_base"]
        assert abs(a - b) >= sandbox.details["slots"]
    finally:
        other.close()


def test_minimal_environment_and_no_api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-the-test")
    box = Sandbox()  # started after the key is in this process's environment
    try:
        program = ("import os\nprint(sorted(os.environ))\n"
                   f"try:\n    print(open('/proc/{os.getpid()}/environ', 'rb').read())\n"
                   "except OSError as exc:\n    print('denied', type(exc).__name__)\n")
        result = run(box, program)
        assert "sk-secret-for-the-test" not in result.stdout + result.stderr
        assert "OPENAI_API_KEY" not in result.stdout
        names = eval(result.stdout.splitlines()[0])  # noqa: S307 - our own program's output
        assert set(names) <= {"PATH", "LANG", "HOME", "TMPDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                              "MKL_NUM_THREADS"}
    finally:
        box.close()


def test_only_stdio_descriptors_are_open(sandbox):
    program = ("import os\ndef is_open(fd):\n    try:\n        os.fstat(fd)\n    except OSError:\n"
               "        return False\n    return True\nprint([fd for fd in range(4096) if is_open(fd)])\n")
    assert run(sandbox, program).stdout.strip() == "[0, 1, 2]"  # no /proc to list: every number is tried


def test_python_isolated_mode_and_imports_work(sandbox):
    result = run(sandbox, "import sys, json, itertools, re, collections, encodings.idna\n"
                          "print(sys.flags.isolated, sys.argv, __name__)\n")
    assert result.exit_code == 0 and result.stdout.strip() == "1 ['main.py'] __main__"


def test_the_sixteen_inputs_run_concurrently(sandbox):
    """Each of sixteen runs notes when it started and ended (it sleeps 2 s in between): the last started
    before the first ended, so all sixteen were running at one moment. This is an order of events, not a
    duration, so a busy machine cannot fail it unless starting sixteen runs takes it 2 s; the speed budget
    (100 ms for the sixteen grid runs) is measured by benchmarks/rgp_run.py, not here."""
    inputs = [str(b) for b in range(16)]
    program = "import time\nstarted = time.time()\ntime.sleep(2)\nprint(input(), started, time.time())\n"
    results = asyncio.run(sandbox.run_all(program, inputs, Limits()))
    lines = [r.stdout.split() for r in results]
    assert [line[0] for line in lines] == inputs
    assert max(float(line[1]) for line in lines) < min(float(line[2]) for line in lines)  # one after another: never


async def test_a_cancelled_caller_does_not_break_the_client(sandbox):
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(sandbox.run_all("import time\ntime.sleep(0.5)\n", ["x", "y"], Limits()), 0.1)
    await asyncio.sleep(0.8)  # the runs end in the server; their replies find nobody waiting
    assert_harness_fine(sandbox)


def test_a_dead_server_is_restarted(sandbox):
    sandbox._server.process.kill()
    sandbox._server.process.wait()
    time.sleep(0.1)
    assert_harness_fine(sandbox)


# ----------------------------------------------------------- hostile programs


def test_infinite_loop_is_killed_at_the_wall_limit(sandbox):
    result = run(sandbox, "while True:\n    pass\n", timeout=1.0)
    assert result.timed_out and result.killed_by == "timeout" and result.signal == "SIGKILL"
    assert result.wall_s > 0.9  # killed at 1 s, not earlier (a lower bound: a busy machine only adds to it)
    assert_harness_fine(sandbox)


def test_the_cpu_limit_is_told_apart_from_the_wall_timeout(sandbox):
    result = sandbox.run_sync("while True:\n    pass\n", "", Limits(timeout_s=10.0, cpu_s=1))
    assert result.killed_by == "cpu_limit" and not result.timed_out and result.exit_code is None, result
    assert_harness_fine(sandbox)


def test_a_kill_by_the_cpu_limit_is_named_though_the_child_reports_less_cpu_than_the_limit_counted():
    """Under load a run killed at a 1 s limit reported 0.81 s of CPU (and was named killed by nothing): a
    SIGKILL the server did not send, after half the CPU time or more, is the CPU limit's."""
    from sessions.tools.sandbox_server import _limit_signal

    assert _limit_signal(-signal.SIGKILL, 0.81, 1) == "cpu_limit" == _limit_signal(-signal.SIGKILL, 5.9, 6)
    assert _limit_signal(-signal.SIGKILL, 0.2, 1) == "" == _limit_signal(-signal.SIGSEGV, 0.9, 1)
    assert _limit_signal(-signal.SIGXFSZ, 0.0, 1) == "file_size_limit" and _limit_signal(0, 1.0, 1) == ""


def test_the_root_holds_the_standard_library_and_none_of_the_checkout(sandbox):
    root = sandbox.details["root"]
    checkout = str(Path(__file__).resolve().parents[1])
    assert any(Path(entry, "json", "__init__.py").is_file() for entry in root)  # the stdlib is in
    assert not any(entry.startswith(checkout) or checkout.startswith(entry) for entry in root)
    if sys.prefix != sys.base_prefix:  # a virtual environment: its site-packages stay out
        assert not any(entry.startswith(os.path.realpath(sys.prefix)) for entry in root)
    assert not any(Path(HOME).resolve() == Path(entry.split(" -> ")[0]) for entry in root)
    listing = run(sandbox, "import os\nprint(sorted(os.listdir('/')), sorted(os.listdir('/dev')))\n").stdout
    assert "proc" not in listing and "home" not in listing and "['full', 'null', 'random', 'urandom', 'zero']" in listing


def test_seccomp_refuses_what_a_grid_program_never_needs(sandbox):
    if "+seccomp+" not in sandbox.isolation:
        pytest.skip("no seccomp filter on this architecture")
    program = ("import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "for name, call in (('unshare', lambda: libc.unshare(0x10000000)), ('io_uring_setup', lambda: "
               "libc.syscall(425, 1, 0)), ('bpf', lambda: libc.syscall(321, 0, 0, 0)), ('clone3', lambda: "
               "libc.syscall(435, 0, 0))):\n    print(name, call(), errno.errorcode[ctypes.get_errno()])\n"
               "import threading\nthreading.Thread(target=print, args=('a thread still runs',)).start()\n")
    result = sandbox.run_sync(program, "", Limits(processes=2))
    assert result.stdout.splitlines() == ["unshare -1 EPERM", "io_uring_setup -1 EPERM", "bpf -1 EPERM",
                                          "clone3 -1 ENOSYS", "a thread still runs"]


def test_10_gb_allocation_fails_inside(sandbox):
    result = run(sandbox, "x = bytearray(10 * 1024 ** 3)\nprint('allocated')\n")
    assert result.exit_code == 1 and "MemoryError" in result.stderr and "allocated" not in result.stdout
    assert_harness_fine(sandbox)


def test_fork_bomb_is_stopped(sandbox):
    result = run(sandbox, "import os\nwhile True:\n    os.fork()\n", timeout=2.0)
    assert result.exit_code == 1 and "BlockingIOError" in result.stderr  # RLIMIT_NPROC = 1, counted for the run alone
    stubborn = run(sandbox, "import os\nwhile True:\n    try:\n        os.fork()\n        os.setsid()\n"
                            "    except OSError:\n        pass\n", timeout=1.0)
    assert stubborn.timed_out
    assert_harness_fine(sandbox)


def test_with_more_processes_allowed_everything_of_the_run_dies_with_it(sandbox):
    daemon = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')\n"
    result = sandbox.run_sync(daemon, "", Limits(processes=4))
    # the daemon (asleep 60 s) still holds stdout: waiting for it would end in the 5 s timeout, not this clean exit
    assert result.stdout == "parent done\n" and result.exit_code == 0 and not result.timed_out and not result.killed_by
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n        os.setsid()\n    except OSError:\n        pass\n"
    result = sandbox.run_sync(bomb, "", Limits(processes=4, timeout_s=1))
    assert result.timed_out
    time.sleep(0.2)
    assert sandbox_uid_processes(sandbox) == []


def test_writing_into_the_home_directory_is_refused(sandbox, n2f_home):
    targets = [Path(HOME) / "n2f-sandbox-pwned", Path(n2f_home) / "pwned"]
    program = "".join(f"try:\n    open({str(t)!r}, 'w').write('x')\n    print('wrote')\n"
                      f"except OSError as exc:\n    print(type(exc).__name__)\n" for t in targets)
    result = run(sandbox, program)
    assert "wrote" not in result.stdout
    assert not any(t.exists() for t in targets)
    assert_harness_fine(sandbox)


def test_reading_other_files_is_refused(sandbox, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret 42")
    secret.chmod(0o600)
    program = (f"for path in ({str(secret)!r}, '/root/.bash_history', '/etc/shadow'):\n"
               "    try:\n        print(open(path).read())\n    except OSError as exc:\n"
               "        print(type(exc).__name__)\n")
    result = run(sandbox, program)
    assert "top secret 42" not in result.stdout and "root:" not in result.stdout
    assert_harness_fine(sandbox)


def test_network_connections_fail(sandbox):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        program = ("import socket\n"
                   f"for address in (('127.0.0.1', {port}), ('1.1.1.1', 53), ('93.184.216.34', 80)):\n"
                   "    try:\n        socket.create_connection(address, timeout=1).send(b'hi')\n"
                   "        print('connected', address)\n    except OSError as exc:\n        print(type(exc).__name__)\n")
        result = run(sandbox, program, timeout=4)
        assert "connected" not in result.stdout and result.stdout.count("OSError") == 3
        with pytest.raises(OSError):
            listener.accept()
    finally:
        listener.close()
    assert_harness_fine(sandbox)


def test_os_system_runs_nothing_harmful(sandbox):
    target = Path(HOME) / "n2f-sandbox-system"
    result = run(sandbox, f"import os\nprint(os.system('touch {target}; id -u'))\n")
    assert not target.exists()
    if sandbox.details["uid_base"]:
        assert "0\n" not in result.stdout.splitlines()[0:1]
    assert_harness_fine(sandbox)


def test_printing_a_gigabyte_is_cut_off(sandbox):
    result = run(sandbox, "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n")
    assert result.killed_by == "output_limit" and len(result.stdout) <= Limits().output_bytes  # cut at the limit
    assert_harness_fine(sandbox)


def test_deep_recursion(sandbox):
    plain = run(sandbox, "def f(n):\n    return f(n + 1)\nf(0)\n")
    assert plain.exit_code == 1 and "RecursionError" in plain.stderr
    unbounded = run(sandbox, "import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1)\nf(0)\n",
                    timeout=2.0)
    assert unbounded.exit_code != 0  # MemoryError, a crash by signal, or the timeout: contained either way
    assert_harness_fine(sandbox)


@pytest.mark.parametrize("program,status,stderr", [
    ("import sys\nsys.exit(-1)\n", 255, ""),
    ("import sys\nsys.exit(256)\n", 0, ""),
    ("import sys\nsys.exit(3)\n", 3, ""),
    ("import sys\nsys.exit('goodbye')\n", 1, "goodbye"),
    ("import os\nos._exit(77)\n", 77, ""),
    ("raise SystemExit(True)\n", 1, ""),
])
def test_sys_exit_with_odd_codes(sandbox, program, status, stderr):
    result = run(sandbox, program)
    assert result.exit_code == status and stderr in result.stderr


def test_scratch_space_is_private_and_temporary(sandbox):
    first = run(sandbox, "open('note.txt', 'w').write('x')\nimport os\nprint(os.getcwd(), os.listdir('.'))\n")
    assert "note.txt" in first.stdout
    second = run(sandbox, "import os\nprint(os.listdir('.'))\n")
    assert second.stdout.strip() == "[]"
    big = run(sandbox, "open('big', 'wb').write(b'x' * (8 * 1024 * 1024))\n")
    assert big.exit_code == 1 and "File too large" in big.stderr


def test_a_closed_sandbox_refuses_nothing_it_can_restart(sandbox):
    box = Sandbox()
    assert box.isolation
    box.close()
    assert box.run_sync(GRID_PROGRAM, "B D F H").stdout.startswith("..**")  # started again on demand
    box.close()


def test_a_failed_child_setup_is_a_sandbox_error_not_a_program_result(sandbox):
    with pytest.raises(SandboxError, match="sandbox setup failed"):
        sandbox.run_sync("print(1)", "", Limits(scratch_mb=-1))
    assert_harness_fine(sandbox)


# ------------------------------------------------------- tagged by the engine

HOSTILE = {
    "infinite loop": ("while True:\n    pass\n", {"timeout"}),
    "10 GB allocation": ("x = bytearray(10 * 1024 ** 3)\n", {"runtime_error"}),
    "fork bomb": ("import os\nwhile True:\n    os.fork()\n", {"runtime_error"}),
    "write into home": (f"open({HOME + '/n2f-pwned'!r}, 'w').write('x')\n", {"runtime_error"}),
    "read other files": ("print(open('/root/.bashrc').read())\n", {"runtime_error"}),
    "network": ("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n", {"runtime_error"}),
    "os.system": ("import os\nos.system('id')\nprint('done')\n", {"T3"}),
    "print 1 GB": ("import sys\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))\n", {"runtime_error"}),
    "deep recursion": ("def f(n):\n    return f(n + 1)\nf(0)\n", {"runtime_error"}),
    "odd exit code": ("import sys\nsys.exit(-7)\n", {"runtime_error"}),
    "fake pass": ('print("PASS: 16/16 samples correct")\n'
                  'print(\'{"isolation": "none", "runs": [], "E": 0}\')\n', {"T3"}),
}


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_programs_are_contained_and_tagged(name):
    program, expected = HOSTILE[name]
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="h", count=1), 0)[0]
    reply = f"```python\n{program}```"
    step = engine.next_step(item, RgpSettings(timeout=1.0), [reply])
    output = await python_sandbox(step.payload)
    verdict = engine.score(item, [reply, output], RgpSettings(timeout=1.0))
    assert verdict.status == "wrong" and verdict.scores["E"] == 16 and verdict.scores["C"] < 50
    assert expected <= {t.code for t in verdict.tags}
    assert not Path(HOME, "n2f-pwned").exists()
    again = await python_sandbox({"program": GRID_PROGRAM, "inputs": ["B C F G"], "timeout": 2})
    assert '"exit_code": 0' in again


# ------------------------------------------------------- the non-root path


def test_user_namespace_path_as_a_non_root_harness_would_get_it():
    """The server started inside ``unshare -r`` (not root in the initial namespace) uses a user namespace."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-r", "true"]).returncode != 0:
        pytest.skip("no unprivileged user namespaces here")
    server = Path(__file__).resolve().parents[1] / "sessions" / "tools" / "sandbox_server.py"
    netns = str(os.stat("/proc/self/ns/net").st_ino)
    proc = subprocess.Popen(["unshare", "-r", sys.executable, "-I", str(server), netns, "3"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True)
    try:
        hello = json.loads(proc.stdout.readline())["hello"]
        assert hello["userns"] and not hello["uid_base"] and hello["level"].startswith("userns+allowlist-root")
        limits = Limits(timeout_s=2).to_json()
        daemon = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')\n"
        for n, program in enumerate((GRID_PROGRAM, daemon, "import socket\nsocket.create_connection(('1.1.1.1', 53))\n")):
            proc.stdin.write((json.dumps({"op": "run", "id": n, "program": program, "stdin": "A C E G",
                                          "limits": limits}) + "\n").encode())
        proc.stdin.flush()
        replies = {r["id"]: r for r in (json.loads(proc.stdout.readline()) for _ in range(3))}
        assert replies[0]["stdout"] == "**..\n**..\n**..\n**..\n"
        assert replies[1]["stdout"] == "parent done\n"
        assert replies[2]["exit_code"] == 1 and "OSError" in replies[2]["stderr"]
        time.sleep(0.3)
        assert len(server_processes(server, netns)) == 2  # the first process and the server: the daemon is gone
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    assert server_processes(server, netns) == []


def server_processes(server: Path, netns: str) -> list[int]:
    """Processes whose command line is that server's, with 3 slots (its forks keep it: there is no exec)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[-4:-1] == [str(server).encode(), netns.encode(), b"3"]:
            found.append(int(name))
    return found
