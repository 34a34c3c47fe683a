// gdscan GPU filter: a predicate's program run over a batch's columns into
// a row mask (src/decode/filter/program.rs compiles the program,
// column_table.rs lays out the column table; the layouts are described
// there and the constants below are checked against the Rust ones).
//
// One thread per row, grid-stride. Each row runs the postfix program over a
// stack of three-valued results (FALSE, TRUE, UNKNOWN, SQL's logic): the row
// is kept (mask byte 1) when the one value left is TRUE. Everything read
// through the program is checked: the column index, the literal's range,
// every buffer read against its length, the stack's bounds, and the steps
// are run once each, in order, so a corrupt program or column table ends
// (the row's byte 0 and GDS_FILTER_BAD set in *status) instead of reading
// out of bounds or looping.
#include "common.cuh"

#define GDS_FILTER_BLOCK 256
#define GDS_FILTER_STACK 32
#define GDS_FILTER_MAX_PATH 4
#define GDS_FILTER_COLUMN_WORDS 18

#define GDS_FILTER_STEP_TRUE 1
#define GDS_FILTER_STEP_FALSE 2
#define GDS_FILTER_STEP_CMP 3
#define GDS_FILTER_STEP_IS_NULL 4
#define GDS_FILTER_STEP_STARTS_WITH 5
#define GDS_FILTER_STEP_VALID_TRUE 6
#define GDS_FILTER_STEP_VALID_FALSE 7
#define GDS_FILTER_STEP_AND 8
#define GDS_FILTER_STEP_OR 9
#define GDS_FILTER_STEP_NOT 10
#define GDS_FILTER_STEP_CMP_COLUMN 11
#define GDS_FILTER_STEP_LIKE 12

// A LIKE pattern's parts, two bytes each (src/parquet/predicate/like.rs).
#define GDS_LIKE_BYTE 0
#define GDS_LIKE_ONE 1
#define GDS_LIKE_ANY 2

#define GDS_FILTER_KIND_SIGNED 1
#define GDS_FILTER_KIND_UNSIGNED 2
#define GDS_FILTER_KIND_FLOAT 3
#define GDS_FILTER_KIND_BOOL 4
#define GDS_FILTER_KIND_VIEW 5
#define GDS_FILTER_KIND_OPAQUE 6
#define GDS_FILTER_KIND_NULL 7

#define GDS_FILTER_OP_EQ 0
#define GDS_FILTER_OP_NE 1
#define GDS_FILTER_OP_LT 2
#define GDS_FILTER_OP_LE 3
#define GDS_FILTER_OP_GT 4
#define GDS_FILTER_OP_GE 5

// Three values.
#define GDS_FILTER_F 0
#define GDS_FILTER_T 1
#define GDS_FILTER_U 2

// The status bit of a corrupt program or column table.
#define GDS_FILTER_BAD 1u

// What the row's reads of one step found.
struct GdsFilterRead {
  bool bad;   // an index or a range out of bounds
};

// Bit `bit` of the bitmap at `addr` (`len` bytes).
__device__ __forceinline__ u32 gds_filter_bit(u64 addr, u64 len, u64 bit, GdsFilterRead& r) {
  const u64 byte = bit >> 3;
  if (addr == 0 || byte >= len) {
    r.bad = true;
    return 0;
  }
  return (((const u8*)addr)[byte] >> (bit & 7)) & 1u;
}

// Whether the column's value at `row` is valid (every bitmap of its path).
__device__ __forceinline__ bool gds_filter_valid(const u64* c, u64 row, GdsFilterRead& r) {
  if ((u32)c[0] == GDS_FILTER_KIND_NULL) return false;
  const u64 n = c[5];
  if (n > GDS_FILTER_MAX_PATH) {
    r.bad = true;
    return false;
  }
  for (u64 k = 0; k < n; ++k) {
    const u64* v = c + 6 + 3 * k;
    if (!gds_filter_bit(v[0], v[1], v[2] + row, r)) return false;
  }
  return true;
}

// `w` (1..16) little-endian bytes at `p` as a 128-bit two's complement
// number (hi, lo), sign- or zero-extended.
__device__ __forceinline__ void gds_filter_load(const u8* p, u32 w, bool is_signed, i64& hi, u64& lo) {
  u64 l = 0, h = 0;
  if (w == 8 && ((u64)p & 7) == 0) {
    l = *(const u64*)p;
  } else if (w == 4 && ((u64)p & 3) == 0) {
    l = *(const u32*)p;
  } else if (w == 16 && ((u64)p & 7) == 0) {
    l = ((const u64*)p)[0];
    h = ((const u64*)p)[1];
  } else {
    for (u32 i = 0; i < w && i < 8; ++i) l |= (u64)p[i] << (8 * i);
    for (u32 i = 8; i < w; ++i) h |= (u64)p[i] << (8 * (i - 8));
  }
  if (w < 16) {
    bool neg = false;
    if (is_signed && w < 8) {
      neg = (l >> (8 * w - 1)) & 1;
      if (neg) l |= ~0ull << (8 * w);
    } else if (is_signed) {
      neg = l >> 63;
    }
    h = neg ? ~0ull : 0;
  }
  hi = (i64)h;
  lo = l;
}

// -1, 0, 1 as a < b, a == b, a > b for two 128-bit numbers.
__device__ __forceinline__ int gds_filter_order(i64 ahi, u64 alo, i64 bhi, u64 blo, bool is_signed) {
  if (ahi != bhi) {
    if (is_signed) return ahi < bhi ? -1 : 1;
    return (u64)ahi < (u64)bhi ? -1 : 1;
  }
  if (alo != blo) return alo < blo ? -1 : 1;
  return 0;
}

// The comparison `op` of an order.
__device__ __forceinline__ u32 gds_filter_holds(u32 op, int ord, GdsFilterRead& r) {
  switch (op) {
    case GDS_FILTER_OP_EQ: return ord == 0;
    case GDS_FILTER_OP_NE: return ord != 0;
    case GDS_FILTER_OP_LT: return ord < 0;
    case GDS_FILTER_OP_LE: return ord <= 0;
    case GDS_FILTER_OP_GT: return ord > 0;
    case GDS_FILTER_OP_GE: return ord >= 0;
    default: r.bad = true; return 0;
  }
}

// The bytes of view `row` of a view column (checked against its buffer).
__device__ __forceinline__ const u8* gds_filter_view(const u64* c, u64 row, const u64* buffers, u32 n_buffers,
                                                     u32& len, GdsFilterRead& r) {
  const u64 at = (c[3] + row) * 16;
  if (c[1] == 0 || c[3] + row >= (c[2] >> 4)) {
    r.bad = true;
    return 0;
  }
  const u8* view = (const u8*)(c[1] + at);
  len = *(const u32*)view;
  if (len <= 12) return view + 4;
  const u32 index = *(const u32*)(view + 8);
  const u32 offset = *(const u32*)(view + 12);
  const u64 first = c[4] & 0xffffffffull, count = c[4] >> 32;
  if (index >= count || first + index >= n_buffers) {
    r.bad = true;
    return 0;
  }
  const u64* b = buffers + 2 * (first + index);
  if ((u64)offset + len > b[1] || b[0] == 0) {
    r.bad = true;
    return 0;
  }
  return (const u8*)(b[0] + offset);
}

// Byte-wise unsigned order of two strings, then by length.
__device__ __forceinline__ int gds_filter_bytes_order(const u8* a, u32 alen, const u8* b, u32 blen) {
  const u32 n = alen < blen ? alen : blen;
  for (u32 i = 0; i < n; ++i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return alen == blen ? 0 : (alen < blen ? -1 : 1);
}

// `value op literal` of a valid fixed-width or boolean value.
__device__ u32 gds_filter_cmp_fixed(const u64* c, u64 row, u32 op, const u8* lit, u32 lit_len, GdsFilterRead& r) {
  const u32 kind = (u32)c[0], w = (u32)(c[0] >> 32);
  if (kind == GDS_FILTER_KIND_BOOL) {
    const u32 v = gds_filter_bit(c[1], c[2], c[3] + row, r);
    if (lit_len != 1 || lit[0] > 1) {
      r.bad = true;
      return GDS_FILTER_F;
    }
    return gds_filter_holds(op, v == lit[0] ? 0 : (v < lit[0] ? -1 : 1), r);
  }
  const bool width_ok = kind == GDS_FILTER_KIND_FLOAT ? (w == 4 || w == 8) : (w == 1 || w == 2 || w == 4 || w == 8 || w == 16);
  if (!width_ok || lit_len != w || c[1] == 0 || c[3] + row >= c[2] / w) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  const u8* p = (const u8*)(c[1] + (c[3] + row) * w);
  if (kind == GDS_FILTER_KIND_FLOAT) {
    i64 hi;
    u64 vb, lb;
    gds_filter_load(p, w, false, hi, vb);
    gds_filter_load(lit, w, false, hi, lb);
    double v, l;
    if (w == 4) {
      union { u32 u; float f; } a, b;
      a.u = (u32)vb;
      b.u = (u32)lb;
      v = a.f;
      l = b.f;
    } else {
      union { u64 u; double d; } a, b;
      a.u = vb;
      b.u = lb;
      v = a.d;
      l = b.d;
    }
    // NaN: every comparison FALSE, `!=` TRUE; -0.0 == 0.0 (IEEE).
    if (v != v) return op == GDS_FILTER_OP_NE ? GDS_FILTER_T : GDS_FILTER_F;
    return gds_filter_holds(op, v < l ? -1 : (v > l ? 1 : 0), r);
  }
  const bool is_signed = kind == GDS_FILTER_KIND_SIGNED;
  if (!is_signed && kind != GDS_FILTER_KIND_UNSIGNED) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  i64 vh, lh;
  u64 vl, ll;
  gds_filter_load(p, w, is_signed, vh, vl);
  gds_filter_load(lit, w, is_signed, lh, ll);
  return gds_filter_holds(op, gds_filter_order(vh, vl, lh, ll, is_signed), r);
}

// Whether the float of width `w` at `p` is NaN.
__device__ __forceinline__ bool gds_filter_nan(const u8* p, u32 w) {
  i64 hi;
  u64 bits;
  gds_filter_load(p, w, false, hi, bits);
  if (w == 4) return ((bits >> 23) & 0xffu) == 0xffu && (bits & 0x7fffffu) != 0;
  return ((bits >> 52) & 0x7ffu) == 0x7ffu && (bits & 0xfffffffffffffull) != 0;
}

// `a op b` of two columns of one type at `row` (UNKNOWN where either is
// NULL; a NaN on either side: FALSE, `!=` TRUE).
__device__ u32 gds_filter_cmp_columns(const u64* a, const u64* b, u64 row, u32 op, const u64* buffers, u32 n_buffers,
                                      GdsFilterRead& r) {
  if (a[0] != b[0]) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  const bool valid_a = gds_filter_valid(a, row, r), valid_b = gds_filter_valid(b, row, r);
  if (r.bad) return GDS_FILTER_F;
  if (!valid_a || !valid_b) return GDS_FILTER_U;
  const u32 kind = (u32)a[0], w = (u32)(a[0] >> 32);
  if (kind == GDS_FILTER_KIND_VIEW) {
    u32 la = 0, lb = 0;
    const u8* va = gds_filter_view(a, row, buffers, n_buffers, la, r);
    const u8* vb = gds_filter_view(b, row, buffers, n_buffers, lb, r);
    if (r.bad) return GDS_FILTER_F;
    return gds_filter_holds(op, gds_filter_bytes_order(va, la, vb, lb), r);
  }
  if (kind == GDS_FILTER_KIND_BOOL) {
    // The right value stands in as a one-byte literal.
    const u8 right = (u8)gds_filter_bit(b[1], b[2], b[3] + row, r);
    if (r.bad) return GDS_FILTER_F;
    return gds_filter_cmp_fixed(a, row, op, &right, 1, r);
  }
  if (w == 0 || w > 16 || b[1] == 0 || b[3] + row >= b[2] / w) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  const u8* right = (const u8*)(b[1] + (b[3] + row) * w);
  if (kind == GDS_FILTER_KIND_FLOAT && (w == 4 || w == 8) && gds_filter_nan(right, w)) {
    return op == GDS_FILTER_OP_NE ? GDS_FILTER_T : GDS_FILTER_F;
  }
  return gds_filter_cmp_fixed(a, row, op, right, w, r);
}

// The bytes of the character starting with `lead` (1 in a binary value,
// or for a byte that starts no UTF-8 sequence).
__device__ __forceinline__ u32 gds_like_char_len(u8 lead, bool utf8) {
  if (!utf8 || lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Where the pattern's parts [e, end) (no ANY among them) matched from
// v[at] end, or -1 where they do not match there.
__device__ long long gds_like_at(const u8* v, u32 n, u32 at, const u8* pat, u32 e, u32 end, bool utf8,
                                 GdsFilterRead& r) {
  u64 p = at;
  for (; e < end; ++e) {
    if (p >= n) return -1;
    const u8 tag = pat[2 * e];
    if (tag == GDS_LIKE_BYTE) {
      if (v[p] != pat[2 * e + 1]) return -1;
      p += 1;
    } else if (tag == GDS_LIKE_ONE) {
      p += gds_like_char_len(v[p], utf8);
      if (p > n) return -1;
    } else {
      r.bad = true;
      return -1;
    }
  }
  return (long long)p;
}

// Whether the value v (n bytes) matches the LIKE pattern `pat` (len bytes,
// two a part): the segments between ANYs placed leftmost in turn, the first
// at the start unless the pattern starts with ANY, the last at the end
// unless it ends with one. Every loop is bounded by the value's and the
// pattern's lengths; a malformed pattern sets r.bad.
__device__ u32 gds_filter_like(const u8* v, u32 n, const u8* pat, u32 len, bool utf8, GdsFilterRead& r) {
  if (len & 1u) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  const u32 m = len / 2;
  u32 e = 0, at = 0;
  bool anchored = true;
  while (true) {
    while (e < m && pat[2 * e] == GDS_LIKE_ANY) {
      anchored = false;
      ++e;
    }
    if (e == m) return (!anchored || at == n) ? GDS_FILTER_T : GDS_FILTER_F;
    u32 end = e;
    while (end < m && pat[2 * end] != GDS_LIKE_ANY) ++end;
    const bool last = end == m;
    long long q = -1;
    if (anchored) {
      q = gds_like_at(v, n, at, pat, e, end, utf8, r);
    } else {
      for (u32 s = at; s < n && !r.bad; ++s) {
        if (utf8 && (v[s] & 0xC0u) == 0x80u) continue;
        q = gds_like_at(v, n, s, pat, e, end, utf8, r);
        if (q >= 0 && (!last || q == (long long)n)) break;
        q = -1;
      }
    }
    if (r.bad || q < 0 || (last && q != (long long)n)) return GDS_FILTER_F;
    if (last) return GDS_FILTER_T;
    at = (u32)q;
    e = end;
  }
}

// One leaf step's value at `row`.
__device__ u32 gds_filter_leaf(const u32* s, const u64* c, u64 row, const u64* buffers, u32 n_buffers,
                               const u8* literals, u32 literals_len, GdsFilterRead& r) {
  const u32 code = s[0] & 0xffu, op = (s[0] >> 8) & 0xffu;
  const bool valid = gds_filter_valid(c, row, r);
  if (code == GDS_FILTER_STEP_IS_NULL) return valid ? GDS_FILTER_F : GDS_FILTER_T;
  if (code == GDS_FILTER_STEP_VALID_TRUE) return valid ? GDS_FILTER_T : GDS_FILTER_U;
  if (code == GDS_FILTER_STEP_VALID_FALSE) return valid ? GDS_FILTER_F : GDS_FILTER_U;
  if ((u64)s[2] + s[3] > literals_len) {
    r.bad = true;
    return GDS_FILTER_F;
  }
  if (!valid) return GDS_FILTER_U;
  const u8* lit = literals + s[2];
  const u32 lit_len = s[3];
  const u32 kind = (u32)c[0];
  if (kind == GDS_FILTER_KIND_VIEW) {
    u32 len = 0;
    const u8* v = gds_filter_view(c, row, buffers, n_buffers, len, r);
    if (r.bad) return GDS_FILTER_F;
    if (code == GDS_FILTER_STEP_STARTS_WITH) {
      return len >= lit_len && gds_filter_bytes_order(v, lit_len, lit, lit_len) == 0 ? GDS_FILTER_T : GDS_FILTER_F;
    }
    if (code == GDS_FILTER_STEP_LIKE) return gds_filter_like(v, len, lit, lit_len, op == 1, r);
    return gds_filter_holds(op, gds_filter_bytes_order(v, len, lit, lit_len), r);
  }
  if (code != GDS_FILTER_STEP_CMP) {  // STARTS_WITH and LIKE read views only
    r.bad = true;
    return GDS_FILTER_F;
  }
  return gds_filter_cmp_fixed(c, row, op, lit, lit_len, r);
}

// The program's value at `row`: TRUE, or not (FALSE, UNKNOWN, or a corrupt
// program: r.bad).
__device__ bool gds_filter_row(const u32* program, u32 n_steps, const u64* columns, u32 n_columns, const u64* buffers,
                               u32 n_buffers, const u8* literals, u32 literals_len, u64 row, GdsFilterRead& r) {
  u8 stack[GDS_FILTER_STACK];
  u32 sp = 0;
  bool broke = false;
  for (u32 i = 0; i < n_steps && !r.bad && !broke; ++i) {
    const u32* s = program + 4 * (u64)i;
    const u32 code = s[0] & 0xffu;
    u32 v;
    if (code == GDS_FILTER_STEP_AND || code == GDS_FILTER_STEP_OR) {
      if (sp < 2) {
        broke = true;
        break;
      }
      const u32 a = stack[sp - 2], b = stack[sp - 1];
      --sp;
      if (code == GDS_FILTER_STEP_AND) {
        v = (a == GDS_FILTER_F || b == GDS_FILTER_F) ? GDS_FILTER_F : ((a == GDS_FILTER_U || b == GDS_FILTER_U) ? GDS_FILTER_U : GDS_FILTER_T);
      } else {
        v = (a == GDS_FILTER_T || b == GDS_FILTER_T) ? GDS_FILTER_T : ((a == GDS_FILTER_U || b == GDS_FILTER_U) ? GDS_FILTER_U : GDS_FILTER_F);
      }
      stack[sp - 1] = (u8)v;
      continue;
    }
    if (code == GDS_FILTER_STEP_NOT) {
      if (sp < 1) {
        broke = true;
        break;
      }
      const u32 a = stack[sp - 1];
      stack[sp - 1] = (u8)(a == GDS_FILTER_U ? GDS_FILTER_U : (a == GDS_FILTER_T ? GDS_FILTER_F : GDS_FILTER_T));
      continue;
    }
    if (sp >= GDS_FILTER_STACK) {
      broke = true;
      break;
    }
    if (code == GDS_FILTER_STEP_TRUE || code == GDS_FILTER_STEP_FALSE) {
      v = code == GDS_FILTER_STEP_TRUE ? GDS_FILTER_T : GDS_FILTER_F;
    } else if (code == GDS_FILTER_STEP_CMP_COLUMN && s[1] < n_columns && s[2] < n_columns) {
      const u64* a = columns + (u64)s[1] * GDS_FILTER_COLUMN_WORDS;
      const u64* b = columns + (u64)s[2] * GDS_FILTER_COLUMN_WORDS;
      v = gds_filter_cmp_columns(a, b, row, (s[0] >> 8) & 0xffu, buffers, n_buffers, r);
    } else if (((code >= GDS_FILTER_STEP_CMP && code <= GDS_FILTER_STEP_VALID_FALSE) || code == GDS_FILTER_STEP_LIKE) &&
               s[1] < n_columns) {
      const u64* c = columns + (u64)s[1] * GDS_FILTER_COLUMN_WORDS;
      v = gds_filter_leaf(s, c, row, buffers, n_buffers, literals, literals_len, r);
    } else {
      broke = true;
      break;
    }
    stack[sp++] = (u8)v;
  }
  // A step that broke out, or anything but one value left, is a corrupt
  // program.
  const bool done = !r.bad && !broke && sp == 1;
  if (!done) r.bad = true;
  return done && stack[0] == GDS_FILTER_T;
}

extern "C" __global__ void __launch_bounds__(GDS_FILTER_BLOCK) gds_filter_eval(const u32* program, u32 n_steps,
                                                                               const u64* columns, u32 n_columns,
                                                                               const u64* buffers, u32 n_buffers,
                                                                               const u8* literals, u32 literals_len,
                                                                               u32 n_rows, u8* mask, u32* status) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  bool bad = false;
  for (u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows; row += stride) {
    GdsFilterRead r{false};
    const bool keep = gds_filter_row(program, n_steps, columns, n_columns, buffers, n_buffers, literals, literals_len,
                                     row, r);
    mask[row] = keep && !r.bad ? 1 : 0;
    bad = bad || r.bad;
  }
  if (bad && status) atomicOr(status, GDS_FILTER_BAD);
}
