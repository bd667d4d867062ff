"""How the suite talks to a server: processes and their environment, stdio and Streamable HTTP,
the SDK's client on either, the bounds on every request and message, transcripts, and what the
server process holds or opens (/proc, inotify). Imports nothing else of the suite's."""
