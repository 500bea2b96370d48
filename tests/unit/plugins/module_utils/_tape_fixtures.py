"""Read the real captured outputs under tests/unit/fixtures/<tool>/."""

import glob
import os

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')


def fixture(tool, name):
    return open(os.path.join(FIXTURES, tool, name), encoding='utf-8').read()


def fixtures(tool, pattern='*'):
    """Every fixture of ``tool`` matching ``pattern`` as (name, text); a folder's README.md is not a fixture."""
    paths = sorted(p for p in glob.glob(os.path.join(FIXTURES, tool, pattern))
                   if not os.path.basename(p).startswith('README'))
    return [(os.path.basename(p), open(p, encoding='utf-8').read()) for p in paths]


def header(text):
    """The three '# ' source lines every fixture starts with."""
    return [line for line in text.splitlines()[:3] if line.startswith('# ')]


def read(path):
    """A fixture by its path under tests/unit/fixtures/ (``'sg_logs/<name>'``)."""
    with open(os.path.join(FIXTURES, path), encoding='utf-8') as handle:
        return handle.read()


def derived(text, old, new):
    """``text`` with the one line ``old`` replaced by ``new`` (it must be there exactly once): a real capture with
    one value changed, for a state no published capture shows."""
    assert text.count(old) == 1, old
    return text.replace(old, new)
