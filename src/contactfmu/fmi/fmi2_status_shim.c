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
 *  - fmi2DeSerializeFMUstate returns fmi2Error (and no state) for bytes that are not a state of
 *    this FMU: the slave decodes them into a state marked invalid, which serializes as a NUL
 *    byte followed by the reason; the shim logs that reason (fmi2SerializeFMUstate of such a
 *    state fails likewise). FMU state pointers must not be NULL; a state pointer handed back
 *    to fmi2GetFMUstate is freed and holds the new state (pythonfmu's library leaked it);
 *    fmi2FreeFMUstate returns NULL in its argument;
 *  - fmi2Reset brings the time back to the start: pythonfmu re-creates the Python instance,
 *    and the shim repeats the last fmi2SetupExperiment for it (a host may call it again);
 *  - fmi2SetRealInputDerivatives and fmi2GetRealOutputDerivatives (first order), which
 *    pythonfmu does not implement, are mapped to the slave's derivative slots at value
 *    reference vr + CONTACTFMU_DERIVATIVE_VR (contactfmu/fmi/shim.py);
 *  - messages of status warning and above always reach the host's logger; plain messages
 *    only when the host enabled logging. Messages are passed as "%s" arguments, so a '%'
 *    in a message cannot be misread as a format directive.
 *
 *  - it brings the Python runtime itself (see "finding libpython" below): pythonfmu's library is
 *    not linked against libpython, so before loading it the shim makes a libpython 3 global in
 *    the process (the one already there, CONTACTFMU_LIBPYTHON, the one recorded at build time in
 *    <modelIdentifier>_libpython.txt next to this library, or that version's sonames) and, if
 *    no interpreter runs yet and the host set no PYTHONHOME, points PYTHONHOME at its prefix
 *    while the interpreter starts. A C host needs no environment set-up;
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
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#ifndef CONTACTFMU_DERIVATIVE_VR /* first derivative of variable vr: vr + this offset */
#error "compile with -DCONTACTFMU_DERIVATIVE_VR=... (contactfmu.fmi.shim.DEFINES, as contactfmu.build does)"
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

/* One instance: the inner (pythonfmu) component and the callbacks handed to it. */
typedef struct {
    fmi2Component inner;
    fmi2CallbackFunctions host;
    fmi2CallbackFunctions mine;
    int loggingOn;
    unsigned long errors; /* messages of status fmi2Error or worse the slave logged so far */
    int setup;            /* the last fmi2SetupExperiment, repeated after fmi2Reset */
    fmi2Boolean toleranceDefined, stopTimeDefined;
    fmi2Real tolerance, startTime, stopTime;
    char name[1024];      /* the host's instance name, for every message */
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

static void* inner_library = NULL;
static char load_error[8192] = "";

/* pythonfmu 0.7.0 keeps its interpreter state in a namespace-scope std::shared_ptr (pyState) and
   releases it from an ELF destructor, finalizePythonInterpreter(), which does pyState = nullptr.
   At process exit the shared_ptr's own static destructor (an exit handler) runs first and frees
   the state; the ELF destructor then runs in _dl_fini and releases the freed control block a
   second time: a write into freed heap memory (valgrind: "Invalid read ... in
   finalizePythonInterpreter ... block free'd in __run_exit_handlers"), seen as an abort at exit
   ("corrupted double-linked list") in a few runs in a hundred. The shim calls the library's
   finalizePythonInterpreter() itself from an exit handler registered after the library was
   loaded, so it runs before the static destructor: the state is released once, while alive, and
   both later releases see an empty pointer. The shim is made resident (RTLD_NODELETE) so that
   this happens at exit only, not when a host unloads the FMU's library. */
static void (*p_finalize_python)(void) = NULL;

static void release_python_state(void)
{
    if (p_finalize_python) p_finalize_python();
}

/* ---- finding libpython ------------------------------------------------------------------
   pythonfmu's library needs the CPython C API (Py_Initialize, _Py_NoneStruct, ...) from the
   process's global symbols. The shim makes sure they are there before it loads that library:

   1. a libpython already in the process (a Python host, or a C host that preloaded or dlopened
      one globally): dlsym(dlopen(NULL)) finds Py_IsInitialized and _Py_NoneStruct; nothing else
      is done;
   2. the file named by the environment variable CONTACTFMU_LIBPYTHON, if set;
   3. the libpython of the Python that built the FMU, as recorded by the build in
      <modelIdentifier>_libpython.txt next to this library (lines key=value: version, libpython,
      prefix, executable);
   4. the sonames libpython<version>.so.1.0 and libpython<version>.so of the recorded version,
      through the dynamic linker's search (LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib).

   Each is loaded with RTLD_GLOBAL. If no interpreter runs yet and the host did not set
   PYTHONHOME, PYTHONHOME is set while the interpreter starts (and removed again once it runs) to
   the installation of the loaded library (the first of its directory's parent and grandparent
   with lib/python3.X/os.py), else to the recorded prefix when it is of the loaded version and
   has the standard library. If nothing loads, fmi2Instantiate returns NULL and logs every path
   tried and what to install or set. */

typedef struct {
    char version[16];     /* "3.11" */
    char libpython[4096];
    char prefix[4096];
    char executable[4096];
} Record;

static void* python_library = NULL; /* the libpython the shim loaded (NULL: it was already there) */
static int python_found = 0;
static int home_set = 0;            /* PYTHONHOME was set by the shim, to be removed after start-up */
static char python_warning[2048] = "";
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

#define APPEND(buf, ...) do { size_t used_ = strlen(buf); \
        if (used_ < sizeof (buf)) snprintf((buf) + used_, sizeof (buf) - used_, __VA_ARGS__); } while (0)

static int is_file(const char* path) { return path[0] && access(path, R_OK) == 0; }

/* Read the record written by the build; 0 if it cannot be read. */
static int read_record(const char* path, Record* r)
{
    memset(r, 0, sizeof *r);
    FILE* f = fopen(path, "r");
    if (!f) return 0;
    char line[4200];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char* eq = strchr(line, '=');
        if (line[0] == '#' || !eq) continue;
        *eq = '\0';
        const char* v = eq + 1;
        if (!strcmp(line, "version")) snprintf(r->version, sizeof r->version, "%s", v);
        else if (!strcmp(line, "libpython")) snprintf(r->libpython, sizeof r->libpython, "%s", v);
        else if (!strcmp(line, "prefix")) snprintf(r->prefix, sizeof r->prefix, "%s", v);
        else if (!strcmp(line, "executable")) snprintf(r->executable, sizeof r->executable, "%s", v);
    }
    fclose(f);
    return r->version[0] != '\0';
}

/* "3.11" from the loaded library's Py_GetVersion() ("3.11.7 (main, ...)"); "" if unknown. */
static void loaded_version(void* lib, char* out, size_t size)
{
    const char* (*get_version)(void) = (const char* (*)(void))dlsym(lib, "Py_GetVersion");
    out[0] = '\0';
    if (!get_version) return;
    const char* v = get_version();
    const char* dot = v ? strchr(v, '.') : NULL;
    size_t n = dot ? strspn(dot + 1, "0123456789") : 0;
    if (dot && n) snprintf(out, size, "%.*s", (int)(dot + 1 + n - v), v);
}

/* Try one candidate (a path or a soname); on failure append why to `tried`. */
static void* try_libpython(const char* what, const char* name, char* tried, size_t tried_size)
{
    size_t used = strlen(tried);
    void* lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        const char* err = dlerror();
        size_t n = strlen(name);
        if (err && !strncmp(err, name, n) && !strncmp(err + n, ": ", 2)) err += n + 2; /* the name once */
        if (used < tried_size)
            snprintf(tried + used, tried_size - used, "\n  - %s %s: %s", what, name, err ? err : "cannot be loaded");
        return NULL;
    }
    char version[16];
    loaded_version(lib, version, sizeof version);
    if (!dlsym(lib, "Py_IsInitialized") || !dlsym(lib, "_Py_NoneStruct") || strncmp(version, "3.", 2) != 0) {
        if (used < tried_size)
            snprintf(tried + used, tried_size - used, "\n  - %s %s: loaded, but not a libpython 3", what, name);
        dlclose(lib);
        return NULL;
    }
    return lib;
}

/* dir/lib/python<version>/os.py exists: dir is a Python home of that version. */
static int has_stdlib(const char* dir, const char* version)
{
    char path[4200];
    if (!dir[0] || strlen(dir) > 4096) return 0;
    snprintf(path, sizeof path, "%s/lib/python%s/os.py", dir, version);
    return is_file(path);
}

/* Set PYTHONHOME for an interpreter about to start from `lib`, unless the host set one. */
static void set_home(void* lib, const Record* r)
{
    int (*is_initialized)(void) = (int (*)(void))dlsym(lib, "Py_IsInitialized");
    if (getenv("PYTHONHOME") || (is_initialized && is_initialized())) return;
    char version[16];
    loaded_version(lib, version, sizeof version);
    char home[4096] = "";
    Dl_info info;
    void* symbol = dlsym(lib, "Py_IsInitialized");
    if (symbol && dladdr(symbol, &info) && info.dli_fname && info.dli_fname[0] == '/') {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        for (int up = 0; up < 3 && !home[0]; up++) {   /* the library's directory, parent, grandparent */
            char* slash = strrchr(dir, '/');
            if (!slash || slash == dir) break;
            *slash = '\0';
            if (up > 0 && has_stdlib(dir, version)) snprintf(home, sizeof home, "%s", dir);
        }
    }
    if (!home[0] && !strcmp(version, r->version) && has_stdlib(r->prefix, version))
        snprintf(home, sizeof home, "%s", r->prefix);
    if (home[0] && setenv("PYTHONHOME", home, 0) == 0) home_set = 1;
}

/* Make a libpython 3 global in the process (see above). 0 with `error` filled if none. */
static int find_python(const char* record_path, char* error, size_t error_size)
{
    if (python_found) return 1;
    void* self = dlopen(NULL, RTLD_NOW);
    int present = self && dlsym(self, "Py_IsInitialized") && dlsym(self, "_Py_NoneStruct");
    if (self) dlclose(self);
    if (present) return python_found = 1;

    Record r;
    int recorded = read_record(record_path, &r);
    char tried[6144] = "\n  - a libpython already in the process: none";
    void* lib = NULL;
    const char* override = getenv("CONTACTFMU_LIBPYTHON");
    if (override && override[0]) {
        lib = try_libpython("CONTACTFMU_LIBPYTHON =", override, tried, sizeof tried);
        if (!lib) snprintf(python_warning, sizeof python_warning,
                           "CONTACTFMU_LIBPYTHON=%s cannot be used; ", override);
    } else {
        APPEND(tried, "\n  - CONTACTFMU_LIBPYTHON: not set");
    }
    if (!recorded) {
        APPEND(tried, "\n  - the build's record %s: cannot be read", record_path);
    } else {
        if (!lib && r.libpython[0]) lib = try_libpython("the building Python's", r.libpython, tried, sizeof tried);
        char soname[64];
        snprintf(soname, sizeof soname, "libpython%s.so.1.0", r.version);
        if (!lib) lib = try_libpython("soname", soname, tried, sizeof tried);
        snprintf(soname, sizeof soname, "libpython%s.so", r.version);
        if (!lib) lib = try_libpython("soname", soname, tried, sizeof tried);
    }
    if (!lib) {
        python_warning[0] = '\0';
        const char* v = recorded ? r.version : "3";
        snprintf(error, error_size,
                 "contactfmu: no Python runtime found: this FMU runs Python %s in the host process "
                 "(built with %s) and needs its shared library libpython%s. Looked for:%s\n"
                 "Install Python %s with its shared library (Debian/Ubuntu: apt install libpython%s; "
                 "pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared), or set CONTACTFMU_LIBPYTHON to the path "
                 "of a libpython%s.so (and PYTHONHOME to that Python's prefix if its standard library is "
                 "not found); `contactfmu env` prints the settings for this machine's Python.",
                 v, recorded && r.executable[0] ? r.executable : "an unknown Python", v, tried, v, v, v);
        return 0;
    }
    if (python_warning[0]) {
        Dl_info info;
        void* symbol = dlsym(lib, "Py_IsInitialized");
        APPEND(python_warning, "using %s instead",
               symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "another libpython");
    }
    python_library = lib;
    set_home(lib, &r);
    return python_found = 1;
}

/* Load <this library's path without ".so">_pythonfmu.so once, after libpython. */
static int load_inner_locked(void)
{
    if (inner_library) return 1;
    Dl_info info;
    if (!dladdr((void*)&load_inner_locked, &info) || !info.dli_fname) {
        snprintf(load_error, sizeof load_error, "contactfmu shim: cannot locate its own library file");
        return 0;
    }
    char path[4096];
    size_t n = strlen(info.dli_fname);
    if (n < 3 || n + 16 >= sizeof path) {
        snprintf(load_error, sizeof load_error, "contactfmu shim: unexpected library path %s", info.dli_fname);
        return 0;
    }
    memcpy(path, info.dli_fname, n - 3); /* strip ".so" */
    strcpy(path + n - 3, "_libpython.txt");
    if (!find_python(path, load_error, sizeof load_error)) return 0;
    strcpy(path + n - 3, "_pythonfmu.so");
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "contactfmu shim: cannot load %s: %s", path, dlerror());
        return 0;
    }
#define RESOLVE(name, ret, args) \
    p_##name = (name##_fn)dlsym(lib, #name); \
    if (!p_##name) { snprintf(load_error, sizeof load_error, "contactfmu shim: %s misses %s", path, #name); return 0; }
    INNER_FUNCTIONS(RESOLVE)
    inner_library = lib;
    p_finalize_python = (void (*)(void))dlsym(lib, "finalizePythonInterpreter");
    if (p_finalize_python && dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
        atexit(release_python_state);
    return 1;
}

static int load_inner(void)
{
    pthread_mutex_lock(&load_lock);
    int ok = load_inner_locked();
    pthread_mutex_unlock(&load_lock);
    return ok;
}

/* Once the interpreter runs, remove the PYTHONHOME the shim set: the host's environment (and
   that of the processes it starts) stays its own. */
static void python_started(void)
{
    if (!home_set) return;
    pthread_mutex_lock(&load_lock);
    int (*is_initialized)(void) = python_library ? (int (*)(void))dlsym(python_library, "Py_IsInitialized") : NULL;
    if (home_set && is_initialized && is_initialized()) {
        unsetenv("PYTHONHOME");
        home_set = 0;
    }
    pthread_mutex_unlock(&load_lock);
}

/* The logger pythonfmu calls: filter by the host's logging flag, pass the text as "%s". */
static void shim_logger(fmi2ComponentEnvironment env, fmi2String instanceName, fmi2Status status,
                        fmi2String category, fmi2String message, ...)
{
    Shim* s = (Shim*)env;
    if (!s) return;
    if (status >= fmi2Error) s->errors++;
    if (!s->host.logger) return;
    if (status == fmi2OK && !s->loggingOn) return;
    (void)instanceName; /* the host's name for this instance, whatever the inner library passes */
    s->host.logger(s->host.componentEnvironment, s->name, status,
                   category ? category : "logAll", "%s", message ? message : "");
}

static void shim_log(Shim* s, fmi2Status status, const char* category, const char* message)
{
    if (s && s->host.logger)
        s->host.logger(s->host.componentEnvironment, s->name, status, category, "%s", message);
}

/* The status of a forwarded call: fmi2Error if the slave logged an error during it (a refused
   value, value reference, step or state, a non-finite output, a failed step), else the inner
   library's status (fmi2Discard: do_step returned False without an error). */
#define FORWARD(s, call) do { \
        unsigned long before_ = (s)->errors; \
        fmi2Status status_ = (call); \
        return status_ < fmi2Error && (s)->errors != before_ ? fmi2Error : status_; \
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
    if (functions) s->host = *functions;
    s->loggingOn = loggingOn;
    if (instanceName) snprintf(s->name, sizeof s->name, "%s", instanceName);
    if (!load_inner()) {
        shim_log(s, fmi2Fatal, "logStatusFatal", load_error);
        free(s);
        return NULL;
    }
    if (python_warning[0]) {
        shim_log(s, fmi2Warning, "logStatusWarning", python_warning);
        python_warning[0] = '\0';
    }
    s->mine = s->host;
    s->mine.logger = shim_logger;
    s->mine.componentEnvironment = s;
    /* pythonfmu forwards messages only with logging on; the shim filters instead. */
    s->inner = p_fmi2Instantiate(instanceName, fmuType, fmuGUID, fmuResourceLocation, &s->mine, visible, 1);
    python_started();
    if (!s->inner) {
        free(s);
        return NULL;
    }
    return s;
}

EXPORT void fmi2FreeInstance(fmi2Component c)
{
    Shim* s = (Shim*)c;
    if (!s) return;
    p_fmi2FreeInstance(s->inner);
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
    return p_fmi2SetDebugLogging(s->inner, 1, 0, NULL);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                      fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    SHIM(c);
    unsigned long before = s->errors;
    fmi2Status status = p_fmi2SetupExperiment(s->inner, toleranceDefined, tolerance, startTime, stopTimeDefined,
                                              stopTime);
    if (status < fmi2Error && s->errors != before) return fmi2Error;
    if (status <= fmi2Warning) {
        s->setup = 1;
        s->toleranceDefined = toleranceDefined; s->tolerance = tolerance; s->startTime = startTime;
        s->stopTimeDefined = stopTimeDefined; s->stopTime = stopTime;
    }
    return status;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{ SHIM(c); FORWARD(s, p_fmi2EnterInitializationMode(s->inner)); }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{ SHIM(c); FORWARD(s, p_fmi2ExitInitializationMode(s->inner)); }
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { SHIM(c); FORWARD(s, p_fmi2Terminate(s->inner)); }

EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    SHIM(c);
    unsigned long before = s->errors;
    fmi2Status status = p_fmi2Reset(s->inner); /* a new Python instance: time 0 */
    if (status <= fmi2Warning && s->setup)
        status = p_fmi2SetupExperiment(s->inner, s->toleranceDefined, s->tolerance, s->startTime,
                                       s->stopTimeDefined, s->stopTime);
    return status < fmi2Error && s->errors != before ? fmi2Error : status;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{ SHIM(c); FORWARD(s, p_fmi2GetReal(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{ SHIM(c); FORWARD(s, p_fmi2GetInteger(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{ SHIM(c); FORWARD(s, p_fmi2GetBoolean(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{ SHIM(c); FORWARD(s, p_fmi2GetString(s->inner, vr, nvr, value)); }

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{ SHIM(c); FORWARD(s, p_fmi2SetReal(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{ SHIM(c); FORWARD(s, p_fmi2SetInteger(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{ SHIM(c); FORWARD(s, p_fmi2SetBoolean(s->inner, vr, nvr, value)); }
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{ SHIM(c); FORWARD(s, p_fmi2SetString(s->inner, vr, nvr, value)); }

/* ---- FMU state ----------------------------------------------------------------------- */

static fmi2Status no_state(Shim* s, const char* function)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s: the FMU state is NULL", function);
    shim_log(s, fmi2Error, "logStatusError", msg);
    return fmi2Error;
}

/* If the slave marked `state` invalid (it serializes as a NUL byte and the reason), log the
   reason and return 1. Costs two serializations of a valid state: only after a deserialization. */
static int invalid_state(Shim* s, fmi2FMUstate state)
{
    size_t size = 0;
    char first = 1;
    if (p_fmi2SerializedFMUstateSize(s->inner, state, &size) > fmi2Warning || size == 0) return 0;
    if (p_fmi2SerializeFMUstate(s->inner, state, &first, 1) > fmi2Warning || first != '\0') return 0;
    char* text = (char*)malloc(size + 1);
    if (text && p_fmi2SerializeFMUstate(s->inner, state, text, size) <= fmi2Warning) {
        text[size] = '\0';
        shim_log(s, fmi2Error, "logStatusError", text + 1);
    } else {
        shim_log(s, fmi2Error, "logStatusError", "invalid FMU state");
    }
    free(text);
    return 1;
}

/* A state handed back (*state != NULL: one this FMU returned and nobody freed, FMI 2.0
   section 2.1.8) is updated: it is freed and holds the new state (pythonfmu's library overwrote
   the pointer and leaked the state it held). The state is taken first: when that fails, the
   state handed back is kept. */
EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* state)
{
    SHIM(c);
    if (!state) return no_state(s, "fmi2GetFMUstate");
    unsigned long before = s->errors;
    fmi2FMUstate taken = NULL;
    fmi2Status status = p_fmi2GetFMUstate(s->inner, &taken);
    if (status < fmi2Error && s->errors != before) status = fmi2Error;
    if (status >= fmi2Error) {
        if (taken) p_fmi2FreeFMUstate(s->inner, &taken);
        return status;
    }
    if (*state) p_fmi2FreeFMUstate(s->inner, state);
    *state = taken;
    return status;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state)
{
    SHIM(c);
    if (!state) return no_state(s, "fmi2SetFMUstate");
    FORWARD(s, p_fmi2SetFMUstate(s->inner, state));
}
/* The standard returns NULL in the argument; a NULL state is ignored. */
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* state)
{
    SHIM(c);
    if (!state || !*state) return fmi2OK; /* freeing nothing is allowed */
    unsigned long before = s->errors;
    fmi2Status status = p_fmi2FreeFMUstate(s->inner, state);
    *state = NULL;
    return status < fmi2Error && s->errors != before ? fmi2Error : status;
}
EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t* size)
{
    SHIM(c);
    if (!state || !size) return no_state(s, "fmi2SerializedFMUstateSize");
    FORWARD(s, p_fmi2SerializedFMUstateSize(s->inner, state, size));
}
EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size)
{
    SHIM(c);
    if (!state) return no_state(s, "fmi2SerializeFMUstate");
    unsigned long before = s->errors;
    fmi2Status status = p_fmi2SerializeFMUstate(s->inner, state, bytes, size);
    if (status > fmi2Warning) return status;
    if (size > 0 && bytes[0] == '\0' && invalid_state(s, state)) return fmi2Error;
    return s->errors != before ? fmi2Error : status;
}
EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate* state)
{
    SHIM(c);
    if (!state || (!bytes && size)) return no_state(s, "fmi2DeSerializeFMUstate");
    unsigned long before = s->errors;
    fmi2Status status = p_fmi2DeSerializeFMUstate(s->inner, bytes, size, state);
    if (status > fmi2Warning) return status;
    if (!*state || invalid_state(s, *state)) {
        if (*state) p_fmi2FreeFMUstate(s->inner, state);
        *state = NULL;
        return fmi2Error;
    }
    return s->errors != before ? fmi2Error : status;
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                               const fmi2ValueReference vKnown[], size_t nKnown,
                                               const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    SHIM(c);
    FORWARD(s, p_fmi2GetDirectionalDerivative(s->inner, vUnknown, nUnknown, vKnown, nKnown, dvKnown, dvUnknown));
}

/* ---- first-order input and output derivatives ------------------------------------------ */

static int derivative_refs(Shim* s, const char* what, const fmi2ValueReference vr[], size_t nvr,
                           const fmi2Integer order[], fmi2ValueReference* out)
{
    for (size_t i = 0; i < nvr; i++) {
        if (order[i] != 1 || vr[i] >= CONTACTFMU_DERIVATIVE_VR) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: only first derivatives are supported (value reference %u, order %d)",
                     what, vr[i], order[i]);
            shim_log(s, fmi2Error, "logStatusError", msg);
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
    if (!derivative_refs(s, "fmi2SetRealInputDerivatives", vr, nvr, order, refs)) return fmi2Error;
    FORWARD(s, p_fmi2SetReal(s->inner, refs, nvr, value));
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                               const fmi2Integer order[], fmi2Real value[])
{
    SHIM(c);
    fmi2ValueReference refs[64];
    if (nvr > 64) return fmi2GetRealOutputDerivatives(c, vr, 64, order, value) > fmi2Warning ? fmi2Error :
                         fmi2GetRealOutputDerivatives(c, vr + 64, nvr - 64, order + 64, value + 64);
    if (!derivative_refs(s, "fmi2GetRealOutputDerivatives", vr, nvr, order, refs)) return fmi2Error;
    FORWARD(s, p_fmi2GetReal(s->inner, refs, nvr, value));
}

/* ---- stepping ---------------------------------------------------------------------------- */

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                             fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    SHIM(c);
    FORWARD(s, p_fmi2DoStep(s->inner, currentCommunicationPoint, communicationStepSize,
                            noSetFMUStatePriorToCurrentPoint));
}
EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { SHIM(c); FORWARD(s, p_fmi2CancelStep(s->inner)); }

EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status* v)
{ SHIM(c); FORWARD(s, p_fmi2GetStatus(s->inner, k, v)); }
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real* v)
{ SHIM(c); FORWARD(s, p_fmi2GetRealStatus(s->inner, k, v)); }
EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer* v)
{ SHIM(c); FORWARD(s, p_fmi2GetIntegerStatus(s->inner, k, v)); }
EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean* v)
{ SHIM(c); FORWARD(s, p_fmi2GetBooleanStatus(s->inner, k, v)); }
EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String* v)
{ SHIM(c); FORWARD(s, p_fmi2GetStringStatus(s->inner, k, v)); }
