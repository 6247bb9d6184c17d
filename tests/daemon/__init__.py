"""Tests of memsync's daemon."""
