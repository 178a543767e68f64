"""The summary engine: typed readings in, every number of SPEC.md out."""
