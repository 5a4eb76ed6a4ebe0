"""One module per CLI command; each only parses options, resolves the outside world once (the
repository root, the repository slug, one GitHub connection made on first use), calls the library
and renders.

Effects: network, filesystem, subprocess: those of the library each command calls.
"""
