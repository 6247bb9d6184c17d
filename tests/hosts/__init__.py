"""Tests of memsync's hosts."""
