/* MRG_RandomStreams' uniforms on the device (mrg.h's twin): thread s advances stream s of
   the int32 states (n_streams x 6, advanced in place) and writes its elements s, s +
   n_streams, s + 2 n_streams, ... < count, each the step's value times the norm in @T@, so
   every element has the bits the CPU gives it. */
{
    for (npy_int64 s = SYMPILE_GRID_START; s < used; s += SYMPILE_GRID_STEP) {
        npy_int32 state[6];
        for (int w = 0; w < 6; ++w)
            state[w] = states[6 * s + w];
        for (npy_int64 e = s; e < count; e += n_streams)
            out[e] = (@T@)sympile_mrg_step(state) * @NORM@;
        for (int w = 0; w < 6; ++w)
            states[6 * s + w] = state[w];
    }
}
