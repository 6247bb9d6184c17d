"""Tests of memsync's merge."""
