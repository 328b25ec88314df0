"""The sandbox as a normal user gets it: a non-root uid, a real home with secrets, 25 escapes.

CI runs as root, so the server runs as ``nobody`` (uid 65534), started with an
interpreter that uid can read and from a copy of the server that it can read (the
checkout and the virtual environment may sit where it cannot). Run as a normal user,
the tests use that user. The home lies outside /tmp (the old sandbox hid /tmp, which
proved nothing) and holds a private key, a config with an API key, a dotfile, the run
store and an agent socket; it must be byte for byte the same afterwards.

Without user namespaces the server must refuse: simulated honestly with the kernel's
own switch, ``user.max_user_namespaces=0``, set inside a throwaway user namespace (the
limit is per namespace and binds everything below it; the machine's value is untouched).
The kernel then fails ``unshare(CLONE_NEWUSER)`` with ENOSPC, as on a machine where the
sysctl is 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.sandbox_escapes import ESCAPES, program

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
KEY = "sk-n2f-test-key-0123456789abcdef"
SECRETS = {
    ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nn2f-secret-key-material\n",
    ".config/n2f-tui/config.toml": f'[openai]\napi_key = "{KEY}"\n',
    ".bashrc": "export N2F_DOTFILE=dotfile-secret-42\n",
    ".local/share/n2f-tui/runs/r1/results.jsonl": '{"secret": "store-secret-77"}\n',
}
MARKERS = ("n2f-secret-key-material", KEY, "dotfile-secret-42", "store-secret-77")
LIMITS = {"timeout_s": 5.0, "memory_bytes": 512 * 2**20, "file_bytes": 2**20, "open_files": 64, "processes": 1,
          "output_bytes": 2**16, "scratch_mb": 16, "cpu_s": 6}
NO_USER_NAMESPACES = ["unshare", "-Ur", "sh", "-c", 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh"]
GRID = "s = input().split()\nprint('\\n'.join('**..' if c in 'ACEG' else '..**' for c in s))\n"


def as_user(uid: int) -> dict:
    return {} if uid == os.geteuid() else {"user": uid, "group": uid, "extra_groups": []}


@pytest.fixture(scope="module", params=["normal user", "root"])
def account(request) -> tuple[int, str]:
    """The uid the server runs as and an interpreter that uid can run: a normal user, then root (same isolation)."""
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("not root")
    uid = 0 if request.param == "root" else NOBODY if os.geteuid() == 0 else os.geteuid()
    for python in (sys.executable, "/usr/bin/python3", shutil.which("python3") or ""):
        try:
            if python and subprocess.run([python, "-I", "-c", "import ctypes, sysconfig"], capture_output=True,
                                         **as_user(uid)).returncode == 0:
                return uid, python
        except OSError:  # the uid cannot even execute it
            continue
    pytest.skip(f"no Python interpreter that uid {uid} can run")


@pytest.fixture
def home(account, tmp_path):
    """A home directory outside /tmp, owned by the account, with secrets, a store and an agent socket."""
    uid = account[0]
    parents = [Path(p) for p in ("/home", "/srv", "/opt", "/var/lib") if os.access(p, os.W_OK)]
    parent = parents[0] if os.geteuid() == 0 and parents else Path.home() / ".cache"
    parent.mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="n2f-sandbox-test-", dir=parent))
    base.chmod(0o755)
    user_home, checkout = base / "home", base / "checkout"
    for relative, text in SECRETS.items():
        path = user_home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o600)
    (checkout / "sessions" / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "sessions" / "tools" / "sandbox_server.py", checkout / "sessions" / "tools")
    shutil.copy(ROOT / "README.md", checkout)
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(user_home / "agent.sock"))
    agent.listen(1)
    for path in [user_home, *user_home.rglob("*")]:
        os.lchown(path, uid, uid)
    user_home.chmod(0o700)
    yield user_home, checkout, agent
    agent.close()
    shutil.rmtree(base)


def tree_digest(top: Path) -> str:
    """Every name, type, mode, owner and content under ``top``."""
    digest = hashlib.sha256()
    for path in sorted([top, *top.rglob("*")]):
        info = path.lstat()
        digest.update(f"{path.relative_to(top)}|{stat.S_IFMT(info.st_mode)}|{info.st_mode:o}|{info.st_uid}".encode())
        if stat.S_ISREG(info.st_mode):
            digest.update(path.read_bytes())
    return digest.hexdigest()


class Server:
    """The sandbox server started as ``uid``, spoken to in its JSON-lines protocol."""

    def __init__(self, account: tuple[int, str], user_home: Path, checkout: Path, wrapper: list[str] = ()):
        uid, python = account
        netns = str(os.stat("/proc/self/ns/net").st_ino)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(user_home), "OPENAI_API_KEY": KEY,
               "N2F_HOME": str(user_home / ".local/share/n2f-tui"), "LANG": "C.UTF-8"}
        self.process = subprocess.Popen(
            [*wrapper, python, "-I", str(checkout / "sessions" / "tools" / "sandbox_server.py"), netns, "8"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=user_home, env=env,
            start_new_session=True, **as_user(uid))
        self.hello = json.loads(self.process.stdout.readline())["hello"]

    def run_all(self, programs: list[str], stdin: str = "A C E G") -> list[dict]:
        for n, source in enumerate(programs):
            request = {"op": "run", "id": n, "program": source, "stdin": stdin, "limits": LIMITS}
            self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        replies = {r["id"]: r for r in (json.loads(self.process.stdout.readline()) for _ in programs)}
        return [replies[n] for n in range(len(programs))]

    def close(self) -> int:
        self.process.stdin.close()
        code = self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()
        return code


def escape_paths(user_home: Path, checkout: Path, server: int, port: int, abstract: str) -> dict:
    return {"home": str(user_home), "store": str(user_home / ".local/share/n2f-tui"), "checkout": str(checkout),
            "root": str(ROOT), "server": server, "parent": os.getpid(), "port": port, "abstract": abstract}


def test_escape_programs_as_a_normal_user_get_nothing(account, home):
    user_home, checkout, agent = home
    before = tree_digest(user_home)
    listener = socket.create_server(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0n2f-sandbox-test-{os.getpid()}")
    abstract.listen(1)
    server = Server(account, user_home, checkout)
    try:
        expected = "uid-per-run" if account[0] == 0 else "userns"
        assert server.hello["unavailable"] == "" and server.hello["level"].startswith(f"{expected}+allowlist-root")
        paths = escape_paths(user_home, checkout, server.process.pid, listener.getsockname()[1],
                             f"\0n2f-sandbox-test-{os.getpid()}")
        replies = server.run_all([program(name, **paths) for name in ESCAPES] + [GRID])
        for name, reply in zip(ESCAPES, replies):
            output = reply["stdout"] + reply["stderr"]
            assert reply["sandbox_error"] == "", name
            assert "blocked" in reply["stdout"] and "ESCAPED" not in reply["stdout"], (name, output)
            assert not any(marker in output for marker in MARKERS), (name, output)
        assert replies[-1]["stdout"] == "**..\n" * 4
        assert server.run_all([GRID], "B D F H")[0]["stdout"] == "..**\n" * 4  # the kill attempts left it alive
    finally:
        assert server.close() == 0
    for sock in (listener, abstract, agent):
        sock.settimeout(0.1)
        with pytest.raises(TimeoutError):
            sock.accept()
        sock.close()
    assert tree_digest(user_home) == before
    assert sorted(p.name for p in checkout.rglob("*")) == ["README.md", "sandbox_server.py", "sessions", "tools"]


READS = ["read the private key", "read the config with the API key", "read a dotfile", "list the home directory",
         "read the checkout", "read /proc of the parent"]


def test_the_same_reads_succeed_outside_the_sandbox(account, home):
    """The control: run directly as the account, the read escapes do escape (so the test above can fail)."""
    uid, python = account
    user_home, checkout, _ = home
    paths = escape_paths(user_home, checkout, os.getpid(), 9, "\0unused")
    for name in READS:
        result = subprocess.run([python, "-I", "-c", program(name, **paths)], capture_output=True, text=True,
                                cwd=user_home, **as_user(uid))
        assert "ESCAPED" in result.stdout, (name, result.stdout, result.stderr)


def user_namespaces_can_be_switched_off() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        [*NO_USER_NAMESPACES, "true"], capture_output=True).returncode == 0


def test_without_user_namespaces_the_server_refuses(account, home):
    if not user_namespaces_can_be_switched_off():
        pytest.skip("cannot make a user namespace to switch them off in")
    user_home, checkout, _ = home
    server = Server(account, user_home, checkout, wrapper=NO_USER_NAMESPACES)
    try:
        assert server.hello["level"] == "unavailable"
        reason = server.hello["unavailable"]
        assert "No space left on device" in reason and "max_user_namespaces" in reason and "\n" not in reason
    finally:
        assert server.close() == 0


def test_without_user_namespaces_n2f_run_rgp_refuses_in_one_line(n2f_home):
    """The real CLI, in a namespace where no user namespace can be made: exit 2, one line, no run created."""
    if not user_namespaces_can_be_switched_off():
        pytest.skip("cannot make a user namespace to switch them off in")
    env = {**os.environ, "N2F_HOME": str(n2f_home)}
    result = subprocess.run([*NO_USER_NAMESPACES, sys.executable, "-m", "n2f_tui", "run", "rgp", "-m", "sim", "-n", "2"],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("n2f: error: rgp refuses to run programs: cannot isolate programs"), lines
    assert "user.max_user_namespaces" in lines[0] and "Traceback" not in result.stderr
    assert not (Path(n2f_home) / "runs").exists() or not any((Path(n2f_home) / "runs").iterdir())
