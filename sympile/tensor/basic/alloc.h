/* Alloc's entry point (alloc.c, a library unit compiled once per cache; alloc_c.py) and its
   nodes' table: the op's name, the output's rank and type, and which axes of the value
   are checked against the output's (those its type does not say have length 1). */
typedef struct {
    const char *op;
    int ndim, typenum;
    const unsigned char *checked;
} SympileAlloc;

int @NAME@_alloc_node(PyObject *const *cells, const void *data);
