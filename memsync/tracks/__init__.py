"""The tracked memory: what this machine tracks, its tracks listed, whether they are stale."""
