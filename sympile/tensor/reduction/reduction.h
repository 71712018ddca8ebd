/* A reduction node's table (careduce_c.py): its input's rank, the axes it reduces, and its
   name for the message of an empty axis (NULL: it has a value for one). */
typedef struct {
    int ndim;
    const int *reduced;
    const char *op;
} SympileReduction;
