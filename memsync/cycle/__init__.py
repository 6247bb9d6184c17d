"""One sync cycle of one store, and what it reports: status, store facts, scope, session, legacy paths."""
