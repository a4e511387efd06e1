"""The package version (one home: the package, the training records and the server read it)."""

__version__ = "0.1.0"
