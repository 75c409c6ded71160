"""End-to-end tests in a real browser (a package, so this conftest does not shadow tests/conftest.py)."""
