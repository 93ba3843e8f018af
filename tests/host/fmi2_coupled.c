/*
 * fmi2_coupled: a minimal non-Python FMI 2.0 Co-Simulation master in C, written for contactfmu's
 * tests: two or more FMUs coupled by plain value copies at a fixed communication step, in either
 * of the two orders a fixed-step master uses:
 *
 *   Gauss-Seidel (default): at each communication point the connections are served in the order
 *                 given (read the source output, set the target input), then every FMU steps;
 *   Jacobi (-j):  every FMU steps, then every connection's source is read, then every target is set
 *                 (libcosim's and ecos' fixed-step algorithm: the outputs read right after a step
 *                 were computed with the inputs of the step's start).
 *
 * The first exchange, after initialization, is served in the given order in both schemes.
 *
 * usage: fmi2_coupled [options] STOP STEP OUTPUT.csv
 *   -f UNZIPDIR,MODEL_IDENTIFIER,GUID   an FMU (repeatable; FMU k is numbered from 0 in this order)
 *   -p K:VR=VALUE                       a Real parameter of FMU K, set before initialization
 *   -n K:VR=VALUE                       an Integer parameter of FMU K, set before initialization
 *   -c K:VR>L:VR                        a connection: Real output VR of FMU K to Real input VR of FMU L
 *   -u L:VR=VALUE                       a Real input of FMU L held at VALUE (set before each exchange)
 *   -o K:VR                             a Real variable of FMU K recorded after each step
 *   -j                                  Jacobi order
 * exit status: 0 success, 2 usage or file error, 3 an FMI call failed.
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
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status;
typedef void (*fmi2CallbackLogger)(void*, const char*, fmi2Status, const char*, const char*, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void* (*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void*);
    void (*stepFinished)(void*, fmi2Status);
    void* componentEnvironment;
} fmi2CallbackFunctions;

static void logger(void* env, const char* instance, fmi2Status status, const char* category,
                   const char* message, ...)
{
    (void)env;
    va_list ap;
    va_start(ap, message);
    fprintf(stderr, "[%d] %s (%s): ", status, instance ? instance : "", category ? category : "");
    vfprintf(stderr, message, ap);
    fputc('\n', stderr);
    va_end(ap);
}

typedef struct {
    void* lib;
    fmi2Component c;
    fmi2Component (*instantiate)(const char*, int, const char*, const char*, const fmi2CallbackFunctions*, int, int);
    fmi2Status (*setup)(fmi2Component, int, double, double, int, double);
    fmi2Status (*enter)(fmi2Component);
    fmi2Status (*exit_)(fmi2Component);
    fmi2Status (*get)(fmi2Component, const fmi2ValueReference*, size_t, double*);
    fmi2Status (*set)(fmi2Component, const fmi2ValueReference*, size_t, const double*);
    fmi2Status (*set_int)(fmi2Component, const fmi2ValueReference*, size_t, const int*);
    fmi2Status (*step)(fmi2Component, double, double, int);
    fmi2Status (*terminate)(fmi2Component);
    void (*free_)(fmi2Component);
} Fmu;

#define MAXF 8
#define MAXC 64
static Fmu fmu[MAXF];
static int nfmu;
static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static void* need(void* lib, const char* id, const char* name)
{
    (void)id;
    void* p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "fmi2_coupled: %s not found: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void load(const char* spec)
{
    char dir[4096], id[256], guid[256], path[8192], uri[8192];
    if (nfmu >= MAXF || sscanf(spec, "%4095[^,],%255[^,],%255s", dir, id, guid) != 3) {
        fprintf(stderr, "fmi2_coupled: bad -f %s\n", spec);
        exit(2);
    }
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", dir, id);
    Fmu* f = &fmu[nfmu];
    f->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->lib) {
        fprintf(stderr, "fmi2_coupled: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
    f->instantiate = need(f->lib, id, "fmi2Instantiate");
    f->setup = need(f->lib, id, "fmi2SetupExperiment");
    f->enter = need(f->lib, id, "fmi2EnterInitializationMode");
    f->exit_ = need(f->lib, id, "fmi2ExitInitializationMode");
    f->get = need(f->lib, id, "fmi2GetReal");
    f->set = need(f->lib, id, "fmi2SetReal");
    f->set_int = need(f->lib, id, "fmi2SetInteger");
    f->step = need(f->lib, id, "fmi2DoStep");
    f->terminate = need(f->lib, id, "fmi2Terminate");
    f->free_ = need(f->lib, id, "fmi2FreeInstance");
    snprintf(uri, sizeof uri, "file://%s/resources", dir);
    char name[32];
    snprintf(name, sizeof name, "fmu%d", nfmu);
    f->c = f->instantiate(name, 1, guid, uri, &callbacks, 0, 0);
    if (!f->c) {
        fprintf(stderr, "fmi2_coupled: fmi2Instantiate of %s failed\n", id);
        exit(3);
    }
    nfmu++;
}

typedef struct { int k; fmi2ValueReference vr; int l; fmi2ValueReference in; double value; } Link;
static Link links[MAXC], held[MAXC], rec[MAXC];
static int nlinks, nheld, nrec;

static void check(fmi2Status s, const char* what, int k, double t)
{
    if (s > 1) {
        fprintf(stderr, "fmi2_coupled: %s of FMU %d failed (status %d) at t = %.17g\n", what, k, s, t);
        exit(3);
    }
}

static void hold(double t)
{
    for (int i = 0; i < nheld; i++)
        check(fmu[held[i].l].set(fmu[held[i].l].c, &held[i].in, 1, &held[i].value), "fmi2SetReal", held[i].l, t);
}

static void exchange(int jacobi, double t)
{
    hold(t);
    for (int i = 0; i < nlinks; i++) {
        Link* c = &links[i];
        check(fmu[c->k].get(fmu[c->k].c, &c->vr, 1, &c->value), "fmi2GetReal", c->k, t);
        if (!jacobi) check(fmu[c->l].set(fmu[c->l].c, &c->in, 1, &c->value), "fmi2SetReal", c->l, t);
    }
    if (jacobi)
        for (int i = 0; i < nlinks; i++)
            check(fmu[links[i].l].set(fmu[links[i].l].c, &links[i].in, 1, &links[i].value), "fmi2SetReal",
                  links[i].l, t);
}

static void record(FILE* out, double t)
{
    fprintf(out, "%.17g", t);
    for (int i = 0; i < nrec; i++) {
        double v;
        check(fmu[rec[i].k].get(fmu[rec[i].k].c, &rec[i].vr, 1, &v), "fmi2GetReal", rec[i].k, t);
        fprintf(out, ",%.17g", v);
    }
    fputc('\n', out);
}

int main(int argc, char** argv)
{
    int jacobi = 0, a = 1;
    struct { int k; fmi2ValueReference vr; double v; int integer; } params[MAXC];
    int nparams = 0;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        char o = argv[a][1];
        if (o == 'j') { jacobi = 1; continue; }
        if (a + 1 >= argc) { fprintf(stderr, "fmi2_coupled: -%c needs a value\n", o); return 2; }
        const char* v = argv[++a];
        int ok = 0;
        if (o == 'f') { load(v); ok = 1; }
        else if ((o == 'p' || o == 'n') && nparams < MAXC) {
            params[nparams].integer = o == 'n';
            ok = sscanf(v, "%d:%u=%lf", &params[nparams].k, &params[nparams].vr, &params[nparams].v) == 3 && ++nparams;
        }
        else if (o == 'c' && nlinks < MAXC)
            ok = sscanf(v, "%d:%u>%d:%u", &links[nlinks].k, &links[nlinks].vr, &links[nlinks].l, &links[nlinks].in) == 4
                 && ++nlinks;
        else if (o == 'u' && nheld < MAXC)
            ok = sscanf(v, "%d:%u=%lf", &held[nheld].l, &held[nheld].in, &held[nheld].value) == 3 && ++nheld;
        else if (o == 'o' && nrec < MAXC)
            ok = sscanf(v, "%d:%u", &rec[nrec].k, &rec[nrec].vr) == 2 && ++nrec;
        if (!ok) { fprintf(stderr, "fmi2_coupled: bad option -%c %s\n", o, v); return 2; }
    }
    if (argc - a != 3 || nfmu == 0) {
        fprintf(stderr, "usage: fmi2_coupled [-j] -f DIR,ID,GUID ... [-p K:VR=X] [-c K:VR>L:VR] [-u L:VR=X] "
                        "[-o K:VR] STOP STEP OUTPUT.csv\n");
        return 2;
    }
    for (int i = 0; i < nlinks; i++)
        if (links[i].k >= nfmu || links[i].l >= nfmu) { fprintf(stderr, "fmi2_coupled: no such FMU\n"); return 2; }
    double stop = atof(argv[a]), h = atof(argv[a + 1]);
    FILE* out = fopen(argv[a + 2], "w");
    if (!out || !(h > 0.0)) { fprintf(stderr, "fmi2_coupled: bad STOP/STEP or output file\n"); return 2; }
    for (int k = 0; k < nfmu; k++) check(fmu[k].setup(fmu[k].c, 0, 0.0, 0, stop, 1), "fmi2SetupExperiment", k, 0.0);
    for (int i = 0; i < nparams; i++) {
        if (params[i].k >= nfmu) { fprintf(stderr, "fmi2_coupled: no such FMU\n"); return 2; }
        Fmu* f = &fmu[params[i].k];
        int n = (int)params[i].v;
        check(params[i].integer ? f->set_int(f->c, &params[i].vr, 1, &n) : f->set(f->c, &params[i].vr, 1, &params[i].v),
              "setting a parameter", params[i].k, 0.0);
    }
    for (int k = 0; k < nfmu; k++) check(fmu[k].enter(fmu[k].c), "fmi2EnterInitializationMode", k, 0.0);
    exchange(0, 0.0);
    for (int k = 0; k < nfmu; k++) check(fmu[k].exit_(fmu[k].c), "fmi2ExitInitializationMode", k, 0.0);
    exchange(0, 0.0);
    record(out, 0.0);
    long n = (long)(stop / h + 0.5);
    for (long i = 0; i < n; i++) {
        double t = i * h;
        if (!jacobi && i > 0) exchange(0, t);
        for (int k = 0; k < nfmu; k++) check(fmu[k].step(fmu[k].c, t, h, 1), "fmi2DoStep", k, t);
        record(out, t + h);  /* after the step, before any input is set (as libcosim's observers) */
        if (jacobi) exchange(1, t + h);
    }
    fclose(out);
    for (int k = 0; k < nfmu; k++) {
        fmu[k].terminate(fmu[k].c);
        fmu[k].free_(fmu[k].c);
    }
    return 0;
}
