"""The summary engine: typed readings in, every figure of a report out."""
