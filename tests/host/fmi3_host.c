/*
 * fmi3_host: a minimal non-Python FMI 3.0 Co-Simulation host, written for contactfmu's tests
 * (tests/fmi/test_fmi3_c_host.py).
 *
 * It loads an unzipped FMU's binaries/x86_64-linux/<MODEL>.so with dlopen, resolves the FMI 3.0
 * functions with dlsym and runs one scenario, printing what happened on stdout, one record a line,
 * numbers with %.17g, for the test to parse:
 *
 *   call NAME STATUS                   a lifecycle, setter, state or refused call and its status
 *   log STATUS CATEGORY: MESSAGE       a message passed to the host's logger (never with -N)
 *   step T H STATUS NEEDED TERMINATE EARLY LAST : Y1 Y2 ...
 *                                      an fmi3DoStep(T, H) and its flags, then the outputs (-o)
 *   event ENTER UPDATE NEED TERMINATE NOMINALS VALUES NEXTDEFINED STEPMODE
 *                                      event mode after a step that asked for it: the statuses of
 *                                      fmi3EnterEventMode, fmi3UpdateDiscreteStates (and its
 *                                      flags) and fmi3EnterStepMode
 *   update T SETREQUESTED GETALLOWED FINISHED CANRETURNEARLY ENV : Y1 Y2 ...
 *                                      an offer of the intermediate-update callback (-U), the
 *                                      outputs read in it; ENV "env" if the host's environment
 *   step2 T H STATUS : Y1 Y2 ...       (scenario both) an fmi2DoStep of the FMI 2.0 build
 *   phase NAME                         where a scenario's part begins
 *   size N                             (scenario state) fmi3SerializedFMUStateSize's answer
 *   freed A B                          (scenario state) 1 where fmi3FreeFMUState left NULL
 *   deserialized state|NULL            (scenario state-misuse) what fmi3DeserializeFMUState gave
 *   memory N GROWTH BASELINE RSS       (scenario state-misuse) the resident memory's growth over N
 *                                      fmi3GetFMUState calls handed the same state pointer, over
 *                                      N taken and freed, and the resident memory (bytes)
 *
 * The steps follow fmpy's grid: the next communication point is START + (n + 1) * STEP (n the
 * grid points reached), or STOP; after an early return the next step starts at lastSuccessfulTime.
 *
 * usage: fmi3_host [options] SCENARIO UNZIPDIR MODEL TOKEN STOP STEP
 * scenarios:
 *   run          instantiate, initialize (-p), set (-a), step to STOP, terminate, free
 *   unsupported  initialize, call functions the FMU does not implement, one step
 *   reset        run, fmi3Reset, initialize again (the same -p), run again; fmi3Terminate,
 *                fmi3Reset, initialize and run a third time
 *   state        step to the first early return (or STOP), fmi3GetFMUState there, serialize and
 *                deserialize it; step on to STOP; fmi3SetFMUState(saved), step on again; the same
 *                with the deserialized state; then a second instance deserializes the bytes and
 *                steps on from them
 *   both         the FMI 2.0 build too (-2), in the same process: both step the same grid
 *   state-misuse the FMU state functions given NULL pointers and altered bytes, and a state
 *                pointer handed back to fmi3GetFMUState (restored afterwards; memory)
 *   values       initialize, then the getters and setters misused: nValues other than the number
 *                of value references, NULL arrays, and each value reference of -V read and set
 *                (Float64, Boolean); then run as scenario run
 * options:
 *   -l LIBPYTHON      dlopen this library with RTLD_GLOBAL first (the FMU then uses it)
 *   -p SPEC=VALUE     set in initialization mode: rVR (Float64), iVR (Int32), bVR (Boolean)
 *   -a SPEC=VALUE     set after initialization, before the first step (scenario run)
 *   -o SPEC,SPEC,...  outputs printed after each step (rVR, iVR, bVR)
 *   -E                earlyReturnAllowed
 *   -M                eventModeUsed
 *   -N                no logger (logMessage = NULL)
 *   -I                ignore early returns: the next step starts at the grid point regardless
 *   -U decline|accept an intermediate-update callback that declines or accepts each offer
 *   -2 UNZIPDIR,GUID  the FMI 2.0 build of MODEL (scenario both)
 *   -X CASE           instantiate with one argument the FMU cannot use: name-not-utf8, name-null,
 *                     token-wrong, token-null, resources-missing, resources-null, resources-not-fmu
 *                     (a folder without slavemodule.txt)
 *   -V VR,VR,...      value references the model description does not declare (scenario values)
 * exit status: 0 the scenario ran to its end (failed calls are printed, not fatal), 2 usage,
 * 3 the FMU could not be loaded or instantiated.
 *
 * The FMI 3.0 (and the few FMI 2.0) types are declared from the standards' ABI; only libc and
 * libdl are used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- FMI 3.0 ------------------------------------------------------------------------------- */

typedef void* fmi3Instance;
typedef void* fmi3InstanceEnvironment;
typedef void* fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef float fmi3Float32;
typedef int32_t fmi3Int32;
typedef int64_t fmi3Int64;
typedef int8_t fmi3Int8;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String;
typedef uint8_t fmi3Byte;
typedef bool fmi3Clock;
typedef int fmi3Status; /* 0 OK, 1 Warning, 2 Discard, 3 Error, 4 Fatal */

typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64, fmi3Boolean, fmi3Boolean,
                                               fmi3Boolean, fmi3Boolean, fmi3Boolean*, fmi3Float64*);
typedef const char* (*fmi3GetVersionTYPE)(void);
typedef fmi3Instance (*fmi3InstantiateCoSimulationTYPE)(fmi3String, fmi3String, fmi3String, fmi3Boolean,
                                                        fmi3Boolean, fmi3Boolean, fmi3Boolean,
                                                        const fmi3ValueReference[], size_t, fmi3InstanceEnvironment,
                                                        fmi3LogMessageCallback, fmi3IntermediateUpdateCallback);
typedef fmi3Instance (*fmi3InstantiateModelExchangeTYPE)(fmi3String, fmi3String, fmi3String, fmi3Boolean,
                                                         fmi3Boolean, fmi3InstanceEnvironment, fmi3LogMessageCallback);
typedef void (*fmi3FreeInstanceTYPE)(fmi3Instance);
typedef fmi3Status (*fmi3InstanceTYPE)(fmi3Instance); /* the functions with the instance alone */
typedef fmi3Status (*fmi3EnterInitializationModeTYPE)(fmi3Instance, fmi3Boolean, fmi3Float64, fmi3Float64,
                                                      fmi3Boolean, fmi3Float64);
typedef fmi3Status (*fmi3GetFloat64TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float64[], size_t);
typedef fmi3Status (*fmi3SetFloat64TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Float64[],
                                         size_t);
typedef fmi3Status (*fmi3GetInt32TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Int32[], size_t);
typedef fmi3Status (*fmi3SetInt32TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Int32[], size_t);
typedef fmi3Status (*fmi3GetBooleanTYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Boolean[], size_t);
typedef fmi3Status (*fmi3SetBooleanTYPE)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Boolean[],
                                         size_t);
typedef fmi3Status (*fmi3GetFloat32TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float32[], size_t);
typedef fmi3Status (*fmi3SetInt64TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Int64[], size_t);
typedef fmi3Status (*fmi3GetInt8TYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Int8[], size_t);
typedef fmi3Status (*fmi3GetStringTYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3String[], size_t);
typedef fmi3Status (*fmi3GetClockTYPE)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Clock[]);
typedef fmi3Status (*fmi3GetOutputDerivativesTYPE)(fmi3Instance, const fmi3ValueReference[], size_t,
                                                   const fmi3Int32[], fmi3Float64[], size_t);
typedef fmi3Status (*fmi3GetDirectionalDerivativeTYPE)(fmi3Instance, const fmi3ValueReference[], size_t,
                                                       const fmi3ValueReference[], size_t, const fmi3Float64[],
                                                       size_t, fmi3Float64[], size_t);
typedef fmi3Status (*fmi3DoStepTYPE)(fmi3Instance, fmi3Float64, fmi3Float64, fmi3Boolean, fmi3Boolean*,
                                     fmi3Boolean*, fmi3Boolean*, fmi3Float64*);
typedef fmi3Status (*fmi3UpdateDiscreteStatesTYPE)(fmi3Instance, fmi3Boolean*, fmi3Boolean*, fmi3Boolean*,
                                                   fmi3Boolean*, fmi3Boolean*, fmi3Float64*);
typedef fmi3Status (*fmi3GetFMUStateTYPE)(fmi3Instance, fmi3FMUState*);
typedef fmi3Status (*fmi3SetFMUStateTYPE)(fmi3Instance, fmi3FMUState);
typedef fmi3Status (*fmi3SerializedFMUStateSizeTYPE)(fmi3Instance, fmi3FMUState, size_t*);
typedef fmi3Status (*fmi3SerializeFMUStateTYPE)(fmi3Instance, fmi3FMUState, fmi3Byte[], size_t);
typedef fmi3Status (*fmi3DeserializeFMUStateTYPE)(fmi3Instance, const fmi3Byte[], size_t, fmi3FMUState*);

/* ---- FMI 2.0 (scenario both) ------------------------------------------------------------- */

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

/* ---- the host ------------------------------------------------------------------------------ */

#define MAXV 64

typedef struct {
    char kind; /* 'r', 'i' or 'b' */
    fmi3ValueReference vr;
    double value;
} Spec;

static struct {
    const char *scenario, *dir, *model, *token, *dir2, *guid2;
    double stop, step;
    Spec par[MAXV], after[MAXV], out[MAXV];
    int n_par, n_after, n_out;
    bool early, event_mode, no_logger, ignore_early;
    int update; /* -U: 0 no intermediate-update callback, 1 it declines each offer, 2 it accepts */
    const char* bad; /* -X: the instantiation argument to spoil */
    fmi3ValueReference undeclared[MAXV];
    int n_undeclared;
} opt;

static int logger_marker; /* the instance environment the host passes: the logger checks it */
static bool failed_initialization; /* fmi3ExitInitializationMode failed: free the instance only */

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    printf("log %d %s%s: %s\n", status, env == &logger_marker ? "" : "(wrong environment) ",
           category ? category : "", message ? message : "(null)");
    fflush(stdout);
}

static void logger2(void* env, const char* instance, fmi2Status status, const char* category, const char* message,
                 ...)
{
    (void)env, (void)instance;
    char text[4096];
    va_list ap;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
    printf("logger2 %d %s: %s\n", status, category ? category : "", text);
    fflush(stdout);
}

static void* load(const char* path)
{
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "fmi3_host: cannot load %s: %s\n", path, dlerror());
        exit(3);
    }
    return lib;
}

static void* sym(void* lib, const char* name)
{
    void* f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "fmi3_host: %s not found in the FMU binary\n", name);
        exit(3);
    }
    return f;
}

/* The FMI 3.0 functions of one binary. */
typedef struct {
    fmi3GetVersionTYPE GetVersion;
    fmi3InstantiateCoSimulationTYPE InstantiateCoSimulation;
    fmi3InstantiateModelExchangeTYPE InstantiateModelExchange;
    fmi3FreeInstanceTYPE FreeInstance;
    fmi3EnterInitializationModeTYPE EnterInitializationMode;
    fmi3InstanceTYPE ExitInitializationMode, EnterEventMode, EnterStepMode, Terminate, Reset,
        EnterConfigurationMode;
    fmi3GetFloat64TYPE GetFloat64;
    fmi3SetFloat64TYPE SetFloat64;
    fmi3GetInt32TYPE GetInt32;
    fmi3SetInt32TYPE SetInt32;
    fmi3GetBooleanTYPE GetBoolean;
    fmi3SetBooleanTYPE SetBoolean;
    fmi3GetFloat32TYPE GetFloat32;
    fmi3SetInt64TYPE SetInt64;
    fmi3GetInt8TYPE GetInt8;
    fmi3GetStringTYPE GetString;
    fmi3GetClockTYPE GetClock;
    fmi3GetOutputDerivativesTYPE GetOutputDerivatives;
    fmi3GetDirectionalDerivativeTYPE GetDirectionalDerivative;
    fmi3DoStepTYPE DoStep;
    fmi3UpdateDiscreteStatesTYPE UpdateDiscreteStates;
    fmi3GetFMUStateTYPE GetFMUState;
    fmi3SetFMUStateTYPE SetFMUState;
    fmi3GetFMUStateTYPE FreeFMUState; /* (instance, fmi3FMUState*): the getter's type */
    fmi3SerializedFMUStateSizeTYPE SerializedFMUStateSize;
    fmi3SerializeFMUStateTYPE SerializeFMUState;
    fmi3DeserializeFMUStateTYPE DeserializeFMUState;
} Fmi3;

static Fmi3 F;

static void load3(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/binaries/x86_64-linux/%s.so", opt.dir, opt.model);
    void* lib = load(path);
#define R(name) F.name = (__typeof__(F.name))sym(lib, "fmi3" #name)
    R(GetVersion);
    R(InstantiateCoSimulation);
    R(InstantiateModelExchange);
    R(FreeInstance);
    R(EnterInitializationMode);
    R(ExitInitializationMode);
    R(EnterEventMode);
    R(EnterStepMode);
    R(Terminate);
    R(Reset);
    R(EnterConfigurationMode);
    R(GetFloat64);
    R(SetFloat64);
    R(GetInt32);
    R(SetInt32);
    R(GetBoolean);
    R(SetBoolean);
    R(GetFloat32);
    R(SetInt64);
    R(GetInt8);
    R(GetString);
    R(GetClock);
    R(GetOutputDerivatives);
    R(GetDirectionalDerivative);
    R(DoStep);
    R(UpdateDiscreteStates);
    R(GetFMUState);
    R(SetFMUState);
    R(FreeFMUState);
    R(SerializedFMUStateSize);
    R(SerializeFMUState);
    R(DeserializeFMUState);
#undef R
    if (strcmp(F.GetVersion(), "3.0") != 0) {
        fprintf(stderr, "fmi3_host: %s is FMI %s\n", path, F.GetVersion());
        exit(3);
    }
}

static fmi3Status call(const char* name, fmi3Status status)
{
    printf("call %s %d\n", name, status);
    fflush(stdout);
    return status;
}

static void print_outputs(fmi3Instance c);
static fmi3Instance current; /* the instance last instantiated: the callback reads its outputs */

/* The intermediate-update callback (-U): prints what the FMU offers and the outputs there, then
   declines or accepts (earlyReturnRequested, at the offered time). */
static void intermediate_update(fmi3InstanceEnvironment env, fmi3Float64 time, fmi3Boolean setRequested,
                                fmi3Boolean getAllowed, fmi3Boolean finished, fmi3Boolean canReturnEarly,
                                fmi3Boolean* requested, fmi3Float64* when)
{
    printf("update %.17g %d %d %d %d %s", time, setRequested, getAllowed, finished, canReturnEarly,
           env == &logger_marker ? "env" : "wrong-env");
    if (getAllowed && current)
        print_outputs(current);
    else
        printf("\n");
    fflush(stdout);
    *requested = opt.update == 2;
    *when = time;
}

static fmi3Instance instantiate(const char* name)
{
    char resources[4200];
    snprintf(resources, sizeof resources, "%s/resources/", opt.dir);
    const char *token = opt.token, *where = resources;
    if (opt.bad) {
        const char* b = opt.bad;
        if (!strcmp(b, "name-not-utf8")) name = "mass \xff\xfe";
        else if (!strcmp(b, "name-null")) name = NULL;
        else if (!strcmp(b, "token-wrong")) token = "{00000000-0000-0000-0000-000000000000}";
        else if (!strcmp(b, "token-null")) token = NULL;
        else if (!strcmp(b, "resources-missing")) snprintf(resources, sizeof resources, "%s/nowhere/", opt.dir);
        else if (!strcmp(b, "resources-null")) where = NULL;
        else if (!strcmp(b, "resources-not-fmu")) snprintf(resources, sizeof resources, "%s/binaries/", opt.dir);
        else {
            fprintf(stderr, "fmi3_host: unknown -X %s\n", b);
            exit(2);
        }
    }
    fmi3Instance c = F.InstantiateCoSimulation(name, token, where, false, false, opt.event_mode, opt.early,
                                               NULL, 0, &logger_marker, opt.no_logger ? NULL : logger3,
                                               opt.update ? intermediate_update : NULL);
    printf("call fmi3InstantiateCoSimulation %s\n", c ? "instance" : "NULL");
    fflush(stdout);
    if (!c) exit(3);
    current = c;
    return c;
}

static fmi3Status set3(fmi3Instance c, const Spec* s)
{
    if (s->kind == 'r') return call("fmi3SetFloat64", F.SetFloat64(c, &s->vr, 1, &s->value, 1));
    if (s->kind == 'i') {
        const fmi3Int32 v = (fmi3Int32)s->value;
        return call("fmi3SetInt32", F.SetInt32(c, &s->vr, 1, &v, 1));
    }
    const fmi3Boolean v = s->value != 0.0;
    return call("fmi3SetBoolean", F.SetBoolean(c, &s->vr, 1, &v, 1));
}

/* Enter initialization mode at 0, set -p, leave it: the status of fmi3ExitInitializationMode. */
static fmi3Status initialize(fmi3Instance c)
{
    call("fmi3EnterInitializationMode", F.EnterInitializationMode(c, false, 0.0, 0.0, true, opt.stop));
    for (int k = 0; k < opt.n_par; k++) set3(c, &opt.par[k]);
    fmi3Status st = call("fmi3ExitInitializationMode", F.ExitInitializationMode(c));
    failed_initialization = st > 1;
    /* with eventModeUsed the FMU is in Event Mode now (FMI 3.0, 2.3.3 "fmi3ExitInitializationMode"):
       fmi3EnterStepMode before the first fmi3DoStep */
    if (opt.event_mode && !failed_initialization) call("fmi3EnterStepMode", F.EnterStepMode(c));
    return st;
}

static void print_outputs(fmi3Instance c)
{
    printf(" :");
    for (int k = 0; k < opt.n_out; k++) {
        const Spec* s = &opt.out[k];
        fmi3Status st;
        double y;
        if (s->kind == 'r') {
            st = F.GetFloat64(c, &s->vr, 1, &y, 1);
        } else if (s->kind == 'i') {
            fmi3Int32 v = 0;
            st = F.GetInt32(c, &s->vr, 1, &v, 1);
            y = v;
        } else {
            fmi3Boolean v = false;
            st = F.GetBoolean(c, &s->vr, 1, &v, 1);
            y = v;
        }
        if (st > 1)
            printf(" get-failed-%d", st);
        else
            printf(" %.17g", y);
    }
    printf("\n");
    fflush(stdout);
}

/* Where a run stands: the time reached and the grid points passed (fmpy's n_steps). */
typedef struct {
    double t;
    long n;
} Clock;

static bool isclose(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

enum { TO_STOP, TO_EARLY_RETURN, ONE_STEP };

/* Step from clk to STOP (or to the first early return, or once): the step and event lines;
   0, or -1 when a step failed (the run ends there). */
static int run_steps(fmi3Instance c, Clock* clk, int until)
{
    for (;;) {
        if (clk->t > opt.stop || isclose(clk->t, opt.stop)) return 0;
        double next = (clk->n + 1) * opt.step; /* START = 0 */
        if (next > opt.stop && !isclose(next, opt.stop)) next = opt.stop;
        double h = next - clk->t;
        fmi3Boolean needed = false, terminate = false, early = false;
        fmi3Float64 last = -1.0;
        fmi3Status st = F.DoStep(c, clk->t, h, false, &needed, &terminate, &early, &last);
        printf("step %.17g %.17g %d %d %d %d %.17g", clk->t, h, st, needed, terminate, early, last);
        print_outputs(c);
        if (st > 1) return -1;
        clk->t = early && last < next && !opt.ignore_early ? last : next;
        if (needed) {
            fmi3Status enter = F.EnterEventMode(c), update = 0;
            fmi3Boolean need = true, term = false, nominals = false, values = false, defined = false;
            fmi3Float64 when = 0.0;
            for (int k = 0; k < 10 && need; k++)
                update = F.UpdateDiscreteStates(c, &need, &term, &nominals, &values, &defined, &when);
            fmi3Status stepmode = F.EnterStepMode(c);
            printf("event %d %d %d %d %d %d %d %d\n", enter, update, need, term, nominals, values, defined,
                   stepmode);
            fflush(stdout);
        }
        if (isclose(clk->t, next)) clk->n++;
        if (terminate) return 0;
        if ((until == TO_EARLY_RETURN && early) || until == ONE_STEP) return 0;
    }
}

static void phase(const char* name)
{
    printf("phase %s\n", name);
    fflush(stdout);
}

static int scenario_run(fmi3Instance c)
{
    if (initialize(c) > 1) return 0; /* printed: the test reads it */
    for (int k = 0; k < opt.n_after; k++) set3(c, &opt.after[k]);
    Clock clk = {0.0, 0};
    run_steps(c, &clk, TO_STOP);
    return 0;
}

static int scenario_unsupported(fmi3Instance c)
{
    if (initialize(c) > 1) return 0;
    const fmi3ValueReference vr = opt.n_out ? opt.out[0].vr : 0;
    fmi3Float32 f32 = 0.0f;
    fmi3Int64 i64 = 1;
    fmi3Int8 i8 = 0;
    fmi3String str = NULL;
    fmi3Clock clock = false;
    const fmi3Int32 order = 1;
    fmi3Float64 d = 0.0, seed = 1.0, sens = 0.0;
    call("fmi3GetFloat32", F.GetFloat32(c, &vr, 1, &f32, 1));
    call("fmi3SetInt64", F.SetInt64(c, &vr, 1, &i64, 1));
    call("fmi3GetInt8", F.GetInt8(c, &vr, 1, &i8, 1));
    call("fmi3GetString", F.GetString(c, &vr, 1, &str, 1));
    call("fmi3GetClock", F.GetClock(c, &vr, 1, &clock));
    call("fmi3GetOutputDerivatives", F.GetOutputDerivatives(c, &vr, 1, &order, &d, 1));
    call("fmi3GetDirectionalDerivative", F.GetDirectionalDerivative(c, &vr, 1, &vr, 1, &seed, 1, &sens, 1));
    call("fmi3EnterConfigurationMode", F.EnterConfigurationMode(c));
    char resources[4200];
    snprintf(resources, sizeof resources, "%s/resources/", opt.dir);
    fmi3Instance me = F.InstantiateModelExchange("me", opt.token, resources, false, false, &logger_marker,
                                                 opt.no_logger ? NULL : logger3);
    printf("call fmi3InstantiateModelExchange %s\n", me ? "instance" : "NULL");
    /* a NULL instance */
    fmi3Boolean flag = false;
    fmi3Float64 last = 0.0;
    call("fmi3DoStep(NULL)", F.DoStep(NULL, 0.0, 0.1, false, &flag, &flag, &flag, &last));
    call("fmi3GetFloat64(NULL)", F.GetFloat64(NULL, &vr, 1, &d, 1));
    call("fmi3GetFloat32(NULL)", F.GetFloat32(NULL, &vr, 1, &f32, 1));
    call("fmi3Reset(NULL)", F.Reset(NULL));
    F.FreeInstance(NULL);
    Clock clk = {0.0, 0};
    run_steps(c, &clk, TO_STOP);
    return 0;
}

static int scenario_reset(fmi3Instance c)
{
    phase("first");
    scenario_run(c);
    call("fmi3Reset", F.Reset(c)); /* in step mode */
    phase("after-reset");
    scenario_run(c);
    call("fmi3Terminate", F.Terminate(c));
    call("fmi3Reset", F.Reset(c)); /* terminated */
    phase("after-terminate-reset");
    return scenario_run(c);
}

static int scenario_state(fmi3Instance c)
{
    if (initialize(c) > 1) return 0;
    Clock clk = {0.0, 0};
    phase("to-first-event");
    if (run_steps(c, &clk, TO_EARLY_RETURN)) return 0;
    const Clock saved_at = clk;
    fmi3FMUState saved = NULL, deserialized = NULL, other_state = NULL;
    call("fmi3GetFMUState", F.GetFMUState(c, &saved));
    size_t size = 0;
    call("fmi3SerializedFMUStateSize", F.SerializedFMUStateSize(c, saved, &size));
    printf("size %zu\n", size);
    fmi3Byte* bytes = (fmi3Byte*)malloc(size ? size : 1);
    call("fmi3SerializeFMUState", F.SerializeFMUState(c, saved, bytes, size));
    call("fmi3DeserializeFMUState", F.DeserializeFMUState(c, bytes, size, &deserialized));
    phase("on");
    run_steps(c, &clk, TO_STOP);
    call("fmi3SetFMUState", F.SetFMUState(c, saved));
    clk = saved_at;
    phase("restored");
    run_steps(c, &clk, TO_STOP);
    call("fmi3SetFMUState", F.SetFMUState(c, deserialized));
    clk = saved_at;
    phase("deserialized");
    run_steps(c, &clk, TO_STOP);
    call("fmi3FreeFMUState", F.FreeFMUState(c, &saved));
    call("fmi3FreeFMUState", F.FreeFMUState(c, &deserialized));
    printf("freed %d %d\n", saved == NULL, deserialized == NULL);
    /* a second instance, initialized, continues from the bytes */
    fmi3Instance other = instantiate("other");
    initialize(other);
    call("fmi3DeserializeFMUState", F.DeserializeFMUState(other, bytes, size, &other_state));
    call("fmi3SetFMUState", F.SetFMUState(other, other_state));
    call("fmi3FreeFMUState", F.FreeFMUState(other, &other_state));
    clk = saved_at;
    phase("other-instance");
    run_steps(other, &clk, TO_STOP);
    call("fmi3Terminate", F.Terminate(other));
    F.FreeInstance(other);
    free(bytes);
    return 0;
}

/* Resident memory of this process, bytes (/proc/self/statm). */
static long resident(void)
{
    long pages = 0, rss = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        fclose(f);
    }
    return rss * 4096L;
}

/* The FMU state functions misused: NULL pointers, altered bytes, a state pointer handed back
   to fmi3GetFMUState (the standard: it holds a state taken before, to be overwritten). */
static int scenario_state_misuse(fmi3Instance c)
{
    if (initialize(c) > 1) return 0;
    Clock clk = {0.0, 0};
    phase("start");
    run_steps(c, &clk, ONE_STEP);
    size_t size = 0;
    call("fmi3GetFMUState(NULL)", F.GetFMUState(c, NULL));
    call("fmi3SetFMUState(NULL)", F.SetFMUState(c, NULL));
    call("fmi3SerializedFMUStateSize(NULL)", F.SerializedFMUStateSize(c, NULL, &size));
    call("fmi3SerializeFMUState(NULL)", F.SerializeFMUState(c, NULL, (fmi3Byte*)&size, 1));
    fmi3FMUState nothing = NULL;
    call("fmi3FreeFMUState(NULL)", F.FreeFMUState(c, &nothing));
    /* altered bytes: the last byte of the serialized state flipped */
    fmi3FMUState s = NULL, back = NULL;
    call("fmi3GetFMUState", F.GetFMUState(c, &s));
    call("fmi3SerializedFMUStateSize", F.SerializedFMUStateSize(c, s, &size));
    fmi3Byte* bytes = (fmi3Byte*)malloc(size ? size : 1);
    call("fmi3SerializeFMUState", F.SerializeFMUState(c, s, bytes, size));
    bytes[size - 1] ^= 1;
    call("fmi3DeserializeFMUState(altered)", F.DeserializeFMUState(c, bytes, size, &back));
    printf("deserialized %s\n", back ? "state" : "NULL");
    call("fmi3DeserializeFMUState(empty)", F.DeserializeFMUState(c, bytes, 0, &back));
    printf("deserialized %s\n", back ? "state" : "NULL");
    free(bytes);
    /* the state handed back: it holds the later state afterwards */
    run_steps(c, &clk, ONE_STEP);
    const Clock later = clk;
    call("fmi3GetFMUState(again)", F.GetFMUState(c, &s));
    phase("on");
    run_steps(c, &clk, ONE_STEP);
    call("fmi3SetFMUState", F.SetFMUState(c, s));
    clk = later;
    phase("restored");
    run_steps(c, &clk, ONE_STEP);
    /* memory: the same state pointer handed back many times, against taking and freeing */
    const int n = 3000;
    long before = resident();
    for (int k = 0; k < n; k++) F.GetFMUState(c, &s);
    long handed_back = resident() - before;
    before = resident();
    for (int k = 0; k < n; k++) {
        fmi3FMUState t = NULL;
        F.GetFMUState(c, &t);
        F.FreeFMUState(c, &t);
    }
    long freed = resident() - before;
    printf("memory %d %ld %ld %ld\n", n, handed_back, freed, resident());
    call("fmi3FreeFMUState", F.FreeFMUState(c, &s));
    return 0;
}

/* The getters and setters misused, then a run as scenario run (its steps show whether a value set
   here changed the instance). */
static int scenario_values(fmi3Instance c)
{
    if (initialize(c) > 1) return 0;
    const fmi3ValueReference vr = opt.n_out ? opt.out[0].vr : 0;
    fmi3Float64 d[2] = {0.0, 0.0};
    fmi3Boolean b[2] = {false, false};
    fmi3Int32 i[2] = {0, 0};
    call("fmi3GetFloat64(nValues+1)", F.GetFloat64(c, &vr, 1, d, 2));
    call("fmi3GetFloat64(nValues-1)", F.GetFloat64(c, &vr, 1, d, 0));
    call("fmi3SetFloat64(nValues+1)", F.SetFloat64(c, &vr, 1, d, 2));
    call("fmi3GetInt32(nValues+1)", F.GetInt32(c, &vr, 1, i, 2));
    call("fmi3GetBoolean(nValues+1)", F.GetBoolean(c, &vr, 1, b, 2));
    call("fmi3GetFloat64(values=NULL)", F.GetFloat64(c, &vr, 1, NULL, 1));
    call("fmi3SetFloat64(vr=NULL)", F.SetFloat64(c, NULL, 1, d, 1));
    for (int k = 0; k < opt.n_undeclared; k++) {
        const fmi3ValueReference u = opt.undeclared[k];
        const fmi3Boolean on = true;
        const fmi3Float64 start = 0.5;
        char name[64];
        snprintf(name, sizeof name, "fmi3GetFloat64(%u)", u);
        call(name, F.GetFloat64(c, &u, 1, d, 1));
        snprintf(name, sizeof name, "fmi3GetBoolean(%u)", u);
        call(name, F.GetBoolean(c, &u, 1, b, 1));
        snprintf(name, sizeof name, "fmi3SetBoolean(%u)", u);
        call(name, F.SetBoolean(c, &u, 1, &on, 1));
        snprintf(name, sizeof name, "fmi3SetFloat64(%u)", u);
        call(name, F.SetFloat64(c, &u, 1, &start, 1));
    }
    Clock clk = {0.0, 0};
    run_steps(c, &clk, TO_STOP);
    return 0;
}

/* The FMI 2.0 build next to the FMI 3.0 one: both step the grid without permissions. */
static int scenario_both(fmi3Instance c)
{
    if (!opt.dir2) {
        fprintf(stderr, "fmi3_host: scenario both needs -2 UNZIPDIR,GUID\n");
        return 2;
    }
    char path[4096], uri[4200];
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", opt.dir2, opt.model);
    void* lib = load(path);
    fmi2Component (*instantiate2)(const char*, int, const char*, const char*, const fmi2CallbackFunctions*, int,
                                  int) = sym(lib, "fmi2Instantiate");
    fmi2Status (*setup)(fmi2Component, int, double, double, int, double) = sym(lib, "fmi2SetupExperiment");
    fmi2Status (*enterInit)(fmi2Component) = sym(lib, "fmi2EnterInitializationMode");
    fmi2Status (*exitInit)(fmi2Component) = sym(lib, "fmi2ExitInitializationMode");
    fmi2Status (*setReal)(fmi2Component, const fmi2ValueReference*, size_t, const double*) =
        sym(lib, "fmi2SetReal");
    fmi2Status (*setInteger)(fmi2Component, const fmi2ValueReference*, size_t, const int*) =
        sym(lib, "fmi2SetInteger");
    fmi2Status (*setBoolean)(fmi2Component, const fmi2ValueReference*, size_t, const int*) =
        sym(lib, "fmi2SetBoolean");
    fmi2Status (*getReal)(fmi2Component, const fmi2ValueReference*, size_t, double*) = sym(lib, "fmi2GetReal");
    fmi2Status (*getInteger)(fmi2Component, const fmi2ValueReference*, size_t, int*) = sym(lib, "fmi2GetInteger");
    fmi2Status (*getBoolean)(fmi2Component, const fmi2ValueReference*, size_t, int*) = sym(lib, "fmi2GetBoolean");
    fmi2Status (*doStep)(fmi2Component, double, double, int) = sym(lib, "fmi2DoStep");
    fmi2Status (*terminate2)(fmi2Component) = sym(lib, "fmi2Terminate");
    void (*free2)(fmi2Component) = sym(lib, "fmi2FreeInstance");
    const char* (*version2)(void) = sym(lib, "fmi2GetVersion");
    printf("fmi2GetVersion %s\n", version2());
    snprintf(uri, sizeof uri, "file://%s/resources", opt.dir2);
    fmi2CallbackFunctions cb = {logger2, calloc, free, NULL, NULL};
    fmi2Component c2 = instantiate2("fmi2", 1 /* fmi2CoSimulation */, opt.guid2, uri, &cb, 0, 0);
    printf("call fmi2Instantiate %s\n", c2 ? "instance" : "NULL");
    if (!c2) return 3;
    call("fmi2SetupExperiment", setup(c2, 0, 0.0, 0.0, 1, opt.stop));
    call("fmi2EnterInitializationMode", enterInit(c2));
    for (int k = 0; k < opt.n_par; k++) {
        const Spec* s = &opt.par[k];
        const fmi2ValueReference vr = s->vr;
        if (s->kind == 'r') {
            call("fmi2SetReal", setReal(c2, &vr, 1, &s->value));
        } else {
            const int v = s->kind == 'i' ? (int)s->value : s->value != 0.0;
            call(s->kind == 'i' ? "fmi2SetInteger" : "fmi2SetBoolean",
                 (s->kind == 'i' ? setInteger : setBoolean)(c2, &vr, 1, &v));
        }
    }
    call("fmi2ExitInitializationMode", exitInit(c2));
    if (initialize(c) > 1) return 0;
    Clock clk = {0.0, 0};
    while (!(clk.t > opt.stop || isclose(clk.t, opt.stop))) {
        double next = (clk.n + 1) * opt.step;
        if (next > opt.stop && !isclose(next, opt.stop)) next = opt.stop;
        const double t = clk.t, h = next - t;
        /* the FMI 3.0 instance: one step of run_steps (no permissions: it ends at next) */
        if (run_steps(c, &clk, ONE_STEP)) return 0;
        fmi2Status st = doStep(c2, t, h, 1);
        printf("step2 %.17g %.17g %d :", t, h, st);
        for (int k = 0; k < opt.n_out; k++) {
            const fmi2ValueReference vr = opt.out[k].vr;
            double y = 0.0;
            int v = 0;
            fmi2Status g = opt.out[k].kind == 'r' ? getReal(c2, &vr, 1, &y)
                           : (opt.out[k].kind == 'i' ? getInteger : getBoolean)(c2, &vr, 1, &v);
            if (opt.out[k].kind != 'r') y = v;
            if (g > 1)
                printf(" get-failed-%d", g);
            else
                printf(" %.17g", y);
        }
        printf("\n");
        fflush(stdout);
        if (st > 1) return 0;
    }
    call("fmi2Terminate", terminate2(c2));
    free2(c2);
    return 0;
}

static int parse_spec(const char* text, Spec* s, bool with_value)
{
    if (*text != 'r' && *text != 'i' && *text != 'b') return -1;
    s->kind = *text++;
    char* end;
    unsigned long vr = strtoul(text, &end, 10);
    if (end == text) return -1;
    s->vr = (fmi3ValueReference)vr;
    if (!with_value) return (int)(end - text) + 1;
    if (*end != '=') return -1;
    s->value = strtod(end + 1, &end);
    return *end ? -1 : 0;
}

static int parse_outputs(const char* text)
{
    while (*text && opt.n_out < MAXV) {
        int used = parse_spec(text, &opt.out[opt.n_out], false);
        if (used < 0) return -1;
        opt.n_out++;
        text += used;
        if (*text == ',') text++;
        else if (*text) return -1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: fmi3_host [-l LIBPYTHON] [-p SPEC=VALUE] [-a SPEC=VALUE] [-o SPECS] [-E] [-M] [-N] [-I] [-U MODE] "
                    "[-2 UNZIPDIR,GUID] [-X CASE] [-V VRS] run|unsupported|reset|state|both|state-misuse|values UNZIPDIR MODEL TOKEN STOP STEP\n");
    return 2;
}

int main(int argc, char** argv)
{
    const char* libpython = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        const char o = argv[a][1];
        if (o == 'E') { opt.early = true; continue; }
        if (o == 'M') { opt.event_mode = true; continue; }
        if (o == 'N') { opt.no_logger = true; continue; }
        if (o == 'I') { opt.ignore_early = true; continue; }
        if (a + 1 >= argc) return usage();
        const char* val = argv[++a];
        int bad = 0;
        if (o == 'l') libpython = val;
        else if (o == 'p' && opt.n_par < MAXV) bad = parse_spec(val, &opt.par[opt.n_par++], true);
        else if (o == 'a' && opt.n_after < MAXV) bad = parse_spec(val, &opt.after[opt.n_after++], true);
        else if (o == 'o') bad = parse_outputs(val);
        else if (o == 'U') {
            opt.update = !strcmp(val, "accept") ? 2 : !strcmp(val, "decline") ? 1 : 0;
            bad = !opt.update;
        }
        else if (o == 'X') opt.bad = val;
        else if (o == 'V') {
            const char* t = val;
            while (*t && opt.n_undeclared < MAXV) {
                char* end;
                opt.undeclared[opt.n_undeclared++] = (fmi3ValueReference)strtoul(t, &end, 10);
                if (end == t || (*end && *end != ',')) return usage();
                t = *end ? end + 1 : end;
            }
        }
        else if (o == '2') {
            static char copy[4096];
            snprintf(copy, sizeof copy, "%s", val);
            char* comma = strchr(copy, ',');
            if (!comma) return usage();
            *comma = '\0';
            opt.dir2 = copy;
            opt.guid2 = comma + 1;
        } else return usage();
        if (bad) {
            fprintf(stderr, "fmi3_host: bad value %s for -%c\n", val, o);
            return 2;
        }
    }
    if (argc - a != 6) return usage();
    opt.scenario = argv[a];
    opt.dir = argv[a + 1];
    opt.model = argv[a + 2];
    opt.token = argv[a + 3];
    opt.stop = strtod(argv[a + 4], NULL);
    opt.step = strtod(argv[a + 5], NULL);
    if (!(opt.step > 0) || !(opt.stop > 0)) return usage();
    if (libpython && !dlopen(libpython, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "fmi3_host: cannot load %s: %s\n", libpython, dlerror());
        return 2;
    }
    load3();
    int (*scenario)(fmi3Instance) = NULL;
    if (!strcmp(opt.scenario, "run")) scenario = scenario_run;
    else if (!strcmp(opt.scenario, "unsupported")) scenario = scenario_unsupported;
    else if (!strcmp(opt.scenario, "reset")) scenario = scenario_reset;
    else if (!strcmp(opt.scenario, "state")) scenario = scenario_state;
    else if (!strcmp(opt.scenario, "both")) scenario = scenario_both;
    else if (!strcmp(opt.scenario, "state-misuse")) scenario = scenario_state_misuse;
    else if (!strcmp(opt.scenario, "values")) scenario = scenario_values;
    else return usage();
    fmi3Instance c = instantiate(opt.model);
    int rc = scenario(c);
    if (!failed_initialization) call("fmi3Terminate", F.Terminate(c));
    F.FreeInstance(c);
    printf("end\n");
    return rc;
}
