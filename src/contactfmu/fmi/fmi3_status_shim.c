/*
 * contactfmu FMI 3.0 status shim: the FMU's binary in front of pythonfmu3's export library.
 *
 * Why it exists. pythonfmu3's native library (0.3.4) reports a setter, a getter or
 * fmi3ExitInitializationMode as fmi3OK or, for a Python exception, fmi3Fatal: a parameter the
 * slave refuses is logged as an error and the call returns fmi3OK. And it throws a C++ exception
 * out of the functions it does not implement (Float32, Int8, ..., clocks, binaries), which aborts
 * the host. This file, written for contactfmu like the FMI 2.0 shim (fmi2_status_shim.c),
 * forwards the FMI 3.0 calls the project's slaves answer to pythonfmu3's library (shipped next to
 * it as <modelIdentifier>_pythonfmu3.so) and adds:
 *
 *  - one rule for the status of every forwarded call: fmi3Error if the Python slave logged a
 *    message of status fmi3Error (or worse) during the call, else pythonfmu3's status. The shim
 *    counts the error messages passing its logger (pythonfmu3 hands them over before the call
 *    returns);
 *  - every function the slaves do not implement (variable types other than Float64, Int32 and
 *    Boolean, clocks, Model Exchange and Scheduled Execution, derivatives, dependencies,
 *    configuration mode) answers fmi3Error with a message, or NULL for the other instantiation
 *    functions, without reaching pythonfmu3's library.
 *
 *  - the FMU state functions hardened as in the FMI 2.0 shim (shim_common.c): a NULL state pointer
 *    is fmi3Error (pythonfmu3's library dereferences it), bytes that are no state of this FMU make
 *    fmi3DeserializeFMUState return fmi3Error and no state, with the reason logged; a state
 *    pointer handed back to fmi3GetFMUState is freed and holds the new state (pythonfmu3's
 *    library leaked it); fmi3FreeFMUState returns NULL in its argument;
 *
 *  - early return and events in fmi3DoStep, which pythonfmu3's library does not have: the shim
 *    hands the importer's permissions (earlyReturnAllowed, eventModeUsed) to the slave through
 *    value references of its own (CONTROL_VR), and after each step reads from the slave the time
 *    it reached and whether it ended at an event, to answer earlyReturn, lastSuccessfulTime and
 *    eventHandlingNeeded; with an intermediate-update callback it asks the importer at each
 *    event whether to return there, and goes on to the step's end if not. Those value references
 *    are the shim's alone: the getters and setters refuse them from the importer with fmi3Error
 *    (shim_check_values), as they refuse NULL arrays and an nValues other than nValueReferences
 *    (every variable is a scalar; pythonfmu3's library read past its list and left a Python
 *    exception set);
 *
 *  - the start time: pythonfmu3's fmi3EnterInitializationMode does not pass startTime to the
 *    slave, so an FMU started at any time but 0 refused its first step; the shim sets it first
 *    through the same channel;
 *
 *  - the Python runtime (shim_common.c, "finding libpython"): before loading pythonfmu3's library
 *    the shim makes a libpython 3 global in the process, as the FMI 2.0 shim does; a C host needs
 *    no environment set-up;
 *
 *  - fmi3InstantiateCoSimulation refuses, with NULL and a message, what pythonfmu3's library
 *    crashes or hangs on: a NULL or non-UTF-8 instance name, an instantiation token that is not
 *    the model description's, a resource path that is no resources folder holding the FMU's
 *    Python code (NULL, missing).
 *
 * The FMI 3.0 types are declared here from the standard's ABI (fmi3PlatformTypes: bool,
 * uint32_t value references, double, int32_t, void pointers); only the C standard library and
 * libdl are used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3_modes.h"
#include "shim_common.h"

typedef void* fmi3Instance;
typedef void* fmi3InstanceEnvironment;
typedef void* fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef float fmi3Float32;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String;
typedef uint8_t fmi3Byte;
typedef const fmi3Byte* fmi3Binary;
typedef bool fmi3Clock;
typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;
typedef int fmi3DependencyKind;    /* an enum of the standard: int-sized */
typedef int fmi3IntervalQualifier; /* likewise */

typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64, fmi3Boolean, fmi3Boolean,
                                               fmi3Boolean, fmi3Boolean, fmi3Boolean*, fmi3Float64*);
typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment);
typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);

#ifndef CONTACTFMU_CONTROL_VR
#error "compile with -DCONTACTFMU_CONTROL_VR=<contactfmu.fmi.shim.CONTROL_VR>u (contactfmu.build does)"
#endif
/* The slave's channel for the shim (contactfmu/fmi/shim.py): Booleans set: early return allowed,
   event mode used; Booleans read after a step: it returned early, an event happened in it; the
   Float64 read after a step: the time it reached. */
#define CONTROL_VR ((fmi3ValueReference)CONTACTFMU_CONTROL_VR)

/* One instance: what both shims share, the host's logger and its permissions. */
typedef struct {
    ShimBase base; /* first: a Shim* is a ShimBase* */
    fmi3LogMessageCallback log;
    fmi3InstanceEnvironment env;
    fmi3Boolean early_return_allowed, event_mode_used;
    fmi3IntermediateUpdateCallback update; /* NULL: the importer takes no intermediate update */
    Mode mode;                             /* the state machine's state (fmi3_modes.h) */
    int in_update;                         /* inside the intermediateUpdate callback */
    int free_pending;                      /* fmi3FreeInstance called inside it: freed after the step */
    unsigned categories;                   /* fmi3SetDebugLogging's categories (bits of LOG_CATEGORIES), 0: all */
} Shim;

static const char* const LOG_CATEGORIES[] = {CONTACTFMU_LOG_CATEGORIES};
#define N_CATEGORIES (sizeof LOG_CATEGORIES / sizeof LOG_CATEGORIES[0])

/* The index of a declared log category, or N_CATEGORIES. */
static size_t category_index(const char* category)
{
    size_t k = 0;
    while (category && k < N_CATEGORIES && strcmp(category, LOG_CATEGORIES[k]) != 0) k++;
    return category ? k : N_CATEGORIES;
}

/* ---- the inner library: the functions forwarded ------------------------------------------
   X(name, parameters after the instance, the same as arguments) */

#define VR const fmi3ValueReference* vr, size_t nvr
#define FORWARDED(X) \
    X(fmi3UpdateDiscreteStates, (fmi3Boolean* needUpdate, fmi3Boolean* terminate, fmi3Boolean* nominalsChanged, fmi3Boolean* valuesChanged, fmi3Boolean* nextDefined, fmi3Float64* next), (needUpdate, terminate, nominalsChanged, valuesChanged, nextDefined, next), MAY_UPDATE_DISCRETE_STATES)

/* the getters and setters */
#define ACCESSED(X) \
    X(fmi3GetFloat64, (VR, fmi3Float64 values[], size_t n), (vr, nvr, values, n), MAY_GET) \
    X(fmi3SetFloat64, (VR, const fmi3Float64 values[], size_t n), (vr, nvr, values, n), MAY_SET) \
    X(fmi3GetInt32, (VR, fmi3Int32 values[], size_t n), (vr, nvr, values, n), MAY_GET) \
    X(fmi3SetInt32, (VR, const fmi3Int32 values[], size_t n), (vr, nvr, values, n), MAY_SET) \
    X(fmi3GetBoolean, (VR, fmi3Boolean values[], size_t n), (vr, nvr, values, n), MAY_GET) \
    X(fmi3SetBoolean, (VR, const fmi3Boolean values[], size_t n), (vr, nvr, values, n), MAY_SET)

/* those without a further parameter: X(name, the states it is allowed in, the state it leads to) */
#define FORWARDED0(X) \
    X(fmi3ExitInitializationMode, MAY_EXIT_INITIALIZATION, s->event_mode_used ? MODE_EVENT : MODE_STEP) \
    X(fmi3EnterEventMode, MAY_ENTER_EVENT_MODE, MODE_EVENT) \
    X(fmi3EnterStepMode, MAY_ENTER_STEP_MODE, MODE_STEP) \
    X(fmi3Terminate, MAY_TERMINATE, MODE_TERMINATED)

/* the inner functions the shim calls from its own fmi3DoStep, fmi3Reset and FMU state functions */
#define WRAPPED(X) \
    X(fmi3SetDebugLogging, (), ()) \
    X(fmi3EnterInitializationMode, (), ()) \
    X(fmi3DoStep, (fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSetPrior, fmi3Boolean* eventNeeded, fmi3Boolean* terminate, fmi3Boolean* earlyReturn, fmi3Float64* lastTime), ()) \
    X(fmi3Reset, (), ()) \
    X(fmi3GetFMUState, (), ()) \
    X(fmi3SetFMUState, (), ()) \
    X(fmi3FreeFMUState, (), ()) \
    X(fmi3SerializedFMUStateSize, (), ()) \
    X(fmi3SerializeFMUState, (), ()) \
    X(fmi3DeserializeFMUState, (), ())

/* the functions answered with fmi3Error: X(name, parameters after the instance) */
#define REFUSED(X) \
    X(fmi3GetFloat32, (VR, fmi3Float32 v[], size_t n)) X(fmi3SetFloat32, (VR, const fmi3Float32 v[], size_t n)) \
    X(fmi3GetInt8, (VR, fmi3Int8 v[], size_t n)) X(fmi3SetInt8, (VR, const fmi3Int8 v[], size_t n)) \
    X(fmi3GetUInt8, (VR, fmi3UInt8 v[], size_t n)) X(fmi3SetUInt8, (VR, const fmi3UInt8 v[], size_t n)) \
    X(fmi3GetInt16, (VR, fmi3Int16 v[], size_t n)) X(fmi3SetInt16, (VR, const fmi3Int16 v[], size_t n)) \
    X(fmi3GetUInt16, (VR, fmi3UInt16 v[], size_t n)) X(fmi3SetUInt16, (VR, const fmi3UInt16 v[], size_t n)) \
    X(fmi3GetUInt32, (VR, fmi3UInt32 v[], size_t n)) X(fmi3SetUInt32, (VR, const fmi3UInt32 v[], size_t n)) \
    X(fmi3GetInt64, (VR, fmi3Int64 v[], size_t n)) X(fmi3SetInt64, (VR, const fmi3Int64 v[], size_t n)) \
    X(fmi3GetUInt64, (VR, fmi3UInt64 v[], size_t n)) X(fmi3SetUInt64, (VR, const fmi3UInt64 v[], size_t n)) \
    X(fmi3GetString, (VR, fmi3String v[], size_t n)) X(fmi3SetString, (VR, const fmi3String v[], size_t n)) \
    X(fmi3GetBinary, (VR, size_t sizes[], fmi3Binary v[], size_t n)) \
    X(fmi3SetBinary, (VR, const size_t sizes[], const fmi3Binary v[], size_t n)) \
    X(fmi3GetClock, (VR, fmi3Clock v[])) X(fmi3SetClock, (VR, const fmi3Clock v[])) \
    X(fmi3GetNumberOfVariableDependencies, (fmi3ValueReference vr, size_t* n)) \
    X(fmi3GetVariableDependencies, (fmi3ValueReference dependent, size_t ei[], fmi3ValueReference ind[], size_t eii[], fmi3DependencyKind kinds[], size_t n)) \
    X(fmi3GetDirectionalDerivative, (const fmi3ValueReference u[], size_t nu, const fmi3ValueReference k[], size_t nk, const fmi3Float64 seed[], size_t ns, fmi3Float64 sens[], size_t nsens)) \
    X(fmi3GetAdjointDerivative, (const fmi3ValueReference u[], size_t nu, const fmi3ValueReference k[], size_t nk, const fmi3Float64 seed[], size_t ns, fmi3Float64 sens[], size_t nsens)) \
    X(fmi3GetIntervalDecimal, (VR, fmi3Float64 intervals[], fmi3IntervalQualifier q[])) \
    X(fmi3GetIntervalFraction, (VR, fmi3UInt64 counters[], fmi3UInt64 resolutions[], fmi3IntervalQualifier q[])) \
    X(fmi3GetShiftDecimal, (VR, fmi3Float64 shifts[])) \
    X(fmi3GetShiftFraction, (VR, fmi3UInt64 counters[], fmi3UInt64 resolutions[])) \
    X(fmi3SetIntervalDecimal, (VR, const fmi3Float64 intervals[])) \
    X(fmi3SetIntervalFraction, (VR, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])) \
    X(fmi3SetShiftDecimal, (VR, const fmi3Float64 shifts[])) \
    X(fmi3SetShiftFraction, (VR, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])) \
    X(fmi3CompletedIntegratorStep, (fmi3Boolean noSetPrior, fmi3Boolean* enterEventMode, fmi3Boolean* terminate)) \
    X(fmi3SetTime, (fmi3Float64 time)) \
    X(fmi3SetContinuousStates, (const fmi3Float64 x[], size_t n)) \
    X(fmi3GetContinuousStateDerivatives, (fmi3Float64 dx[], size_t n)) \
    X(fmi3GetEventIndicators, (fmi3Float64 z[], size_t n)) \
    X(fmi3GetContinuousStates, (fmi3Float64 x[], size_t n)) \
    X(fmi3GetNominalsOfContinuousStates, (fmi3Float64 x[], size_t n)) \
    X(fmi3GetNumberOfEventIndicators, (size_t* n)) \
    X(fmi3GetNumberOfContinuousStates, (size_t* n)) \
    X(fmi3GetOutputDerivatives, (VR, const fmi3Int32 orders[], fmi3Float64 v[], size_t n)) \
    X(fmi3ActivateModelPartition, (fmi3ValueReference clock, fmi3Float64 time))

#define REFUSED0(X) X(fmi3EnterConfigurationMode) X(fmi3ExitConfigurationMode) X(fmi3EvaluateDiscreteStates) \
    X(fmi3EnterContinuousTimeMode)

/* "(a, b)" -> "a, b": to append parameters to the instance's */
#define UNPAREN(...) __VA_ARGS__

typedef fmi3Instance (*instantiate_fn)(fmi3String, fmi3String, fmi3String, fmi3Boolean, fmi3Boolean, fmi3Boolean,
                                       fmi3Boolean, const fmi3ValueReference[], size_t, fmi3InstanceEnvironment,
                                       fmi3LogMessageCallback, fmi3IntermediateUpdateCallback);
typedef void (*free_fn)(fmi3Instance);
static instantiate_fn p_fmi3InstantiateCoSimulation = NULL;
static free_fn p_fmi3FreeInstance = NULL;

#define DECLARE(name, ...) static void* p_##name = NULL;
FORWARDED(DECLARE)
ACCESSED(DECLARE)
FORWARDED0(DECLARE)
WRAPPED(DECLARE)

static char resolve_error[512] = "";
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static void* inner_library = NULL;

static void resolve(void)
{
#define RESOLVE(name, ...) \
    if (!(p_##name = dlsym(inner_library, #name)) && !resolve_error[0]) \
        snprintf(resolve_error, sizeof resolve_error, "contactfmu: pythonfmu3's library misses %s", #name);
    FORWARDED(RESOLVE)
    ACCESSED(RESOLVE)
    FORWARDED0(RESOLVE)
    WRAPPED(RESOLVE)
    p_fmi3InstantiateCoSimulation = (instantiate_fn)dlsym(inner_library, "fmi3InstantiateCoSimulation");
    p_fmi3FreeInstance = (free_fn)dlsym(inner_library, "fmi3FreeInstance");
    if ((!p_fmi3InstantiateCoSimulation || !p_fmi3FreeInstance) && !resolve_error[0])
        snprintf(resolve_error, sizeof resolve_error, "contactfmu: pythonfmu3's library lacks FMI 3.0 functions");
}

/* The logger handed to pythonfmu3: count the errors, pass every message on to the host's. */
static void shim_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    Shim* s = (Shim*)env;
    if (!s) return;
    if (status >= fmi3Error) s->base.errors++;
    /* the categories chosen with fmi3SetDebugLogging filter what reaches the host, but errors */
    if (status < fmi3Error && s->categories && !(s->categories >> category_index(category) & 1u)) return;
    if (s->log) s->log(s->env, status, category, message);
}

/* The shim's own messages (ShimBase.say). */
static void say(ShimBase* b, int status, const char* text)
{
    Shim* s = (Shim*)b;
    if (s && s->log) s->log(s->env, (fmi3Status)status, status >= fmi3Error ? "logStatusError" : "logAll", text);
}

/* pythonfmu3's library with its functions resolved; 0 with the reason logged. */
static int load_inner(Shim* s)
{
    if (!(inner_library = shim_load_inner("_pythonfmu3.so", 0))) {
        say(&s->base, fmi3Error, shim_load_error());
        return 0;
    }
    pthread_once(&resolved, resolve);
    if (resolve_error[0]) say(&s->base, fmi3Error, resolve_error);
    return !resolve_error[0];
}

typedef fmi3Status (*set_boolean_fn)(fmi3Instance, const fmi3ValueReference*, size_t, const fmi3Boolean*, size_t);
typedef fmi3Status (*get_boolean_fn)(fmi3Instance, const fmi3ValueReference*, size_t, fmi3Boolean*, size_t);
typedef fmi3Status (*get_float64_fn)(fmi3Instance, const fmi3ValueReference*, size_t, fmi3Float64*, size_t);
typedef fmi3Status (*do_step_fn)(fmi3Instance, fmi3Float64, fmi3Float64, fmi3Boolean, fmi3Boolean*, fmi3Boolean*,
                                 fmi3Boolean*, fmi3Float64*);

/* The importer's permissions to the slave (after instantiation and reset). */
static fmi3Status tell_permissions(Shim* s)
{
    const fmi3ValueReference vr[2] = {CONTROL_VR, CONTROL_VR + 1};
    const fmi3Boolean allowed[2] = {s->early_return_allowed, s->event_mode_used};
    return ((set_boolean_fn)p_fmi3SetBoolean)(s->base.inner, vr, 2, allowed, 2);
}

/* ---- the FMI 3.0 functions ----------------------------------------------------------------- */

EXPORT const char* fmi3GetVersion(void) { return "3.0"; }

EXPORT fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference requiredIntermediateVariables[], size_t nRequiredIntermediateVariables,
    fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3IntermediateUpdateCallback intermediateUpdate)
{
    Shim* s = (Shim*)calloc(1, sizeof(Shim));
    if (!s) return NULL;
    s->base.say = say;
    s->log = logMessage;
    s->env = instanceEnvironment;
    s->early_return_allowed = earlyReturnAllowed;
    s->event_mode_used = eventModeUsed;
    s->update = intermediateUpdate;
    if (!load_inner(s) ||
        !shim_check_instantiation(&s->base, instanceName, "instantiationToken", instantiationToken, resourcePath)) {
        free(s);
        return NULL;
    }
    shim_take_warning(&s->base);
    s->base.inner = p_fmi3InstantiateCoSimulation(instanceName, instantiationToken, resourcePath, visible, loggingOn,
                                                  eventModeUsed, earlyReturnAllowed, requiredIntermediateVariables,
                                                  nRequiredIntermediateVariables, s, shim_log, NULL);
    shim_python_started();
    if (!s->base.inner || tell_permissions(s) >= fmi3Error) {
        if (s->base.inner) p_fmi3FreeInstance(s->base.inner);
        free(s);
        return NULL;
    }
    return s;
}

EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                                 fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                                 fmi3InstanceEnvironment instanceEnvironment,
                                                 fmi3LogMessageCallback logMessage)
{
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible, (void)loggingOn;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "contactfmu: this FMU is for co-simulation only (no Model Exchange)");
    return NULL;
}

EXPORT fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lock, fmi3UnlockPreemptionCallback unlock)
{
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible, (void)loggingOn;
    (void)clockUpdate, (void)lock, (void)unlock;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "contactfmu: this FMU is for co-simulation only (no Scheduled Execution)");
    return NULL;
}

EXPORT void fmi3FreeInstance(fmi3Instance instance)
{
    Shim* s = (Shim*)instance;
    if (!s) return;
    if (s->in_update) {
        shim_say(&s->base, fmi3Error, "contactfmu: fmi3FreeInstance is not allowed in Intermediate Update Mode "
                 "(inside the intermediateUpdate callback): the instance is freed when fmi3DoStep returns");
        s->free_pending = 1;
        return;
    }
    if (s->base.inner) p_fmi3FreeInstance(s->base.inner);
    free(s);
}

/* The status rule: fmi3Error if the slave logged an error during the call; a call outside the
   states that allow it (fmi3_modes.h) is refused first. */
#define ALLOWED(s, mask, name) mode_allows(&(s)->base, (s)->mode, (s)->in_update, (mask), name)
#define FORWARD(name, params, args, mask) \
    EXPORT fmi3Status name(fmi3Instance instance, UNPAREN params) \
    { \
        Shim* s = (Shim*)instance; \
        if (!s) return fmi3Error; \
        if (!ALLOWED(s, mask, #name)) return fmi3Error; \
        unsigned long before = s->base.errors; \
        fmi3Status status = ((fmi3Status (*)(fmi3Instance, UNPAREN params))p_##name)(s->base.inner, UNPAREN args); \
        return (fmi3Status)shim_ruled(&s->base, before, status); \
    }
/* a mode change: the new state once the call succeeded */
#define FORWARD0(name, mask, next) \
    EXPORT fmi3Status name(fmi3Instance instance) \
    { \
        Shim* s = (Shim*)instance; \
        if (!s) return fmi3Error; \
        if (!ALLOWED(s, mask, #name)) return fmi3Error; \
        if ((mask) == MAY_ENTER_EVENT_MODE && !s->event_mode_used) { \
            shim_say(&s->base, fmi3Error, "contactfmu: " #name " is not allowed: the instance was made with " \
                     "eventModeUsed = false (it never enters Event Mode)"); \
            return fmi3Error; \
        } \
        unsigned long before = s->base.errors; \
        fmi3Status status = ((fmi3Status (*)(fmi3Instance))p_##name)(s->base.inner); \
        status = (fmi3Status)shim_ruled(&s->base, before, status); \
        if (status < fmi3Error) s->mode = (next); \
        return status; \
    }
/* a getter or setter: its arrays checked first (shim_check_values) */
#define ACCESS(name, params, args, mask) \
    EXPORT fmi3Status name(fmi3Instance instance, UNPAREN params) \
    { \
        Shim* s = (Shim*)instance; \
        if (!s) return fmi3Error; \
        if (!ALLOWED(s, mask, #name)) return fmi3Error; \
        if (!shim_check_values(&s->base, #name, vr, nvr, values, n)) return fmi3Error; \
        unsigned long before = s->base.errors; \
        fmi3Status status = ((fmi3Status (*)(fmi3Instance, UNPAREN params))p_##name)(s->base.inner, UNPAREN args); \
        return (fmi3Status)shim_ruled(&s->base, before, status); \
    }
FORWARDED(FORWARD)
ACCESSED(ACCESS)
FORWARDED0(FORWARD0)

/* pythonfmu3's library (0.3.4) does not pass startTime to the slave: an FMU started at any time
   but 0 refused its first fmi3DoStep. The shim passes it first, through its channel (the Float64
   CONTROL_VR set: the slave's setup_experiment(startTime)). */
typedef fmi3Status (*set_float64_fn)(fmi3Instance, const fmi3ValueReference*, size_t, const fmi3Float64*, size_t);
typedef fmi3Status (*enter_initialization_fn)(fmi3Instance, fmi3Boolean, fmi3Float64, fmi3Float64, fmi3Boolean,
                                              fmi3Float64);

EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean tolDefined, fmi3Float64 tol,
                                              fmi3Float64 start, fmi3Boolean stopDefined, fmi3Float64 stop)
{
    Shim* s = (Shim*)instance;
    if (!s) return fmi3Error;
    if (!ALLOWED(s, MAY_ENTER_INITIALIZATION, "fmi3EnterInitializationMode")) return fmi3Error;
    unsigned long before = s->base.errors;
    const fmi3ValueReference vr = CONTROL_VR;
    fmi3Status status = ((set_float64_fn)p_fmi3SetFloat64)(s->base.inner, &vr, 1, &start, 1);
    if (status < fmi3Error && s->base.errors == before) {
        fmi3Status entered = ((enter_initialization_fn)p_fmi3EnterInitializationMode)(s->base.inner, tolDefined, tol,
                                                                                        start, stopDefined, stop);
        if (entered > status) status = entered;
    }
    status = status < fmi3Error && s->base.errors > before ? fmi3Error : status;
    if (status < fmi3Error) s->mode = MODE_INITIALIZATION;
    return status;
}

/* fmi3SetDebugLogging: every category named must be one the model description declares. The
   shim keeps the categories and filters the messages for the host itself (pythonfmu3's library
   dropped the messages of the other categories, errors too: a refused call then returned fmi3OK). */
EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean on, size_t n, const fmi3String categories[])
{
    Shim* s = (Shim*)instance;
    if (!s) return fmi3Error;
    if (!ALLOWED(s, MAY_SET_DEBUG_LOGGING, "fmi3SetDebugLogging")) return fmi3Error;
    if (n && !categories) {
        shim_say(&s->base, fmi3Error, "contactfmu: fmi3SetDebugLogging: nCategories = %zu, but categories is NULL", n);
        return fmi3Error;
    }
    unsigned chosen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = category_index(categories[i]);
        if (k == N_CATEGORIES) {
            char declared[512] = "";
            for (k = 0; k < N_CATEGORIES; k++)
                snprintf(declared + strlen(declared), sizeof declared - strlen(declared), "%s%s", k ? ", " : "",
                         LOG_CATEGORIES[k]);
            shim_say(&s->base, fmi3Error,
                     "contactfmu: fmi3SetDebugLogging: category %.200s is undeclared in this FMU (its "
                     "LogCategories: %s): refused, the logging setting kept",
                     !categories[i] ? "NULL" : shim_is_utf8(categories[i]) ? categories[i] : "(not UTF-8)", declared);
            return fmi3Error;
        }
        chosen |= 1u << k;
    }
    unsigned long before = s->base.errors;
    typedef fmi3Status (*debug_fn)(fmi3Instance, fmi3Boolean, size_t, const fmi3String[]);
    fmi3Status status = ((debug_fn)p_fmi3SetDebugLogging)(s->base.inner, on, 0, NULL);
    status = (fmi3Status)shim_ruled(&s->base, before, status);
    if (status < fmi3Error) s->categories = chosen;
    return status;
}

EXPORT fmi3Status fmi3Reset(fmi3Instance instance)
{
    Shim* s = (Shim*)instance;
    if (!s) return fmi3Error;
    if (!ALLOWED(s, MAY_RESET, "fmi3Reset")) return fmi3Error;
    unsigned long before = s->base.errors;
    fmi3Status status = ((fmi3Status (*)(fmi3Instance))p_fmi3Reset)(s->base.inner);
    if (status < fmi3Error) { /* pythonfmu3 made a new slave: it has the permissions again */
        fmi3Status told = tell_permissions(s);
        if (told > status) status = told;
    }
    status = status < fmi3Error && s->base.errors > before ? fmi3Error : status;
    if (status < fmi3Error) s->mode = MODE_INSTANTIATED;
    return status;
}

/* ---- FMU state (shim_common.c) ---------------------------------------------------------- */

static const ShimStateCalls* state_calls(void)
{
    static ShimStateCalls f;
    f.get = (int (*)(void*, void**))p_fmi3GetFMUState;
    f.set = (int (*)(void*, void*))p_fmi3SetFMUState;
    f.free = (int (*)(void*, void**))p_fmi3FreeFMUState;
    f.size = (int (*)(void*, void*, size_t*))p_fmi3SerializedFMUStateSize;
    f.serialize = (int (*)(void*, void*, void*, size_t))p_fmi3SerializeFMUState;
    f.deserialize = (int (*)(void*, const void*, size_t, void**))p_fmi3DeserializeFMUState;
    return &f;
}

#define SHIM(instance, name) Shim* s = (Shim*)(instance); if (!s) return fmi3Error; \
    if (!ALLOWED(s, MAY_USE_FMU_STATE, name)) return fmi3Error;

EXPORT fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState* state)
{ SHIM(instance, "fmi3GetFMUState"); return (fmi3Status)shim_get_state(&s->base, state_calls(), "fmi3GetFMUState", state); }
EXPORT fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState state)
{ SHIM(instance, "fmi3SetFMUState"); return (fmi3Status)shim_set_state(&s->base, state_calls(), "fmi3SetFMUState", state); }
EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState* state)
{ SHIM(instance, "fmi3FreeFMUState"); return (fmi3Status)shim_free_state(&s->base, state_calls(), state); }
EXPORT fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState state, size_t* size)
{
    SHIM(instance, "fmi3SerializedFMUStateSize");
    return (fmi3Status)shim_state_size(&s->base, state_calls(), "fmi3SerializedFMUStateSize", state, size);
}
EXPORT fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState state, fmi3Byte bytes[], size_t size)
{
    SHIM(instance, "fmi3SerializeFMUState");
    return (fmi3Status)shim_serialize_state(&s->base, state_calls(), "fmi3SerializeFMUState", state, bytes, size);
}
EXPORT fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte bytes[], size_t size,
                                          fmi3FMUState* state)
{
    SHIM(instance, "fmi3DeserializeFMUState");
    return (fmi3Status)shim_deserialize_state(&s->base, state_calls(), "fmi3DeserializeFMUState", bytes, size,
                                              state);
}

/* One step of the slave from `now` over h, with what it reached: the time, whether it stopped at
   an event and whether one happened. */
static fmi3Status inner_step(Shim* s, fmi3Float64 now, fmi3Float64 h, fmi3Boolean no_set_prior, fmi3Boolean* terminate,
                             fmi3Float64* reached, fmi3Boolean flags[2])
{
    unsigned long before = s->base.errors;
    fmi3Boolean inner_event = false, inner_terminate = false, inner_early = false;
    fmi3Float64 inner_last = now;
    fmi3Status st = ((do_step_fn)p_fmi3DoStep)(s->base.inner, now, h, no_set_prior, &inner_event, &inner_terminate,
                                               &inner_early, &inner_last);
    if (st < fmi3Error && s->base.errors > before) st = fmi3Error;
    *terminate = *terminate || inner_terminate;
    const fmi3ValueReference tvr = CONTROL_VR;
    const fmi3ValueReference fvr[2] = {CONTROL_VR + 2, CONTROL_VR + 3};
    *reached = now;
    flags[0] = flags[1] = false;
    if (((get_float64_fn)p_fmi3GetFloat64)(s->base.inner, &tvr, 1, reached, 1) >= fmi3Error ||
        ((get_boolean_fn)p_fmi3GetBoolean)(s->base.inner, fvr, 2, flags, 2) >= fmi3Error) {
        if (st < fmi3Error) st = fmi3Error;
    }
    return st;
}

/* fmi3DoStep: the slave steps to the end, or, allowed to, to the first event in the step (the
   shim reads which). With an intermediate-update callback the importer decides at each event
   whether the step returns there (earlyReturnRequested with an earlyReturnTime not after it), or
   goes on: the slave then steps on from the event, to the step's end or to that time (or to the
   next event, offered again). */
EXPORT fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                             fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                             fmi3Boolean* eventHandlingNeeded, fmi3Boolean* terminateSimulation,
                             fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime)
{
    Shim* s = (Shim*)instance;
    if (!s) return fmi3Error;
    if (!ALLOWED(s, MAY_DO_STEP, "fmi3DoStep")) return fmi3Error;
    fmi3Boolean event = false, early = false, terminate = false;
    const fmi3Float64 end = currentCommunicationPoint + communicationStepSize;
    fmi3Float64 now = currentCommunicationPoint, target = end, h = communicationStepSize;
    fmi3Status status = fmi3OK;
    for (;;) {
        fmi3Boolean flags[2];
        fmi3Status st = inner_step(s, now, h, noSetFMUStatePriorToCurrentPoint, &terminate, &now, flags);
        if (st > status) status = st;
        if (st >= fmi3Discard) break; /* the step failed: lastSuccessfulTime is where it stopped */
        event = event || flags[1];
        if (!flags[0] || now >= target || !s->update) {
            early = now < end;
            break;
        }
        /* stopped at an event before the target: the importer decides */
        fmi3Boolean requested = false;
        fmi3Float64 when = now;
        s->in_update = 1;
        s->update(s->env, now, false, true, true, true, &requested, &when);
        s->in_update = 0;
        if (requested && !(when > now)) {
            early = true;
            break;
        }
        if (requested && when < target) target = when;
        h = target - now;
    }
    if (eventHandlingNeeded) *eventHandlingNeeded = s->event_mode_used && event && status < fmi3Discard;
    if (terminateSimulation) *terminateSimulation = terminate;
    if (earlyReturn) *earlyReturn = early && status < fmi3Discard;
    if (lastSuccessfulTime) *lastSuccessfulTime = now;
    if (s->free_pending) {
        s->free_pending = 0;
        fmi3FreeInstance(s);
    }
    return status;
}

/* Not implemented by the slaves: fmi3Error and a message naming the function. */
#define REFUSE(name, params) \
    EXPORT fmi3Status name(fmi3Instance instance, UNPAREN params) \
    { \
        say((ShimBase*)instance, fmi3Error, "contactfmu: " #name " is not supported by this FMU"); \
        return fmi3Error; \
    }
#define REFUSE0(name) \
    EXPORT fmi3Status name(fmi3Instance instance) \
    { \
        say((ShimBase*)instance, fmi3Error, "contactfmu: " #name " is not supported by this FMU"); \
        return fmi3Error; \
    }
REFUSED(REFUSE)
REFUSED0(REFUSE0)
