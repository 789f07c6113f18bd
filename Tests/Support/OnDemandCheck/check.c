/*
 * Sources/CSFXOnDemand/include/sfx_on_demand.h from C, as the loaders use it (built and run by
 * SFXMediaTests.OnDemandLibraryTests): the one-line errors, a failure that is final, the order
 * of the sonames, a table that does not match its names, RTLD_LOCAL and RTLD_GLOBAL, and many
 * threads at the first call.
 * Prints one line per failed check and exits 1 if any failed.
 */
#include "sfx_on_demand.h"

#include <math.h>
#include <string.h>

static int failures;

#define CHECK(condition, ...) \
    do { if (!(condition)) { failures++; printf("%s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static void check_error(sfx_on_demand *library, const char *expected_start, const char *expected_end)
{
    const char *error = sfx_on_demand_error(library);
    CHECK(error != NULL, "loaded, but should not be");
    if (!error) return;
    size_t length = strlen(error), end = strlen(expected_end);
    CHECK(strncmp(error, expected_start, strlen(expected_start)) == 0, "'%s' does not start with '%s'", error, expected_start);
    CHECK(length >= end && strcmp(error + length - end, expected_end) == 0, "'%s' does not end with '%s'", error, expected_end);
    CHECK(strchr(error, '\n') == NULL, "'%s' is more than one line", error);
}

/* libm, which the program links: cos, and a function it does not have. */
static struct { __typeof__(cos) *cos; } m;
static struct { __typeof__(cos) *cos, *sfx_no_such_function; } old_m;

static void test_a_missing_soname_says_what_to_install_once_and_for_all(void)
{
    static sfx_on_demand missing = {
        .sonames = {"libsfx-missing.so.0"}, .functions = {"cos\0"}, SFX_ON_DEMAND_TABLE(m),
        .install = "install Debian's libsfx-missing0", .upgrade = "install a newer libsfx-missing0",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    CHECK(sfx_on_demand_ready(&missing) == 0, "a missing soname loaded");
    check_error(&missing, "libsfx-missing.so.0 cannot be loaded (libsfx-missing.so.0: cannot open shared object file",
                "); install Debian's libsfx-missing0");
    char first[sizeof missing.error];
    snprintf(first, sizeof first, "%s", missing.error);
    /* Final: with a soname that would load now, the second call is the first one's failure. */
    missing.sonames[0] = "libm.so.6";
    CHECK(sfx_on_demand_ready(&missing) == 0, "a failed library was loaded again");
    const char *again = sfx_on_demand_error(&missing);
    CHECK(again && strcmp(again, first) == 0, "the second failure differs: '%s'", again ? again : "(none)");
}

static void test_a_loaded_library_fills_its_table(void)
{
    static sfx_on_demand libm = {
        .sonames = {"libm.so.6"}, .functions = {"cos\0"}, SFX_ON_DEMAND_TABLE(m),
        .install = "install Debian's libc6", .upgrade = "install Debian's libc6",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    CHECK(sfx_on_demand_ready(&libm) == 1, "libm.so.6 did not load: %s", libm.error);
    CHECK(sfx_on_demand_error(&libm) == NULL, "a loaded library has an error");
    CHECK(m.cos && m.cos(0.0) == 1.0, "cos was not filled in");
}

static void test_a_missing_function_names_it_and_the_upgrade(void)
{
    static sfx_on_demand old = {
        .sonames = {"libm.so.6"}, .functions = {"cos\0sfx_no_such_function\0"}, SFX_ON_DEMAND_TABLE(old_m), .label = "the C library's ",
        .install = "install Debian's libc6", .upgrade = "install libc6 from Debian 12 or later",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    CHECK(sfx_on_demand_ready(&old) == 0, "a library without a function counts as loaded");
    check_error(&old, "the C library's libm.so.6 has no sfx_no_such_function; install libc6 from Debian 12 or later", "later");
}

static void test_the_first_soname_that_does_not_load_is_named(void)
{
    static sfx_on_demand two = {
        .sonames = {"libm.so.6", "libsfx-missing.so.0"}, .functions = {NULL, "cos\0"}, SFX_ON_DEMAND_TABLE(m),
        .label = "Test's ", .purpose = " for a check", .install = "install both", .upgrade = "install newer ones",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    check_error(&two, "Test's libsfx-missing.so.0 cannot be loaded for a check (libsfx-missing.so.0: ", "); install both");
}

static void test_a_table_that_does_not_match_its_names_fails(void)
{
    static sfx_on_demand short_table = {
        .sonames = {"libm.so.6"}, .functions = {"cos\0sin\0"}, SFX_ON_DEMAND_TABLE(m), .install = "-", .upgrade = "-",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    check_error(&short_table, "libm.so.6: its function table does not match its names", "names");
    static sfx_on_demand long_table = {
        .sonames = {"libm.so.6"}, .functions = {"cos\0"}, SFX_ON_DEMAND_TABLE(old_m), .install = "-", .upgrade = "-",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    check_error(&long_table, "libm.so.6: its function table does not match its names", "names");
}

/* zlib, which the program does not link: local, its symbols stay out of the program's; global, they join it. */
static struct { const char *(*zlibVersion)(void); } z;

static void test_local_and_global(void)
{
    CHECK(dlsym(RTLD_DEFAULT, "zlibVersion") == NULL, "the check is linked with zlib: it cannot tell local from global");
    static sfx_on_demand local = {
        .sonames = {"libz.so.1"}, .functions = {"zlibVersion\0"}, SFX_ON_DEMAND_TABLE(z), .install = "install Debian's zlib1g", .upgrade = "-",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    CHECK(sfx_on_demand_ready(&local) == 1, "%s", local.error);
    CHECK(z.zlibVersion && z.zlibVersion()[0] == '1', "zlibVersion was not filled in");
    CHECK(dlsym(RTLD_DEFAULT, "zlibVersion") == NULL, "a local library's symbols joined the program's");
    static sfx_on_demand global = {
        .sonames = {"libz.so.1"}, .global = 1, .functions = {"zlibVersion\0"}, SFX_ON_DEMAND_TABLE(z), .install = "install Debian's zlib1g", .upgrade = "-",
        .lock = PTHREAD_MUTEX_INITIALIZER,
    };
    CHECK(sfx_on_demand_ready(&global) == 1, "%s", global.error);
    CHECK(dlsym(RTLD_DEFAULT, "zlibVersion") != NULL, "a global library's symbols are not the program's");
}

/* Many threads at the first call: each sees the library loaded and its table filled. */
#define SIN_FUNCTIONS(X) X(sin) X(sinf)
static struct { SIN_FUNCTIONS(SFX_ON_DEMAND_FIELD) } s;
static sfx_on_demand contended = {
    .sonames = {"libm.so.6"}, .functions = {SIN_FUNCTIONS(SFX_ON_DEMAND_NAME)}, SFX_ON_DEMAND_TABLE(s), .install = "install Debian's libc6", .upgrade = "-",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_barrier_t start;

static void *first_call(void *result)
{
    pthread_barrier_wait(&start);
    *(int *)result = sfx_on_demand_ready(&contended) && s.sin && s.sin(0.0) == 0.0 && s.sinf && s.sinf(0.0f) == 0.0f;
    return NULL;
}

static void test_threads_at_the_first_call(void)
{
    enum { THREADS = 16 };
    pthread_t threads[THREADS];
    int results[THREADS] = {0};
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, first_call, &results[i]);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(results[i] == 1, "thread %d saw no table", i);
    }
    pthread_barrier_destroy(&start);
}

int main(void)
{
    test_a_missing_soname_says_what_to_install_once_and_for_all();
    test_a_loaded_library_fills_its_table();
    test_a_missing_function_names_it_and_the_upgrade();
    test_the_first_soname_that_does_not_load_is_named();
    test_a_table_that_does_not_match_its_names_fails();
    test_local_and_global();
    test_threads_at_the_first_call();
    if (failures == 0) printf("all checks passed\n");
    return failures ? 1 : 0;
}
