"""Recall: the tracked memory searched through a search index kept on this machine.

``documents``: what is searchable and what a hit is; ``index``: the kept SQLite FTS5 index; ``ranking``:
ranked lists fused, then scope order; ``provenance``: who wrote a hit and when; ``search``: ``recall``
itself. This module stays light: the MCP server imports it at start-up.
"""
