#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal of its own and answers one question.

    on-a-terminal.py QUESTION ANSWER -- COMMAND [ARGUMENTS...]

Once the command has written QUESTION on its terminal, ANSWER and a newline
are typed. Prints everything the command wrote there and exits with its
exit code (124 when it did not end within 60 s).
"""
import os
import pty
import select
import sys
import time

question = sys.argv[1].encode()
answer = sys.argv[2].encode() + b"\n"
command = sys.argv[4:]

pid, terminal = pty.fork()
if pid == 0:
    os.execvp(command[0], command)

written = b""
answered = False
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    ready, _, _ = select.select([terminal], [], [], 0.5)
    if not ready:
        continue
    try:
        chunk = os.read(terminal, 4096)
    except OSError:  # the command ended and its terminal closed
        break
    if not chunk:
        break
    written += chunk
    if not answered and question in written:
        os.write(terminal, answer)
        answered = True

sys.stdout.write(written.decode(errors="replace"))
if time.monotonic() >= deadline:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    sys.exit(124)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
