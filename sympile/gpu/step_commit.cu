/* A captured step's commit of one update (sympile/gpu/graphs.py): the new value's words
   copied into the shared variable's buffer, unless the step (or an earlier one not yet read
   by the host) reported an error (flags[0], step_flags.cu), so that a failed step changes
   no shared variable. */
{
    if (flags[0] != 0)
        return;
    for (npy_int64 t = SYMPILE_GRID_START; t < n; t += SYMPILE_GRID_STEP)
        target[t] = source[t];
}
