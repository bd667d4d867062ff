"""Reference servers that pass the retrieval-contract suite (one package per profile)."""
