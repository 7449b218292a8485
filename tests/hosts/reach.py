#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""reach.py ADDR...: each address answers (a TCP connect to port 9, the
discard port nobody here listens on: refused is an answer, a timeout is
not); says which do not and exits 1.  tests/hosts/lib.sh checks the
links it made with it (the image has no ping)."""
import socket
import sys

bad = []
for a in sys.argv[1:]:
    fam = socket.AF_INET6 if ":" in a else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((a, 9))
    except ConnectionRefusedError:
        pass
    except OSError as e:
        bad.append(f"{a} ({e})")
    finally:
        s.close()
if bad:
    print("hosts: no answer from " + ", ".join(bad), file=sys.stderr)
    sys.exit(1)
