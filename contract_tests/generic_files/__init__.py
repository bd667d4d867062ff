"""The generic-files profile: probes any file-serving MCP server described by a YAML mapping."""

PROFILES = ("generic-files",)
