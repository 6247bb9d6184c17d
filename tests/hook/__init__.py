"""Tests of the hook entry point (memsync/hook.py) as installed hosts run it."""
