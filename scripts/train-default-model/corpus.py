#!/usr/bin/python3
"""The training text: every fortune file of Debian's `fortunes` and
`fortunes-min` packages (/usr/share/games/fortunes, the plain-text files, not
the .dat indexes or .u8 links), concatenated in name order.

usage: corpus.py OUT.txt
The last 5 % of the bytes are the validation slice (train.py, evaluate.mjs)."""
import os
import sys

FOLDER = '/usr/share/games/fortunes'
VALIDATION_FRACTION = 0.05


def corpus_files():
    if not os.path.isdir(FOLDER):
        sys.exit(f'{FOLDER} is missing: apt-get install fortunes fortunes-min')
    names = sorted(n for n in os.listdir(FOLDER) if '.' not in n)
    paths = [os.path.join(FOLDER, n) for n in names]
    return [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]


def corpus_bytes():
    return b''.join(open(p, 'rb').read() for p in corpus_files())


def split(data):
    """(train, validation): the first 95 % and the last 5 % of the bytes."""
    n = int(len(data) * (1 - VALIDATION_FRACTION))
    return data[:n], data[n:]


if __name__ == '__main__':
    data = corpus_bytes()
    with open(sys.argv[1], 'wb') as f:
        f.write(data)
    print(f'{sys.argv[1]}: {len(data)} bytes from {len(corpus_files())} files in {FOLDER}')
