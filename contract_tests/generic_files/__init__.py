"""The generic-files profile's tests: any file-serving MCP server, described by a mapping."""

PROFILES = ("generic-files",)  # the profiles these tests apply to: other runs do not collect the folder
