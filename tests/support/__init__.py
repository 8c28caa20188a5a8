"""Helpers of the test suite: loopback servers, clients of them, the paths of the test data."""
