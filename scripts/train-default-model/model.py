"""A byte-level Llama-style decoder (RMSNorm, rotary positions on adjacent
pairs, grouped-query attention, SwiGLU MLP, tied embedding) with the
Optimum/transformers.js KV-cache interface. The same forward serves training
(empty past) and the ONNX export (past fed back)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG_FIELDS = ('vocab', 'dim', 'layers', 'heads', 'kv_heads', 'ffn', 'seq', 'batch')


def parse_config(text):
    values = [int(x) for x in text.split(',')]
    if len(values) != len(CONFIG_FIELDS):
        raise SystemExit(f'CFG needs {len(CONFIG_FIELDS)} integers: {",".join(CONFIG_FIELDS)}')
    config = dict(zip(CONFIG_FIELDS, values))
    if config['dim'] % config['heads'] or config['heads'] % config['kv_heads']:
        raise SystemExit('CFG: dim must divide by heads, heads by kv_heads')
    return config


def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        hd = c['dim'] // c['heads']
        self.attention_norm = nn.Parameter(torch.ones(c['dim']))
        self.mlp_norm = nn.Parameter(torch.ones(c['dim']))
        self.q = nn.Linear(c['dim'], c['heads'] * hd, bias=False)
        self.k = nn.Linear(c['dim'], c['kv_heads'] * hd, bias=False)
        self.v = nn.Linear(c['dim'], c['kv_heads'] * hd, bias=False)
        self.o = nn.Linear(c['heads'] * hd, c['dim'], bias=False)
        self.gate = nn.Linear(c['dim'], c['ffn'], bias=False)
        self.up = nn.Linear(c['dim'], c['ffn'], bias=False)
        self.down = nn.Linear(c['ffn'], c['dim'], bias=False)


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.head_dim = c['dim'] // c['heads']
        self.embedding = nn.Embedding(c['vocab'], c['dim'])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c['layers'])])
        self.norm = nn.Parameter(torch.ones(c['dim']))
        self.register_buffer('inv_freq', 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)), persistent=False)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def rotate(self, x, cos, sin):
        """Rotary positions on adjacent pairs (x0, x1) of each head; x [b, h, s, hd]."""
        b, h, s, hd = x.shape
        pairs = x.reshape(b, h, s, hd // 2, 2)
        x0, x1 = pairs[..., 0], pairs[..., 1]
        return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], -1).reshape(b, h, s, hd)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        """logits [b, s, vocab] and the presents (key, value per layer, [b, kv_heads, past + s, hd])."""
        c, hd = self.c, self.head_dim
        heads, kv_heads = c['heads'], c['kv_heads']
        b, s = input_ids.shape
        x = self.embedding(input_ids)
        angles = position_ids.unsqueeze(-1).float() * self.inv_freq
        cos, sin = torch.cos(angles).unsqueeze(1), torch.sin(angles).unsqueeze(1)
        p = past[0].shape[2]
        t = p + s
        causal = torch.arange(t).unsqueeze(0) <= (torch.arange(s).unsqueeze(1) + p)
        allowed = causal.unsqueeze(0).unsqueeze(0) & (attention_mask[:, None, None, :] > 0)
        bias = torch.where(allowed, torch.zeros(()), torch.full((), -1e9))
        presents = []
        for i, layer in enumerate(self.layers):
            h = rms_norm(x, layer.attention_norm)
            q = self.rotate(layer.q(h).reshape(b, s, heads, hd).transpose(1, 2), cos, sin)
            k = self.rotate(layer.k(h).reshape(b, s, kv_heads, hd).transpose(1, 2), cos, sin)
            v = layer.v(h).reshape(b, s, kv_heads, hd).transpose(1, 2)
            k = torch.cat([past[2 * i], k], 2)
            v = torch.cat([past[2 * i + 1], v], 2)
            presents += [k, v]
            group = heads // kv_heads
            kr = k.unsqueeze(2).expand(b, kv_heads, group, t, hd).reshape(b, heads, t, hd)
            vr = v.unsqueeze(2).expand(b, kv_heads, group, t, hd).reshape(b, heads, t, hd)
            weights = torch.softmax(q @ kr.transpose(2, 3) / math.sqrt(hd) + bias, -1)
            x = x + layer.o((weights @ vr).transpose(1, 2).reshape(b, s, heads * hd))
            h = rms_norm(x, layer.mlp_norm)
            x = x + layer.down(F.silu(layer.gate(h)) * layer.up(h))
        logits = rms_norm(x, self.norm) @ self.embedding.weight.t()
        return (logits, *presents)

    def empty_past(self, batch):
        shape = (batch, self.c['kv_heads'], 0, self.head_dim)
        return [torch.zeros(shape) for _ in range(2 * self.c['layers'])]

    def loss(self, x, y):
        """Mean cross-entropy (nats per byte) of next bytes y after x [b, s]."""
        b, s = x.shape
        positions = torch.arange(s).unsqueeze(0).expand(b, s)
        logits = self(x, torch.ones(b, s, dtype=torch.long), positions, *self.empty_past(b))[0]
        return F.cross_entropy(logits.reshape(-1, self.c['vocab']), y.reshape(-1))
