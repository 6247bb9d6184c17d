"""Tests of memsync's crypt."""
