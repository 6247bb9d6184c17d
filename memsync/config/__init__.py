"""memsync's own config file: read, checked key by key, written."""
