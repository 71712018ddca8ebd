/* polygamma(1, x) (scipy's): inf at 0 and the negative integers; the reflection
   pi^2 / sin^2(pi x) - psi1(1 - x) below 0, the recurrence psi1(x) = psi1(x + 1) + 1 / x^2
   up to 10, then the asymptotic series 1/x + 1/(2x^2) + sum B_2k / x^(2k+1). */
static double sympile_trigamma(double x)
{
    double total = 0.0, sign = 1.0;
    if (isnan(x))
        return NAN;
    if (x == -INFINITY)
        return INFINITY;
    if (x <= 0 && x == floor(x))
        return INFINITY;
    if (x < 0) {
        double sine = sin(3.14159265358979323846 * (x - nearbyint(x)));
        total = 9.86960440108935861883 / (sine * sine);
        sign = -1.0;
        x = 1.0 - x;
    }
    double recurrence = 0.0;
    while (x < 10.0) {
        recurrence += 1.0 / (x * x);
        x += 1.0;
    }
    if (x == INFINITY)
        return total;
    double inverse = 1.0 / x, inverse_square = inverse * inverse;
    double series = inverse + 0.5 * inverse_square + inverse * inverse_square * (1.0 / 6
        - inverse_square * (1.0 / 30 - inverse_square * (1.0 / 42 - inverse_square * (1.0 / 30
        - inverse_square * (5.0 / 66 - inverse_square * (691.0 / 2730
        - inverse_square * (7.0 / 6)))))));
    return total + sign * (recurrence + series);
}
