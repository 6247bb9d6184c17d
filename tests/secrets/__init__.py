"""Tests of memsync's secrets."""
