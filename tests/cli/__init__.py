"""Tests of memsync's cli."""
