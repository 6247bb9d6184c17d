"""Tests of memsync's config."""
