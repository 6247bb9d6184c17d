"""Tests of memsync's tracks."""
