"""Tests of the documentation: its examples run, its generated pages are current."""
