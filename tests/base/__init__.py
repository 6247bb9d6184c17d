"""Tests of memsync's base."""
