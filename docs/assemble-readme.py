"""Builds README.md from docs/README.*.md and the stream docs kept next to their code.

Run from the repository root: python3 docs/assemble-readme.py [demo-output.txt]
"""
import re
import subprocess
import sys
from pathlib import Path

def demote(text: str) -> str:
    # A doc's own "# Title" becomes "## Title" inside the README, and so on down; code blocks untouched.
    pieces = text.split('```')
    for i in range(0, len(pieces), 2):
        pieces[i] = re.sub(r'^(#+) ', lambda m: '#' + m.group(1) + ' ', pieces[i], flags=re.M)
    return '```'.join(pieces)

parts = [
    Path('docs/README.head.md').read_text(),
    Path('docs/README.config.md').read_text(),
    Path('docs/README.arch.md').read_text(),
    Path('docs/README.checkins.md').read_text(),
    demote(Path('src/streams/SNAPSHOTS.md').read_text()),
    demote(Path('src/alerts/INTENTS.md').read_text()),
    '## Rate limit and retries\n\n' + re.sub(r'^# .*\n+', '', Path('src/api/RATE-LIMIT.md').read_text()),
    demote(Path('src/http/STATUS.md').read_text()),
    demote(Path('src/simulator/DECISIONS.md').read_text()),
    Path('docs/README.dev.md').read_text(),
    Path('docs/README.bench.md').read_text() if Path('docs/README.bench.md').exists() else '',
    Path('docs/README.contract.md').read_text(),
]
readme = '\n'.join(part.rstrip() + '\n' for part in parts if part)
if len(sys.argv) > 1:
    demo = Path(sys.argv[1]).read_text().strip()
    readme = readme.replace('<!-- demo-output -->', demo)
Path('README.md').write_text(readme)
subprocess.run(['npx', 'prettier', '--write', 'README.md'], check=True, capture_output=True)
print(f'README.md: {len(readme.splitlines())} lines')
