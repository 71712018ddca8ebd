@target@ static inline @V@ sympile_skinny_load_@s@(const @T@ *p) { return @load@; }
@target@ static inline @V@ sympile_skinny_mload_@s@(const @T@ *p, @M@ m) { return @mload@; }
@target@ static inline void sympile_skinny_store_@s@(@T@ *p, @V@ v) { @store@; }
@target@ static inline void sympile_skinny_mstore_@s@(@T@ *p, @M@ m, @V@ v) { @mstore@; }
@target@ static inline @V@ sympile_skinny_set1_@s@(@T@ s) { return @set1@; }
@target@ static inline @V@ sympile_skinny_zero_@s@(void) { return @zero@; }
@target@ static inline @V@ sympile_skinny_fma_@s@(@V@ x, @V@ y, @V@ z) { return @fma@; }
@target@ static inline @V@ sympile_skinny_mul_@s@(@V@ x, @V@ y) { return @mul@; }
@target@ static inline @V@ sympile_skinny_add_@s@(@V@ x, @V@ y) { return @add@; }
@target@ static inline @T@ sympile_skinny_sum_@s@(@V@ v) { return @sum@; }
@target@ static inline @M@ sympile_skinny_mask_@s@(int n) { return @mask@; }
