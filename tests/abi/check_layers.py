#!/usr/bin/env python3
"""Structure checks that keep the library's boundaries (docs/architecture.md, docs/install.md):

- lib/core includes nothing from cuda/ and never tests TAPEFLOW_HAVE_* for CUDA: the CUDA backend
  is a plugin that registers itself through the dispatch layer.
- libtapeflow's files never include CUDA, NCCL or MPI headers except the MPI plugin's one file.
- every public header that declares something in namespace tapeflow does so between
  TAPEFLOW_API_BEGIN (after its last #include) and TAPEFLOW_API_END (at its end), so that the
  hidden-by-default library exports it (include/tapeflow/core/export.hpp).
Usage: check_layers.py <source root>"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
problems = []
cuda_files = {p.name for p in (root / 'cuda').iterdir()}
include = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

for path in sorted((root / 'lib' / 'core').rglob('*')):
    if path.suffix not in ('.cpp', '.hpp'):
        continue
    text = path.read_text()
    for name in include.findall(text):
        if name.startswith('cuda/') or '../cuda' in name or pathlib.Path(name).name in cuda_files:
            problems.append(f'{path.relative_to(root)} includes {name} from cuda/')
    if 'TAPEFLOW_HAVE_CUDA' in text:
        problems.append(f'{path.relative_to(root)} tests TAPEFLOW_HAVE_CUDA')

heavy = re.compile(r'^(cuda|cublas|nccl|mpi)[_.a-z0-9]*\.h$')
for path in sorted((root / 'lib').rglob('*')):
    if path.suffix not in ('.cpp', '.hpp') or path.name == 'transport_mpi.cpp':
        continue
    for name in include.findall(path.read_text()):
        if heavy.match(name):
            problems.append(f'{path.relative_to(root)} includes <{name}> (only plugins may)')

for path in sorted((root / 'include' / 'tapeflow').rglob('*')):
    if path.suffix not in ('.hpp', '.in') or path.name == 'export.hpp':
        continue
    text = path.read_text()
    if not re.search(r'^namespace tapeflow', text, re.M):
        continue
    rel = path.relative_to(root)
    begin = text.find('\nTAPEFLOW_API_BEGIN\n')
    if begin < 0 or not text.rstrip().endswith('TAPEFLOW_API_END'):
        problems.append(f'{rel}: wrap its declarations in TAPEFLOW_API_BEGIN (after the last '
                        '#include) ... TAPEFLOW_API_END (the last line), and include '
                        '<tapeflow/core/export.hpp>')
    elif include.search(text, begin):
        problems.append(f'{rel}: an #include follows TAPEFLOW_API_BEGIN; move it above')
    elif text.find('namespace tapeflow') < begin:
        problems.append(f'{rel}: namespace tapeflow opens before TAPEFLOW_API_BEGIN')

for p in problems:
    print('FAIL:', p)
print(f'{len(problems)} problem(s)')
sys.exit(1 if problems else 0)
