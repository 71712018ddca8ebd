/* The error flags of a captured step (sympile/gpu/graphs.py): flags[0] is the first failing
   slot + 1 (0: none), flags[1] that slot's code, flags[2] the number of the replay it failed
   in, flags[3] the replays so far, flags[4 + i] slot i's code in this replay.
   check = 0 clears the slots' codes (the step's first launch); check = 1 (its last) counts
   the replay and records the first slot that reported an error, unless an earlier replay's
   error is recorded: a recorded error stays until the host reads and clears it, and keeps
   every later commit from writing (step_commit.cu). */
{
    for (npy_int64 t = SYMPILE_GRID_START; t < (check ? 1 : slots); t += SYMPILE_GRID_STEP) {
        if (!check) {
            flags[4 + t] = 0;
            continue;
        }
        flags[3] += 1;
        if (flags[0] == 0) {
            for (npy_int64 s = 0; s < slots; s++) {
                if (flags[4 + s]) {
                    flags[0] = (int)(s + 1);
                    flags[1] = flags[4 + s];
                    flags[2] = flags[3];
                    break;
                }
            }
        }
    }
}
