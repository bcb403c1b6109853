#!/usr/bin/python3
"""tests/free_base.py — print a port base B for a simulated field's collab:
B free for UDP (the share port) and B+1 .. B+8 free for TCP on loopback
(the clip ports, clip_port + node), all below the kernel's ephemeral range
(32768 and up here) so that no outgoing connection takes one meanwhile (a
fixed 44000 + pid once met a busy clip port and the field did not start).
Seeded by the caller's pid; exit 1 when 500 tries found none."""
import os
import random
import socket
import sys

rng = random.Random(os.getppid())
for _ in range(500):
    b = rng.randrange(20000, 32000, 10)
    held = []
    try:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        held.append(u)
        u.bind(("", b))
        for k in range(1, 9):
            t = socket.socket()
            held.append(t)
            t.bind(("127.0.0.1", b + k))
        print(b)
        sys.exit(0)
    except OSError:
        pass
    finally:
        for x in held:
            x.close()
sys.exit(1)
