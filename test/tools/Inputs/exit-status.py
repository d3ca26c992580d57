#!/usr/bin/env python3
"""exit-status.py STATUS COMMAND [ARG...]

Runs COMMAND with its output passed through and succeeds only if it exits
with STATUS: `not` accepts any failure, this tells an error (exit 1) from a
crash (a signal) or an abort. Used as %exit-status in the lit tests.
"""
import signal
import subprocess
import sys

want = int(sys.argv[1])
status = subprocess.run(sys.argv[2:]).returncode
if status != want:
    if status < 0:
        got = "signal " + signal.Signals(-status).name
    else:
        got = "exit status %d" % status
    sys.stderr.write("exit-status.py: '%s' ended with %s, expected exit "
                     "status %d\n" % (sys.argv[2], got, want))
    sys.exit(1)
