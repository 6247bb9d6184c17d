"""End-to-end tests: whole scenarios through the CLI, daemons, peers and real servers."""
