/* kserve_compile/datacopy.py's deep copy in C: new dicts and lists all the way down, the immutable leaves shared.
 *
 * Takes exact dicts (str keys), lists, tuples (copied as lists), strs, ints, floats, bools and None; anything else,
 * or nesting deeper than MAX_DEPTH, raises Unsupported and the caller copies the general way.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_DEPTH 256

static PyObject *Unsupported;

static PyObject *copy_value(PyObject *v, int depth);

static int is_leaf(PyObject *v) {
    return PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || v == Py_None || PyBool_Check(v) ||
           PyFloat_CheckExact(v);
}

static PyObject *copy_dict(PyObject *d, int depth) {
    /* PyDict_Copy copies the table in one go; container values are then replaced by their copies in place (the
     * same keys: no resize). */
    PyObject *out = PyDict_Copy(d);
    if (out == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) {
            Py_DECREF(out);
            PyErr_SetNone(Unsupported);
            return NULL;
        }
        if (is_leaf(v)) continue;
        PyObject *c = copy_value(v, depth + 1);
        if (c == NULL || PyDict_SetItem(out, k, c) < 0) {
            Py_XDECREF(c);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(c);
    }
    return out;
}

static PyObject *copy_items(PyObject *seq, int depth) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i];
        PyObject *c;
        if (is_leaf(v)) {
            Py_INCREF(v);
            c = v;
        } else {
            c = copy_value(v, depth + 1);
            if (c == NULL) {
                Py_DECREF(out);
                return NULL;
            }
        }
        PyList_SET_ITEM(out, i, c);
    }
    return out;
}

static PyObject *copy_value(PyObject *v, int depth) {
    if (depth > MAX_DEPTH) {
        PyErr_SetNone(Unsupported);
        return NULL;
    }
    if (PyDict_CheckExact(v)) return copy_dict(v, depth);
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) return copy_items(v, depth);
    if (is_leaf(v)) {
        Py_INCREF(v);
        return v;
    }
    PyErr_SetNone(Unsupported);
    return NULL;
}

static PyObject *py_clone(PyObject *self, PyObject *v) { return copy_value(v, 0); }

static PyMethodDef methods[] = {
    {"clone", py_clone, METH_O, "clone(data): a deep copy of JSON-shaped data, leaves shared, tuples as lists."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_datacopy_c", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__datacopy_c(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Unsupported = PyErr_NewException("kserve_compile._datacopy_c.Unsupported", NULL, NULL);
    if (Unsupported == NULL || PyModule_AddObjectRef(m, "Unsupported", Unsupported) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
