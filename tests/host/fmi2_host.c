/*
 * fmi2_host: a minimal non-Python FMI 2.0 Co-Simulation host, written for contactfmu's tests.
 *
 * It loads an unzipped FMU's binary with dlopen, resolves the FMI 2.0 functions with dlsym and
 * replays an input table the way FMI cross-check importers do: at each communication point t_n
 * it sets the inputs of t_n, steps to t_n+1 and records the outputs read after the step
 * (the first row is read after initialization).
 *
 * usage: fmi2_host [options] UNZIPDIR MODEL_IDENTIFIER GUID START STOP STEP INPUTS OUTPUTS
 *   INPUTS   text file, one line per communication point: t u1 u2 ... (or "-" for none)
 *   OUTPUTS  CSV file to write: time,<output 1>,...
 * options:
 *   -i VR,VR,...      value references of the Real inputs u1, u2, ... (in INPUTS' column order)
 *   -o SPEC,SPEC,...  outputs to record: rVR (Real), iVR (Integer), bVR (Boolean)
 *   -p VR=VALUE       set a Real parameter before initialization (repeatable)
 *   -l LIBPYTHON      dlopen this library with RTLD_GLOBAL first (the FMU then uses it)
 *   -n NAME           the instance name (default "host")
 *   -e                after fmi2Instantiate, print PYTHONHOME as the host's environment has it
 *   -s                at the middle of the run, check fmi2GetFMUstate/fmi2SetFMUstate: a step
 *                     repeated from the saved state must give bit-identical outputs
 *   -x CASE           fmi2Instantiate's arguments: the FMU cannot use name-not-utf8, name-null,
 *                     guid-wrong, guid-null, resources-missing, resources-null, resources-relative,
 *                     model-exchange; it can use the resources URIs uri-localhost
 *                     (file://localhost/...), uri-one-slash (file:/...), uri-encoded (%-encoded)
 *   -V VR,VR,...      after initialization, fmi2GetReal, fmi2SetReal, fmi2GetInteger and
 *                     fmi2GetBoolean of each (value references no model description declares)
 *                     and fmi2GetReal with a NULL values array: "probe NAME VR STATUS" on stdout
 * exit status: 0 success, 2 usage or file error, 3 an FMI call failed, 4 state check failed.
 *
 * The FMI 2.0 types are declared from the standard's ABI; only libc and libdl are used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void* fmi2Component;
typedef void* fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status; /* 0 OK, 1 Warning, 2 Discard, 3 Error, 4 Fatal, 5 Pending */
typedef void (*fmi2CallbackLogger)(void*, const char*, fmi2Status, const char*, const char*, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void* (*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void*);
    void (*stepFinished)(void*, fmi2Status);
    void* componentEnvironment;
} fmi2CallbackFunctions;

static const char* STATUS[] = {"OK", "Warning", "Discard", "Error", "Fatal", "Pending"};

static void logger(void* env, const char* instance, fmi2Status status, const char* category,
                   const char* message, ...)
{
    (void)env;
    va_list ap;
    va_start(ap, message);
    fprintf(stderr, "[%s] %s (%s): ", status >= 0 && status <= 5 ? STATUS[status] : "?",
            instance ? instance : "", category ? category : "");
    vfprintf(stderr, message, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define MAXV 256
static void* lib;
static void* sym(const char* name)
{
    void* f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "fmi2_host: %s not found in the FMU binary: %s\n", name, dlerror());
        exit(3);
    }
    return f;
}

#define CHECK(call, what)                                                            \
    do {                                                                             \
        fmi2Status st_ = (call);                                                     \
        if (st_ > 1) {                                                               \
            fprintf(stderr, "fmi2_host: %s returned fmi2%s\n", what, STATUS[st_]);   \
            return 3;                                                                \
        }                                                                            \
    } while (0)

static int parse_list(const char* s, char* kinds, unsigned* vrs)
{
    int n = 0;
    while (s && *s && n < MAXV) {
        char k = 'r';
        if (*s == 'r' || *s == 'i' || *s == 'b') k = *s++;
        char* end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s) return -1;
        if (kinds) kinds[n] = k;
        vrs[n++] = (unsigned)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

typedef fmi2Status (*GetReal)(fmi2Component, const fmi2ValueReference*, size_t, double*);
typedef fmi2Status (*GetInt)(fmi2Component, const fmi2ValueReference*, size_t, int*);

static int read_outputs(fmi2Component c, GetReal getReal, GetInt getInteger, GetInt getBoolean,
                        int n, const char* kinds, const unsigned* vrs, double* out)
{
    for (int k = 0; k < n; k++) {
        fmi2ValueReference vr = vrs[k];
        if (kinds[k] == 'r') {
            CHECK(getReal(c, &vr, 1, &out[k]), "fmi2GetReal");
        } else {
            int v;
            CHECK((kinds[k] == 'i' ? getInteger : getBoolean)(c, &vr, 1, &v),
                  kinds[k] == 'i' ? "fmi2GetInteger" : "fmi2GetBoolean");
            out[k] = v;
        }
    }
    return 0;
}

int main(int argc, char** argv)
{
    unsigned in_vrs[MAXV], out_vrs[MAXV], par_vrs[MAXV], probe_vrs[MAXV];
    char out_kinds[MAXV];
    double par_vals[MAXV];
    int n_in = 0, n_out = 0, n_par = 0, n_probe = 0, state_check = 0, show_home = 0;
    const char* bad = NULL;
    const char* libpython = NULL;
    const char* instance_name = "host";
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        char opt = argv[a][1];
        if (opt == 's') { state_check = 1; continue; }
        if (opt == 'e') { show_home = 1; continue; }
        if (a + 1 >= argc) { fprintf(stderr, "fmi2_host: option -%c needs a value\n", opt); return 2; }
        const char* val = argv[++a];
        if (opt == 'i') n_in = parse_list(val, NULL, in_vrs);
        else if (opt == 'o') n_out = parse_list(val, out_kinds, out_vrs);
        else if (opt == 'l') libpython = val;
        else if (opt == 'n') instance_name = val;
        else if (opt == 'x') bad = val;
        else if (opt == 'V') n_probe = parse_list(val, NULL, probe_vrs);
        else if (opt == 'p' && n_par < MAXV) {
            char* eq = strchr(val, '=');
            if (!eq) { fprintf(stderr, "fmi2_host: -p %s: expected VR=VALUE\n", val); return 2; }
            par_vrs[n_par] = (unsigned)strtoul(val, NULL, 10);
            par_vals[n_par++] = strtod(eq + 1, NULL);
        } else { fprintf(stderr, "fmi2_host: unknown option -%c\n", opt); return 2; }
        if (n_in < 0 || n_out < 0 || n_probe < 0) { fprintf(stderr, "fmi2_host: bad value list %s\n", val); return 2; }
    }
    if (argc - a != 8) {
        fprintf(stderr, "usage: fmi2_host [-i VRS] [-o SPECS] [-p VR=VALUE] [-l LIBPYTHON] [-n NAME] [-e] [-s] [-x CASE] [-V VRS] "
                        "UNZIPDIR MODEL_IDENTIFIER GUID START STOP STEP INPUTS OUTPUTS\n");
        return 2;
    }
    const char *dir = argv[a], *model = argv[a + 1], *guid = argv[a + 2];
    double t0 = strtod(argv[a + 3], NULL), t1 = strtod(argv[a + 4], NULL), h = strtod(argv[a + 5], NULL);
    const char *inputs = argv[a + 6], *outputs = argv[a + 7];
    if (!(h > 0) || !(t1 > t0)) { fprintf(stderr, "fmi2_host: need STOP > START and STEP > 0\n"); return 2; }

    if (libpython && !dlopen(libpython, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "fmi2_host: cannot load %s: %s\n", libpython, dlerror());
        return 2;
    }
    char path[4096], uri[4096];
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", dir, model);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "fmi2_host: cannot load %s: %s\n", path, dlerror()); return 3; }
    snprintf(uri, sizeof uri, "file://%s/resources", dir);
    const char* location = uri;
    int type = 1; /* fmi2CoSimulation */
    if (bad) {
        if (!strcmp(bad, "name-not-utf8")) instance_name = "spring \xc3\x28";
        else if (!strcmp(bad, "name-null")) instance_name = NULL;
        else if (!strcmp(bad, "guid-wrong")) guid = "{00000000-0000-0000-0000-000000000000}";
        else if (!strcmp(bad, "guid-null")) guid = NULL;
        else if (!strcmp(bad, "resources-missing")) snprintf(uri, sizeof uri, "file://%s/nowhere", dir);
        else if (!strcmp(bad, "resources-null")) location = NULL;
        else if (!strcmp(bad, "resources-relative")) location = "resources";
        else if (!strcmp(bad, "model-exchange")) type = 0;
        else if (!strcmp(bad, "uri-localhost")) snprintf(uri, sizeof uri, "file://localhost%s/resources", dir);
        else if (!strcmp(bad, "uri-one-slash")) snprintf(uri, sizeof uri, "file:%s/resources", dir);
        else if (!strcmp(bad, "uri-encoded")) snprintf(uri, sizeof uri, "file://%s/r%%65sources%%2F", dir);
        else { fprintf(stderr, "fmi2_host: unknown -x %s\n", bad); return 2; }
    }

    fmi2Component (*instantiate)(const char*, int, const char*, const char*, const fmi2CallbackFunctions*, int, int) =
        sym("fmi2Instantiate");
    fmi2Status (*setup)(fmi2Component, int, double, double, int, double) = sym("fmi2SetupExperiment");
    fmi2Status (*enterInit)(fmi2Component) = sym("fmi2EnterInitializationMode");
    fmi2Status (*exitInit)(fmi2Component) = sym("fmi2ExitInitializationMode");
    fmi2Status (*setReal)(fmi2Component, const fmi2ValueReference*, size_t, const double*) = sym("fmi2SetReal");
    GetReal getReal = sym("fmi2GetReal");
    GetInt getInteger = sym("fmi2GetInteger");
    GetInt getBoolean = sym("fmi2GetBoolean");
    fmi2Status (*doStep)(fmi2Component, double, double, int) = sym("fmi2DoStep");
    fmi2Status (*getState)(fmi2Component, fmi2FMUstate*) = sym("fmi2GetFMUstate");
    fmi2Status (*setState)(fmi2Component, fmi2FMUstate) = sym("fmi2SetFMUstate");
    fmi2Status (*freeState)(fmi2Component, fmi2FMUstate*) = sym("fmi2FreeFMUstate");
    fmi2Status (*terminate)(fmi2Component) = sym("fmi2Terminate");
    void (*freeInstance)(fmi2Component) = sym("fmi2FreeInstance");
    const char* (*version)(void) = sym("fmi2GetVersion");
    if (strcmp(version(), "2.0") != 0) { fprintf(stderr, "fmi2_host: FMI version %s\n", version()); return 3; }

    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = instantiate(instance_name, type, guid, location, &cb, 0, 0);
    if (!c) { fprintf(stderr, "fmi2_host: fmi2Instantiate failed\n"); return 3; }
    if (show_home) {
        const char* home = getenv("PYTHONHOME");
        fprintf(stderr, "fmi2_host: PYTHONHOME after fmi2Instantiate: %s\n", home ? home : "(unset)");
    }
    CHECK(setup(c, 0, 0.0, t0, 1, t1), "fmi2SetupExperiment");
    for (int k = 0; k < n_par; k++) CHECK(setReal(c, &par_vrs[k], 1, &par_vals[k]), "fmi2SetReal (parameter)");
    CHECK(enterInit(c), "fmi2EnterInitializationMode");

    FILE* in = NULL;
    if (strcmp(inputs, "-") != 0 && !(in = fopen(inputs, "r"))) { perror(inputs); return 2; }
    FILE* out = fopen(outputs, "w");
    if (!out) { perror(outputs); return 2; }
    double u[MAXV], y[MAXV], y2[MAXV];
    long n_steps = (long)((t1 - t0) / h + 0.5);

#define NEXT_INPUTS()                                                                        \
    if (in) {                                                                                 \
        double tin;                                                                           \
        if (fscanf(in, "%lf", &tin) != 1) { fprintf(stderr, "fmi2_host: %s ended early\n", inputs); return 2; } \
        for (int k = 0; k < n_in; k++)                                                        \
            if (fscanf(in, "%lf", &u[k]) != 1) { fprintf(stderr, "fmi2_host: bad row in %s\n", inputs); return 2; } \
        if (n_in) CHECK(setReal(c, in_vrs, n_in, u), "fmi2SetReal (inputs)");                \
    }

    NEXT_INPUTS();
    CHECK(exitInit(c), "fmi2ExitInitializationMode");
    fmi2Status (*setInteger)(fmi2Component, const fmi2ValueReference*, size_t, const int*) = sym("fmi2SetInteger");
    for (int k = 0; k < n_probe; k++) {
        const fmi2ValueReference vr = probe_vrs[k];
        double x = 0.5;
        int i = 1;
        printf("probe fmi2GetReal %u %d\n", vr, getReal(c, &vr, 1, &x));
        printf("probe fmi2SetReal %u %d\n", vr, setReal(c, &vr, 1, &x));
        printf("probe fmi2GetInteger %u %d\n", vr, getInteger(c, &vr, 1, &i));
        printf("probe fmi2SetInteger %u %d\n", vr, setInteger(c, &vr, 1, &i));
        printf("probe fmi2GetBoolean %u %d\n", vr, getBoolean(c, &vr, 1, &i));
    }
    if (n_probe) {
        const fmi2ValueReference vr = out_vrs[0];
        printf("probe fmi2GetReal(NULL) %u %d\n", vr, getReal(c, &vr, 1, NULL));
        fflush(stdout);
    }
    if (read_outputs(c, getReal, getInteger, getBoolean, n_out, out_kinds, out_vrs, y)) return 3;
    fprintf(out, "time");
    for (int k = 0; k < n_out; k++) fprintf(out, ",%c%u", out_kinds[k], out_vrs[k]);
    fprintf(out, "\n%.17g", t0);
    for (int k = 0; k < n_out; k++) fprintf(out, ",%.17g", y[k]);
    fputc('\n', out);
    for (long n = 0; n < n_steps; n++) {
        double t = t0 + n * h, dt = (t0 + (n + 1) * h) - t; /* the step of the grid t0 + n*h */
        if (n > 0) { NEXT_INPUTS(); }
        if (state_check && n == n_steps / 2) {
            fmi2FMUstate s = NULL;
            CHECK(getState(c, &s), "fmi2GetFMUstate");
            CHECK(doStep(c, t, dt, 1), "fmi2DoStep");
            if (read_outputs(c, getReal, getInteger, getBoolean, n_out, out_kinds, out_vrs, y2)) return 3;
            CHECK(setState(c, s), "fmi2SetFMUstate");
            CHECK(freeState(c, &s), "fmi2FreeFMUstate");
        }
        CHECK(doStep(c, t, dt, 1), "fmi2DoStep");
        if (read_outputs(c, getReal, getInteger, getBoolean, n_out, out_kinds, out_vrs, y)) return 3;
        if (state_check && n == n_steps / 2 && memcmp(y, y2, n_out * sizeof(double)) != 0) {
            fprintf(stderr, "fmi2_host: the step repeated from fmi2SetFMUstate differs at t = %.17g\n", t);
            return 4;
        }
        fprintf(out, "%.17g", t0 + (n + 1) * h);
        for (int k = 0; k < n_out; k++) fprintf(out, ",%.17g", y[k]);
        fputc('\n', out);
    }
    CHECK(terminate(c), "fmi2Terminate");
    freeInstance(c);
    fclose(out);
    if (in) fclose(in);
    return 0;
}
