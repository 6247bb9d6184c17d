"""Tests of memsync's cycle."""
