"""Tests of memsync's projects."""
