/* The error flags of a captured step (sympile/gpu/graphs.py): flags[0] is the first failing
   slot + 1 (0: none), flags[1] that slot's code, flags[2 + i] slot i's code in this step.
   check = 0 clears the slots' codes (the step's first launch); check = 1 (its last) records
   the first slot that reported an error, unless an earlier step's error is recorded: a
   recorded error stays until the host reads and clears it, and keeps every later commit
   from writing (step_commit.cu). */
{
    for (npy_int64 t = SYMPILE_GRID_START; t < (check ? 1 : slots); t += SYMPILE_GRID_STEP) {
        if (!check) {
            flags[2 + t] = 0;
        } else if (flags[0] == 0) {
            for (npy_int64 s = 0; s < slots; s++) {
                if (flags[2 + s]) {
                    flags[0] = (int)(s + 1);
                    flags[1] = flags[2 + s];
                    break;
                }
            }
        }
    }
}
