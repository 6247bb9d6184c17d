# ruff: noqa: E501
"""The ``tools/list`` result of memsync's MCP server, as the SDK gives it (written by
``scripts/mcp_tool_list.py``; ``tests/mcp/test_handshake.py`` checks it against the SDK's)."""

TOOL_LIST = r"""{
 "tools": [
  {
   "description": "Save one durable fact, preference, lesson, source or thing to avoid to the synced memory (never a secret); returns its id.",
   "inputSchema": {
    "properties": {
     "confidence": {
      "anyOf": [
       {
        "maximum": 1,
        "minimum": 0,
        "type": "number"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "0 to 1; default 1 for source 'user', else 0.8 (inferred).",
      "title": "Confidence"
     },
     "expires": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "When to ignore it: a UTC time (2026-12-31T00:00:00Z) or 30d, 12h.",
      "title": "Expires"
     },
     "file": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "A tracked memory file by name or store path (e.g. 'ada' or 'memory/ada.jsonl'); default: the user's default memory file.",
      "title": "File"
     },
     "kind": {
      "anyOf": [
       {
        "enum": [
         "preference",
         "lesson",
         "fact",
         "source",
         "avoid"
        ],
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "preference (how the person wants things), lesson (what worked or failed), fact, source (a place worth checking first) or avoid; default fact, or the replaced entry's.",
      "title": "Kind"
     },
     "scope": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "global, a domain such as github.com, or project:<name>; default global.",
      "title": "Scope"
     },
     "source": {
      "default": "mcp",
      "description": "'user' when the person said it; otherwise where it was learned (URL, session).",
      "title": "Source",
      "type": "string"
     },
     "store": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "The store that receives the memory (e.g. 'team'): required, and only honoured, when it syncs with a remote the personal memory does not; ask the user first.",
      "title": "Store"
     },
     "supersedes": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "Id of an entry this one replaces (from recall).",
      "title": "Supersedes"
     },
     "tags": {
      "anyOf": [
       {
        "items": {
         "type": "string"
        },
        "type": "array"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "Short tags, e.g. ['fetching'].",
      "title": "Tags"
     },
     "text": {
      "description": "One sentence an agent can read as is (at most 100,000 characters).",
      "minLength": 1,
      "title": "Text",
      "type": "string"
     }
    },
    "required": [
     "text"
    ],
    "title": "rememberArguments",
    "type": "object"
   },
   "name": "remember",
   "outputSchema": {
    "description": "What ``remember`` appended, or proposed (``status``: ``proposed`` for a store set to review, where\n``id`` is the proposal's and a person approves it with `memsync review`).",
    "properties": {
     "created_at": {
      "title": "Created At",
      "type": "string"
     },
     "file": {
      "title": "File",
      "type": "string"
     },
     "hint": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "title": "Hint"
     },
     "id": {
      "title": "Id",
      "type": "string"
     },
     "kind": {
      "title": "Kind",
      "type": "string"
     },
     "scope": {
      "title": "Scope",
      "type": "string"
     },
     "similar_to": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "title": "Similar To"
     },
     "source": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "title": "Source"
     },
     "status": {
      "title": "Status",
      "type": "string"
     },
     "supersedes": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "title": "Supersedes"
     }
    },
    "required": [
     "id",
     "file",
     "kind",
     "scope",
     "source",
     "created_at",
     "supersedes",
     "status",
     "similar_to",
     "hint"
    ],
    "title": "Remembered",
    "type": "object"
   }
  },
  {
   "description": "Delete a memory entry for good by its id; without a file, the tracked memory file holding it.",
   "inputSchema": {
    "properties": {
     "file": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "A tracked memory file by name or store path (e.g. 'ada' or 'memory/ada.jsonl'); default: the user's default memory file.",
      "title": "File"
     },
     "id": {
      "description": "The entry's id (a recall hit of type entry).",
      "minLength": 1,
      "title": "Id",
      "type": "string"
     }
    },
    "required": [
     "id"
    ],
    "title": "forgetArguments",
    "type": "object"
   },
   "name": "forget",
   "outputSchema": {
    "description": "What ``forget`` deleted.",
    "properties": {
     "file": {
      "title": "File",
      "type": "string"
     },
     "id": {
      "title": "Id",
      "type": "string"
     }
    },
    "required": [
     "id",
     "file"
    ],
    "title": "Forgotten",
    "type": "object"
   }
  },
  {
   "description": "Search the synced memory (entries, curated notes, index, daily logs) by keywords: best hits first, each with its id, file, host and date.",
   "inputSchema": {
    "properties": {
     "kind": {
      "anyOf": [
       {
        "enum": [
         "preference",
         "lesson",
         "fact",
         "source",
         "avoid"
        ],
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "Only items of this kind.",
      "title": "Kind"
     },
     "limit": {
      "default": 10,
      "description": "How many hits at most.",
      "maximum": 100,
      "minimum": 1,
      "title": "Limit",
      "type": "integer"
     },
     "query": {
      "description": "A few keywords.",
      "minLength": 1,
      "title": "Query",
      "type": "string"
     },
     "scope": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "Only entries that apply to this scope (global, a domain, project:<name>).",
      "title": "Scope"
     }
    },
    "required": [
     "query"
    ],
    "title": "recall_toolArguments",
    "type": "object"
   },
   "name": "recall",
   "outputSchema": {
    "description": "``recall``'s hits, best first.",
    "properties": {
     "hits": {
      "items": {
       "description": "A hit as plain JSON data (:meth:`Hit.to_json`).",
       "properties": {
        "by_meaning": {
         "title": "By Meaning",
         "type": "boolean"
        },
        "committed": {
         "title": "Committed",
         "type": "boolean"
        },
        "date": {
         "title": "Date",
         "type": "string"
        },
        "file": {
         "title": "File",
         "type": "string"
        },
        "host": {
         "title": "Host",
         "type": "string"
        },
        "id": {
         "title": "Id",
         "type": "string"
        },
        "kind": {
         "title": "Kind",
         "type": [
          "string",
          "null"
         ]
        },
        "line": {
         "title": "Line",
         "type": [
          "integer",
          "null"
         ]
        },
        "score": {
         "title": "Score",
         "type": "number"
        },
        "store": {
         "title": "Store",
         "type": [
          "string",
          "null"
         ]
        },
        "store_path": {
         "title": "Store Path",
         "type": [
          "string",
          "null"
         ]
        },
        "text": {
         "title": "Text",
         "type": "string"
        },
        "type": {
         "title": "Type",
         "type": "string"
        }
       },
       "required": [
        "id",
        "type",
        "kind",
        "text",
        "file",
        "store",
        "store_path",
        "line",
        "host",
        "date",
        "committed",
        "score",
        "by_meaning"
       ],
       "title": "HitJSON",
       "type": "object"
      },
      "title": "Hits",
      "type": "array"
     }
    },
    "required": [
     "hits"
    ],
    "title": "Recalled",
    "type": "object"
   }
  },
  {
   "description": "The memory block to put at the top of your context (what `memsync prompt` prints).",
   "inputSchema": {
    "properties": {
     "max_bytes": {
      "anyOf": [
       {
        "minimum": 1,
        "type": "integer"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "Size cap in bytes, cut at whole entries.",
      "title": "Max Bytes"
     },
     "scope": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "The task's scope (global, a domain, project:<name>); memory files only.",
      "title": "Scope"
     },
     "target": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "A tracked memory file or role directory by name or store path; default: the user's default memory file.",
      "title": "Target"
     }
    },
    "title": "promptArguments",
    "type": "object"
   },
   "name": "prompt",
   "outputSchema": {
    "properties": {
     "result": {
      "title": "Result",
      "type": "string"
     }
    },
    "required": [
     "result"
    ],
    "title": "promptOutput",
    "type": "object"
   }
  },
  {
   "description": "Who taught what, when, on which machine: the git history of an entry or a memory path, newest first.",
   "inputSchema": {
    "properties": {
     "limit": {
      "default": 20,
      "description": "At most this many commits per store.",
      "maximum": 1000,
      "minimum": 1,
      "title": "Limit",
      "type": "integer"
     },
     "target": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "An entry id, a recall hit's id, a tracked path or a store path; default: all memory.",
      "title": "Target"
     }
    },
    "title": "historyArguments",
    "type": "object"
   },
   "name": "history",
   "outputSchema": {
    "properties": {
     "result": {
      "title": "Result",
      "type": "string"
     }
    },
    "required": [
     "result"
    ],
    "title": "historyOutput",
    "type": "object"
   }
  },
  {
   "description": "Pass one agent's live memory to another in the receiver's format (ids kept, nothing twice, secrets skipped).",
   "inputSchema": {
    "properties": {
     "dry_run": {
      "default": false,
      "description": "Only say what would be handed.",
      "title": "Dry Run",
      "type": "boolean"
     },
     "from_agent": {
      "description": "The giving agent: a tracked role or memory file (name, store path or path).",
      "title": "From Agent",
      "type": "string"
     },
     "store": {
      "anyOf": [
       {
        "type": "string"
       },
       {
        "type": "null"
       }
      ],
      "default": null,
      "description": "The store that receives the memory (e.g. 'team'): required, and only honoured, when it syncs with a remote the personal memory does not; ask the user first.",
      "title": "Store"
     },
     "to_agent": {
      "description": "The receiver: a tracked role or memory file, or a new role in a tracked folder.",
      "title": "To Agent",
      "type": "string"
     }
    },
    "required": [
     "from_agent",
     "to_agent"
    ],
    "title": "handoffArguments",
    "type": "object"
   },
   "name": "handoff",
   "outputSchema": {
    "additionalProperties": true,
    "title": "handoffDictOutput",
    "type": "object"
   }
  },
  {
   "description": "memsync's sync status: stores, remotes, last exchange, unpushed commits, held-back secrets, daemon.",
   "inputSchema": {
    "properties": {},
    "title": "statusArguments",
    "type": "object"
   },
   "name": "status",
   "outputSchema": {
    "additionalProperties": true,
    "title": "statusDictOutput",
    "type": "object"
   }
  }
 ]
}"""
