/* A stand-in for libcutensor.so.2 / libhiptensor.so (2.x plan API), for CPU tests of
 * hipfer's ctypes bindings (tests/test_tensorlib.py). Build with -DPREFIX=cutensor or
 * -DPREFIX=hiptensor. Every call is appended to fake_log as one text line with its
 * arguments; nothing is computed. Status codes follow the real headers (0 success,
 * 7 invalid value, 14 internal error, 15 not supported). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(name) CAT(PREFIX, name)

char fake_log[1 << 20];
size_t fake_len = 0;
size_t fake_version = 20801;
int fake_refuse_nmodes_a = -1;   /* CreateContraction answers 15 when A has this many modes */
int fake_fail_plan = 0;          /* CreatePlan answers 14 */
uint64_t fake_estimate = 1 << 20;
uint64_t fake_required = 4096;
int fake_live = 0;               /* objects created and not destroyed */

#ifdef CUTENSOR_SYMBOLS  /* cuTENSOR: pointers exported as symbols */
typedef const void *compute_t;
const void *CUTENSOR_COMPUTE_DESC_32F = (const void *)0x3200F;
const void *CUTENSOR_COMPUTE_DESC_64F = (const void *)0x6400F;
#else                     /* hipTENSOR: an enum */
typedef uint32_t compute_t;
#endif

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(fake_log + fake_len, sizeof(fake_log) - fake_len, fmt, ap);
    va_end(ap);
    if (n > 0 && fake_len + n < sizeof(fake_log)) fake_len += n;
}

void fake_reset(void) { fake_len = 0; fake_log[0] = 0; }

typedef struct { int kind; int dtype; int nmodes; } obj_t;

static void *make(int kind, int dtype, int nmodes) {
    obj_t *o = malloc(sizeof(obj_t));
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

static int scalar_size(int dtype) {  /* R_16F 2 and R_32F 0 scale by float, C_64F by 16 bytes */
    switch (dtype) { case 0: case 2: return 4; case 1: case 4: return 8; case 5: return 16; }
    return 0;
}

static void hexdump(const char *name, const void *p, int n) {
    logf_(" %s=", name);
    for (int i = 0; i < n; i++) logf_("%02x", ((const unsigned char *)p)[i]);
}

int F(Create)(void **handle) { *handle = make(1, -1, 0); logf_("Create\n"); return 0; }
int F(Destroy)(void *handle) { drop("Destroy", handle); return 0; }

int F(CreateTensorDescriptor)(void *handle, void **desc, uint32_t n, const int64_t *ext,
                              const int64_t *str, int dtype, uint32_t align) {
    logf_("CreateTensorDescriptor n=%u", n);
    list64("ext", n, ext);
    list64("str", n, str);
    logf_(" dt=%d align=%u\n", dtype, align);
    for (uint32_t i = 0; i < n; i++)
        if (ext[i] <= 0 || str[i] <= 0) return 7;
    *desc = make(2, dtype, (int)n);
    return 0;
}
int F(DestroyTensorDescriptor)(void *d) { drop("DestroyTensorDescriptor", d); return 0; }

int F(CreateContraction)(void *handle, void **desc, void *da, const int32_t *ma, int opa,
                         void *db, const int32_t *mb, int opb, void *dc, const int32_t *mc,
                         int opc, void *dd, const int32_t *md, compute_t compute) {
    obj_t *a = da, *b = db, *c = dc;
    logf_("CreateContraction");
    list32("ma", a->nmodes, ma);
    list32("mb", b->nmodes, mb);
    list32("mc", c->nmodes, mc);
    logf_(" opa=%d opb=%d opc=%d same_d=%d compute=%#lx\n", opa, opb, opc,
          dd == dc && md == mc, (unsigned long)(uintptr_t)compute);
    if (a->nmodes == fake_refuse_nmodes_a) return 15;
    *desc = make(3, c->dtype, 0);
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
    logf_("CreatePlan limit=%llu\n", (unsigned long long)limit);
    if (fake_fail_plan) return 14;
    *plan = make(5, ((obj_t *)desc)->dtype, 0);
    return 0;
}
int F(DestroyPlan)(void *p) { drop("DestroyPlan", p); return 0; }

int F(PlanGetAttribute)(void *handle, void *plan, int attr, void *buf, size_t size) {
    logf_("PlanGetAttribute attr=%d size=%zu\n", attr, size);
    if (attr != 0 || size != sizeof(uint64_t)) return 7;
    *(uint64_t *)buf = fake_required;
    return 0;
}

int F(Contract)(void *handle, void *plan, const void *alpha, const void *A, const void *B,
                const void *beta, const void *C, void *D, void *ws, uint64_t wss, void *stream) {
    int n = scalar_size(((obj_t *)plan)->dtype);
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
