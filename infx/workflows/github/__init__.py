"""Everything infx asks of the GitHub API, and the one client it asks through.

client.py holds the client (PyGithub with infx's retry rule, retry.py; every failure one located
line, failures.py) and `Connection`, which a command makes once and hands down: the client is made,
and PyGithub imported, on its first use. The other modules are what infx asks: the sticky comment
(comments.py), runs, pull requests and dispatches (runs.py), artifacts (artifacts.py) and the
repository's settings and runners (repository.py); archives.py checks and unpacks a downloaded
artifact and talks to no one.

Effects: network, filesystem. Network: the GitHub API and the blob storage artifacts download
from; filesystem: downloads spooled to temporary files, artifacts unpacked into folders.
"""
