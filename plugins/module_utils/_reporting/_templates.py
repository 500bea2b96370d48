# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The report templates: one Jinja2 environment over ``templates/`` next to this file.

Private to this collection: may change without notice. Controller side only
(the report writer and the actions that call it; no module imports it).

Every page and section of the reports (``*.html.j2``, ``*.md.j2``) is a
template; Python computes the rows and numbers, the templates hold the layout
and the fixed words. HTML templates are autoescaped (a host name, a drive path
or an error message can never inject markup); text marked safe is only what
this collection builds itself (the SVG charts, the class badges).

The templates live under ``plugins/module_utils/_reporting/templates/``, next
to the code that fills them, and are loaded by path relative to this file: the
collection's build ships every file under plugins/, and a module_utils
directory is where ansible-core looks for nothing but ``.py`` files, so the
templates are never mistaken for a plugin. Jinja2 ships with ansible-core, so
the controller always has it; it is imported guarded because ansible-test's
import check loads module_utils as if on a managed host (without Jinja2).
"""

from __future__ import annotations

import os

try:
    import jinja2
    import markupsafe
except ImportError:  # pragma: no cover - only on a managed host, which never renders a report
    jinja2 = None
    markupsafe = None

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'templates')

CLASS_COLORS = {
    _records.STREAMING: '#1a7f37',
    _records.SPEED_MATCHED: '#9a6700',
    _records.SHOE_SHINING: '#cf222e',
    _records.MISCONFIGURED: '#8250df',
    _records.INCONCLUSIVE: '#57606a',
    None: '#57606a',
}
DEFAULT_COLOR = '#57606a'

_ENV = []


# CommonMark lets any ASCII punctuation be escaped with a backslash: these would otherwise open raw HTML or an
# autolink ('<'; a '>' alone opens nothing mid-line, and the collection's own '->' stays as written), an entity, a
# code span or a link, or (with '\\' first) undo the escape that follows
_MD_SPECIAL = frozenset('\\`<&[]')


def mdtext(text):
    """Text from outside the collection (host names, drive paths, vendor strings, messages) in Markdown prose.

    Every character that could start raw HTML, an entity, a code span or a
    link is backslash-escaped, so ``<img src=x onerror=...>`` as a host name
    shows as itself in any Markdown viewer.
    """
    return ''.join('\\' + c if c in _MD_SPECIAL else c for c in str(text))


def md(text):
    """A Markdown table cell: as ``mdtext``, with '|' escaped and on one line."""
    return ' '.join(mdtext(text).replace('|', '\\|').splitlines())


def rate(value):
    """A rate in a table cell: '123' / '12.3', '-' when unknown."""
    return _words.table_rate(value)


def badge(cls):
    """The coloured class badge (HTML, already escaped)."""
    return markupsafe.Markup('<span class="cls" style="background:%s">%s</span>') % (
        CLASS_COLORS.get(cls, DEFAULT_COLOR), cls or 'NO RESULT')


def environment():
    """The one Environment (built on first use): HTML autoescaped, Markdown not."""
    if jinja2 is None:  # pragma: no cover
        raise RuntimeError('Jinja2 is not installed: it ships with ansible-core, so run the reports on the '
                           'Ansible controller.')
    if not _ENV:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
            autoescape=jinja2.select_autoescape(enabled_extensions=('html.j2', 'svg.j2'),
                                                default_for_string=False, default=False),
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
            undefined=jinja2.StrictUndefined)
        env.filters.update({'md': md, 'mdtext': mdtext, 'rate': rate, 'badge': badge, 'fmt_rate': _words.fmt_rate})
        _ENV.append(env)
    return _ENV[0]


def render(name, **context):
    """The text of template ``name`` (a file under templates/) filled with ``context``."""
    return environment().get_template(name).render(**context)


def lines(text):
    """A rendered section as the list of its lines (the section functions' historical return type)."""
    return text[:-1].split('\n') if text.endswith('\n') else text.split('\n')


def safe(text):
    """Mark markup this collection built itself (an SVG chart) as safe to insert unescaped."""
    return markupsafe.Markup(text)
