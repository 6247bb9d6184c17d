"""Tests of memsync's commands."""
