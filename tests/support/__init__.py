"""Shared helpers of the tests: CLI and git runners, peers, stores, servers, the chaos harness."""
