/* PagedAttention's attention over the pages: the numerics and statistics
 * are documented in paged_attention.c (which makes the pages).
 *
 * For each batch row and query position, the query heads are taken
 * together (up to MAX_HEADS: whole K/V groups, or part of one large group)
 * and the visible tokens in chunks of OL_PAGED_CHUNK whose boundaries are
 * multiples of OL_PAGED_CHUNK in absolute token position, so chunks never
 * depend on how the tokens were split into executions (pages do). A chunk
 * is split into page segments (its rows touched in address order while
 * the chunk before is computed), then per K/V head: key scores for the
 * group's query heads (FLOAT rows by ol_f32_gemm_tb straight from the
 * page, code rows of whole 16-byte groups by ol_qpage_int_scores, other
 * code rows by ol_qpage_dot_rows), one rescale of each accumulator per
 * chunk, one exp per score (ol_expf_fast_n), then the weighted value rows: the
 * chunk's code rows at once by ol_qpage_int_weighted_add when they all
 * take it, else added in token order with the accumulator in registers
 * (add_rows, ol_qpage_add_rows). Pages with other formats (FLOAT16/
 * BFLOAT16, parameters along the width) go row by row through page_dot /
 * page_row, the same floats in the same order. */
#include <math.h>
#include <string.h>

#include "ops/float_io.h"
#include "ops/paged/paged.h"
#include "simd/gemm_tb.h"
#include "simd/math.h"
#include "simd/qpage_int.h"
#include "simd/vec.h"

enum { MAX_HEADS = 64 }; /* query heads attended together */

/* Rows [row, row + n) of a page, chunk positions [at, at + n). */
typedef struct segment {
  const ol_page *page;
  int64_t row, n, at;
} segment;

/* Code rows of a chunk for the integer products, by chunk position: the
 * row's first byte (column 0), its scale and zero point; the code width
 * and sign by segment. */
typedef struct int_rows {
  const uint8_t *row[OL_PAGED_CHUNK];
  float scale[OL_PAGED_CHUNK];
  int32_t zero[OL_PAGED_CHUNK];
  int bits[OL_PAGED_CHUNK];
  bool signed_codes[OL_PAGED_CHUNK];
} int_rows;

/* One query position's state while its chunks are added. */
typedef struct attend_state {
  const ol_paged_dims *d;
  const float *q;  /* the pass's query rows, stride q_stride */
  int64_t q_stride;
  float *acc;      /* [heads][Dv] */
  float *vrow;     /* [Dv], a decoded value row */
  float m[MAX_HEADS], sum[MAX_HEADS];       /* running maximum and sum per head */
  float scores[MAX_HEADS * OL_PAGED_CHUNK]; /* [group head][CHUNK], then weights */
  ol_qpage_codes codes[OL_PAGED_CHUNK];     /* a segment's key or value rows */
  uint64_t dequantized;
  /* integer products (simd/qpage_int.h): int_keys when some key page holds
   * codes and Dk fills 16-byte groups (at most OL_QPAGE_INT_KEYS), likewise
   * int_values; a head's query quantized (qready) into qint [heads][3][Dk],
   * in the lane order of 8-, 4- and 2-bit codes; the chunk's rows they
   * take (made once per chunk for every head) */
  bool int_keys, int_values;
  int16_t *qint;
  int key_widths;                /* the code widths of the key pages (bits: 8 | 4 | 2) */
  bool qready[MAX_HEADS];
  float qfactor[MAX_HEADS];      /* the query's scale * (1 / sqrt(Dk)) */
  int32_t qsum[MAX_HEADS];
  int_rows keys, values;
  bool key_ints[OL_PAGED_CHUNK]; /* by segment: keys.rows holds its rows */
  bool value_ints;               /* values.rows holds the whole chunk's rows */
} attend_state;

/* ------------------------------------------------------------ one row */

/* dot(q, row t columns [c0, c0 + n) of page p), in ol_dot_f32's order:
 * FLOAT read in place, affine codes with one parameter set along the row
 * decoded in register (ol_qpage_dot), others element by element. */
static float page_dot(const float *q, const ol_page_payload *p, int64_t t, int64_t c0, int64_t n) {
  if (p->storage == OL_DTYPE_FLOAT) return ol_dot_f32(q, (const float *)p->data + t * p->width + c0, n);
  ol_qpage_codes codes;
  if (ol_page_row_codes(p, t, c0, &codes)) return ol_qpage_dot(q, &codes, n);
  float lane[4] = {0, 0, 0, 0}, x[4];
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ol_page_decode(p, t, c0 + i, 4, x);
    for (int j = 0; j < 4; j++) lane[j] = lane[j] + q[i + j] * x[j];
  }
  float s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; i < n; i++) {
    ol_page_decode(p, t, c0 + i, 1, x);
    s = s + q[i] * x[0];
  }
  return s;
}

/* Row t columns [c0, c0 + n) of page p as floats: FLOAT in place, else
 * decoded into buf (in register for affine codes with one parameter set
 * along the row). */
static const float *page_row(const ol_page_payload *p, int64_t t, int64_t c0, int64_t n, float *buf) {
  if (p->storage == OL_DTYPE_FLOAT) return (const float *)p->data + t * p->width + c0;
  ol_qpage_codes codes;
  if (ol_page_row_codes(p, t, c0, &codes)) ol_qpage_decode(&codes, n, buf);
  else ol_page_decode(p, t, c0, n, buf);
  return buf;
}

/* ------------------------------------------------------------ vector helpers */

/* x[i] = x[i] * c */
static void scale_by(float *x, int64_t n, float c) {
  const ol_f32x4 cv = ol_f32x4_splat(c);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) ol_f32x4_store(x + i, ol_f32x4_mul(ol_f32x4_load(x + i), cv));
  for (; i < n; i++) x[i] = x[i] * c;
}

/* acc[d] = acc[d] + e[j] * rows[j * stride + d] for j = 0, 1, ..., count - 1
 * in turn (each product rounded, then the sum): the accumulator stays in
 * registers across the rows, 16 columns at a time. */
static void add_rows(float *acc, int64_t n, const float *rows, int64_t stride, const float *e, int64_t count) {
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    ol_f32x4 a0 = ol_f32x4_load(acc + d), a1 = ol_f32x4_load(acc + d + 4), a2 = ol_f32x4_load(acc + d + 8),
             a3 = ol_f32x4_load(acc + d + 12);
    for (int64_t j = 0; j < count; j++) {
      const float *v = rows + j * stride + d;
      const ol_f32x4 ev = ol_f32x4_splat(e[j]);
      a0 = ol_f32x4_muladd(a0, ev, ol_f32x4_load(v));
      a1 = ol_f32x4_muladd(a1, ev, ol_f32x4_load(v + 4));
      a2 = ol_f32x4_muladd(a2, ev, ol_f32x4_load(v + 8));
      a3 = ol_f32x4_muladd(a3, ev, ol_f32x4_load(v + 12));
    }
    ol_f32x4_store(acc + d, a0), ol_f32x4_store(acc + d + 4, a1);
    ol_f32x4_store(acc + d + 8, a2), ol_f32x4_store(acc + d + 12, a3);
  }
  for (; d + 4 <= n; d += 4) {
    ol_f32x4 a = ol_f32x4_load(acc + d);
    for (int64_t j = 0; j < count; j++) a = ol_f32x4_muladd(a, ol_f32x4_splat(e[j]), ol_f32x4_load(rows + j * stride + d));
    ol_f32x4_store(acc + d, a);
  }
  for (; d < n; d++) {
    float a = acc[d];
    for (int64_t j = 0; j < count; j++) a = a + e[j] * rows[j * stride + d];
    acc[d] = a;
  }
}

/* acc[d] = acc[d] / sum */
static void divide(float *acc, int64_t n, float sum) {
  const ol_f32x4 s = ol_f32x4_splat(sum);
  int64_t d = 0;
  for (; d + 4 <= n; d += 4) ol_f32x4_store(acc + d, ol_f32x4_div(ol_f32x4_load(acc + d), s));
  for (; d < n; d++) acc[d] = acc[d] / sum;
}

/* ------------------------------------------------------------ chunks */

/* The first page holding token `token` (pages sorted by start). */
static size_t first_page(const ol_page *pages, size_t n, int64_t token) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pages[mid].start + pages[mid].length <= token) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Splits tokens [t0, t1) (a chunk from position c0) into page segments,
 * starting at page *pi (left on the last page used). */
static int64_t chunk_segments(const ol_page *pages, size_t n_pages, size_t *pi, int64_t c0, int64_t t0, int64_t t1,
                              segment *seg) {
  int64_t n = 0;
  for (int64_t t = t0; t < t1;) {
    while (*pi + 1 < n_pages && pages[*pi].start + pages[*pi].length <= t) (*pi)++;
    const ol_page *p = &pages[*pi];
    int64_t end = p->start + p->length < t1 ? p->start + p->length : t1;
    seg[n++] = (segment){p, t - p->start, end - t, t - c0};
    t = end;
  }
  return n;
}

/* The segment's rows from column c0 as spans of codes with one parameter
 * set each (simd/qpage.h); false when the payload has no such rows. */
static bool segment_codes(const segment *s, const ol_page_payload *p, int64_t c0, ol_qpage_codes *codes) {
  if (!ol_page_row_codes(p, s->row, c0, &codes[0])) return false;
  for (int64_t r = 1; r < s->n; r++) {
    if (p->n_params == 1) { /* one parameter set: row 0's span, r rows on */
      codes[r] = codes[0];
      codes[r].first = codes[0].first + r * p->width;
    } else {
      ol_page_row_codes(p, s->row + r, c0, &codes[r]);
    }
  }
  return true;
}

/* Whether the integer products take segment s's rows of payload p for
 * heads of len elements (affine codes with parameters constant along a
 * row, each head whole 16-byte groups); if so, its rows into ir. */
static bool int_segment(const ol_page_payload *p, const segment *s, int64_t len, int_rows *ir, int64_t si) {
  ol_qpage_codes c;
  if (!ol_page_row_codes(p, s->row, 0, &c) || !ol_qpage_int_fits(c.bits, len) || p->width % len) return false;
  const int64_t row_bytes = p->width * c.bits / 8;
  ir->bits[si] = c.bits, ir->signed_codes[si] = c.signed_codes;
  for (int64_t r = 0; r < s->n; r++) {
    const int64_t t = s->row + r, k = ol_page_param_index(p, t, 0);
    ir->row[s->at + r] = (const uint8_t *)p->data + t * row_bytes;
    ir->scale[s->at + r] = p->n_params == 1 ? p->scale0 : p->scales[k];
    ir->zero[s->at + r] = p->n_params == 1 ? p->zero0 : p->zeros[k];
  }
  return true;
}

/* The chunk's rows for the integer products: keys by segment, values when
 * every segment's rows are codes of one width and sign. */
static void chunk_int_rows(attend_state *st, const segment *seg, int64_t n_seg) {
  st->value_ints = st->int_values;
  for (int64_t s = 0; s < n_seg; s++) {
    st->key_ints[s] = st->int_keys && int_segment(&seg[s].page->key, &seg[s], st->d->Dk, &st->keys, s);
    st->value_ints = st->value_ints && int_segment(&seg[s].page->value, &seg[s], st->d->Dv, &st->values, s) &&
                     st->values.bits[s] == st->values.bits[0] && st->values.signed_codes[s] == st->values.signed_codes[0];
  }
}

static int width_slot(int bits) { return bits == 8 ? 0 : bits == 4 ? 1 : 2; }

/* Query head i's scores over segment si's key rows (chunk positions
 * [at, at + n) from column kc) by ol_qpage_int_scores. */
static void int_scores(const attend_state *st, int64_t i, int64_t si, int64_t at, int64_t n, int64_t kc, float *out) {
  const int64_t Dk = st->d->Dk;
  const int_rows *ir = &st->keys;
  const int bits = ir->bits[si];
  ol_qpage_int_scores(st->qint + (i * 3 + width_slot(bits)) * Dk, st->qsum[i], st->qfactor[i], bits,
                      ir->signed_codes[si], ir->row + at, kc * bits / 8, ir->scale + at, ir->zero + at, n, Dk, out);
}

/* scores[i][at + r] = dot(q_i, key row) * scale for the g query heads
 * [h0, h0 + g) of K/V column kc over every segment: integer products for
 * the rows they take (int_scores), else floats in ol_dot_f32's order. */
static void key_scores(attend_state *st, int64_t h0, int64_t g, int64_t kc, const segment *seg, int64_t n_seg) {
  const int64_t Dk = st->d->Dk;
  const float *q = st->q + h0 * st->q_stride;
  const float scale = 1.0f / sqrtf((float)Dk);
  for (int64_t s = 0; s < n_seg; s++) {
    const ol_page_payload *k = &seg[s].page->key;
    float *out = st->scores + seg[s].at;
    if (k->storage == OL_DTYPE_FLOAT) {
      const float *rows = (const float *)k->data + seg[s].row * k->width + kc;
      ol_f32_gemm_tb(g, seg[s].n, Dk, q, st->q_stride, rows, k->width, out, OL_PAGED_CHUNK);
      for (int64_t i = 0; i < g; i++) scale_by(out + i * OL_PAGED_CHUNK, seg[s].n, scale);
      continue;
    }
    bool decoded = false, codes = false;
    for (int64_t i = 0; i < g; i++) {
      float *o = out + i * OL_PAGED_CHUNK;
      if (st->key_ints[s] && st->qready[h0 + i]) {
        int_scores(st, h0 + i, s, seg[s].at, seg[s].n, kc, o);
        continue;
      }
      if (!decoded) codes = segment_codes(&seg[s], k, kc, st->codes), decoded = true;
      if (codes) ol_qpage_dot_rows(q + i * st->q_stride, st->codes, seg[s].n, Dk, o);
      else
        for (int64_t r = 0; r < seg[s].n; r++) o[r] = page_dot(q + i * st->q_stride, k, seg[s].row + r, kc, Dk);
      scale_by(o, seg[s].n, scale);
    }
  }
}

/* The largest of m and x[0, n) (finite): four lanes, then the lanes. The
 * order only decides which of equal maxima, +0 or -0, is kept, and every
 * use of the maximum (x - max, m_old - max, both into exp) gives the same
 * bits for either. */
static float max_of(const float *x, int64_t n, float m) {
  int64_t j = 0;
  if (n >= 8) {
    ol_f32x4 v = ol_f32x4_load(x);
    for (j = 4; j + 4 <= n; j += 4) v = ol_f32x4_max(ol_f32x4_load(x + j), v);
    for (int k = 0; k < 4; k++) m = ol_f32x4_lane(v, k) > m ? ol_f32x4_lane(v, k) : m;
  }
  for (; j < n; j++) m = x[j] > m ? x[j] : m;
  return m;
}

/* Pass head h's new maximum with the chunk's scores s[0, n): its
 * accumulator and sum are rescaled once (c = exp(m_old - m_new), 0 for
 * the first chunk), the scores become weights exp(score - m_new). */
static void softmax_step(attend_state *st, int64_t i, float *s, int64_t n) {
  float *acc = st->acc + i * st->d->Dv, mn = max_of(s, n, st->m[i]);
  float c = st->m[i] == -INFINITY ? 0.0f : ol_expf_fast(st->m[i] - mn);
  if (c != 1.0f) { /* exact: multiplying by 1 changes nothing */
    scale_by(acc, st->d->Dv, c);
    st->sum[i] = st->sum[i] * c;
  }
  st->m[i] = mn;
  for (int64_t j = 0; j < n; j++) s[j] = s[j] - mn;
  ol_expf_fast_n(s, s, n);
}

/* acc = acc + the weighted code rows at chunk positions [a, a + n) from
 * column vc (e: the head's weights by chunk position): e_r * scale_r
 * quantized (ol_qpage_quantize_weights), then ol_qpage_int_weighted_add. */
static void int_values(const attend_state *st, float *acc, const float *e, int64_t a, int64_t n, int64_t vc) {
  const int_rows *ir = &st->values;
  const int bits = ir->bits[0];
  int16_t W[OL_PAGED_CHUNK];
  const float ws = ol_qpage_quantize_weights(e + a, ir->scale + a, n, W);
  if (ws == 0.0f) return; /* every product is zero */
  ol_qpage_int_weighted_add(W, ws, bits, ir->signed_codes[0], ir->row + a, vc * bits / 8, ir->zero + a, n, st->d->Dv, acc);
}

/* acc_i += weight * value row over every segment: the chunk's code rows
 * at once with integer products when they take them (int_values), else
 * token by token in floats. */
static void add_values(attend_state *st, int64_t h0, int64_t g, int64_t vc, const segment *seg, int64_t n_seg) {
  const int64_t Dv = st->d->Dv;
  if (st->value_ints) {
    const int64_t a = seg[0].at, n = seg[n_seg - 1].at + seg[n_seg - 1].n - a;
    for (int64_t i = 0; i < g; i++) int_values(st, st->acc + (h0 + i) * Dv, st->scores + i * OL_PAGED_CHUNK, a, n, vc);
  } else {
    for (int64_t s = 0; s < n_seg; s++) {
      const ol_page_payload *v = &seg[s].page->value;
      const float *e = st->scores + seg[s].at;
      if (v->storage == OL_DTYPE_FLOAT) {
        const float *rows = (const float *)v->data + seg[s].row * v->width + vc;
        for (int64_t i = 0; i < g; i++)
          add_rows(st->acc + (h0 + i) * Dv, Dv, rows, v->width, e + i * OL_PAGED_CHUNK, seg[s].n);
      } else if (segment_codes(&seg[s], v, vc, st->codes)) {
        for (int64_t i = 0; i < g; i++)
          ol_qpage_add_rows(st->acc + (h0 + i) * Dv, Dv, st->codes, e + i * OL_PAGED_CHUNK, seg[s].n);
      } else {
        for (int64_t r = 0; r < seg[s].n; r++) {
          const float *row = page_row(v, seg[s].row + r, vc, Dv, st->vrow);
          for (int64_t i = 0; i < g; i++) add_rows(st->acc + (h0 + i) * Dv, Dv, row, 0, e + i * OL_PAGED_CHUNK + r, 1);
        }
      }
    }
  }
  for (int64_t s = 0; s < n_seg; s++) {
    const float *e = st->scores + seg[s].at;
    for (int64_t i = 0; i < g; i++)
      for (int64_t r = 0; r < seg[s].n; r++) st->sum[h0 + i] = st->sum[h0 + i] + e[i * OL_PAGED_CHUNK + r];
    st->dequantized += (uint64_t)seg[s].n * ((ol_page_is_affine(&seg[s].page->key) ? 4 * (uint64_t)st->d->Dk : 0) +
                                             (ol_page_is_affine(&seg[s].page->value) ? 4 * (uint64_t)Dv : 0));
  }
}

/* Reads one byte per 64 of the payload rows [row, row + n) in address
 * order (volatile: the reads are the point). Heads read a chunk's rows in
 * strips (one head's columns of every row, then the next head's); reading
 * the rows ahead lets the memory system stream them in rather than fetch
 * each strip on demand: about twice as fast when the pages are not in
 * cache, as in a decoder where every layer has its own. */
static void touch_rows(const ol_page_payload *p, int64_t row, int64_t n) {
  const volatile uint8_t *data = p->data;
  const size_t row_bytes = p->bytes / (size_t)p->capacity, end = (size_t)(row + n) * row_bytes;
  for (size_t i = (size_t)row * row_bytes; i < end; i += 64) (void)data[i];
}

/* Touches the K and V rows of a chunk's segments, every line (measured at
 * 2048 cached tokens: one line in two or four left 16% / 41% slower). */
static void touch_chunk(const segment *seg, int64_t n_seg) {
  for (int64_t s = 0; s < n_seg; s++) {
    touch_rows(&seg[s].page->key, seg[s].row, seg[s].n);
    touch_rows(&seg[s].page->value, seg[s].row, seg[s].n);
  }
}

/* One chunk for the pass's query heads [0, heads) of batch row b, the first
 * of them head hq0: per K/V head, scores (row i: the group's head i),
 * softmax step, values. The next chunk's rows (next, n_next; none: 0) are
 * touched first, all of them, so that their reads have this whole chunk's
 * arithmetic to arrive in (touching a part before each K/V head, which
 * gives each part less lead, measured 4-6% slower at 2048 cached tokens,
 * float and quantized pages alike). */
static void attend_chunk(attend_state *st, int64_t b, int64_t hq0, int64_t heads, const segment *seg, int64_t n_seg,
                         const segment *next, int64_t n_next) {
  const ol_paged_dims *d = st->d;
  int64_t a = seg[0].at, n = seg[n_seg - 1].at + seg[n_seg - 1].n - a;
  chunk_int_rows(st, seg, n_seg);
  touch_chunk(next, n_next);
  for (int64_t h0 = 0; h0 < heads;) {
    int64_t kvh = (hq0 + h0) / d->group, end = (kvh + 1) * d->group - hq0;
    int64_t g = (end < heads ? end : heads) - h0;
    key_scores(st, h0, g, (b * d->Hkv + kvh) * d->Dk, seg, n_seg);
    for (int64_t i = 0; i < g; i++) softmax_step(st, h0 + i, st->scores + i * OL_PAGED_CHUNK + a, n);
    add_values(st, h0, g, (b * d->Hkv + kvh) * d->Dv, seg, n_seg);
    h0 += g;
  }
}

/* ------------------------------------------------------------ queries */

/* The pass's query rows for the integer key products: quantized (the
 * 8-bit lane order is the element order) and ordered for 4- and 2-bit
 * codes where Dk fills their groups. */
static void quantize_queries(attend_state *st, int64_t heads) {
  const int64_t Dk = st->d->Dk;
  const float inv = 1.0f / sqrtf((float)Dk); /* key_scores' scale */
  for (int64_t i = 0; i < heads; i++) {
    int16_t *Q = st->qint + i * 3 * Dk;
    float qscale = 0.0f;
    st->qready[i] = ol_qpage_quantize_query(st->q + i * st->q_stride, Dk, Q, &qscale, &st->qsum[i]);
    st->qfactor[i] = qscale * inv;
    for (int bits = 4; st->qready[i] && bits >= 2; bits /= 2)
      if ((st->key_widths & bits) && ol_qpage_int_fits(bits, Dk)) ol_qpage_order_query(Q, Dk, bits, Q + width_slot(bits) * Dk);
  }
}

/* Query position l of batch row b for query heads [hq0, hq0 + heads). */
static void attend_query(attend_state *st, bool causal, int64_t window, const ol_tensor *Q, ol_tensor *Y,
                         const ol_page *pages, size_t n_pages, int64_t b, int64_t hq0, int64_t heads, int64_t l,
                         float *qrow) {
  const ol_paged_dims *d = st->d;
  int64_t pos = d->past + l, hi = causal ? pos : d->total - 1;
  int64_t lo = window >= 0 && pos - window > 0 ? pos - window : 0;
  int64_t at = ((b * d->Hq + hq0) * d->L + l) * d->Dk;
  if (Q->dtype == OL_DTYPE_FLOAT) {
    st->q = (const float *)ol_tdata(Q) + at, st->q_stride = d->L * d->Dk;
  } else {
    for (int64_t i = 0; i < heads; i++) ol_floats_get(Q->dtype, ol_tdata(Q), at + i * d->L * d->Dk, d->Dk, qrow + i * d->Dk);
    st->q = qrow, st->q_stride = d->Dk;
  }
  for (int64_t i = 0; i < heads; i++) st->m[i] = -INFINITY, st->sum[i] = 0.0f;
  if (st->int_keys) quantize_queries(st, heads);
  memset(st->acc, 0, sizeof(float) * (size_t)(heads * d->Dv));
  segment seg[2][OL_PAGED_CHUNK]; /* this chunk's segments and the next one's */
  int64_t n_seg[2] = {0, 0}, cur = 0;
  size_t pi = first_page(pages, n_pages, lo);
  for (int64_t c0 = lo - lo % OL_PAGED_CHUNK; c0 <= hi + OL_PAGED_CHUNK; c0 += OL_PAGED_CHUNK, cur ^= 1) {
    int64_t t0 = c0 > lo ? c0 : lo, t1 = c0 + OL_PAGED_CHUNK <= hi ? c0 + OL_PAGED_CHUNK : hi + 1;
    n_seg[cur ^ 1] = c0 <= hi ? chunk_segments(pages, n_pages, &pi, c0, t0, t1, seg[cur ^ 1]) : 0;
    if (n_seg[cur]) attend_chunk(st, b, hq0, heads, seg[cur], n_seg[cur], seg[cur ^ 1], n_seg[cur ^ 1]);
    else touch_chunk(seg[cur ^ 1], n_seg[cur ^ 1]); /* the first chunk */
  }
  for (int64_t i = 0; i < heads; i++) {
    float *acc = st->acc + i * d->Dv;
    divide(acc, d->Dv, st->sum[i]);
    ol_floats_store(Y, ((b * d->Hq + hq0 + i) * d->L + l) * d->Dv, acc, d->Dv);
  }
}

/* Query heads per pass: whole K/V groups up to MAX_HEADS, else part of one. */
static int64_t pass_heads(const ol_paged_dims *d) {
  if (d->group > MAX_HEADS) return MAX_HEADS;
  int64_t groups = MAX_HEADS / d->group;
  return d->Hkv < groups ? d->Hq : groups * d->group;
}

/* The code widths of the pages' key (or value) payloads holding affine
 * codes, as bits 8 | 4 | 2 (0: none). */
static int code_widths(const ol_page *pages, size_t n_pages, bool keys) {
  int widths = 0;
  for (size_t i = 0; i < n_pages; i++) {
    const ol_page_payload *p = keys ? &pages[i].key : &pages[i].value;
    if (ol_page_is_affine(p)) widths |= ol_page_code_bits(p->storage);
  }
  return widths;
}

ol_status ol_paged_attend(ol_allocator *alloc, const ol_paged_dims *d, bool causal, int64_t window,
                          const ol_tensor *Q, const ol_page *pages, size_t n_pages, ol_tensor *Y,
                          ol_paged_stats *stats) {
  const int64_t heads = pass_heads(d);
  /* a head fills 16-byte groups of some code width only if it does of 8 bits */
  const int key_widths = code_widths(pages, n_pages, true);
  const bool int_keys = ol_qpage_int_fits(8, d->Dk) && d->Dk <= OL_QPAGE_INT_KEYS && key_widths;
  const bool int_values = ol_qpage_int_fits(8, d->Dv) && code_widths(pages, n_pages, false);
  /* floats: accumulators, a value row, converted Q rows; then the
   * quantized queries (int16) */
  const size_t floats = (size_t)((heads + 1) * d->Dv + (Q->dtype == OL_DTYPE_FLOAT ? 0 : heads * d->Dk));
  const size_t qints = int_keys ? (size_t)(heads * 3 * d->Dk) : 0;
  const size_t bytes = sizeof(float) * floats + sizeof(int16_t) * qints;
  float *mem = ol_alloc(alloc, bytes);
  if (!mem) return OL_OUT_OF_MEMORY;
  int16_t *qint = (int16_t *)(mem + floats);
  attend_state st = {.d = d, .acc = mem, .vrow = mem + heads * d->Dv, .int_keys = int_keys, .int_values = int_values,
                     .qint = qint, .key_widths = key_widths};
  stats->peak_workspace_bytes = bytes;
  for (int64_t b = 0; b < d->B; b++)
    for (int64_t hq0 = 0, n; hq0 < d->Hq; hq0 += n) {
      n = d->Hq - hq0 < heads ? d->Hq - hq0 : heads;
      if (n > d->group - hq0 % d->group && d->group > MAX_HEADS) n = d->group - hq0 % d->group;
      for (int64_t l = 0; l < d->L; l++)
        attend_query(&st, causal, window, Q, Y, pages, n_pages, b, hq0, n, l, mem + (heads + 1) * d->Dv);
    }
  stats->dequantized_bytes += st.dequantized;
  ol_dealloc(alloc, mem);
  return OL_OK;
}
