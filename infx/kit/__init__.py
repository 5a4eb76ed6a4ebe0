"""The consumer kit: what `infx init` writes into a benchmark repository."""
