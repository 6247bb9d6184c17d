"""Tests of memsync's store."""
