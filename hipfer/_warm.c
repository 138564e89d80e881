/* hipfer._warm: the compiled warm path of the NumPy (CPU) backend.
 *
 * On a 10-element tensor NumPy's own call is about 0.3 us, and hipfer's Python layers
 * (operator -> namespace function -> plan-cache key -> runner -> Tensor) took 2 us
 * more. A Warm object stands in for one namespace function or operator. It serves the
 * one case that needs no planning -- exact Tensors over aligned C-contiguous NumPy
 * arrays of a dtype the backend computes with the bare ufunc -- as the backend would:
 * an elementwise op with the ufunc's own 1-d loop over a new array (find_loop), a
 * reduction with the backend's own ufunc.reduce call, either with every floating-point
 * error ignored (the backend's errstate). Anything else goes to the Python function it
 * stands in for, unchanged, with the same arguments; so does any call whose fast
 * attempt fails (the Python path raises its own error).
 *
 *   init(tensor_type, ufunc_type, conjugate, ignoring, scalar_for)   once (hipfer._warmpath)
 *   Warm(kind, ufunc, slow, dtypes, swap=False, with_dtype=False)    one per function/operator
 *     kind   0 unary  f(x), 1 binary f(a, b), 2 reduction f(x) of every axis
 *     ufunc  the ufunc (unary, binary) or its bound .reduce (reduction)
 *     slow   the Python function with the same signature
 *     dtypes ((in_dtype, out_dtype, quiet), ...): the input dtypes the bare ufunc serves,
 *            the dtype it must return, and whether the error state can be left alone
 *            (integer and bool ops raise no floating-point flags)
 *     swap   binary: compute ufunc(b, a) (a reflected operator; less as greater)
 *     with_dtype  reduction: the backend passes dtype=<out dtype> (sum, prod)
 *
 * Binary operands are two Tensors of the same shape, or a Tensor and a Python float,
 * int or complex whose 0-d array (the weak scalar of the Python path, made there by
 * scalar_for(value, tensor)) is kept in a small cache here. Tensors read conjugated are
 * served where np.conjugate has a loop for their dtype. A Warm binds as a method (it is
 * a method descriptor), so it can also be a Tensor operator.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

enum { W_UNARY = 0, W_BINARY = 1, W_REDUCE = 2 };
#define MAX_DTYPES 32
#define MAX_NDIM 64

static PyTypeObject *g_tensor = NULL;         /* hipfer.Tensor */
static PyTypeObject *g_ufunc_type = NULL;     /* numpy.ufunc */
static PyObject *g_conjugate = NULL;          /* numpy.conjugate */
static Py_ssize_t g_off_data = -1, g_off_conj = -1;  /* its slots' offsets */
static PyObject *g_ignoring = NULL;           /* a Context: NumPy's errors all ignored */
static PyObject *g_scalar_for = NULL;         /* (value, tensor) -> 0-d ndarray or None */
static PyObject *g_axes[MAX_NDIM + 1];        /* (0, ..., n - 1) for each n */
static PyObject *s_reduce_kw_dtype = NULL;    /* ("axis", "dtype", "out") */
static PyObject *s_reduce_kw = NULL;          /* ("axis", "out") */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind, swap, with_dtype;
    PyObject *ufunc, *slow;
    PyObject *module, *qualname;  /* where it is installed (pickle's global name), or NULL */
    int n;
    PyArray_Descr *in[MAX_DTYPES], *out[MAX_DTYPES];
    char quiet[MAX_DTYPES];
    PyUFuncGenericFunction loop[MAX_DTYPES];  /* the ufunc's own loop, or NULL */
    void *loop_data[MAX_DTYPES];
    PyUFuncGenericFunction conj_loop[MAX_DTYPES];  /* np.conjugate's, for complex dtypes */
    void *conj_data[MAX_DTYPES];
    Py_ssize_t hits;
} Warm;

/* ---------------------------------------------------------------- weak scalars */
/* A direct-mapped cache: (dtype, Python type, value bits) -> 0-d array. The bits keep
 * -0.0 apart from 0.0 and find a NaN again. */
#define SCALAR_SLOTS 128
typedef struct {
    PyArray_Descr *descr;
    PyTypeObject *type;
    unsigned long long bits[2];
    PyObject *array;
} ScalarSlot;
static ScalarSlot g_scalars[SCALAR_SLOTS];

static int scalar_bits(PyObject *v, unsigned long long bits[2])
{
    bits[0] = bits[1] = 0;
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        memcpy(&bits[0], &d, 8);
        return 1;
    }
    if (PyLong_CheckExact(v)) {  /* bool is not an exact int: it takes the Python path */
        int overflow;
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (i == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        memcpy(&bits[0], &i, 8);
        return 1;
    }
    if (PyComplex_CheckExact(v)) {
        Py_complex c = PyComplex_AsCComplex(v);
        memcpy(&bits[0], &c.real, 8);
        memcpy(&bits[1], &c.imag, 8);
        return 1;
    }
    return 0;
}

/* The 0-d array of scalar v for an operation with tensor t (dtype descr), borrowed;
 * NULL (no error set) when the Python path must decide. */
static PyObject *weak_scalar(PyObject *v, PyObject *t, PyArray_Descr *descr)
{
    unsigned long long bits[2];
    if (!scalar_bits(v, bits))
        return NULL;
    size_t h = ((size_t)descr >> 4) ^ (size_t)(bits[0] * 0x9E3779B97F4A7C15ULL >> 32) ^
               (size_t)(bits[1] * 0xBF58476D1CE4E5B9ULL >> 40) ^ ((size_t)Py_TYPE(v) >> 6);
    ScalarSlot *s = &g_scalars[h % SCALAR_SLOTS];
    if (s->array != NULL && s->descr == descr && s->type == Py_TYPE(v) &&
        s->bits[0] == bits[0] && s->bits[1] == bits[1])
        return s->array;
    PyObject *a = PyObject_CallFunctionObjArgs(g_scalar_for, v, t, NULL);
    if (a == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (Py_TYPE(a) != &PyArray_Type || PyArray_NDIM((PyArrayObject *)a) != 0 ||
        PyArray_DESCR((PyArrayObject *)a) != descr) {
        Py_DECREF(a);
        return NULL;
    }
    Py_XSETREF(s->array, a);
    s->descr = descr;
    s->type = Py_TYPE(v);
    s->bits[0] = bits[0];
    s->bits[1] = bits[1];
    return a;
}

/* ---------------------------------------------------------------- pieces */
/* The NumPy array of a plain Tensor (exact type, C-contiguous, aligned), borrowed; NULL
 * when the Python path must take it. *conj: whether it reads conjugated (then its dtype
 * is complex); with conj NULL such a tensor is not plain. */
static PyArrayObject *plain_array(PyObject *t, int *conj)
{
    if (Py_TYPE(t) != g_tensor)
        return NULL;
    PyObject *data = *(PyObject **)((char *)t + g_off_data);
    PyObject *flag = *(PyObject **)((char *)t + g_off_conj);
    if (data == NULL || Py_TYPE(data) != &PyArray_Type || (flag != Py_False && conj == NULL))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)data;
    /* other layouts: the Python path picks the output's; unaligned data, its buffers */
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a))
        return NULL;
    if (conj != NULL)
        *conj = flag == Py_True;
    return a;
}

static int dtype_index(Warm *w, PyArray_Descr *d)
{
    for (int i = 0; i < w->n; i++)
        if (w->in[i] == d)
            return i;
    return -1;
}

/* fn(*args) with every floating-point error ignored (the backend's fp_ignore), or
 * without touching the error state when quiet. The ufunc runs in g_ignoring, a Context
 * holding only NumPy's error state with every error ignored: entering a made Context
 * swaps a pointer, where setting and resetting the variable costs two allocations (150
 * ns, half of a 10-element ufunc call). Of the user's error state only the error mask
 * could matter on this path (no casts, so no buffers), and it is what is replaced;
 * NumPy's memory handler, also a context variable, is its default in there. Entering
 * fails while another thread's call is inside (the ufunc released the GIL): NULL, and
 * the caller takes the Python path. */
static PyObject *call_ignoring(PyObject *fn, PyObject *const *args, size_t nargs,
                               PyObject *kwnames, int quiet)
{
    if (quiet)
        return PyObject_Vectorcall(fn, args, nargs, kwnames);
    if (PyContext_Enter(g_ignoring) < 0)
        return NULL;
    PyObject *r = PyObject_Vectorcall(fn, args, nargs, kwnames);
    if (PyContext_Exit(g_ignoring) < 0)
        Py_CLEAR(r);
    return r;
}

/* A new Tensor holding arr (stolen), as Tensor(arr) makes it. */
static PyObject *wrap(PyObject *arr)
{
    PyObject *t = g_tensor->tp_alloc(g_tensor, 0);
    if (t == NULL) {
        Py_DECREF(arr);
        return NULL;
    }
    *(PyObject **)((char *)t + g_off_data) = arr;
    Py_INCREF(Py_False);
    *(PyObject **)((char *)t + g_off_conj) = Py_False;
    return t;
}

/* The ufunc's result r (stolen) as a Tensor when it is a plain array of the expected
 * dtype (with only 0-d operands a ufunc returns a NumPy scalar), else NULL (no error
 * set). */
static PyObject *accept(PyObject *r, PyArray_Descr *expected)
{
    if (Py_TYPE(r) != &PyArray_Type || PyArray_DESCR((PyArrayObject *)r) != expected) {
        Py_DECREF(r);
        return NULL;
    }
    return wrap(r);
}

/* ---------------------------------------------------------------- the ufuncs' loops */
/* What a ufunc call comes down to for aligned, C-contiguous operands of the loop's own
 * dtypes: one call of the 1-d loop its type table lists first for those dtypes (NumPy's
 * default legacy loop selector), over a new C-order output. Calling it directly skips
 * the ufunc's dispatch -- the override checks, the dtype resolution, the loop lookup,
 * the error-state handling -- two thirds of a 10-element call. Floating-point flags the
 * loop raises are not looked at, which is the backend's errstate(all="ignore").
 * The tests compare this with the ufunc bit for bit over every table entry. */
static int ufunc_loop(PyObject *ufunc, int nin, int tin, int tout, PyUFuncGenericFunction *fn,
                      void **data)
{
    if (ufunc == NULL || Py_TYPE(ufunc) != g_ufunc_type)
        return 0;
    PyUFuncObject *u = (PyUFuncObject *)ufunc;
    if (u->nin != nin || u->nout != 1 || u->core_enabled || u->types == NULL)
        return 0;
    for (int j = 0; j < u->ntypes; j++) {
        const char *t = u->types + (Py_ssize_t)j * u->nargs;
        int match = 1;
        for (int k = 0; k < nin; k++)
            match &= t[k] == tin;
        if (match) {  /* the first listed for these inputs is the selector's choice */
            if (t[nin] != tout || u->functions[j] == NULL)
                return 0;
            *fn = u->functions[j];
            *data = u->data ? u->data[j] : NULL;
            return 1;
        }
    }
    return 0;
}

/* Entry i's loop, and for a complex dtype np.conjugate's: a tensor read conjugated is
 * conjugated a chunk at a time into a buffer the loop then reads (the backend's
 * conjugate-then-op, each byte moved from memory once). */
static void find_loop(Warm *w, int i, int nin)
{
    int tin = w->in[i]->type_num;
    if (!ufunc_loop(w->ufunc, nin, tin, w->out[i]->type_num, &w->loop[i], &w->loop_data[i]))
        w->loop[i] = NULL;
    if (!PyTypeNum_ISCOMPLEX(tin) ||
        !ufunc_loop(g_conjugate, 1, tin, tin, &w->conj_loop[i], &w->conj_data[i]))
        w->conj_loop[i] = NULL;
}

#define CONJ_CHUNK 256  /* elements per conjugated chunk: 4 KiB of complex128 */

/* The loop over n elements; operands with conj[k] set are conjugated first. */
static void loop_conj(Warm *w, int i, char **args, const npy_intp *steps, int nin,
                      const int *conj, npy_intp n)
{
    if (!conj[0] && !(nin > 1 && conj[1])) {
        w->loop[i](args, &n, steps, w->loop_data[i]);
        return;
    }
    double buf[2][CONJ_CHUNK * 2];  /* complex128-sized slots, suitably aligned */
    for (npy_intp at = 0; at < n; at += CONJ_CHUNK) {
        npy_intp m = n - at < CONJ_CHUNK ? n - at : CONJ_CHUNK;
        char *a[3];
        npy_intp s[3];
        for (int k = 0; k < nin; k++) {
            a[k] = args[k] + at * steps[k];
            s[k] = steps[k];
            if (conj[k]) {
                char *io[2] = {a[k], (char *)buf[k]};
                npy_intp cs[2] = {steps[k], steps[k]};  /* a tensor's: never 0 */
                w->conj_loop[i](io, &m, cs, w->conj_data[i]);
                a[k] = (char *)buf[k];
            }
        }
        a[nin] = args[nin] + at * steps[nin];
        s[nin] = steps[nin];
        w->loop[i](a, &m, s, w->loop_data[i]);
    }
}

/* Loop i over nin inputs of the shape of `like` (operands of 0 dimensions broadcast); a
 * new Tensor, or NULL with an error set. The caller holds the operands. */
static PyObject *run_loop(Warm *w, int i, PyArrayObject *const *ops, const int *conj, int nin,
                          PyArrayObject *like)
{
    PyArray_Descr *od = w->out[i];
    Py_INCREF(od);  /* stolen */
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, od, PyArray_NDIM(like),
                                         PyArray_DIMS(like), NULL, NULL, 0, NULL);
    if (out == NULL)
        return NULL;
    npy_intp n = PyArray_SIZE((PyArrayObject *)out);
    char *args[3];
    npy_intp steps[3];
    for (int k = 0; k < nin; k++) {
        args[k] = PyArray_BYTES(ops[k]);
        steps[k] = PyArray_NDIM(ops[k]) == PyArray_NDIM(like) ? PyArray_ITEMSIZE(ops[k]) : 0;
    }
    args[nin] = PyArray_BYTES((PyArrayObject *)out);
    steps[nin] = PyArray_ITEMSIZE((PyArrayObject *)out);
    if (n > 8192) {  /* as NumPy does, let other threads run during a long loop */
        Py_BEGIN_ALLOW_THREADS
        loop_conj(w, i, args, steps, nin, conj, n);
        Py_END_ALLOW_THREADS
    } else if (n > 0) {
        loop_conj(w, i, args, steps, nin, conj, n);
    }
    return wrap(out);
}

/* Whether entry i can run operands with these conj flags. */
static int can_run(Warm *w, int i, const int *conj, int nin)
{
    if (w->loop[i] == NULL)
        return 0;
    for (int k = 0; k < nin; k++)
        if (conj[k] && w->conj_loop[i] == NULL)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- the fast cases */
static PyObject *fast_unary(Warm *w, PyObject *const *args)
{
    int conj[1] = {0};
    PyArrayObject *a = plain_array(args[0], conj);
    int i = a ? dtype_index(w, PyArray_DESCR(a)) : -1;
    if (i < 0)
        return NULL;
    if (can_run(w, i, conj, 1))
        return run_loop(w, i, &a, conj, 1, a);
    if (conj[0])
        return NULL;
    PyObject *arg = (PyObject *)a;
    PyObject *r = call_ignoring(w->ufunc, &arg, 1, NULL, w->quiet[i]);
    return r ? accept(r, w->out[i]) : NULL;
}

static PyObject *fast_binary(Warm *w, PyObject *const *args)
{
    PyObject *x = args[w->swap], *y = args[!w->swap];  /* the ufunc's operand order */
    int conj[2] = {0, 0};
    PyArrayObject *a = plain_array(x, &conj[0]), *b = NULL, *like;
    PyObject *ops[2];
    int i;
    if (a != NULL) {
        i = dtype_index(w, PyArray_DESCR(a));
        if (i < 0)
            return NULL;
        b = plain_array(y, &conj[1]);
        if (b != NULL) {
            if (PyArray_DESCR(b) != PyArray_DESCR(a) || PyArray_NDIM(b) != PyArray_NDIM(a) ||
                !PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(b), PyArray_NDIM(a)))
                return NULL;
            ops[1] = (PyObject *)b;
        } else if ((ops[1] = weak_scalar(y, x, PyArray_DESCR(a))) == NULL) {
            return NULL;
        }
        ops[0] = (PyObject *)a;
        like = a;
    } else {  /* a scalar first: the tensor is y */
        b = plain_array(y, &conj[1]);
        if (b == NULL || (i = dtype_index(w, PyArray_DESCR(b))) < 0)
            return NULL;
        if ((ops[0] = weak_scalar(x, y, PyArray_DESCR(b))) == NULL)
            return NULL;
        ops[1] = (PyObject *)b;
        like = b;
    }
    /* held for the call: the ufunc may release the GIL, and another thread evict a
     * cached scalar meanwhile */
    Py_INCREF(ops[0]);
    Py_INCREF(ops[1]);
    PyObject *r = NULL;
    if (can_run(w, i, conj, 2)) {
        r = run_loop(w, i, (PyArrayObject **)ops, conj, 2, like);
    } else if (!conj[0] && !conj[1]) {
        r = call_ignoring(w->ufunc, ops, 2, NULL, w->quiet[i]);
        r = r ? accept(r, w->out[i]) : NULL;
    }
    Py_DECREF(ops[0]);
    Py_DECREF(ops[1]);
    return r;
}

static PyObject *fast_reduce(Warm *w, PyObject *const *args)
{
    PyArrayObject *a = plain_array(args[0], NULL);
    int i = a ? dtype_index(w, PyArray_DESCR(a)) : -1;
    if (i < 0 || PyArray_NDIM(a) > MAX_NDIM)
        return NULL;
    PyArray_Descr *od = w->out[i];
    Py_INCREF(od);  /* stolen below */
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, od, 0, NULL, NULL, NULL, 0, NULL);
    if (out == NULL)
        return NULL;
    /* what the Python path calls: ufunc.reduce(x, axis=<every axis>[, dtype=<out dtype>],
     * out=<0-d>) -- the same call, so the same order of operations */
    PyObject *call[4] = {(PyObject *)a, g_axes[PyArray_NDIM(a)], (PyObject *)od, out};
    if (!w->with_dtype)
        call[2] = out;
    PyObject *r = call_ignoring(w->ufunc, call, 1, w->with_dtype ? s_reduce_kw_dtype : s_reduce_kw,
                                w->quiet[i]);
    if (r == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(r);  /* out itself */
    return wrap(out);
}

/* ---------------------------------------------------------------- the Warm type */
static PyObject *Warm_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    Warm *w = (Warm *)self_;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (g_tensor != NULL && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) &&
        nargs == (w->kind == W_BINARY ? 2 : 1)) {
        PyObject *r = w->kind == W_UNARY ? fast_unary(w, args)
                      : w->kind == W_BINARY ? fast_binary(w, args) : fast_reduce(w, args);
        if (r != NULL) {
            w->hits++;
            return r;
        }
        PyErr_Clear();  /* the Python path raises its own error, if any */
    }
    return PyObject_Vectorcall(w->slow, args, nargsf, kwnames);
}

/* As a class attribute it binds like a function (obj.__add__ is a bound method), and
 * Python's operator slots call it unbound, with self first. */
static PyObject *Warm_descr_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int Warm_traverse(Warm *w, visitproc visit, void *arg)
{
    Py_VISIT(w->ufunc);
    Py_VISIT(w->slow);
    Py_VISIT(w->module);
    Py_VISIT(w->qualname);
    return 0;
}

static int Warm_clear(Warm *w)
{
    Py_CLEAR(w->ufunc);
    Py_CLEAR(w->slow);
    Py_CLEAR(w->module);
    Py_CLEAR(w->qualname);
    for (int i = 0; i < w->n; i++) {
        Py_CLEAR(w->in[i]);
        Py_CLEAR(w->out[i]);
    }
    w->n = 0;
    return 0;
}

static void Warm_dealloc(Warm *w)
{
    PyObject_GC_UnTrack(w);
    Warm_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyObject *Warm_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"kind", "ufunc", "slow", "dtypes", "swap", "with_dtype", NULL};
    int kind, swap = 0, with_dtype = 0;
    PyObject *ufunc, *slow, *dtypes;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iOOO|pp:Warm", kwlist, &kind, &ufunc, &slow,
                                     &dtypes, &swap, &with_dtype))
        return NULL;
    if (kind < W_UNARY || kind > W_REDUCE || !PyCallable_Check(ufunc) || !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "Warm(kind in 0..2, ufunc, slow, dtypes, swap, with_dtype)");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(dtypes, "Warm: dtypes must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_DTYPES) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "Warm: at most %d dtypes", MAX_DTYPES);
        return NULL;
    }
    Warm *w = (Warm *)type->tp_alloc(type, 0);
    if (w == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    w->vectorcall = Warm_vectorcall;
    w->kind = kind;
    w->swap = swap;
    w->with_dtype = with_dtype;
    Py_INCREF(ufunc);
    w->ufunc = ufunc;
    Py_INCREF(slow);
    w->slow = slow;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *in, *out;
        int quiet;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "O&O&p:Warm dtypes",
                              PyArray_DescrConverter, &in, PyArray_DescrConverter, &out,
                              &quiet)) {
            Py_DECREF(seq);
            Py_DECREF(w);
            return NULL;
        }
        w->in[w->n] = (PyArray_Descr *)in;
        w->out[w->n] = (PyArray_Descr *)out;
        w->quiet[w->n] = (char)quiet;
        if (kind != W_REDUCE)
            find_loop(w, w->n, kind == W_BINARY ? 2 : 1);
        w->n++;
    }
    Py_DECREF(seq);
    return (PyObject *)w;
}

/* Introspection (name, doc, signature through __wrapped__) is the Python function's. */
static PyObject *Warm_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(((Warm *)self)->slow, name);
}

static PyObject *Warm_get_slow(Warm *w, void *Py_UNUSED(c))
{
    Py_INCREF(w->slow);
    return w->slow;
}

static PyObject *Warm_get_doc(Warm *w, void *Py_UNUSED(c))
{
    return PyObject_GetAttrString(w->slow, "__doc__");
}

/* ((in dtype, out dtype, quiet, direct), ...): the table, and whether each entry calls
 * the ufunc's loop directly (else the ufunc; and only then are conjugated operands
 * declined). */
static PyObject *Warm_get_table(Warm *w, void *Py_UNUSED(c))
{
    PyObject *t = PyTuple_New(w->n);
    for (int i = 0; t != NULL && i < w->n; i++) {
        PyObject *row = Py_BuildValue("(OONN)", w->in[i], w->out[i], PyBool_FromLong(w->quiet[i]),
                                      PyBool_FromLong(w->loop[i] != NULL));
        if (row == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, row);
    }
    return t;
}

static PyObject *Warm_repr(Warm *w)
{
    return PyUnicode_FromFormat("<hipfer warm path of %R>", w->slow);
}

/* Pickled as a global, by the name it is installed under (__module__, __qualname__: set
 * by hipfer._warmpath.install; unset, they read as the wrapped function's). */
static PyObject *Warm_reduce(PyObject *self, PyObject *Py_UNUSED(a))
{
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef Warm_methods[] = {
    {"__reduce__", Warm_reduce, METH_NOARGS, "pickled by module and qualified name"},
    {NULL},
};

static PyMemberDef Warm_members[] = {
    {"hits", T_PYSSIZET, offsetof(Warm, hits), 0, "calls the fast path served"},
    {"__module__", T_OBJECT_EX, offsetof(Warm, module), 0, "the module it is installed in"},
    {"__qualname__", T_OBJECT_EX, offsetof(Warm, qualname), 0, "its name there"},
    {NULL},
};

static PyGetSetDef Warm_getset[] = {
    {"__wrapped__", (getter)Warm_get_slow, NULL, "the Python function this stands in for", NULL},
    {"__doc__", (getter)Warm_get_doc, NULL, NULL, NULL},
    {"table", (getter)Warm_get_table, NULL, "((in dtype, out dtype, quiet, direct), ...)", NULL},
    {NULL},
};

static PyTypeObject WarmType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hipfer._warm.Warm",
    .tp_basicsize = sizeof(Warm),
    .tp_dealloc = (destructor)Warm_dealloc,
    .tp_vectorcall_offset = offsetof(Warm, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = (reprfunc)Warm_repr,
    .tp_getattro = Warm_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_traverse = (traverseproc)Warm_traverse,
    .tp_clear = (inquiry)Warm_clear,
    .tp_methods = Warm_methods,
    .tp_members = Warm_members,
    .tp_getset = Warm_getset,
    .tp_descr_get = Warm_descr_get,
    .tp_new = Warm_new,
};

/* ---------------------------------------------------------------- module */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);  /* borrowed */
    if (d == NULL || Py_TYPE(d) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "init: %s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "init: %s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    return m->offset;
}

static PyObject *mod_init(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *tensor, *ufunc_type, *conjugate, *ignoring, *scalar_for;
    if (!PyArg_ParseTuple(args, "O!O!OO!O:init", &PyType_Type, &tensor, &PyType_Type, &ufunc_type,
                          &conjugate, &PyContext_Type, &ignoring, &scalar_for))
        return NULL;
    Py_ssize_t off_data = slot_offset((PyTypeObject *)tensor, "_data");
    Py_ssize_t off_conj = off_data < 0 ? -1 : slot_offset((PyTypeObject *)tensor, "_conj");
    if (off_conj < 0)
        return NULL;
    Py_INCREF(tensor);
    Py_XSETREF(g_tensor, (PyTypeObject *)tensor);
    Py_INCREF(ufunc_type);
    Py_XSETREF(g_ufunc_type, (PyTypeObject *)ufunc_type);
    Py_INCREF(conjugate);
    Py_XSETREF(g_conjugate, conjugate);
    g_off_data = off_data;
    g_off_conj = off_conj;
    Py_INCREF(ignoring);
    Py_XSETREF(g_ignoring, ignoring);
    Py_INCREF(scalar_for);
    Py_XSETREF(g_scalar_for, scalar_for);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", mod_init, METH_VARARGS,
     "init(tensor_type, ufunc_type, conjugate, ignoring, scalar_for): hipfer.Tensor, "
     "numpy.ufunc, numpy.conjugate, a Context whose NumPy error "
     "state ignores every error, and the Python function giving a weak scalar's 0-d array "
     "for a tensor (or None)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "hipfer._warm",
    "The compiled warm path of hipfer's NumPy backend (see _warm.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__warm(void)
{
    import_array();
    if (PyType_Ready(&WarmType) < 0)
        return NULL;
    for (int n = 0; n <= MAX_NDIM; n++) {
        if ((g_axes[n] = PyTuple_New(n)) == NULL)
            return NULL;
        for (int k = 0; k < n; k++)
            PyTuple_SET_ITEM(g_axes[n], k, PyLong_FromLong(k));
    }
    s_reduce_kw_dtype = Py_BuildValue("(sss)", "axis", "dtype", "out");
    s_reduce_kw = Py_BuildValue("(ss)", "axis", "out");
    if (!s_reduce_kw_dtype || !s_reduce_kw)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&WarmType);
    if (PyModule_AddObject(m, "Warm", (PyObject *)&WarmType) < 0) {
        Py_DECREF(&WarmType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
