"""Tests of memsync's formats."""
