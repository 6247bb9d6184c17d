"""Tests of memsync's memoryfile."""
