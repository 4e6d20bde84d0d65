"""A stand-in for the `expecttest` package, which torch's test utilities import and
Debian 12 does not package: what they use of it (ACCEPT, TestCase and its inline
expectations), without rewriting sources (ACCEPT stays off unless asked for).

Only on the path of hostccl's runner for PyTorch's distributed suite (run_suite.py).
"""

import os
import unittest

ACCEPT = os.environ.get("EXPECTTEST_ACCEPT", "") not in ("", "0")


def _normalize(text):
    """What expecttest compares: the expectation without its common indentation."""
    import textwrap

    return textwrap.dedent(text).strip("\n")


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertMultiLineEqual(_normalize(expect), _normalize(actual))

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
        try:
            callable(*args, **kwargs)
        except exc_type as e:
            self.assertExpectedInline(str(e), expect)
            return
        self.fail("did not raise when expected to")
