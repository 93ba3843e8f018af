/*
 * contactfmu status shim: the FMU's binary in front of pythonfmu's export library.
 *
 * Why it exists. pythonfmu's native library can only report fmi2OK, fmi2Discard (do_step
 * returned False) or fmi2Fatal (any Python exception, which also destroys the Python
 * instance), and it forwards log messages only when the host switched debug logging on.
 * The FMI 2.0 contract of this project needs more: a call that fails returns fmi2Error with a
 * message (invalid parameters, a refused value or value reference, a non-finite output, a
 * refused doStep or FMU state), and error messages reach the host whatever its logging
 * setting. This file, written for contactfmu, forwards every FMI 2.0 call to pythonfmu's
 * library (shipped next to it as <modelIdentifier>_pythonfmu.so) and adds exactly that:
 *
 *  - one rule for the status of every call: fmi2Error if the Python slave logged a message of
 *    status fmi2Error (or worse) during the call, else pythonfmu's status. The slave logs every
 *    failure it refuses or suffers (see the slave base, fmi/slave.py); the shim counts the error
 *    messages passing its logger, so this costs nothing on the path of a call that succeeds;
 *  - the FMU state functions hardened (shim_common.c): a NULL state pointer is fmi2Error, bytes
 *    that are not a state of this FMU make fmi2DeSerializeFMUstate return fmi2Error and no state,
 *    the reason logged; a state pointer handed back to fmi2GetFMUstate is freed and holds the new
 *    state; fmi2FreeFMUstate returns NULL in its argument;
 *  - fmi2Reset brings the time back to the start: pythonfmu re-creates the Python instance,
 *    and the shim repeats the last fmi2SetupExperiment for it (a host may call it again);
 *  - fmi2SetRealInputDerivatives and fmi2GetRealOutputDerivatives (first order), which
 *    pythonfmu does not implement, are mapped to the slave's derivative slots at value
 *    reference vr + CONTACTFMU_DERIVATIVE_VR (contactfmu/fmi/shim.py); the getters and setters
 *    refuse those value references (and NULL arrays) from the importer with fmi2Error;
 *  - messages of status warning and above always reach the host's logger; plain messages
 *    only when the host enabled logging. Messages are passed as "%s" arguments, so a '%'
 *    in a message cannot be misread as a format directive;
 *  - it brings the Python runtime itself (shim_common.c, "finding libpython"): pythonfmu's
 *    library is not linked against libpython, so before loading it the shim makes a libpython 3
 *    global in the process. A C host needs no environment set-up;
 *  - fmi2Instantiate refuses, with NULL and a message, what pythonfmu's library crashes on or
 *    cannot use: a NULL or non-UTF-8 instance name, a GUID that is not the model description's,
 *    a resource location that is no local file URI of a resources folder holding the FMU's
 *    Python code, and Model Exchange; the URI reaches pythonfmu decoded, as file://<path>;
 *  - every message it logs carries the instance name the host gave to fmi2Instantiate.
 *
 * The FMI 2.0 types are declared here from the standard's ABI (fmi2TypesPlatform: double,
 * int, char, unsigned int, void pointers); only the C standard library and libdl are used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_common.h"

#ifndef CONTACTFMU_DERIVATIVE_VR /* first derivative of variable vr: vr + this offset */
#error "compile with the -D definitions of contactfmu.fmi.shim.DEFINES (contactfmu.build does)"
#endif

typedef void* fmi2Component;
typedef void* fmi2ComponentEnvironment;
typedef void* fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char* fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;

typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
typedef void* (*fmi2CallbackAllocateMemory)(size_t, size_t);
typedef void (*fmi2CallbackFreeMemory)(void*);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);

typedef struct {
    fmi2CallbackLogger logger;
    fmi2CallbackAllocateMemory allocateMemory;
    fmi2CallbackFreeMemory freeMemory;
    fmi2StepFinished stepFinished;
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

/* One instance: what both shims share, the callbacks handed to pythonfmu and the host's. */
typedef struct {
    ShimBase base; /* first: a Shim* is a ShimBase* */
    fmi2CallbackFunctions host;
    fmi2CallbackFunctions mine;
    int loggingOn;
    int setup;     /* the last fmi2SetupExperiment, repeated after fmi2Reset */
    fmi2Boolean toleranceDefined, stopTimeDefined;
    fmi2Real tolerance, startTime, stopTime;
    char name[1024]; /* the host's instance name, for every message */
} Shim;

/* ---- the inner library ------------------------------------------------------------- */

#define INNER_FUNCTIONS(X) \
    X(fmi2GetTypesPlatform, const char*, (void)) \
    X(fmi2GetVersion, const char*, (void)) \
    X(fmi2SetDebugLogging, fmi2Status, (fmi2Component, fmi2Boolean, size_t, const fmi2String*)) \
    X(fmi2Instantiate, fmi2Component, (fmi2String, fmi2Type, fmi2String, fmi2String, const fmi2CallbackFunctions*, fmi2Boolean, fmi2Boolean)) \
    X(fmi2FreeInstance, void, (fmi2Component)) \
    X(fmi2SetupExperiment, fmi2Status, (fmi2Component, fmi2Boolean, fmi2Real, fmi2Real, fmi2Boolean, fmi2Real)) \
    X(fmi2EnterInitializationMode, fmi2Status, (fmi2Component)) \
    X(fmi2ExitInitializationMode, fmi2Status, (fmi2Component)) \
    X(fmi2Terminate, fmi2Status, (fmi2Component)) \
    X(fmi2Reset, fmi2Status, (fmi2Component)) \
    X(fmi2GetReal, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, fmi2Real*)) \
    X(fmi2GetInteger, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, fmi2Integer*)) \
    X(fmi2GetBoolean, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, fmi2Boolean*)) \
    X(fmi2GetString, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, fmi2String*)) \
    X(fmi2SetReal, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2Real*)) \
    X(fmi2SetInteger, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2Integer*)) \
    X(fmi2SetBoolean, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2Boolean*)) \
    X(fmi2SetString, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2String*)) \
    X(fmi2GetFMUstate, fmi2Status, (fmi2Component, fmi2FMUstate*)) \
    X(fmi2SetFMUstate, fmi2Status, (fmi2Component, fmi2FMUstate)) \
    X(fmi2FreeFMUstate, fmi2Status, (fmi2Component, fmi2FMUstate*)) \
    X(fmi2SerializedFMUstateSize, fmi2Status, (fmi2Component, fmi2FMUstate, size_t*)) \
    X(fmi2SerializeFMUstate, fmi2Status, (fmi2Component, fmi2FMUstate, fmi2Byte*, size_t)) \
    X(fmi2DeSerializeFMUstate, fmi2Status, (fmi2Component, const fmi2Byte*, size_t, fmi2FMUstate*)) \
    X(fmi2GetDirectionalDerivative, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2ValueReference*, size_t, const fmi2Real*, fmi2Real*)) \
    X(fmi2SetRealInputDerivatives, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2Integer*, const fmi2Real*)) \
    X(fmi2GetRealOutputDerivatives, fmi2Status, (fmi2Component, const fmi2ValueReference*, size_t, const fmi2Integer*, fmi2Real*)) \
    X(fmi2DoStep, fmi2Status, (fmi2Component, fmi2Real, fmi2Real, fmi2Boolean)) \
    X(fmi2CancelStep, fmi2Status, (fmi2Component)) \
    X(fmi2GetStatus, fmi2Status, (fmi2Component, const fmi2StatusKind, fmi2Status*)) \
    X(fmi2GetRealStatus, fmi2Status, (fmi2Component, const fmi2StatusKind, fmi2Real*)) \
    X(fmi2GetIntegerStatus, fmi2Status, (fmi2Component, const fmi2StatusKind, fmi2Integer*)) \
    X(fmi2GetBooleanStatus, fmi2Status, (fmi2Component, const fmi2StatusKind, fmi2Boolean*)) \
    X(fmi2GetStringStatus, fmi2Status, (fmi2Component, const fmi2StatusKind, fmi2String*))

#define DECLARE(name, ret, args) typedef ret (*name##_fn) args; static name##_fn p_##name = NULL;
INNER_FUNCTIONS(DECLARE)

static char resolve_error[512] = "";
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static void* inner_library = NULL;

static void resolve(void)
{
#define RESOLVE(name, ret, args) \
    if (!(p_##name = (name##_fn)dlsym(inner_library, #name)) && !resolve_error[0]) \
        snprintf(resolve_error, sizeof resolve_error, "contactfmu: pythonfmu's library misses %s", #name);
    INNER_FUNCTIONS(RESOLVE)
}

/* pythonfmu's library with its functions resolved; NULL with the reason logged. */
static int load_inner(Shim* s)
{
    if (!(inner_library = shim_load_inner("_pythonfmu.so", 1))) {
        shim_say(&s->base, fmi2Fatal, "%s", shim_load_error());
        return 0;
    }
    pthread_once(&resolved, resolve);
    if (resolve_error[0]) shim_say(&s->base, fmi2Fatal, "%s", resolve_error);
    return !resolve_error[0];
}

/* ---- messages ------------------------------------------------------------------------------- */

/* The logger pythonfmu calls: count the errors, filter by the host's logging flag, pass the text
   as "%s". */
static void shim_logger(fmi2ComponentEnvironment env, fmi2String instanceName, fmi2Status status,
                        fmi2String category, fmi2String message, ...)
{
    Shim* s = (Shim*)env;
    if (!s) return;
    if (status >= fmi2Error) s->base.errors++;
    if (!s->host.logger) return;
    if (status == fmi2OK && !s->loggingOn) return;
    (void)instanceName; /* the host's name for this instance, whatever the inner library passes */
    s->host.logger(s->host.componentEnvironment, s->name, status,
                   category ? category : "logAll", "%s", message ? message : "");
}

/* The shim's own messages (ShimBase.say). */
static void say(ShimBase* b, int status, const char* text)
{
    static const char* const categories[] = {"logAll", "logStatusWarning", "logStatusDiscard", "logStatusError",
                                             "logStatusFatal"};
    Shim* s = (Shim*)b;
    if (s->host.logger)
        s->host.logger(s->host.componentEnvironment, s->name, (fmi2Status)status,
                       categories[status >= 0 && status <= fmi2Fatal ? status : fmi2Error], "%s", text);
}

/* The status of a forwarded call: the status rule (shim_common.h). */
#define FORWARD(s, call) do { \
        unsigned long before_ = (s)->base.errors; \
        return (fmi2Status)shim_ruled(&(s)->base, before_, (call)); \
    } while (0)

#define SHIM(c) Shim* s = (Shim*)(c); if (!s) return fmi2Error;

/* ---- FMI 2.0 functions --------------------------------------------------------------- */

EXPORT const char* fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char* fmi2GetVersion(void) { return "2.0"; }

EXPORT fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                                     fmi2String fmuResourceLocation, const fmi2CallbackFunctions* functions,
                                     fmi2Boolean visible, fmi2Boolean loggingOn)
{
    Shim* s = (Shim*)calloc(1, sizeof(Shim));
    if (!s) return NULL;
    s->base.say = say;
    if (functions) s->host = *functions;
    s->loggingOn = loggingOn;
    if (instanceName) snprintf(s->name, sizeof s->name, "%s", instanceName);
    char path[4096], uri[4200];
    int ok = load_inner(s);
    if (ok && fmuType != fmi2CoSimulation) {
        shim_say(&s->base, fmi2Error, "contactfmu: this FMU is for co-simulation only (fmuType %d)", (int)fmuType);
        ok = 0;
    }
    if (ok && !shim_uri_path(fmuResourceLocation, path, sizeof path)) {
        shim_say(&s->base, fmi2Error, "contactfmu: the fmuResourceLocation %.3000s is no local file URI (file:///...)",
                 fmuResourceLocation ? fmuResourceLocation : "(NULL)");
        ok = 0;
    }
    if (ok) ok = shim_check_instantiation(&s->base, instanceName, "GUID", fmuGUID, path);
    if (!ok) {
        free(s);
        return NULL;
    }
    shim_take_warning(&s->base);
    s->mine = s->host;
    s->mine.logger = shim_logger;
    s->mine.componentEnvironment = s;
    snprintf(uri, sizeof uri, "file://%s", path);
    /* pythonfmu forwards messages only with logging on; the shim filters instead. */
    s->base.inner = p_fmi2Instantiate(instanceName, fmuType, fmuGUID, uri, &s->mine, visible, 1);
    shim_python_started();
    if (!s->base.inner) {
        free(s);
        return NULL;
    }
    return s;
}

EXPORT void fmi2FreeInstance(fmi2Component c)
{
    Shim* s = (Shim*)c;
    if (!s) return;
    p_fmi2FreeInstance(s->base.inner);
    free(s);
    /* pythonfmu's library stays loaded until the process ends: its start-up thread may still be
       returning through the library's code when the last instance is freed, and unloading it then
       would pull the code from under that thread. */
}

EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                                      const fmi2String categories[])
{
    SHIM(c);
    s->loggingOn = loggingOn;
    (void)nCategories; (void)categories;
    return p_fmi2SetDebugLogging(s->base.inner, 1, 0, NULL);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                      fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    SHIM(c);
    unsigned long before = s->base.errors;
    fmi2Status status = p_fmi2SetupExperiment(s->base.inner, toleranceDefined, tolerance, startTime,
                                              stopTimeDefined, stopTime);
    if (status < fmi2Error && s->base.errors != before) return fmi2Error;
    if (status <= fmi2Warning) {
        s->setup = 1;
        s->toleranceDefined = toleranceDefined; s->tolerance = tolerance; s->startTime = startTime;
        s->stopTimeDefined = stopTimeDefined; s->stopTime = stopTime;
    }
    return status;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{ SHIM(c); FORWARD(s, p_fmi2EnterInitializationMode(s->base.inner)); }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{ SHIM(c); FORWARD(s, p_fmi2ExitInitializationMode(s->base.inner)); }
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { SHIM(c); FORWARD(s, p_fmi2Terminate(s->base.inner)); }

EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    SHIM(c);
    unsigned long before = s->base.errors;
    fmi2Status status = p_fmi2Reset(s->base.inner); /* a new Python instance: time 0 */
    if (status <= fmi2Warning && s->setup)
        status = p_fmi2SetupExperiment(s->base.inner, s->toleranceDefined, s->tolerance, s->startTime,
                                       s->stopTimeDefined, s->stopTime);
    return (fmi2Status)shim_ruled(&s->base, before, status);
}

/* The getters and setters: the arrays checked (shim_check_values), then forwarded. */
#define ACCESS(name, type) \
    EXPORT fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, type value[]) \
    { \
        SHIM(c); \
        if (!shim_check_values(&s->base, #name, vr, nvr, value, nvr)) return fmi2Error; \
        FORWARD(s, p_##name(s->base.inner, vr, nvr, value)); \
    }
ACCESS(fmi2GetReal, fmi2Real)
ACCESS(fmi2GetInteger, fmi2Integer)
ACCESS(fmi2GetBoolean, fmi2Boolean)
ACCESS(fmi2GetString, fmi2String)
ACCESS(fmi2SetReal, const fmi2Real)
ACCESS(fmi2SetInteger, const fmi2Integer)
ACCESS(fmi2SetBoolean, const fmi2Boolean)
ACCESS(fmi2SetString, const fmi2String)

/* ---- FMU state (shim_common.c) ---------------------------------------------------------- */

static const ShimStateCalls* state_calls(void)
{
    static ShimStateCalls f;
    f.get = (int (*)(void*, void**))p_fmi2GetFMUstate;
    f.set = (int (*)(void*, void*))p_fmi2SetFMUstate;
    f.free = (int (*)(void*, void**))p_fmi2FreeFMUstate;
    f.size = (int (*)(void*, void*, size_t*))p_fmi2SerializedFMUstateSize;
    f.serialize = (int (*)(void*, void*, void*, size_t))p_fmi2SerializeFMUstate;
    f.deserialize = (int (*)(void*, const void*, size_t, void**))p_fmi2DeSerializeFMUstate;
    return &f;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* state)
{ SHIM(c); return (fmi2Status)shim_get_state(&s->base, state_calls(), "fmi2GetFMUstate", state); }
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state)
{ SHIM(c); return (fmi2Status)shim_set_state(&s->base, state_calls(), "fmi2SetFMUstate", state); }
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* state)
{ SHIM(c); return (fmi2Status)shim_free_state(&s->base, state_calls(), state); }
EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t* size)
{ SHIM(c); return (fmi2Status)shim_state_size(&s->base, state_calls(), "fmi2SerializedFMUstateSize", state, size); }
EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size)
{
    SHIM(c);
    return (fmi2Status)shim_serialize_state(&s->base, state_calls(), "fmi2SerializeFMUstate", state, bytes, size);
}
EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate* state)
{
    SHIM(c);
    return (fmi2Status)shim_deserialize_state(&s->base, state_calls(), "fmi2DeSerializeFMUstate", bytes, size, state);
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                               const fmi2ValueReference vKnown[], size_t nKnown,
                                               const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    SHIM(c);
    FORWARD(s, p_fmi2GetDirectionalDerivative(s->base.inner, vUnknown, nUnknown, vKnown, nKnown, dvKnown, dvUnknown));
}

/* ---- first-order input and output derivatives ------------------------------------------ */

/* The slots of the derivatives asked for, into out; 0 (fmi2Error, a message) for an order other
   than 1 (FMI 2.0: "1 means the first derivative, 0 is not allowed"; the FMUs declare
   maxOutputDerivativeOrder 1 at most and interpolate their inputs linearly) or a value reference of
   the shim's own. */
static int derivative_refs(Shim* s, const char* what, const char* verb, const fmi2ValueReference vr[], size_t nvr,
                           const fmi2Integer order[], fmi2ValueReference* out)
{
    for (size_t i = 0; i < nvr; i++) {
        if (order[i] != 1) {
            shim_say(&s->base, fmi2Error,
                     "contactfmu: %s: order %d refused for value reference %u: this FMU %s first derivatives only "
                     "(order 1)",
                     what, (int)order[i], vr[i], verb);
            return 0;
        }
        if (vr[i] >= CONTACTFMU_DERIVATIVE_VR) {
            shim_say(&s->base, fmi2Error, "contactfmu: %s: value reference %u is not a variable of this FMU", what,
                     vr[i]);
            return 0;
        }
        out[i] = vr[i] + CONTACTFMU_DERIVATIVE_VR;
    }
    return 1;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                              const fmi2Integer order[], const fmi2Real value[])
{
    SHIM(c);
    fmi2ValueReference refs[64];
    if (nvr > 64) return fmi2SetRealInputDerivatives(c, vr, 64, order, value) > fmi2Warning ? fmi2Error :
                         fmi2SetRealInputDerivatives(c, vr + 64, nvr - 64, order + 64, value + 64);
    if (!derivative_refs(s, "fmi2SetRealInputDerivatives", "takes", vr, nvr, order, refs)) return fmi2Error;
    FORWARD(s, p_fmi2SetReal(s->base.inner, refs, nvr, value));
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                               const fmi2Integer order[], fmi2Real value[])
{
    SHIM(c);
    fmi2ValueReference refs[64];
    if (nvr > 64) return fmi2GetRealOutputDerivatives(c, vr, 64, order, value) > fmi2Warning ? fmi2Error :
                         fmi2GetRealOutputDerivatives(c, vr + 64, nvr - 64, order + 64, value + 64);
    if (!derivative_refs(s, "fmi2GetRealOutputDerivatives", "provides", vr, nvr, order, refs)) return fmi2Error;
    FORWARD(s, p_fmi2GetReal(s->base.inner, refs, nvr, value));
}

/* ---- stepping ---------------------------------------------------------------------------- */

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                             fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    SHIM(c);
    FORWARD(s, p_fmi2DoStep(s->base.inner, currentCommunicationPoint, communicationStepSize,
                            noSetFMUStatePriorToCurrentPoint));
}
EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { SHIM(c); FORWARD(s, p_fmi2CancelStep(s->base.inner)); }

EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status* v)
{ SHIM(c); FORWARD(s, p_fmi2GetStatus(s->base.inner, k, v)); }
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real* v)
{ SHIM(c); FORWARD(s, p_fmi2GetRealStatus(s->base.inner, k, v)); }
EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer* v)
{ SHIM(c); FORWARD(s, p_fmi2GetIntegerStatus(s->base.inner, k, v)); }
EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean* v)
{ SHIM(c); FORWARD(s, p_fmi2GetBooleanStatus(s->base.inner, k, v)); }
EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String* v)
{ SHIM(c); FORWARD(s, p_fmi2GetStringStatus(s->base.inner, k, v)); }
