/* The structural walk of kserve_compile/emit/yaml_text.py in C: the same bytes in about half the time.
 *
 * Only the walk is here: which text a string, a key or a float becomes is still decided by the Python helpers
 * (_scalar, _literal, _prefix, _value), called once per distinct string through the same per-call caches. The
 * walk takes exact dicts, lists, strs, ints, bools, floats and None; anything else (tuples, Mapping or str
 * subclasses, non-str keys, very deep nesting) raises Unsupported and the caller writes the stream in Python,
 * which also produces every error message. Lines are collected as references to cached strings and joined once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_DEPTH 128

typedef struct {
    PyObject *out;     /* list of str pieces */
    PyObject *vc;      /* str -> rendered form or LITERAL; (str, indent) -> literal text */
    PyObject *kc;      /* key -> rendered key */
    PyObject *pc;      /* indent -> {key -> line prefix} */
    PyObject *scalar;  /* _scalar(s, vc) */
    PyObject *literal; /* _literal(s, indent, vc) */
    PyObject *prefix;  /* _prefix(k, indent, kc, pk) */
    PyObject *value;   /* _value(v, indent, vc) */
    PyObject *LITERAL; /* the "write as a literal block" marker */
    PyObject *indents[MAX_DEPTH + 2];
    PyObject *dashes[MAX_DEPTH + 2];
} Emitter;

static PyObject *Unsupported;
static PyObject *S_NL, *S_SP, *S_EMPTY_MAP, *S_EMPTY_SEQ, *S_DASH_EMPTY_MAP, *S_DASH_EMPTY_SEQ, *S_DOC, *S_DOC_EMPTY,
    *S_NULL, *S_TRUE, *S_FALSE, *S_DASH;

static int unsupported(void) {
    PyErr_SetNone(Unsupported);
    return -1;
}

static int put(Emitter *e, PyObject *piece) { return PyList_Append(e->out, piece); }

/* Steals the reference to piece. */
static int put_new(Emitter *e, PyObject *piece) {
    if (piece == NULL) return -1;
    int rc = PyList_Append(e->out, piece);
    Py_DECREF(piece);
    return rc;
}

static PyObject *indent_at(Emitter *e, int depth) {
    if (e->indents[depth] == NULL) {
        PyObject *two = PyUnicode_FromString("  ");
        if (two == NULL) return NULL;
        e->indents[depth] = PySequence_Repeat(two, depth);
        Py_DECREF(two);
    }
    return e->indents[depth];
}

static PyObject *dash_at(Emitter *e, int depth) {
    if (e->dashes[depth] == NULL) {
        PyObject *indent = indent_at(e, depth);
        if (indent == NULL) return NULL;
        e->dashes[depth] = PyUnicode_Concat(indent, S_DASH);
    }
    return e->dashes[depth];
}

/* The rendered form of string v (borrowed from the cache, or LITERAL). */
static PyObject *scalar_of(Emitter *e, PyObject *v) {
    PyObject *s = PyDict_GetItemWithError(e->vc, v);
    if (s != NULL || PyErr_Occurred()) return s;
    s = PyObject_CallFunctionObjArgs(e->scalar, v, e->vc, NULL);
    if (s == NULL) return NULL;
    Py_DECREF(s); /* the cache holds it */
    return s;
}

/* Writes the text of a non-string scalar (int, bool, None, float) and a line break. */
static int put_other_scalar(Emitter *e, PyObject *v, int inner) {
    if (PyLong_CheckExact(v)) {
        if (put_new(e, PyObject_Str(v)) < 0) return -1;
    } else if (v == Py_None) {
        if (put(e, S_NULL) < 0) return -1;
    } else if (v == Py_True) {
        if (put(e, S_TRUE) < 0) return -1;
    } else if (v == Py_False) {
        if (put(e, S_FALSE) < 0) return -1;
    } else if (PyFloat_CheckExact(v)) {
        PyObject *indent = indent_at(e, inner);
        if (indent == NULL) return -1;
        if (put_new(e, PyObject_CallFunctionObjArgs(e->value, v, indent, e->vc, NULL)) < 0) return -1;
    } else {
        return unsupported();
    }
    return put(e, S_NL);
}

/* Writes a string value after "key:" or "- ": " text\n" (lead is " " after a key, nothing after a dash). */
static int put_string(Emitter *e, PyObject *v, int inner, int after_key) {
    PyObject *s = scalar_of(e, v);
    if (s == NULL) return -1;
    if (after_key && put(e, S_SP) < 0) return -1;
    if (s == e->LITERAL) {
        PyObject *indent = indent_at(e, inner);
        if (indent == NULL) return -1;
        return put_new(e, PyObject_CallFunctionObjArgs(e->literal, v, indent, e->vc, NULL));
    }
    if (put(e, s) < 0) return -1;
    return put(e, S_NL);
}

static int emit_mapping(Emitter *e, PyObject *d, int depth, PyObject *first);
static int emit_sequence(Emitter *e, PyObject *items, int depth, PyObject *first);

/* A line's start: line_start itself, or `first` in place of the depth's indent (a sequence item's dash). */
static int put_start(Emitter *e, PyObject *line_start, PyObject *first, int depth) {
    if (first == NULL) return put(e, line_start);
    if (put(e, first) < 0) return -1;
    Py_ssize_t cut = 2 * (Py_ssize_t)depth;
    return put_new(e, PyUnicode_Substring(line_start, cut, PyUnicode_GET_LENGTH(line_start)));
}

static int emit_mapping(Emitter *e, PyObject *d, int depth, PyObject *first) {
    if (depth > MAX_DEPTH) return unsupported();
    PyObject *indent = indent_at(e, depth);
    if (indent == NULL) return -1;
    PyObject *pk = PyDict_GetItemWithError(e->pc, indent);
    if (pk == NULL) {
        if (PyErr_Occurred()) return -1;
        pk = PyDict_New();
        if (pk == NULL) return -1;
        int rc = PyDict_SetItem(e->pc, indent, pk);
        Py_DECREF(pk);
        if (rc < 0) return -1;
    }
    PyObject *keys = PyDict_Keys(d);
    if (keys == NULL) return -1;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(keys, i))) {
            Py_DECREF(keys);
            return unsupported();
        }
    }
    if (n > 1 && PyList_Sort(keys) < 0) {
        Py_DECREF(keys);
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        PyObject *v = PyDict_GetItemWithError(d, k);
        if (v == NULL) {
            rc = PyErr_Occurred() ? -1 : unsupported(); /* changed under us */
            break;
        }
        PyObject *p = PyDict_GetItemWithError(pk, k);
        if (p == NULL) {
            if (PyErr_Occurred()) {
                rc = -1;
                break;
            }
            p = PyObject_CallFunctionObjArgs(e->prefix, k, indent, e->kc, pk, NULL);
            if (p == NULL) {
                rc = -1;
                break;
            }
            Py_DECREF(p); /* pk holds it */
        }
        Py_INCREF(v);
        Py_INCREF(p);
        if ((rc = put_start(e, p, i == 0 ? first : NULL, depth)) == 0) {
            if (PyUnicode_CheckExact(v)) {
                rc = put_string(e, v, depth + 1, 1);
            } else if (PyDict_CheckExact(v)) {
                if (PyDict_GET_SIZE(v) == 0) {
                    rc = put(e, S_EMPTY_MAP);
                } else if ((rc = put(e, S_NL)) == 0) {
                    rc = emit_mapping(e, v, depth + 1, NULL);
                }
            } else if (PyList_CheckExact(v)) {
                if (PyList_GET_SIZE(v) == 0) {
                    rc = put(e, S_EMPTY_SEQ);
                } else if ((rc = put(e, S_NL)) == 0) {
                    rc = emit_sequence(e, v, depth, NULL);
                }
            } else if ((rc = put(e, S_SP)) == 0) {
                rc = put_other_scalar(e, v, depth + 1);
            }
        }
        Py_DECREF(p);
        Py_DECREF(v);
    }
    Py_DECREF(keys);
    return rc;
}

static int emit_sequence(Emitter *e, PyObject *items, int depth, PyObject *first) {
    if (depth > MAX_DEPTH) return unsupported();
    PyObject *dash = dash_at(e, depth);
    if (dash == NULL) return -1;
    PyObject *first_dash = NULL;
    if (first != NULL) {
        first_dash = PyUnicode_Concat(first, S_DASH);
        if (first_dash == NULL) return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items) && rc == 0; i++) {
        PyObject *v = PyList_GET_ITEM(items, i);
        PyObject *d = (i == 0 && first_dash != NULL) ? first_dash : dash;
        Py_INCREF(v);
        if (PyDict_CheckExact(v) && PyDict_GET_SIZE(v) > 0) {
            rc = emit_mapping(e, v, depth + 1, d);
        } else if (PyList_CheckExact(v) && PyList_GET_SIZE(v) > 0) {
            rc = emit_sequence(e, v, depth + 1, d);
        } else if ((rc = put(e, d)) == 0) {
            if (PyUnicode_CheckExact(v)) {
                rc = put_string(e, v, depth + 1, 0);
            } else if (PyDict_CheckExact(v)) {
                rc = put(e, S_DASH_EMPTY_MAP);
            } else if (PyList_CheckExact(v)) {
                rc = put(e, S_DASH_EMPTY_SEQ);
            } else {
                rc = put_other_scalar(e, v, depth + 1);
            }
        }
        Py_DECREF(v);
    }
    Py_XDECREF(first_dash);
    return rc;
}

static PyObject *dump(PyObject *self, PyObject *args) {
    PyObject *objs;
    Emitter e;
    memset(&e, 0, sizeof e);
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOOOO:dump", &PyList_Type, &objs, &PyDict_Type, &e.vc, &PyDict_Type, &e.kc,
                          &PyDict_Type, &e.pc, &e.scalar, &e.literal, &e.prefix, &e.value, &e.LITERAL))
        return NULL;
    e.out = PyList_New(0);
    if (e.out == NULL) return NULL;
    int rc = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(objs) && rc == 0; i++) {
        PyObject *obj = PyList_GET_ITEM(objs, i);
        Py_INCREF(obj);
        if (!PyDict_CheckExact(obj)) {
            rc = unsupported();
        } else if (PyDict_GET_SIZE(obj) == 0) {
            rc = put(&e, S_DOC_EMPTY);
        } else if ((rc = put(&e, S_DOC)) == 0) {
            rc = emit_mapping(&e, obj, 0, NULL);
        }
        Py_DECREF(obj);
    }
    PyObject *text = NULL;
    if (rc == 0) {
        PyObject *empty = PyUnicode_FromString("");
        if (empty != NULL) {
            text = PyUnicode_Join(empty, e.out);
            Py_DECREF(empty);
        }
    }
    Py_DECREF(e.out);
    for (int i = 0; i < MAX_DEPTH + 2; i++) {
        Py_XDECREF(e.indents[i]);
        Py_XDECREF(e.dashes[i]);
    }
    return text;
}

static PyMethodDef methods[] = {
    {"dump", dump, METH_VARARGS,
     "dump(objs, vc, kc, pc, scalar, literal, prefix, value, LITERAL) -> str: the YAML stream of a list of dicts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_yaml_c", NULL, -1, methods, NULL, NULL, NULL, NULL};

static int constant(PyObject **slot, const char *text) {
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__yaml_c(void) {
    if (constant(&S_NL, "\n") < 0 || constant(&S_SP, " ") < 0 || constant(&S_EMPTY_MAP, " {}\n") < 0 ||
        constant(&S_EMPTY_SEQ, " []\n") < 0 || constant(&S_DASH_EMPTY_MAP, "{}\n") < 0 ||
        constant(&S_DASH_EMPTY_SEQ, "[]\n") < 0 || constant(&S_DOC, "---\n") < 0 ||
        constant(&S_DOC_EMPTY, "---\n{}\n") < 0 || constant(&S_NULL, "null") < 0 || constant(&S_TRUE, "true") < 0 ||
        constant(&S_FALSE, "false") < 0 || constant(&S_DASH, "- ") < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Unsupported = PyErr_NewException("kserve_compile.emit._yaml_c.Unsupported", NULL, NULL);
    if (Unsupported == NULL || PyModule_AddObjectRef(m, "Unsupported", Unsupported) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
