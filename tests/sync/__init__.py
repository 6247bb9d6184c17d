"""Tests of memsync's sync."""
