// host_gpu.h -- runs kernels of hipfer/kernels/*.cuh on the CPU, for tests without a GPU.
// Include it before the kernel source; compile with g++ -std=c++17 (CUDA's spelling of the
// warp builtins is taken: common.cuh sees no HIP).
//
// Every thread of a block is a fiber (ucontext). A random ready fiber runs until its next
// barrier or warp collective; a warp's collective (ballot, shuffle) is resolved once all
// its lanes wait on it, and a barrier once the whole block waits there. So warps run
// ahead of each other between barriers in random ways, and blocks run in a random order:
// code that reads another warp's shared memory without a barrier between gets differing
// results. A barrier some threads never reach, and a warp collective that not
// all lanes of the warp make, are errors. The warp size is the launch's (32 or 64): a
// ballot is 64 bits wide either way. __shared__ variables are statics (blocks run one at
// a time); those given to hf_emu_shared (the loader finds them in the symbol table) are
// filled with 0xA5 bytes before every block, as a GPU's shared memory holds garbage.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) alignas(n)

struct hf_emu_dim3 { unsigned x, y, z; };
inline hf_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
inline int warpSize = 32;

namespace hf_emu {

enum State { READY, BARRIER, COLLECTIVE, DONE };
enum Op { BALLOT, SHFL_XOR };
struct Fiber {
  ucontext_t ctx;
  State state;
  Op op;
  unsigned long long arg, result;
  int shfl_mask;
};

inline std::vector<Fiber> fibers;
inline std::vector<std::vector<char> > stacks;
inline ucontext_t scheduler;
inline int current;
inline std::vector<std::pair<void*, size_t> > shared;  // poisoned before every block
inline std::function<void()> body;
const size_t STACK = 64 * 1024;

inline void entry() {
  body();
  fibers[current].state = DONE;  // then uc_link: back to the scheduler
}

inline void wait(State s) {
  Fiber& f = fibers[current];
  f.state = s;
  swapcontext(&f.ctx, &scheduler);
}

inline unsigned long long collective(Op op, unsigned long long arg, int shfl_mask = 0) {
  Fiber& f = fibers[current];
  f.op = op;
  f.arg = arg;
  f.shfl_mask = shfl_mask;
  wait(COLLECTIVE);
  return f.result;
}

// Once every lane of warp w waits on a collective, resolves it (they must all make the
// same one) and makes the lanes ready; returns what went wrong, or nullptr.
inline const char* resolve(int w, std::vector<int>& ready) {
  const int ws = warpSize, lo = w * ws;
  for (int l = 0; l < ws; ++l)
    if (fibers[lo + l].state != COLLECTIVE) return nullptr;  // not yet
  unsigned long long ballot = 0;
  for (int l = 0; l < ws; ++l) {
    if (fibers[lo + l].op != fibers[lo].op) return "lanes of a warp in different collectives";
    ballot |= (unsigned long long)(fibers[lo + l].arg != 0) << l;
  }
  for (int l = 0; l < ws; ++l) {
    Fiber& f = fibers[lo + l];
    f.result = f.op == BALLOT ? ballot : fibers[lo + ((l ^ f.shfl_mask) & (ws - 1))].arg;
    f.state = READY;
    ready.push_back(lo + l);
  }
  return nullptr;
}

// Runs kernel() on grid x block threads; returns nullptr or what went wrong.
inline const char* launch(unsigned grid, unsigned block, int warp, unsigned seed,
                          std::function<void()> kernel) {
  if (block % warp) return "the block is not a whole number of warps";
  warpSize = warp;
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  body = kernel;
  std::mt19937 rng(seed);
  std::vector<unsigned> blocks(grid);
  std::iota(blocks.begin(), blocks.end(), 0u);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  fibers.assign(block, Fiber());
  while (stacks.size() < block) stacks.emplace_back(STACK);
  std::vector<int> ready;
  for (unsigned b : blocks) {
    blockIdx = {b, 0, 0};
    for (const auto& r : shared) memset(r.first, 0xA5, r.second);
    ready.clear();
    for (unsigned t = 0; t < block; ++t) {
      Fiber& f = fibers[t];
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = stacks[t].data();
      f.ctx.uc_stack.ss_size = STACK;
      f.ctx.uc_link = &scheduler;
      makecontext(&f.ctx, entry, 0);
      f.state = READY;
      ready.push_back((int)t);
    }
    for (;;) {
      while (!ready.empty()) {  // a random warp's ready lanes run to their next wait
        const int w = ready[rng() % ready.size()] / warp;
        std::vector<int> lanes;
        for (size_t k = 0; k < ready.size();)
          if (ready[k] / warp == w) {
            lanes.push_back(ready[k]);
            ready[k] = ready.back();
            ready.pop_back();
          } else {
            ++k;
          }
        std::shuffle(lanes.begin(), lanes.end(), rng);
        for (int t : lanes) {
          current = t;
          threadIdx = {(unsigned)t, 0, 0};
          swapcontext(&scheduler, &fibers[t].ctx);
        }
        if (const char* error = resolve(w, ready)) return error;
      }
      int done = 0, barrier = 0;
      for (const Fiber& f : fibers) {
        done += f.state == DONE;
        barrier += f.state == BARRIER;
      }
      if (done == (int)block) break;
      if (barrier != (int)block)
        return done + barrier == (int)block ? "a barrier that not every thread of the block reaches"
                                            : "a warp collective that not every lane makes";
      for (unsigned t = 0; t < block; ++t) {
        fibers[t].state = READY;
        ready.push_back((int)t);
      }
    }
  }
  return nullptr;
}

}  // namespace hf_emu

extern "C" void hf_emu_shared(void* p, size_t bytes) { hf_emu::shared.emplace_back(p, bytes); }

inline void __syncthreads() { hf_emu::wait(hf_emu::BARRIER); }
inline unsigned long long __ballot_sync(unsigned, int pred) {
  return hf_emu::collective(hf_emu::BALLOT, pred != 0);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int mask) {
  static_assert(sizeof(T) <= 8, "one 64-bit lane value");
  unsigned long long a = 0;
  memcpy(&a, &v, sizeof v);
  const unsigned long long r = hf_emu::collective(hf_emu::SHFL_XOR, a, mask);
  T out;
  memcpy(&out, &r, sizeof out);
  return out;
}
// One fiber runs at a time: atomics are plain read-modify-writes.
inline unsigned atomicAdd(unsigned* p, unsigned v) { const unsigned o = *p; *p = o + v; return o; }
inline unsigned atomicMax(unsigned* p, unsigned v) {
  const unsigned o = *p;
  *p = o > v ? o : v;
  return o;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp,
                                    unsigned long long v) {
  const unsigned long long o = *p;
  if (o == cmp) *p = v;
  return o;
}
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
