"""One module per CLI command; each only parses options, calls the library and renders."""
