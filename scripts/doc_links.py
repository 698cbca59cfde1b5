#!/usr/bin/env python3
"""Every relative link of the given Markdown files resolves.

    python3 scripts/doc_links.py README.md CONTRIBUTING.md docs/...

A link is an inline one, [text](target), outside code blocks and `code`.
Links with a scheme (https:, mailto:, ...) are not followed.  The target,
relative to the file that holds it, must exist (a file or a directory);
"#anchor" (alone: the same file) must match a heading of a Markdown target
as GitHub names them (lower case, punctuation dropped, spaces as "-", a
repeated heading "-1", "-2", ...) or an <a id=...>/<a name=...>.  Prints one
line per broken link ("file:line: target: why") and ends with
"links: N checked, N broken"; exits 1 when one is broken.  Used by
scripts/check-docs (the suite tests/suites/45-docs).
"""
import os
import re
import sys
import unicodedata

LINK = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ANCHOR = re.compile(r'<a\s+(?:id|name)="([^"]+)"', re.I)
FENCE = re.compile(r'^ {0,3}(```|~~~)')


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)   # a link: its text
    text = text.replace('`', '')
    text = re.sub(r'<[^>]+>', '', text)
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LN' or cat == 'Mn':
            out.append(ch)
        elif ch == ' ':
            out.append('-')
    return ''.join(out)


def lines_outside_code(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                    continue
                if line.strip().startswith(fence):
                    fence = None
                    continue
            if fence is None:
                yield n, line.rstrip('\n')


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, names = {}, set()
        for _, line in lines_outside_code(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                names.add(base if k == 0 else '%s-%d' % (base, k))
                seen[base] = k + 1
            for a in HTML_ANCHOR.findall(line):
                names.add(a)
        _anchors[path] = names
    return _anchors[path]


def check(path):
    problems, count = [], 0
    for n, line in lines_outside_code(path):
        prose = re.sub(r'(`+)(?:(?!\1).)+\1', '', line)   # inline code spans
        for m in LINK.finditer(prose):
            target = m.group(3)
            if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
                continue
            count += 1
            file_part, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append('%s:%d: %s: no such file (%s)' % (path, n, target, dest))
                continue
            if anchor and dest.endswith('.md') and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    problems.append('%s:%d: %s: no heading "#%s" in %s' % (path, n, target, anchor, dest))
    return problems, count


def main(paths):
    problems, count = [], 0
    for p in paths:
        pr, c = check(p)
        problems += pr
        count += c
    for p in problems:
        print(p)
    print('links: %d checked, %d broken' % (count, len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
