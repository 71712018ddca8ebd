/* psi(x) (scipy.special.psi): the reflection psi(1 - x) - pi / tan(pi x) below 0, the
   recurrence psi(x) = psi(x + 1) - 1 / x up to 10, then the asymptotic series
   log(x) - 1 / (2x) - sum B_2k / (2k x^2k). */
static double sympile_digamma(double x)
{
    double reflection = 0.0, total = 0.0;
    if (isnan(x) || x == -INFINITY)
        return NAN;
    if (x == 0)
        return copysign(INFINITY, -x);
    if (x < 0) {
        /* tan(pi x) from x's distance to the nearest integer (exact), so that pi x is not
           rounded and x near a pole keeps its digits. */
        double fraction = x - nearbyint(x);
        if (fraction == 0)
            return NAN;
        reflection = fabs(fraction) == 0.5 ? 0.0
            : 3.14159265358979323846 / tan(3.14159265358979323846 * fraction);
        x = 1.0 - x;
    }
    while (x < 10.0) {
        total -= 1.0 / x;
        x += 1.0;
    }
    if (x == INFINITY)
        return INFINITY;
    double inverse_square = 1.0 / (x * x);
    double series = inverse_square * (1.0 / 12 - inverse_square * (1.0 / 120
        - inverse_square * (1.0 / 252 - inverse_square * (1.0 / 240
        - inverse_square * (1.0 / 132 - inverse_square * (691.0 / 32760
        - inverse_square * (1.0 / 12)))))));
    return total + log(x) - 0.5 / x - series - reflection;
}
