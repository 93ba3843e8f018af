/*
 * What the FMI 2.0 and FMI 3.0 status shims of contactfmu share (shim_common.c, compiled into
 * each shim by contactfmu.build): loading pythonfmu's library after a libpython, the checks of
 * fmi2Instantiate's and fmi3InstantiateCoSimulation's arguments, the status rule, the checks of
 * the value references an importer passes, and the FMU state functions hardened.
 *
 * The statuses of both standards have the same numbers (OK 0 .. Fatal 4); the shims' instances,
 * FMU states and byte arrays are pointers in both. Only the C standard library and libdl are used.
 */
#ifndef CONTACTFMU_SHIM_COMMON_H
#define CONTACTFMU_SHIM_COMMON_H

#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef CONTACTFMU_FIRST_PRIVATE_VR /* value references from here up are the shims' own */
#error "compile with the -D definitions of contactfmu.fmi.shim.DEFINES (contactfmu.build does)"
#endif

enum { SHIM_OK, SHIM_WARNING, SHIM_DISCARD, SHIM_ERROR, SHIM_FATAL };

typedef struct ShimBase ShimBase;

/* One instance as both shims see it: the inner (pythonfmu) instance, the count of the messages of
   status Error or worse the slave logged so far, and how a message reaches the host's logger
   (under the host's instance name, whatever its logging setting). */
struct ShimBase {
    void* inner;
    unsigned long errors;
    void (*say)(ShimBase* s, int status, const char* text);
};

/* a message of the shim; a NULL instance or logger: nothing */
void shim_say(ShimBase* s, int status, const char* format, ...) __attribute__((format(printf, 3, 4)));

/* The status rule: Error if the slave logged an error during the call begun with `before`
   errors counted, else the inner library's status. */
static inline int shim_ruled(const ShimBase* s, unsigned long before, int status)
{
    return status < SHIM_ERROR && s->errors != before ? SHIM_ERROR : status;
}

/* ---- the inner library ------------------------------------------------------------------- */

/* Make a libpython 3 global in the process, then load <this library without ".so"><suffix>
   (once per process; `release_at_exit`: call its finalizePythonInterpreter from an exit
   handler). The handle, or NULL with the reason in shim_load_error(). */
void* shim_load_inner(const char* suffix, int release_at_exit);
const char* shim_load_error(void);
/* A warning of the libpython search (an unusable CONTACTFMU_LIBPYTHON) for the host, once. */
void shim_take_warning(ShimBase* s);
/* Once the interpreter runs: remove the PYTHONHOME the shim set for its start. */
void shim_python_started(void);

/* ---- instantiation ------------------------------------------------------------------------- */

/* The instance name (not NULL, UTF-8), the token (the one the build recorded, if it did) and
   the resources folder (a readable folder holding slavemodule.txt and the module it names):
   1 if all can be used, else 0 with the reason logged. `what` names the token ("GUID",
   "instantiationToken"). */
int shim_check_instantiation(ShimBase* s, const char* name, const char* what, const char* token,
                             const char* resources);
/* 1 if `text` is valid UTF-8 (as Python decodes it: no overlong forms, no surrogates). */
int shim_is_utf8(const char* text);
/* The local path of a file URI (file:///p, file://localhost/p, file:/p, percent-encoded) or of
   a plain absolute path, into out; 0 if `uri` is none of these. */
int shim_uri_path(const char* uri, char* out, size_t size);

/* ---- value references -------------------------------------------------------------------- */

/* The arrays of a getter or setter: not NULL where they have elements, nvalues == nvr (every
   variable is a scalar), no value reference of the shims' own (from CONTACTFMU_FIRST_PRIVATE_VR
   up: declared in no model description). 1 if so, else 0 with the reason logged. */
int shim_check_values(ShimBase* s, const char* function, const unsigned int* vr, size_t nvr,
                      const void* values, size_t nvalues);

/* ---- FMU state ------------------------------------------------------------------------------ */

/* The inner library's FMU state functions. */
typedef struct {
    int (*get)(void* inner, void** state);
    int (*set)(void* inner, void* state);
    int (*free)(void* inner, void** state);
    int (*size)(void* inner, void* state, size_t* size);
    int (*serialize)(void* inner, void* state, void* bytes, size_t size);
    int (*deserialize)(void* inner, const void* bytes, size_t size, void** state);
} ShimStateCalls;

int shim_get_state(ShimBase* s, const ShimStateCalls* f, const char* function, void** state);
int shim_set_state(ShimBase* s, const ShimStateCalls* f, const char* function, void* state);
int shim_free_state(ShimBase* s, const ShimStateCalls* f, void** state);
int shim_state_size(ShimBase* s, const ShimStateCalls* f, const char* function, void* state, size_t* size);
int shim_serialize_state(ShimBase* s, const ShimStateCalls* f, const char* function, void* state, void* bytes,
                         size_t size);
int shim_deserialize_state(ShimBase* s, const ShimStateCalls* f, const char* function, const void* bytes,
                           size_t size, void** state);

#endif
