"""Tests of memsync's mcp."""
