"""The retrieval-tools profile's own tests (what no other profile has; the shared checks are in
concerns/ and base/)."""

PROFILES = ("retrieval-tools",)  # the profiles these tests apply to: other runs do not collect the folder
