"""Chaos tests: three peers, real daemons killed with SIGKILL, an unreachable remote, clock skew."""
