#!/usr/bin/env python3
"""`gpuplan profile` on a real terminal (a pseudo-terminal): a command that reads the terminal gets
what is typed, and Ctrl-C typed on the terminal ends the run within a second or so, also when the
command ignores SIGINT. Usage: profile_terminal_test.py GPUPLAN OUTDIR"""
import os
import pty
import select
import sys
import time

gpuplan, out = sys.argv[1], sys.argv[2]
failures = 0


def run(name, command, expect_code):
    global failures
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(gpuplan, [gpuplan, 'profile', '--out', f'{out}-{name}', '--'] + command)
    seen = b''

    def pump(until, token=None):
        nonlocal seen
        while time.time() < until and (token is None or seen.count(token) < 2):
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    return
                if not data:
                    return
                seen += data

    time.sleep(1.0)  # let gpuplan start the command
    os.write(fd, b'typed-line\n')
    pump(time.time() + 10, b'typed-line')
    # The line echoed by the terminal, then copied back by the command through gpuplan.
    if seen.count(b'typed-line') < 2:
        print(f'FAIL {name}: the command did not read the terminal; saw {seen[-300:]!r}')
        failures += 1
    start = time.time()
    os.write(fd, b'\x03')  # Ctrl-C, as typed
    status = None
    while time.time() - start < 10:
        pump(time.time() + 0.05)
        got, st = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            status = st
            break
    took = time.time() - start
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print(f'FAIL {name}: Ctrl-C did not end the run within 10 s')
        failures += 1
        return
    code = os.waitstatus_to_exitcode(status)
    if took > 3:
        print(f'FAIL {name}: Ctrl-C took {took:.1f} s to end the run')
        failures += 1
    if code != expect_code:
        print(f'FAIL {name}: exit {code}, expected {expect_code}')
        failures += 1
    if not os.path.exists(f'{out}-{name}/summary.json'):
        print(f'FAIL {name}: no summary.json')
        failures += 1
    os.close(fd)


run('cat', ['cat'], 130)
# The command ignores SIGINT: gpuplan ends it after its grace period (SIGTERM: 143).
run('cat-ignoring-int', ['sh', '-c', 'trap "" INT; exec cat'], 143)
sys.exit(1 if failures else 0)
