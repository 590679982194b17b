#!/usr/bin/python3
"""Exports a train.py checkpoint to ONNX with a KV cache, the interface of
the shipped models (Optimum/transformers.js names):
  inputs   input_ids [b, s] int64, attention_mask [b, past + s] int64,
           position_ids [b, s] int64,
           past_key_values.{i}.key / .value [b, kv_heads, past, head] float32
  outputs  logits [b, s, vocab] float32,
           present.{i}.key / .value [b, kv_heads, past + s, head] float32
Opset 14, torch's exporter (python3-torch 1.13), constants folded.

usage: export.py IN.pt OUT.onnx"""
import sys

import torch

from model import Decoder


def main(checkpoint_path, out_path):
    checkpoint = torch.load(checkpoint_path)
    c = checkpoint['config']
    model = Decoder(c)
    model.load_state_dict(checkpoint['state_dict'])
    model.eval()
    layers = c['layers']
    # example: 2 new tokens after 3 cached ones (every axis that varies is dynamic)
    past = [torch.randn(1, c['kv_heads'], 3, model.head_dim) for _ in range(2 * layers)]
    args = (torch.tensor([[1, 5]]), torch.ones(1, 5, dtype=torch.long), torch.tensor([[3, 4]]), *past)
    past_names = [f'past_key_values.{i}.{kv}' for i in range(layers) for kv in ('key', 'value')]
    present_names = [f'present.{i}.{kv}' for i in range(layers) for kv in ('key', 'value')]
    axes = {
        'input_ids': {0: 'batch_size', 1: 'sequence_length'},
        'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'},
        'position_ids': {0: 'batch_size', 1: 'sequence_length'},
        'logits': {0: 'batch_size', 1: 'sequence_length'},
    }
    axes.update({name: {0: 'batch_size', 2: 'past_sequence_length'} for name in past_names})
    axes.update({name: {0: 'batch_size', 2: 'total_sequence_length'} for name in present_names})
    with torch.no_grad():
        torch.onnx.export(model, args, out_path, input_names=['input_ids', 'attention_mask', 'position_ids'] + past_names,
                          output_names=['logits'] + present_names, dynamic_axes=axes, opset_version=14, do_constant_folding=True)
    print(f'exported {out_path} ({sum(p.numel() for p in model.parameters())} parameters, {checkpoint["steps"]} training steps)')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
