/* ai.rt::PagedAttention 1: Y, present = PagedAttention(Q, K, V, past).
 *
 * Q [B, Hq, L, Dk], K [B, Hkv, L, Dk], V [B, Hkv, L, Dv] (FLOAT, FLOAT16 or
 * BFLOAT16, all finite, Hq a multiple of Hkv); past and present are paged
 * caches (quant/paged.h) whose pages hold, per token, every batch row's and
 * head's key (width B * Hkv * Dk) or value (B * Hkv * Dv). Attributes:
 * block_size 16 and max_tokens 4096 (> 0), is_causal 1 (0 or 1),
 * left_window_size -1 (unbounded; >= 0: preceding tokens each query sees).
 *
 * The L new tokens are appended as new pages of at most block_size tokens
 * (partial pages are sealed: appends never rewrite one) in the format the
 * session's policy picks for this execution (ol_paged_policy; dense FLOAT
 * without one). Then every query attends over the visible tokens of the
 * pages, new ones included, read in place: affine codes are decoded in the
 * dot product, never into a float copy of a page (paged_attend.c). Online
 * softmax over chunks of OL_PAGED_CHUNK (64) tokens whose boundaries are
 * multiples of 64 in absolute token position, never page boundaries, so an
 * execution's result does not depend on how the tokens were split into
 * executions (for fixed formats); no score matrix, no concatenated K/V. A
 * finite window finds its first page by binary search.
 *
 * Numerics, per query head, for each chunk's visible tokens t in order:
 * s_t = dot(q, k_t) * (1 / sqrt(Dk)) with ol_dot_f32's lane order, m =
 * max(m_old, max_t s_t), c = exp(m_old - m) (0 for the first chunk; when c
 * is 1 nothing is rescaled), acc = acc * c, sum = sum * c, then per token
 * e_t = exp(s_t - m), acc = acc + e_t * v_t, sum = sum + e_t; both
 * exponents are <= 0 and go through ol_expf_fast (float arithmetic, about
 * 1 ulp: a third of ol_expf's work, which was 8% of a 58M decode step at
 * 2048 cached tokens);
 * finally y = acc / sum. No fused multiply-add: the same bits natively and
 * in wasm. Affine rows with one scale and zero point (pages with one
 * parameter set, what appends make, or one per token, what compaction
 * makes) are decoded in register (simd/qpage.h), others element by element
 * (ol_page_decode): the same floats, summed in the same order.
 *
 * Except where a head's code rows fill whole 16-byte groups (Dk or Dv
 * times the code width a multiple of 128 bits, Dk <= 256: int8 or uint4
 * heads of 32, 64, 128): there the products are exact integer sums
 * (simd/qpage_int.h). The query is rounded once per execution and head to
 * int16 steps of max |q| / 16383, s_t = (float)(sum Q * (code - zero)) *
 * (step * (1 / sqrt(Dk)) * scale_t); a chunk's weights e_t * scale_t are
 * rounded to steps of their largest magnitude / 32767 (over the whole
 * chunk, so page boundaries do not matter) and acc = acc +
 * (float)(sum W * (code - zero)) * step per column, once per chunk (a
 * chunk whose weights are all below 2^-112 adds nothing); sum still adds
 * the float e_t in order. Rounding costs at most 2^-15 of the
 * largest |q| per query element and 2^-16 of the chunk's largest weight
 * per weight: tens of millionths of the output where the codes' own
 * rounding is a 256th (int8) or a 16th (4 bits) of their range. Chunks
 * mixing code widths, float pages or other parameter layouts take the
 * float path for the rows concerned.
 *
 * Page metadata is checked once per page and kept (memo) for the blocks of
 * the last present this kernel produced or read; the memo is guarded by a
 * mutex held for the whole execution (concurrent runs of one session's node
 * take turns). Statistics per execution (OL_EVENT_PAGED_ATTENTION):
 * copied_bytes = payload bytes of the new pages, dequantized_bytes = 4 *
 * (Dk or Dv) per visible token of a quantized K or V page for every query
 * (one read per group of query heads sharing a K/V head; the floats the
 * codes stand for, whether decoded or summed as integers), peak_workspace_bytes
 * = the accumulators of the query heads attended together (all Hq, at most
 * 64: whole K/V groups, or 64 heads of a larger group) and one decoded V
 * row (and those heads' Q rows converted to float, and their queries as
 * int16 in three lane orders when key pages hold codes), validated_pages = past
 * pages checked for the first time. The running maxima and sums and one
 * chunk of scores (fixed sizes, at most 64 heads x 64 tokens) live on the
 * stack and are not counted. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/float_io.h"
#include "ops/paged/paged.h"

/* The pages of the last cache seen (retained) and their metadata. */
typedef struct page_memo {
  ol_value **blocks;
  ol_page *views;
  size_t count, cap;
} page_memo;

typedef struct paged_kernel {
  ol_kernel base;
  int64_t block_size, max_tokens, left_window;
  bool causal;
  pthread_mutex_t lock;
  page_memo memo;
} paged_kernel;

/* ------------------------------------------------------------ memo */

static void memo_truncate(page_memo *m, size_t n) {
  while (m->count > n) {
    m->count--;
    ol_value_release(m->blocks[m->count]);
    ol_page_clear(&m->views[m->count]);
  }
}

static ol_status memo_push(page_memo *m, ol_value *block, const ol_page *view) {
  if (m->count == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    ol_value **blocks = realloc(m->blocks, cap * sizeof *blocks);
    if (blocks) m->blocks = blocks;
    ol_page *views = realloc(m->views, cap * sizeof *views);
    if (views) m->views = views;
    if (!blocks || !views) return OL_OUT_OF_MEMORY;
    m->cap = cap;
  }
  m->blocks[m->count] = ol_value_retain(block);
  m->views[m->count++] = *view;
  return OL_OK;
}

/* Makes the memo describe past's blocks: the common prefix is kept, the
 * rest checked (validated counts those) and views checked for contiguity. */
static ol_status memo_sync(const ol_node *node, page_memo *m, const ol_value *past, uint64_t *validated) {
  size_t n = ol_paged_cache_block_count(past), keep = 0;
  while (keep < n && keep < m->count && m->blocks[keep] == ol_paged_cache_block(past, keep)) keep++;
  memo_truncate(m, keep);
  for (size_t i = keep; i < n; i++) {
    ol_page view;
    ol_status s = ol_page_view(ol_paged_cache_block(past, i), i, &view);
    if (s != OL_OK) return ol_kernel_error(node, s, "past: %s", ol_last_error());
    int64_t expected = i ? m->views[i - 1].start + m->views[i - 1].length : 0;
    const ol_page *first = i ? &m->views[0] : &view;
    if (view.start != expected || view.key.width != first->key.width || view.value.width != first->value.width) {
      ol_page_clear(&view);
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "past: block %zu starts at %lld (expected %lld) or has other key/value widths than "
                             "block 0",
                             i, (long long)view.start, (long long)expected);
    }
    s = memo_push(m, (ol_value *)ol_paged_cache_block(past, i), &view);
    if (s != OL_OK) {
      ol_page_clear(&view);
      return s;
    }
    (*validated)++;
  }
  return OL_OK;
}

/* ------------------------------------------------------------ inputs */

static bool finite_tensor(const ol_tensor *t) {
  int64_t n = ol_tcount(t);
  ol_to_float_fn get = ol_dtype_info(t->dtype)->to_float;
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(get(ol_tdata(t), i))) return false;
  return true;
}

static ol_status check_inputs(const ol_node *node, const ol_tensor *q, const ol_tensor *k, const ol_tensor *v,
                              ol_paged_dims *sh) {
  const ol_tensor *t[3] = {q, k, v};
  static const char *const names[3] = {"Q", "K", "V"};
  for (int i = 0; i < 3; i++) {
    if (!ol_dtype_computes_f32(t[i]->dtype)) return ol_kernel_bad_dtype(node, names[i], t[i]->dtype);
    if (t[i]->dtype != q->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s is %s but Q is %s", names[i], ol_dtype_name(t[i]->dtype),
                             ol_dtype_name(q->dtype));
    if (t[i]->rank != 4)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must have rank 4 [batch, heads, tokens, head size], got %d",
                             names[i], t[i]->rank);
  }
  *sh = (ol_paged_dims){q->dims[0], q->dims[1], k->dims[1], q->dims[2], q->dims[3], v->dims[3], 0, 0, 0};
  if (k->dims[0] != sh->B || v->dims[0] != sh->B || k->dims[2] != sh->L || v->dims[2] != sh->L)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "Q, K and V must have the same batch and token counts");
  if (v->dims[1] != sh->Hkv) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "K and V must have the same head count");
  if (k->dims[3] != sh->Dk) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "Q and K head sizes differ");
  if (sh->Dk <= 0 || sh->Dv <= 0 || sh->Hkv <= 0 || sh->Hq % sh->Hkv != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "head sizes must be positive and the query heads (%lld) a multiple of the K/V heads (%lld)",
                           (long long)sh->Hq, (long long)sh->Hkv);
  sh->group = sh->Hq / sh->Hkv;
  for (int i = 0; i < 3; i++)
    if (!finite_tensor(t[i])) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s holds a value that is not finite", names[i]);
  return OL_OK;
}

/* ------------------------------------------------------------ formats */

static ol_status select_formats(ol_kernel_ctx *ctx, int64_t past, ol_page_formats *f) {
  memset(f, 0, sizeof *f);
  const ol_paged_policy *p = ctx->paged;
  if (p && p->fn) {
    ol_status s = p->fn(p->user, ctx->inputs[1], ctx->inputs[2], past, f);
    if (s != OL_OK) return ol_kernel_error(ctx->node, s, "the page format function failed: %s", ol_last_error());
  } else if (p) {
    for (size_t i = 0; i < p->rule_count; i++)
      if (p->rules[i].from_tokens <= past) *f = p->rules[i].formats;
  }
  ol_status s = ol_page_format_validate("key", &f->key, true);
  if (s == OL_OK) s = ol_page_format_validate("value", &f->value, true);
  return s == OL_OK ? OL_OK : ol_kernel_error(ctx->node, s, "%s", ol_last_error());
}

/* ------------------------------------------------------------ new pages */

/* Row r of a new page: token l of every batch row and head of x [B, H, L, D]. */
static void gather_row(const ol_tensor *x, int64_t l, float *row) {
  int64_t B = x->dims[0], H = x->dims[1], L = x->dims[2], D = x->dims[3];
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      ol_floats_get(x->dtype, ol_tdata(x), ((b * H + h) * L + l) * D, D, row);
      row += D;
    }
}

/* The page of tokens [l0, l0 + n) of x in format f; *bytes its payload size. */
static ol_status new_payload(ol_kernel_ctx *ctx, const ol_tensor *x, int64_t l0, int64_t n, const ol_page_format *f,
                             ol_value **out, uint64_t *bytes) {
  int64_t width = x->dims[0] * x->dims[1] * x->dims[3];
  float *rows = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(n * width) + 1);
  if (!rows) return OL_OUT_OF_MEMORY;
  for (int64_t r = 0; r < n; r++) gather_row(x, l0 + r, rows + r * width);
  ol_status s;
  if (!ol_page_code_bits(f->type)) {
    s = ol_page_dense_new(NULL, OL_DTYPE_FLOAT, n, width, out);
    if (s == OL_OK) {
      memcpy(ol_tdata(&(*out)->tensor), rows, sizeof(float) * (size_t)(n * width));
      *bytes = sizeof(float) * (uint64_t)(n * width);
    }
  } else {
    float scale = f->scale;
    int32_t zero = f->zero_point;
    if (scale == 0.0f) ol_page_calibrate(f->type, rows, n * width, &scale, &zero); /* from this page's values */
    uint8_t *codes;
    size_t nbytes;
    s = ol_page_affine_new(f->type, scale, zero, n, width, out, &codes, &nbytes);
    if (s == OL_OK) {
      ol_page_encode(f->type, scale, zero, rows, n * width, codes, 0);
      *bytes = nbytes;
    }
  }
  ol_dealloc(ctx->allocator, rows);
  return s;
}

/* Appends the L new tokens as pages of at most block_size tokens; their
 * blocks go to new_blocks (count *n), their views to views. */
static ol_status append_pages(paged_kernel *k, ol_kernel_ctx *ctx, const ol_paged_dims *sh, const ol_page_formats *f,
                              ol_value **new_blocks, ol_page *views, size_t *n, uint64_t *copied) {
  const ol_tensor *K = ol_ctx_input(ctx, 1), *V = ol_ctx_input(ctx, 2);
  *n = 0;
  for (int64_t l0 = 0; l0 < sh->L; l0 += k->block_size) {
    int64_t len = sh->L - l0 < k->block_size ? sh->L - l0 : k->block_size;
    ol_value *key = NULL, *value = NULL;
    uint64_t kb = 0, vb = 0;
    ol_status s = new_payload(ctx, K, l0, len, &f->key, &key, &kb);
    if (s == OL_OK) s = new_payload(ctx, V, l0, len, &f->value, &value, &vb);
    if (s == OL_OK) s = ol_page_block_new(sh->past + l0, len, key, value, &new_blocks[*n]);
    ol_value_release(key);
    ol_value_release(value);
    if (s == OL_OK) s = ol_page_view(new_blocks[*n], (size_t)*n, &views[*n]);
    if (s != OL_OK) {
      ol_value_release(new_blocks[*n]);
      new_blocks[*n] = NULL;
      return s;
    }
    (*n)++;
    *copied += kb + vb;
  }
  return OL_OK;
}

/* ------------------------------------------------------------ the kernel */

/* Checks past against the new tokens: widths and max_tokens. */
static ol_status check_past(const paged_kernel *k, const ol_node *node, const page_memo *m, ol_paged_dims *sh) {
  sh->past = m->count ? m->views[m->count - 1].start + m->views[m->count - 1].length : 0;
  sh->total = sh->past + sh->L;
  int64_t kw = sh->B * sh->Hkv * sh->Dk, vw = sh->B * sh->Hkv * sh->Dv;
  if (m->count && (m->views[0].key.width != kw || m->views[0].value.width != vw))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "past pages hold key/value rows of %lld/%lld values, this batch needs %lld/%lld "
                           "(batch * heads * head size)",
                           (long long)m->views[0].key.width, (long long)m->views[0].value.width, (long long)kw,
                           (long long)vw);
  if (sh->total > k->max_tokens)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "the cache would hold %lld tokens, max_tokens is %lld",
                           (long long)sh->total, (long long)k->max_tokens);
  return OL_OK;
}

/* Publishes Y's companion: present = past's blocks, then the new ones. */
static ol_status make_present(ol_kernel_ctx *ctx, const page_memo *m, ol_value *const *new_blocks, size_t n_new) {
  size_t n = m->count + n_new;
  ol_value **all = ol_alloc(ctx->allocator, sizeof *all * (n + 1));
  if (!all) return OL_OUT_OF_MEMORY;
  if (m->count) memcpy(all, m->blocks, sizeof *all * m->count); /* an empty memo has no array yet */
  if (n_new) memcpy(all + m->count, new_blocks, sizeof *all * n_new);
  ol_value *present = NULL;
  ol_status s = ol_paged_cache_new(all, n, &present);
  ol_dealloc(ctx->allocator, all);
  return s == OL_OK ? ol_ctx_set_output(ctx, 1, present) : s;
}

static ol_status run_locked(paged_kernel *k, ol_kernel_ctx *ctx, ol_paged_stats *stats) {
  const ol_node *node = ctx->node;
  const ol_tensor *q, *kt, *vt;
  OL_TRY(ol_ctx_require(ctx, 0, &q));
  OL_TRY(ol_ctx_require(ctx, 1, &kt));
  OL_TRY(ol_ctx_require(ctx, 2, &vt));
  const ol_value *past = ctx->num_inputs > 3 ? ctx->inputs[3] : NULL;
  /* the blocks themselves are checked by memo_sync, the ones it has not seen yet */
  if (!past || !ol_paged_cache_outline_is(past))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past must be a paged cache (a struct of 'blocks': start, "
                                                      "length, key, value)");
  ol_paged_dims sh = {0};
  OL_TRY(check_inputs(node, q, kt, vt, &sh));
  OL_TRY(memo_sync(node, &k->memo, past, &stats->validated_pages));
  OL_TRY(check_past(k, node, &k->memo, &sh));
  ol_page_formats formats;
  OL_TRY(select_formats(ctx, sh.past, &formats));
  size_t cap = (size_t)((sh.L + k->block_size - 1) / k->block_size) + 1, n_new = 0;
  ol_value **new_blocks = ol_calloc(ctx->allocator, cap, sizeof *new_blocks);
  ol_page *pages = ol_calloc(ctx->allocator, k->memo.count + cap, sizeof *pages);
  ol_status s = new_blocks && pages ? OL_OK : OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = append_pages(k, ctx, &sh, &formats, new_blocks, pages + k->memo.count, &n_new, &stats->copied_bytes);
  int64_t ydims[4] = {sh.B, sh.Hq, sh.L, sh.Dv};
  ol_tensor *y = NULL;
  if (s == OL_OK) s = ol_ctx_output_uninit(ctx, 0, q->dtype, 4, ydims, &y);
  if (s == OL_OK) {
    if (k->memo.count) memcpy(pages, k->memo.views, sizeof *pages * k->memo.count); /* shallow: the memo owns them */
    s = ol_paged_attend(ctx->allocator, &sh, k->causal, k->left_window, q, pages, k->memo.count + n_new, y, stats);
  }
  if (s == OL_OK) s = make_present(ctx, &k->memo, new_blocks, n_new);
  /* the next run's past starts with present's blocks: remember the new ones
   * too (the memo is only a cache; without memory it stays a prefix) */
  size_t base = k->memo.count;
  bool remember = s == OL_OK;
  for (size_t i = 0; i < n_new; i++) {
    remember = remember && memo_push(&k->memo, new_blocks[i], &pages[base + i]) == OL_OK;
    if (!remember) ol_page_clear(&pages[base + i]);
    ol_value_release(new_blocks[i]);
  }
  ol_dealloc(ctx->allocator, new_blocks);
  ol_dealloc(ctx->allocator, pages);
  return s;
}

static ol_status paged_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  paged_kernel *k = (paged_kernel *)kernel;
  ol_paged_stats stats = {0};
  pthread_mutex_lock(&k->lock);
  ol_status s = run_locked(k, ctx, &stats);
  pthread_mutex_unlock(&k->lock);
  if (s == OL_OK && ctx->record_paged) s = ctx->record_paged(ctx->runtime, &stats);
  return s;
}

static void paged_destroy(ol_kernel *kernel) {
  paged_kernel *k = (paged_kernel *)kernel;
  memo_truncate(&k->memo, 0);
  free(k->memo.blocks);
  free(k->memo.views);
  pthread_mutex_destroy(&k->lock);
  free(k);
}

ol_status ol_paged_attention_create(const ol_node *node, ol_kernel **out) {
  static const char *const known[] = {"block_size", "max_tokens", "is_causal", "left_window_size"};
  for (size_t a = 0; a < node->num_attrs; a++) {
    bool ok = false;
    for (size_t i = 0; i < 4; i++) ok |= strcmp(node->attrs[a].name, known[i]) == 0;
    if (!ok) return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "attribute '%s' is not supported", node->attrs[a].name);
  }
  if (node->num_inputs > 4)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "PagedAttention takes Q, K, V and past (masks are not supported)");
  int64_t block = ol_attr_int(node, "block_size", 16), max = ol_attr_int(node, "max_tokens", 4096);
  int64_t causal = ol_attr_int(node, "is_causal", 1), window = ol_attr_int(node, "left_window_size", -1);
  if (block <= 0) return ol_kernel_error(node, OL_INVALID_MODEL, "block_size must be positive, got %lld", (long long)block);
  if (max <= 0) return ol_kernel_error(node, OL_INVALID_MODEL, "max_tokens must be positive, got %lld", (long long)max);
  if (causal != 0 && causal != 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "is_causal must be 0 or 1, got %lld", (long long)causal);
  if (window < -1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "left_window_size must be -1 or >= 0, got %lld", (long long)window);
  paged_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, paged_compute, (ol_kernel **)&k));
  k->base.destroy = paged_destroy;
  k->block_size = block, k->max_tokens = max, k->causal = causal == 1, k->left_window = window;
  pthread_mutex_init(&k->lock, NULL);
  *out = &k->base;
  return OL_OK;
}

const ol_op_schema ol_schema_paged[] = {
    {"ai.rt", "PagedAttention", 1, 1, ol_paged_attention_create, ol_infer_paged_attention,
     "float32 float16 bfloat16; past/present: paged cache"},
    {"ai.rt", "QuantizePagedCache", 1, 1, ol_quantize_paged_cache_create, ol_infer_quantize_paged_cache,
     "paged cache -> paged cache (int8 uint8 int4 uint4 int2 uint2 float32 float16 bfloat16 pages)"},
    {0},
};
