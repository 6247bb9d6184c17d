"""Tests of memsync's recall."""
