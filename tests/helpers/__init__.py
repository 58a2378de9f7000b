"""What several test modules share: tiny models, data written by the tests, run configs and fakes.

Test modules import from here, never from one another (nor from conftest.py, which holds fixtures only)."""
