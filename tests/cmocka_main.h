/* One main() from a list of cmocka test functions, for every test program (tests/unit and
 * tests/mpi): CMOCKA_TESTS(f1, f2, ...) is `cmocka_unit_test(f1), cmocka_unit_test(f2), ...` (up to
 * 24 functions). */
#ifndef RMC_CMOCKA_MAIN_H
#define RMC_CMOCKA_MAIN_H

#define CMOCKA_T1_(f)       cmocka_unit_test(f)
#define CMOCKA_T2_(f, ...)  cmocka_unit_test(f), CMOCKA_T1_(__VA_ARGS__)
#define CMOCKA_T3_(f, ...)  cmocka_unit_test(f), CMOCKA_T2_(__VA_ARGS__)
#define CMOCKA_T4_(f, ...)  cmocka_unit_test(f), CMOCKA_T3_(__VA_ARGS__)
#define CMOCKA_T5_(f, ...)  cmocka_unit_test(f), CMOCKA_T4_(__VA_ARGS__)
#define CMOCKA_T6_(f, ...)  cmocka_unit_test(f), CMOCKA_T5_(__VA_ARGS__)
#define CMOCKA_T7_(f, ...)  cmocka_unit_test(f), CMOCKA_T6_(__VA_ARGS__)
#define CMOCKA_T8_(f, ...)  cmocka_unit_test(f), CMOCKA_T7_(__VA_ARGS__)
#define CMOCKA_T9_(f, ...)  cmocka_unit_test(f), CMOCKA_T8_(__VA_ARGS__)
#define CMOCKA_T10_(f, ...) cmocka_unit_test(f), CMOCKA_T9_(__VA_ARGS__)
#define CMOCKA_T11_(f, ...) cmocka_unit_test(f), CMOCKA_T10_(__VA_ARGS__)
#define CMOCKA_T12_(f, ...) cmocka_unit_test(f), CMOCKA_T11_(__VA_ARGS__)
#define CMOCKA_T13_(f, ...) cmocka_unit_test(f), CMOCKA_T12_(__VA_ARGS__)
#define CMOCKA_T14_(f, ...) cmocka_unit_test(f), CMOCKA_T13_(__VA_ARGS__)
#define CMOCKA_T15_(f, ...) cmocka_unit_test(f), CMOCKA_T14_(__VA_ARGS__)
#define CMOCKA_T16_(f, ...) cmocka_unit_test(f), CMOCKA_T15_(__VA_ARGS__)
#define CMOCKA_T17_(f, ...) cmocka_unit_test(f), CMOCKA_T16_(__VA_ARGS__)
#define CMOCKA_T18_(f, ...) cmocka_unit_test(f), CMOCKA_T17_(__VA_ARGS__)
#define CMOCKA_T19_(f, ...) cmocka_unit_test(f), CMOCKA_T18_(__VA_ARGS__)
#define CMOCKA_T20_(f, ...) cmocka_unit_test(f), CMOCKA_T19_(__VA_ARGS__)
#define CMOCKA_T21_(f, ...) cmocka_unit_test(f), CMOCKA_T20_(__VA_ARGS__)
#define CMOCKA_T22_(f, ...) cmocka_unit_test(f), CMOCKA_T21_(__VA_ARGS__)
#define CMOCKA_T23_(f, ...) cmocka_unit_test(f), CMOCKA_T22_(__VA_ARGS__)
#define CMOCKA_T24_(f, ...) cmocka_unit_test(f), CMOCKA_T23_(__VA_ARGS__)
#define CMOCKA_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17,   \
                     _18, _19, _20, _21, _22, _23, _24, N, ...)                                    \
    N
#define CMOCKA_TESTS(...)                                                                          \
    CMOCKA_PICK_(__VA_ARGS__, CMOCKA_T24_, CMOCKA_T23_, CMOCKA_T22_, CMOCKA_T21_, CMOCKA_T20_,     \
                 CMOCKA_T19_, CMOCKA_T18_, CMOCKA_T17_, CMOCKA_T16_, CMOCKA_T15_, CMOCKA_T14_,     \
                 CMOCKA_T13_, CMOCKA_T12_, CMOCKA_T11_, CMOCKA_T10_, CMOCKA_T9_, CMOCKA_T8_,       \
                 CMOCKA_T7_, CMOCKA_T6_, CMOCKA_T5_, CMOCKA_T4_, CMOCKA_T3_, CMOCKA_T2_,           \
                 CMOCKA_T1_)                                                                       \
    (__VA_ARGS__)

/* main() of a one-process test program: the group `name` of the listed tests. */
#define UNITTEST_MAIN(name, ...)                                                                   \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests_[] = {CMOCKA_TESTS(__VA_ARGS__)};                            \
        return cmocka_run_group_tests_name(name, tests_, NULL, NULL);                              \
    }

#endif
