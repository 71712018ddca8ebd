/* The end of each module's main unit: its init function. @BLAS_LOADS@ loads the BLAS
   routines its nodes call (one line); @GOVERNOR_START@ starts the thread governor's first
   window where the module has one (thread_governor.c). */
static struct PyModuleDef sympile_module = {
    PyModuleDef_HEAD_INIT, SYMPILE_MODULE_NAME, NULL, -1, NULL
};

PyMODINIT_FUNC SYMPILE_PYINIT(void)
{
    if (sympile_import_numpy() < 0)
        return NULL;
    if (PyType_Ready(&sympile_ProgramType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&sympile_module);
    if (module == NULL)
        return NULL;
@BLAS_LOADS@
    @GOVERNOR_START@
    Py_INCREF(&sympile_ProgramType);
    if (PyModule_AddObject(module, "Program", (PyObject *)&sympile_ProgramType) < 0)
        goto fail;
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
