#!/usr/bin/python3
"""Trains the byte-level decoder of model.py on a corpus (corpus.py) for a
time budget, on CPU with Debian's python3-torch.

usage: CFG=vocab,dim,layers,heads,kv_heads,ffn,seq,batch SEED=0 train.py CORPUS.txt OUT.pt SECONDS
  default CFG 256,256,6,8,4,688,256,32 (the shipped 4.4M-parameter model)

AdamW (lr 3e-3, betas 0.9/0.99, weight decay 0.01), 100 warm-up steps, then a
cosine decay to 0.1x over the time budget, gradients clipped to norm 1.
Random windows of the first 95 % of the bytes; every 50 steps the loss on a
batch of the last 5 % is printed in bits/byte. The checkpoint holds the
config and the weights (export.py turns it into ONNX)."""
import math
import os
import sys
import time

import numpy as np
import torch

from corpus import split
from model import Decoder, parse_config

DEFAULT_CFG = '256,256,6,8,4,688,256,32'


def main(corpus_path, out_path, seconds):
    torch.manual_seed(int(os.environ.get('SEED', '0')))
    torch.set_num_threads(int(os.environ.get('THREADS', '2')))
    c = parse_config(os.environ.get('CFG', DEFAULT_CFG))
    data = torch.from_numpy(np.frombuffer(open(corpus_path, 'rb').read(), dtype=np.uint8).astype(np.int64))
    train, validation = split(data)
    model = Decoder(c)
    print('parameters', sum(p.numel() for p in model.parameters()), 'config', c, flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))
    seq, batch = c['seq'], c['batch']

    def windows(d):
        starts = torch.randint(len(d) - seq - 1, (batch,))
        return torch.stack([d[i:i + seq] for i in starts]), torch.stack([d[i + 1:i + seq + 1] for i in starts])

    start = time.time()
    step = 0
    validation_bits = float('nan')
    while time.time() - start < seconds:
        progress = (time.time() - start) / seconds
        lr = 3e-3 * min(1.0, (step + 1) / 100) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group['lr'] = lr
        loss = model.loss(*windows(train))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if step % 50 == 0:
            with torch.no_grad():
                validation_bits = model.loss(*windows(validation)).item() / math.log(2)
            print(f'step {step} {time.time() - start:.0f}s train {loss.item() / math.log(2):.3f} '
                  f'validation {validation_bits:.3f} bits/byte', flush=True)
    torch.save({'config': c, 'state_dict': model.state_dict(), 'steps': step, 'seconds': seconds}, out_path)
    print(f'saved {out_path} after {step} steps', flush=True)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
