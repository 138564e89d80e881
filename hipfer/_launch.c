/* hipfer._launch: the compiled kernel-launch path of the GPU backend.
 *
 * A warm elementwise call on a tiny tensor is bound by host time, and most of it went
 * to cupy.RawKernel's argument handling: each NumPy scalar argument is wrapped in a
 * fresh Python object, and the launch goes through two Python-level calls. Here a
 * Kernel packs its arguments in C, straight from the objects the backend already
 * holds, and calls the driver's launch (cuLaunchKernel or hipModuleLaunchKernel, which
 * have the same signature) with the GIL released.
 *
 *   init(array_type, current_stream, launch_address)   once, from hipfer.backends.cupy
 *   k = Kernel(function_handle, raw)                    raw: the cupy.RawKernel
 *   k(grid, block, args, shared_mem=0, align=None)      what raw(grid, block, args, ...) does
 *
 * align, when given, holds one mask per leading argument: the launch happens only when
 * every one of those pointers p has p & mask == 0 (the vector kernels' 16-byte accesses),
 * and the call returns whether it launched -- the caller then picks another kernel.
 *
 * Arguments are taken as cupy.RawKernel takes them: an array of array_type passes its
 * device pointer (a.data.ptr); None a null pointer; bool one byte; int int64; float
 * double; complex two doubles; anything with the buffer protocol (NumPy scalars,
 * structured np.void, size-1 ndarrays) its bytes. When the driver refuses the launch
 * (no current context in a new thread, another device's function) the call is handed
 * to raw, which sets the context up or raises CuPy's error: nothing is skipped.
 *
 * No GPU headers are needed: the launch function comes in as an address (ctypes), so
 * the module builds with any C compiler and is tested on the CPU with a recording stub.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, void *stream,
                         void **params, void **extra);

#define MAX_ARGS 64
#define ARG_BYTES 4096 /* all by-value arguments of one launch (CUDA's own limit) */

static launch_fn g_launch = NULL;
static PyTypeObject *g_array_type = NULL; /* cupy.ndarray's base */
static PyObject *g_current_stream = NULL; /* cupy.cuda.get_current_stream */
static PyObject *s_data, *s_ptr, *s_shared_mem, *s_align;

typedef struct {
    PyObject_HEAD
    void *func;
    PyObject *raw;
    vectorcallfunc vectorcall;
} Kernel;

/* Device pointer of a cupy array: a.data.ptr. */
static int array_ptr(PyObject *a, void **out)
{
    PyObject *mem = PyObject_GetAttr(a, s_data);
    if (mem == NULL)
        return -1;
    PyObject *p = PyObject_GetAttr(mem, s_ptr);
    Py_DECREF(mem);
    if (p == NULL)
        return -1;
    *out = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

/* Append one argument's bytes to store (16-byte slots); params[i] points at them. */
static int pack_arg(PyObject *a, Py_ssize_t i, unsigned char *store, size_t *used, void **param)
{
    unsigned char tmp[16];
    const void *src = tmp;
    size_t len;
    Py_buffer view;
    int have_view = 0;

    if (a == Py_None) {
        memset(tmp, 0, 8);
        len = 8;
    } else if (g_array_type != NULL && PyObject_TypeCheck(a, g_array_type)) {
        void *p;
        if (array_ptr(a, &p) < 0)
            return -1;
        memcpy(tmp, &p, sizeof p);
        len = sizeof p;
    } else if (PyBool_Check(a)) {
        tmp[0] = (a == Py_True);
        len = 1;
    } else if (PyLong_CheckExact(a)) {
        long long v = PyLong_AsLongLong(a);
        if (v == -1 && PyErr_Occurred())
            return -1;
        memcpy(tmp, &v, 8);
        len = 8;
    } else if (PyFloat_CheckExact(a)) {
        double v = PyFloat_AS_DOUBLE(a);
        memcpy(tmp, &v, 8);
        len = 8;
    } else if (PyComplex_CheckExact(a)) {
        double v[2] = {PyComplex_RealAsDouble(a), PyComplex_ImagAsDouble(a)};
        memcpy(tmp, v, 16);
        len = 16;
    } else if (PyObject_CheckBuffer(a)) {
        if (PyObject_GetBuffer(a, &view, PyBUF_SIMPLE) < 0)
            return -1;
        have_view = 1;
        src = view.buf;
        len = (size_t)view.len;
    } else {
        PyErr_Format(PyExc_TypeError, "kernel argument %zd: cannot pass a %.100s by value",
                     i, Py_TYPE(a)->tp_name);
        return -1;
    }
    size_t at = (*used + 15) & ~(size_t)15;
    if (len == 0 || at + len > ARG_BYTES) {
        if (have_view)
            PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "kernel argument %zd: %zu bytes (the arguments take "
                     "at most %d, none may be empty)", i, len, ARG_BYTES);
        return -1;
    }
    memcpy(store + at, src, len);
    if (have_view)
        PyBuffer_Release(&view);
    *param = store + at;
    *used = at + len;
    return 0;
}

/* A non-null address from a Python int (a function handle, the launch function). */
static int address_of(PyObject *obj, const char *what, void **out)
{
    *out = PyLong_AsVoidPtr(obj);
    if (*out != NULL)
        return 0;
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s: null address", what);
    return -1;
}

/* grid or block: a tuple of 1 to 3 positive ints. */
static int dims(PyObject *t, const char *what, unsigned d[3])
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 1 || PyTuple_GET_SIZE(t) > 3) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of 1 to 3 ints", what);
        return -1;
    }
    d[0] = d[1] = d[2] = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(t); k++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, k));
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 1 || v > 0x7fffffffLL) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] = %lld is out of range", what, k, v);
            return -1;
        }
        d[k] = (unsigned)v;
    }
    return 0;
}

static PyObject *current_stream(void)
{
    PyObject *s = PyObject_CallNoArgs(g_current_stream);
    if (s == NULL)
        return NULL;
    PyObject *p = PyObject_GetAttr(s, s_ptr);
    Py_DECREF(s);
    return p;
}

/* The launch through cupy.RawKernel after the driver refused ours: CuPy makes the
 * device's context current first, and raises its own error if the launch fails again. */
static int retry_with_raw(PyObject *raw, PyObject *const *args, PyObject *shared_obj)
{
    PyObject *pos = PyTuple_Pack(3, args[0], args[1], args[2]);
    PyObject *kw = shared_obj ? Py_BuildValue("{OO}", s_shared_mem, shared_obj) : NULL;
    PyObject *r = (pos && (kw || !shared_obj)) ? PyObject_Call(raw, pos, kw) : NULL;
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *Kernel_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames)
{
    Kernel *self = (Kernel *)self_;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *shared_obj = NULL, *align = NULL;
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k);
            if (PyUnicode_Compare(name, s_shared_mem) == 0)
                shared_obj = args[nargs + k];
            else if (PyUnicode_Compare(name, s_align) == 0)
                align = args[nargs + k];
            else {
                PyErr_Format(PyExc_TypeError, "Kernel() got an unexpected keyword %R", name);
                return NULL;
            }
        }
    }
    if (nargs == 4 && shared_obj == NULL)
        shared_obj = args[3];
    else if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "Kernel(grid, block, args, shared_mem=0, align=None)");
        return NULL;
    }
    if (align == Py_None)
        align = NULL;
    if (align != NULL && !PyTuple_Check(align)) {
        PyErr_SetString(PyExc_TypeError, "align must be a tuple of ints (one mask per leading argument)");
        return NULL;
    }
    if (g_launch == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "hipfer._launch.init() was not called");
        return NULL;
    }
    unsigned grid[3], block[3], shared = 0;
    if (dims(args[0], "grid", grid) < 0 || dims(args[1], "block", block) < 0)
        return NULL;
    if (shared_obj != NULL) {
        unsigned long v = PyLong_AsUnsignedLong(shared_obj);
        if (v == (unsigned long)-1 && PyErr_Occurred())
            return NULL;
        shared = (unsigned)v;
    }
    PyObject *seq = PySequence_Fast(args[2], "the kernel arguments must be a tuple or list");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_ARGS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%zd kernel arguments (at most %d)", n, MAX_ARGS);
        return NULL;
    }
    _Alignas(16) unsigned char store[ARG_BYTES];
    void *params[MAX_ARGS + 1];
    size_t used = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pack_arg(items[i], i, store, &used, &params[i]) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    if (align != NULL) {
        Py_ssize_t na = PyTuple_GET_SIZE(align);
        if (na > n) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "%zd alignment masks for %zd arguments", na, n);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < na; i++) {
            unsigned long long m = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(align, i));
            if (m == (unsigned long long)-1 && PyErr_Occurred()) {
                Py_DECREF(seq);
                return NULL;
            }
            if (!PyObject_TypeCheck(items[i], g_array_type)) {
                Py_DECREF(seq);
                PyErr_Format(PyExc_TypeError, "align: kernel argument %zd is not an array", i);
                return NULL;
            }
            uintptr_t p;
            memcpy(&p, params[i], sizeof p); /* the packed device pointer */
            if (p & m) {
                Py_DECREF(seq);
                Py_RETURN_FALSE;
            }
        }
    }
    PyObject *sp = current_stream();
    void *stream = sp ? PyLong_AsVoidPtr(sp) : NULL;
    Py_XDECREF(sp);
    if (PyErr_Occurred()) {
        Py_DECREF(seq);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = g_launch(self->func, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                  stream, params, NULL);
    Py_END_ALLOW_THREADS
    Py_DECREF(seq); /* the arrays stay alive until here: the caller holds them anyway */
    if (rc != 0 && retry_with_raw(self->raw, args, shared_obj) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *Kernel_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *handle, *raw;
    static char *names[] = {"handle", "raw", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:Kernel", names, &handle, &raw))
        return NULL;
    void *func;
    if (address_of(handle, "Kernel: function handle", &func) < 0)
        return NULL;
    Kernel *self = (Kernel *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->func = func;
    Py_INCREF(raw);
    self->raw = raw;
    self->vectorcall = Kernel_vectorcall;
    return (PyObject *)self;
}

static void Kernel_dealloc(Kernel *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->raw);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Kernel_traverse(Kernel *self, visitproc visit, void *arg)
{
    Py_VISIT(self->raw);
    return 0;
}

static PyObject *Kernel_get_handle(Kernel *self, void *Py_UNUSED(closure))
{
    return PyLong_FromVoidPtr(self->func);
}

static PyObject *Kernel_get_raw(Kernel *self, void *Py_UNUSED(closure))
{
    Py_INCREF(self->raw);
    return self->raw;
}

static PyObject *Kernel_repr(Kernel *self)
{
    return PyUnicode_FromFormat("hipfer._launch.Kernel(%p, %R)", self->func, self->raw);
}

static PyGetSetDef Kernel_getset[] = {
    {"handle", (getter)Kernel_get_handle, NULL, "the driver's function handle", NULL},
    {"raw", (getter)Kernel_get_raw, NULL, "the cupy.RawKernel this launches", NULL},
    {NULL},
};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hipfer._launch.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_vectorcall_offset = offsetof(Kernel, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = (reprfunc)Kernel_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)Kernel_traverse,
    .tp_getset = Kernel_getset,
    .tp_new = Kernel_new,
    .tp_doc = "Kernel(handle, raw)(grid, block, args, shared_mem=0, align=None): launch on the "
              "current stream; returns False (nothing launched) when a pointer misses its align mask",
};

static PyObject *mod_init(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *array_type, *stream_fn, *address;
    if (!PyArg_ParseTuple(args, "OOO:init", &array_type, &stream_fn, &address))
        return NULL;
    if (!PyType_Check(array_type) || !PyCallable_Check(stream_fn)) {
        PyErr_SetString(PyExc_TypeError, "init(array_type, current_stream, launch_address)");
        return NULL;
    }
    void *fn;
    if (address_of(address, "init: launch function", &fn) < 0)
        return NULL;
    Py_INCREF(array_type);
    Py_XSETREF(g_array_type, (PyTypeObject *)array_type);
    Py_INCREF(stream_fn);
    Py_XSETREF(g_current_stream, stream_fn);
    g_launch = (launch_fn)fn;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", mod_init, METH_VARARGS,
     "init(array_type, current_stream, launch_address): the array type whose .data.ptr "
     "is passed, a callable giving the current stream (with .ptr), and the address of "
     "cuLaunchKernel / hipModuleLaunchKernel"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "hipfer._launch",
    "The compiled kernel-launch path of hipfer's GPU backend (see _launch.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__launch(void)
{
    if (PyType_Ready(&KernelType) < 0)
        return NULL;
    s_data = PyUnicode_InternFromString("data");
    s_ptr = PyUnicode_InternFromString("ptr");
    s_shared_mem = PyUnicode_InternFromString("shared_mem");
    s_align = PyUnicode_InternFromString("align");
    if (!s_data || !s_ptr || !s_shared_mem || !s_align)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
