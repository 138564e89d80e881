/* A stand-in for libcutensor.so.2 / libhiptensor.so (2.x plan API), for CPU tests of
 * hipfer's ctypes bindings and loader (tests/test_tensorlib.py). Build with
 * -DPREFIX=cutensor -DCUTENSOR_SYMBOLS, or -DPREFIX=hiptensor (add -DMANGLED for a
 * hipTENSOR < 2.2 that exports its API only under C++-mangled names). Every call is
 * appended to fake_log as one text line with its arguments; nothing is computed.
 *
 * The hipTENSOR build models what the real library (rocm-libraries
 * projects/hiptensor, 2.3/2.4) does that matters to hipfer:
 * - a static initializer (HipStaticDeviceGuard, hip_device.cpp) that exit()s when the
 *   device is not one it knows; the device is $FAKE_HIPTENSOR_ARCH (default gfx90a) and
 *   $FAKE_HIPTENSOR_WARP (default 64), read at load time; $FAKE_HIPTENSOR_HIP_ERROR
 *   models hipGetDevice failing (CHECK_HIP_ERROR exits too), $FAKE_HIPTENSOR_ABORT a crash;
 * - hiptensorGetVersion's encoding, major*1e6 + minor*1e3 + patch ($FAKE_HIPTENSOR_VERSION);
 * - CreateTensorDescriptor: ARCH_MISMATCH (8) for R_64F without FP64 (supportsF64);
 * - CreateContraction: ARCH_MISMATCH when the compute type has no matrix-core support
 *   on the device (matrixCoreSupport); a NULL descC selects the scale kernel;
 * - alpha and beta are read with the compute type's size (readVal, data_types.cpp);
 * - CreatePlan: like bruteForceModel, it "launches" with the caller's strides into
 *   product(extents) of scratch: an operand reaching past that counts in fake_overruns;
 *   fake_plan_status makes it answer 13 (no kernel fits), 3 (alloc failed), 14, ...;
 * - PlanGetAttribute(REQUIRED_WORKSPACE) returns the limit given to CreatePlan.
 * Status codes follow the headers: 0 success, 3 alloc failed, 7 invalid value, 8 arch
 * mismatch, 13 execution failed, 14 internal error, 15 not supported. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#ifdef MANGLED  /* internal C names; exported below under C++-mangled ones only */
#define F(name) CAT(fake_cxx_, name)
#else
#define F(name) CAT(PREFIX, name)
#endif

char fake_log[1 << 20];
size_t fake_len = 0;
#ifdef CUTENSOR_SYMBOLS
size_t fake_version = 20801;     /* cuTENSOR: major*10000 + minor*100 + patch */
#else
size_t fake_version = 2003000;   /* hipTENSOR: major*1e6 + minor*1e3 + patch */
#endif
int fake_refuse_nmodes_a = -1;   /* CreateContraction answers fake_refuse_status when A */
int fake_refuse_status = 15;     /* has this many modes */
int fake_plan_status = 0;        /* CreatePlan answers this when non-zero */
uint64_t fake_estimate = 1 << 20;
uint64_t fake_required = 4096;   /* cuTENSOR's PLAN_REQUIRED_WORKSPACE */
int fake_live = 0;               /* objects created and not destroyed */
int fake_overruns = 0;           /* operands CreatePlan would have overrun */
char fake_arch[32] = "gfx90a";   /* the device the hipTENSOR build models */

#ifdef CUTENSOR_SYMBOLS  /* cuTENSOR: pointers exported as symbols */
typedef const void *compute_t;
const void *CUTENSOR_COMPUTE_DESC_32F = (const void *)0x3200F;
const void *CUTENSOR_COMPUTE_DESC_64F = (const void *)0x6400F;
#else                     /* hipTENSOR: an enum */
typedef uint32_t compute_t;
#endif

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(fake_log + fake_len, sizeof(fake_log) - fake_len, fmt, ap);
    va_end(ap);
    if (n > 0 && fake_len + n < sizeof(fake_log)) fake_len += n;
}

void fake_reset(void) { fake_len = 0; fake_log[0] = 0; fake_overruns = 0; }

/* a tensor descriptor keeps its element count and span (1 + sum (n-1)*s) */
typedef struct { int kind; int dtype; int nmodes; int64_t size, span; uint64_t limit;
                 int64_t sizes[3], spans[3]; uint64_t compute; } obj_t;

static obj_t *make(int kind, int dtype, int nmodes) {
    obj_t *o = calloc(1, sizeof(obj_t));
    o->kind = kind; o->dtype = dtype; o->nmodes = nmodes;
    fake_live++;
    return o;
}

static void drop(const char *what, void *p) {
    logf_("%s %p\n", what, p);
    fake_live--;
    free(p);
}

static void list64(const char *name, uint32_t n, const int64_t *v) {
    logf_(" %s=", name);
    for (uint32_t i = 0; i < n; i++) logf_(i ? ",%lld" : "%lld", (long long)v[i]);
}

static void list32(const char *name, int n, const int32_t *v) {
    logf_(" %s=", name);
    for (int i = 0; i < n; i++) logf_(i ? ",%d" : "%d", v[i]);
}

static int scalar_size(obj_t *plan) {
#ifdef CUTENSOR_SYMBOLS  /* by data type: R_16F 2 and R_32F 0 scale by float, C_64F by 16 */
    switch (plan->dtype) { case 0: case 2: return 4; case 1: case 4: return 8; case 5: return 16; }
#else                     /* hipTENSOR: alpha and beta have the compute type (readVal) */
    switch (plan->compute) {
    case 1u << 0: case 1u << 10: return 2;    /* 16F, 16BF */
    case 1u << 2: return 4;                   /* 32F */
    case 1u << 4: case 1u << 11: return 8;    /* 64F, C32F */
    case 1u << 12: return 16;                 /* C64F */
    }
#endif
    return 0;
}

static void hexdump(const char *name, const void *p, int n) {
    logf_(" %s=", name);
    for (int i = 0; i < n; i++) logf_("%02x", ((const unsigned char *)p)[i]);
}

#ifndef CUTENSOR_SYMBOLS
/* hip_device.cpp (2.3): the archs HipDevice knows, supportsF64, matrixCoreSupport */
static int arch_is(const char *const *list) {
    for (; *list; list++)
        if (strstr(fake_arch, *list)) return 1;
    return 0;
}
static const char *const CDNA_F64[] = {"gfx90a", "gfx942", "gfx950", 0};
static const char *const CDNA[] = {"gfx908", "gfx90a", "gfx942", "gfx950", 0};
static const char *const RDNA[] = {"gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151",
                                   "gfx1152", "gfx1153", "gfx1200", "gfx1201", 0};

static int matrix_core(uint32_t compute) {
    switch (compute) {
    case 1u << 4: case 1u << 12: return arch_is(CDNA_F64);           /* 64F, C64F */
    case 1u << 2: case 1u << 11: return arch_is(CDNA);               /* 32F, C32F */
    case 1u << 0: case 1u << 10: return arch_is(CDNA) || arch_is(RDNA);  /* 16F, 16BF */
    }
    return 0;
}

__attribute__((constructor)) static void fake_device_guard(void) {
    const char *e;
    if ((e = getenv("FAKE_HIPTENSOR_VERSION"))) fake_version = strtoull(e, NULL, 10);
    if (getenv("FAKE_HIPTENSOR_ABORT")) abort();  /* a crash while loading */
    if (getenv("FAKE_HIPTENSOR_HIP_ERROR")) {
        fprintf(stderr, "hip error: 'no ROCm-capable device is detected'(100) at "
                        "hip_device.cpp:40\n");
        exit(EXIT_FAILURE);
    }
    if ((e = getenv("FAKE_HIPTENSOR_ARCH"))) snprintf(fake_arch, sizeof fake_arch, "%s", e);
    int warp = (e = getenv("FAKE_HIPTENSOR_WARP")) ? atoi(e) : 64;
    if (!arch_is(CDNA) && !arch_is(RDNA)) {
        fprintf(stderr, "Cannot proceed: unsupported host device detected. Exiting.\n");
        exit(EXIT_FAILURE);
    }
    if (warp != 32 && warp != 64) {
        fprintf(stderr, "Cannot proceed: unsupported warp size detected. Exiting.\n");
        exit(EXIT_FAILURE);
    }
}
#endif

int F(Create)(void **handle) { *handle = make(1, -1, 0); logf_("Create\n"); return 0; }
int F(Destroy)(void *handle) { drop("Destroy", handle); return 0; }

int F(CreateTensorDescriptor)(void *handle, void **desc, uint32_t n, const int64_t *ext,
                              const int64_t *str, int dtype, uint32_t align) {
    logf_("CreateTensorDescriptor n=%u", n);
    list64("ext", n, ext);
    list64("str", n, str);
    logf_(" dt=%d align=%u\n", dtype, align);
    int64_t size = 1, span = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (ext[i] <= 0 || str[i] <= 0) return 7;
        size *= ext[i];
        span += (ext[i] - 1) * str[i];
    }
#ifndef CUTENSOR_SYMBOLS
    if (dtype == 1 && !arch_is(CDNA_F64)) return 8;  /* R_64F and !supportsF64() */
#endif
    obj_t *o = make(2, dtype, (int)n);
    o->size = size; o->span = span;
    *desc = o;
    return 0;
}
int F(DestroyTensorDescriptor)(void *d) { drop("DestroyTensorDescriptor", d); return 0; }

int F(CreateContraction)(void *handle, void **desc, void *da, const int32_t *ma, int opa,
                         void *db, const int32_t *mb, int opb, void *dc, const int32_t *mc,
                         int opc, void *dd, const int32_t *md, compute_t compute) {
    obj_t *a = da, *b = db, *c = dc, *d = dd;
    logf_("CreateContraction");
    list32("ma", a->nmodes, ma);
    list32("mb", b->nmodes, mb);
    if (c) list32("mc", c->nmodes, mc);
    else logf_(" scale=1");  /* no C: the scale kernel, which never reads C or beta */
    list32("md", d->nmodes, md);
    logf_(" opa=%d opb=%d opc=%d same_d=%d compute=%#lx\n", opa, opb, opc,
          dd == dc && md == mc, (unsigned long)(uintptr_t)compute);
#ifndef CUTENSOR_SYMBOLS
    if (!matrix_core(compute)) return 8;
#else
    if (!c) return 7;  /* cuTENSOR needs C */
#endif
    if (a->nmodes == fake_refuse_nmodes_a) return fake_refuse_status;
    obj_t *o = make(3, d->dtype, 0);
    o->compute = (uint64_t)(uintptr_t)compute;
    obj_t *ops[3] = {a, b, d};
    for (int i = 0; i < 3; i++) { o->sizes[i] = ops[i]->size; o->spans[i] = ops[i]->span; }
    *desc = o;
    return 0;
}
int F(DestroyOperationDescriptor)(void *d) { drop("DestroyOperationDescriptor", d); return 0; }

int F(CreatePlanPreference)(void *handle, void **pref, int algo, int jit) {
    logf_("CreatePlanPreference algo=%d jit=%d\n", algo, jit);
    *pref = make(4, -1, 0);
    return 0;
}
int F(DestroyPlanPreference)(void *p) { drop("DestroyPlanPreference", p); return 0; }

int F(EstimateWorkspaceSize)(void *handle, void *desc, void *pref, int wpref, uint64_t *ws) {
    logf_("EstimateWorkspaceSize pref=%d\n", wpref);
    *ws = fake_estimate;
    return 0;
}

int F(CreatePlan)(void *handle, void **plan, void *desc, void *pref, uint64_t limit) {
    obj_t *od = desc;
    int over = 0;
    for (int i = 0; i < 3; i++) over += od->spans[i] > od->sizes[i];
    fake_overruns += over;
    logf_("CreatePlan limit=%llu overruns=%d\n", (unsigned long long)limit, over);
    if (fake_plan_status) return fake_plan_status;
    obj_t *p = make(5, od->dtype, 0);
    p->limit = limit;
    p->compute = od->compute;
    *plan = p;
    return 0;
}
int F(DestroyPlan)(void *p) { drop("DestroyPlan", p); return 0; }

int F(PlanGetAttribute)(void *handle, void *plan, int attr, void *buf, size_t size) {
    logf_("PlanGetAttribute attr=%d size=%zu\n", attr, size);
    if (attr != 0 || size != sizeof(uint64_t)) return 7;
#ifdef CUTENSOR_SYMBOLS
    *(uint64_t *)buf = fake_required;
#else
    *(uint64_t *)buf = ((obj_t *)plan)->limit;  /* plan->mRequiredWorkspace = limit */
#endif
    return 0;
}

int F(Contract)(void *handle, void *plan, const void *alpha, const void *A, const void *B,
                const void *beta, const void *C, void *D, void *ws, uint64_t wss, void *stream) {
    int n = scalar_size(plan);
    logf_("Contract");
    hexdump("alpha", alpha, n);
    hexdump("beta", beta, n);
    logf_(" A=%#lx B=%#lx C=%#lx D=%#lx ws=%#lx wss=%llu stream=%#lx\n",
          (unsigned long)(uintptr_t)A, (unsigned long)(uintptr_t)B, (unsigned long)(uintptr_t)C,
          (unsigned long)(uintptr_t)D, (unsigned long)(uintptr_t)ws, (unsigned long long)wss,
          (unsigned long)(uintptr_t)stream);
    return 0;
}

const char *F(GetErrorString)(int status) {
    static char buf[64];
    snprintf(buf, sizeof buf, "FAKE_STATUS_%d", status);
    return buf;
}

size_t F(GetVersion)(void) { return fake_version; }

#ifdef MANGLED
/* what g++ makes of hipTENSOR 2.0/2.1's declarations without extern "C" */
#define MANGLED_AS(impl, sym) \
    extern __typeof__(impl) CAT(alias_, impl) __asm__(sym) __attribute__((alias(#impl)));
MANGLED_AS(fake_cxx_Create, "_Z15hiptensorCreatePP15hiptensorHandle")
MANGLED_AS(fake_cxx_Destroy, "_Z16hiptensorDestroyP15hiptensorHandle")
MANGLED_AS(fake_cxx_CreateTensorDescriptor,
           "_Z31hiptensorCreateTensorDescriptorP15hiptensorHandlePP25hiptensorTensor"
           "DescriptorjPKlS5_19hiptensorDataType_tj")
MANGLED_AS(fake_cxx_CreatePlan,
           "_Z19hiptensorCreatePlanP15hiptensorHandlePP13hiptensorPlanP28hiptensor"
           "OperationDescriptorP23hiptensorPlanPreferencem")
MANGLED_AS(fake_cxx_Contract,
           "_Z17hiptensorContractP15hiptensorHandleP13hiptensorPlanPKvS4_S4_S4_S4_PvS5_m"
           "P12ihipStream_t")
MANGLED_AS(fake_cxx_GetVersion, "_Z19hiptensorGetVersionv")
#endif
