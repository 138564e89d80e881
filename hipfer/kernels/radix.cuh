// radix.cuh -- a stable LSD radix sort of integer keys below a known bound, carrying each
// key's position: the order behind scatter_add_rows (hipfer/kernels/radix.py plans it).
//
// keys < 2^bits sort in passes of digit_bits bits (at most 8; the same width every pass,
// lowest digit first); a stable pass per digit leaves them in order, equal keys in their
// first order. A pass cuts its input into tiles of tile_size consecutive elements, one
// block each (HF_RADIX_BLOCK threads), and keeps a table of counts[t * digits + d]: the
// elements of tile t whose digit is d. Tile t's first element of digit d goes after all
// elements of smaller digits and those of digit d in earlier tiles; each block sums that
// from the table itself (a scan kernel per pass cost more than these reads: 65536 keys
// sorted in 45-57 us so on an H200, against 27 us), and an element's place is that plus
// its rank among the tile's earlier elements of the same digit. radix_scatter ranks them
// chunk by chunk (blockDim consecutive elements, warp after warp): 1 + digit_bits
// ballots match the lanes of a warp holding the same digit, and per-warp digit counts in
// shared memory order the warps. Only integer counts are shared (exact in any order), so
// every warp size and schedule gives the one stable order.
//
//   radix_count   pass 1's table (and an optional check of the keys' range); zeroes the
//                 later tables and the runs, which the passes fill with atomics
//   radix_scatter a pass; counts the next pass's digits into its table as it places,
//                 and the last one can record where each key's run is (the rows of
//                 scatter_add_rows)
#pragma once
#include "common.cuh"

// Threads of radix_count and radix_scatter blocks: at least the 2^8 digits (a thread per
// digit), a whole number of warps of 32 and 64.
#define HF_RADIX_BLOCK 256
#define HF_RADIX_DIGITS 256

namespace hf {

__device__ __forceinline__ u32 radix_digit(u64 key, int shift, int digit_bits) {
  return (u32)(key >> shift) & ((1u << digit_bits) - 1u);
}

// counts[t * digits + d] for pass 1 (shift 0), one block per tile t (tiles = gridDim.x).
// With err, a key outside [0, bound) records 1 + its position there (atomicCAS from 0: the
// device error flag); it is still counted, so the passes stay consistent. Also zeroes
// zero[0, zero_size) (the later passes' tables and the runs).
template <class K>
__global__ void __launch_bounds__(HF_RADIX_BLOCK)
radix_count(const K* keys, i64 m, i64 bound, i64* err, u32* counts, i64 tile_size, int digit_bits,
            u32* zero, i64 zero_size) {
  __shared__ u32 hist[HF_RADIX_DIGITS];
  const int digits = 1 << digit_bits;
  const i64 t = blockIdx.x, first = t * tile_size;
  const i64 end = m - first < tile_size ? m : first + tile_size;
  for (int d = threadIdx.x; d < digits; d += blockDim.x) hist[d] = 0;
  for (i64 k = t * blockDim.x + threadIdx.x; k < zero_size; k += (i64)gridDim.x * blockDim.x)
    zero[k] = 0;
  __syncthreads();
  for (i64 i = first + threadIdx.x; i < end; i += blockDim.x) {
    const K k = keys[i];
    if (err && (k < 0 || k >= bound))
      atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(i + 1));
    atomicAdd(&hist[radix_digit((u64)k, 0, digit_bits)], 1u);  // a count: exact in any order
  }
  __syncthreads();
  for (int d = threadIdx.x; d < digits; d += blockDim.x) counts[t * digits + d] = hist[d];
}

// One pass: element i of the input (key keys_in[i], value vals_in[i], or i itself without
// vals_in) goes to keys_out / vals_out at its place by the digit at `shift`; counts is
// the pass's table, one block per tile (tiles = gridDim.x). With next_counts, the next
// pass's table (zeroed) counts the element's next digit for the tile of its new place.
// With runs (the last pass; zeroed), runs[2k] and runs[2k + 1] become the count of key
// k < bound and the end of its run in the output: the warp's last lane of each key adds
// them (the lanes of a digit hold equal keys together, as the input is in order of the
// digits below; matched by `shift` more ballots), so even equal keys take one atomic per
// warp.
template <class K>
__global__ void __launch_bounds__(HF_RADIX_BLOCK)
radix_scatter(const K* keys_in, const u32* vals_in, u64* keys_out, u32* vals_out,
              const u32* counts, u32* next_counts, u32* runs, i64 m, i64 bound, i64 tile_size,
              int shift, int digit_bits) {
  // per chunk: the warps' counts of each digit, and where each warp's first of it goes
  __shared__ u32 warp_count[HF_RADIX_BLOCK / 32][HF_RADIX_DIGITS];
  __shared__ u32 warp_place[HF_RADIX_BLOCK / 32][HF_RADIX_DIGITS];
  __shared__ u32 warp_total[HF_RADIX_BLOCK / 32];
  const int ws = warpSize, lane = threadIdx.x % ws, warp = threadIdx.x / ws;
  const int warps = blockDim.x / ws, digits = 1 << digit_bits;
  const i64 tiles = gridDim.x, t = blockIdx.x, first = t * tile_size;
  const i64 end = m - first < tile_size ? m : first + tile_size;
  const u64 lanes_below = (1ull << lane) - 1ull;
  // thread d < digits: the elements of digit d in the tiles before this one, and in all
  u32 before = 0, total = 0;
  if (threadIdx.x < digits) {
    for (i64 u = 0; u < tiles; ++u) {
      const u32 c = counts[u * digits + threadIdx.x];
      before += u < t ? c : 0u;
      total += c;
    }
  }
  // ... and of the smaller digits in all tiles (a block scan of the totals)
  u32 below = 0;
  for (int s = 1; s < ws; s <<= 1) {
    const u32 other = HF_SHFL_XOR(total, s);
    if (lane & s) below += other;
    total += other;
  }
  if (lane == 0) warp_total[warp] = total;
  for (int k = threadIdx.x; k < warps * HF_RADIX_DIGITS; k += blockDim.x)
    warp_count[k / HF_RADIX_DIGITS][k % HF_RADIX_DIGITS] = 0;
  __syncthreads();
  for (int w = 0; w < warp; ++w) below += warp_total[w];
  u32 next = below + before;  // thread d < digits: where the tile's next element of digit d goes
  for (i64 base = first; base < end; base += blockDim.x) {  // uniform: every thread loops
    const i64 i = base + threadIdx.x;
    const bool live = i < end;
    const u64 key = live ? (u64)keys_in[i] : 0ull;
    const u32 digit = radix_digit(key, shift, digit_bits);
    // the live lanes of this warp whose digit is this lane's
    u64 same = HF_BALLOT(live);
    for (int b = 0; b < digit_bits; ++b) {
      const bool bit = (digit >> b) & 1u;
      const u64 set = HF_BALLOT(bit);
      same &= bit ? set : ~set;
    }
    const u32 rank = __popcll(same & lanes_below);
    if (live && rank == 0) warp_count[warp][digit] = __popcll(same);
    __syncthreads();
    if (threadIdx.x < digits) {
      for (int w = 0; w < warps; ++w) {
        const u32 c = warp_count[w][threadIdx.x];
        warp_count[w][threadIdx.x] = 0;  // ready for the next chunk
        warp_place[w][threadIdx.x] = next;
        next += c;
      }
    }
    __syncthreads();  // (warp_place is next written after the next chunk's first barrier)
    const u32 place = warp_place[warp][digit] + rank;
    if (live) {
      keys_out[place] = key;
      vals_out[place] = vals_in ? vals_in[i] : (u32)i;
      if (next_counts)  // a count: exact in any order
        atomicAdd(next_counts + place / tile_size * digits +
                      radix_digit(key, shift + digit_bits, digit_bits), 1u);
    }
    if (runs) {
      u64 same_key = same;
      for (int b = 0; b < shift; ++b) {
        const bool bit = (key >> b) & 1u;
        const u64 set = HF_BALLOT(bit);
        same_key &= bit ? set : ~set;
      }
      if (live && key < (u64)bound && (same_key >> lane) == 1ull) {  // the key's last lane
        atomicAdd(runs + 2 * key, (u32)__popcll(same_key));
        atomicMax(runs + 2 * key + 1, place + 1);
      }
    }
  }
}

}  // namespace hf
