"""Formats pawlette ships as declarations made with the public API (:mod:`pawlette.legacy`).

Each module is one declaration file defining ``FORMAT``; the registry
(:mod:`pawlette.formats`) loads it on first use.
"""
