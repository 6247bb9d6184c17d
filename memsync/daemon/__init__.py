"""The daemon: its loop, the watch, debounce, backoff, workers, served stores, its instance."""
