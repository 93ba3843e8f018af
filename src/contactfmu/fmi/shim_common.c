/*
 * What the FMI 2.0 and FMI 3.0 status shims share (declared in shim_common.h): compiled into each
 * shim, written for contactfmu. Each shim keeps what its standard's C API needs.
 */
#define _GNU_SOURCE
#include "shim_common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define APPEND(buf, ...) do { size_t used_ = strlen(buf); \
        if (used_ < sizeof (buf)) snprintf((buf) + used_, sizeof (buf) - used_, __VA_ARGS__); } while (0)

void shim_say(ShimBase* s, int status, const char* format, ...)
{
    if (!s || !s->say) return;
    char text[8192];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof text, format, ap);
    va_end(ap);
    s->say(s, status, text);
}

/* ---- finding libpython ------------------------------------------------------------------
   pythonfmu's libraries need the CPython C API (Py_Initialize, _Py_NoneStruct, ...) from the
   process's global symbols. The shim makes sure they are there before it loads the library:

   1. a libpython already in the process (a Python host, or a C host that preloaded or dlopened
      one globally): dlsym(dlopen(NULL)) finds Py_IsInitialized and _Py_NoneStruct; nothing else
      is done;
   2. the file named by the environment variable CONTACTFMU_LIBPYTHON, if set;
   3. the libpython of the Python that built the FMU, as recorded by the build in
      <modelIdentifier>_libpython.txt next to this library (lines key=value: version, libpython,
      prefix, executable; and the FMU's token, checked at instantiation);
   4. the sonames libpython<version>.so.1.0 and libpython<version>.so of the recorded version,
      through the dynamic linker's search (LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib).

   Each is loaded with RTLD_GLOBAL. If no interpreter runs yet and the host did not set
   PYTHONHOME, PYTHONHOME is set while the interpreter starts (and removed again once it runs) to
   the installation of the loaded library (the first of its directory's parent and grandparent
   with lib/python3.X/os.py), else to the recorded prefix when it is of the loaded version and
   has the standard library. If nothing loads, instantiation returns NULL and logs every path
   tried and what to install or set. */

typedef struct {
    char version[16]; /* "3.11" */
    char libpython[4096];
    char prefix[4096];
    char executable[4096];
    char token[256];
} Record;

static Record record;
static int recorded = 0;
static void* inner_library = NULL;
static char load_error[8192] = "";
static void* python_library = NULL; /* the libpython the shim loaded (NULL: it was already there) */
static int python_found = 0;
static int home_set = 0;            /* PYTHONHOME was set by the shim, to be removed after start-up */
static char python_warning[2048] = "";
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

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
        else if (!strcmp(line, "token")) snprintf(r->token, sizeof r->token, "%s", v);
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
        for (int up = 0; up < 3 && !home[0]; up++) { /* the library's directory, parent, grandparent */
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

/* Make a libpython 3 global in the process (see above). 0 with load_error filled if none. */
static int find_python(const char* record_path)
{
    if (python_found) return 1;
    void* self = dlopen(NULL, RTLD_NOW);
    int present = self && dlsym(self, "Py_IsInitialized") && dlsym(self, "_Py_NoneStruct");
    if (self) dlclose(self);
    if (present) return python_found = 1;

    const Record* r = &record;
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
        if (!lib && r->libpython[0]) lib = try_libpython("the building Python's", r->libpython, tried, sizeof tried);
        char soname[64];
        snprintf(soname, sizeof soname, "libpython%.15s.so.1.0", r->version);
        if (!lib) lib = try_libpython("soname", soname, tried, sizeof tried);
        snprintf(soname, sizeof soname, "libpython%.15s.so", r->version);
        if (!lib) lib = try_libpython("soname", soname, tried, sizeof tried);
    }
    if (!lib) {
        python_warning[0] = '\0';
        const char* v = recorded ? r->version : "3";
        snprintf(load_error, sizeof load_error,
                 "contactfmu: no Python runtime found: this FMU runs Python %s in the host process "
                 "(built with %s) and needs its shared library libpython%s. Looked for:%s\n"
                 "Install Python %s with its shared library (Debian/Ubuntu: apt install libpython%s; "
                 "pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared), or set CONTACTFMU_LIBPYTHON to the path "
                 "of a libpython%s.so (and PYTHONHOME to that Python's prefix if its standard library is "
                 "not found); `contactfmu env` prints the settings for this machine's Python.",
                 v, recorded && r->executable[0] ? r->executable : "an unknown Python", v, tried, v, v, v);
        return 0;
    }
    if (python_warning[0]) {
        Dl_info info;
        void* symbol = dlsym(lib, "Py_IsInitialized");
        APPEND(python_warning, "using %s instead",
               symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "another libpython");
    }
    python_library = lib;
    set_home(lib, r);
    return python_found = 1;
}

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
static void (*finalize_python)(void) = NULL;

static void release_python_state(void)
{
    if (finalize_python) finalize_python();
}

/* Load <this library's path without ".so"><suffix> once, after libpython. */
static int load_inner_locked(const char* suffix, int release_at_exit)
{
    if (inner_library) return 1;
    if (load_error[0]) return 0;
    Dl_info info;
    if (!dladdr((void*)&load_inner_locked, &info) || !info.dli_fname) {
        snprintf(load_error, sizeof load_error, "contactfmu: cannot locate the FMU's own library");
        return 0;
    }
    char path[4096];
    size_t n = strlen(info.dli_fname);
    if (n < 3 || n + 32 >= sizeof path || strcmp(info.dli_fname + n - 3, ".so") != 0) {
        snprintf(load_error, sizeof load_error, "contactfmu: unexpected library path %s", info.dli_fname);
        return 0;
    }
    memcpy(path, info.dli_fname, n - 3); /* strip ".so" */
    strcpy(path + n - 3, "_libpython.txt");
    recorded = read_record(path, &record);
    if (!find_python(path)) return 0;
    snprintf(path + n - 3, sizeof path - (n - 3), "%s", suffix);
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        snprintf(load_error, sizeof load_error, "contactfmu: cannot load %s: %s", path, err ? err : "?");
        return 0;
    }
    inner_library = lib;
    finalize_python = (void (*)(void))dlsym(lib, "finalizePythonInterpreter");
    if (release_at_exit && finalize_python && dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
        atexit(release_python_state);
    return 1;
}

void* shim_load_inner(const char* suffix, int release_at_exit)
{
    pthread_mutex_lock(&load_lock);
    void* lib = load_inner_locked(suffix, release_at_exit) ? inner_library : NULL;
    pthread_mutex_unlock(&load_lock);
    return lib;
}

const char* shim_load_error(void) { return load_error; }

void shim_take_warning(ShimBase* s)
{
    pthread_mutex_lock(&load_lock);
    char text[sizeof python_warning];
    snprintf(text, sizeof text, "%s", python_warning);
    python_warning[0] = '\0';
    pthread_mutex_unlock(&load_lock);
    if (text[0] && s && s->say) s->say(s, SHIM_WARNING, text);
}

/* The host's environment (and that of the processes it starts) stays its own. */
void shim_python_started(void)
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

/* ---- instantiation ----------------------------------------------------------------------------
   pythonfmu's libraries crash (a NULL or non-UTF-8 instance name: the Python string is NULL) or
   hang (a resources folder without slavemodule.txt, FMI 3.0) on arguments they cannot use, and
   take any token. The shim refuses those arguments with a message before they reach them. */

int shim_is_utf8(const char* text)
{
    const unsigned char* p = (const unsigned char*)text;
    while (*p) {
        unsigned c = *p;
        int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || (n == 1 && c < 0xC2) || (n == 3 && c > 0xF4)) return 0;
        unsigned long code = c & (0x3F >> n);
        for (int k = 1; k <= n; k++) {
            if ((p[k] & 0xC0) != 0x80) return 0;
            code = code << 6 | (p[k] & 0x3F);
        }
        if ((n == 2 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
            (n == 3 && (code < 0x10000 || code > 0x10FFFF)))
            return 0;
        p += n + 1;
    }
    return 1;
}

/* The resources folder holds slavemodule.txt, which names a module <name>.py beside it. */
static int check_resources(ShimBase* s, const char* dir)
{
    if (!dir || !dir[0]) {
        shim_say(s, SHIM_ERROR, "contactfmu: no resources folder given (%s): this FMU runs the Python code in "
                 "its resources folder", dir ? "empty" : "NULL");
        return 0;
    }
    if (!shim_is_utf8(dir)) {
        shim_say(s, SHIM_ERROR, "contactfmu: the resources folder's path is not valid UTF-8");
        return 0;
    }
    struct stat st;
    char path[4200], module[256] = "";
    if (strlen(dir) > 4000 || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        shim_say(s, SHIM_ERROR, "contactfmu: the resources folder %.4000s does not exist", dir);
        return 0;
    }
    snprintf(path, sizeof path, "%s/slavemodule.txt", dir);
    FILE* f = fopen(path, "r");
    if (f) {
        if (!fgets(module, sizeof module, f)) module[0] = '\0';
        fclose(f);
    }
    module[strcspn(module, "\r\n")] = '\0';
    size_t n = strlen(module);
    if (!n || strspn(module, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n) {
        shim_say(s, SHIM_ERROR, "contactfmu: %s names no Python module: %.4000s is not this FMU's resources folder",
                 f ? "slavemodule.txt" : "no readable slavemodule.txt there:", dir);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.py", dir, module);
    if (!is_file(path)) {
        shim_say(s, SHIM_ERROR, "contactfmu: the resources folder %.4000s lacks %s.py, the FMU's entry script",
                 dir, module);
        return 0;
    }
    return 1;
}

int shim_check_instantiation(ShimBase* s, const char* name, const char* what, const char* token,
                             const char* resources)
{
    if (!name || !shim_is_utf8(name)) {
        shim_say(s, SHIM_ERROR, "contactfmu: the instance name is %s: give a UTF-8 string",
                 name ? "not valid UTF-8" : "NULL");
        return 0;
    }
    pthread_mutex_lock(&load_lock);
    char expected[sizeof record.token];
    snprintf(expected, sizeof expected, "%s", record.token);
    pthread_mutex_unlock(&load_lock);
    if (expected[0] && (!token || strcmp(token, expected) != 0)) {
        shim_say(s, SHIM_ERROR, "contactfmu: the %s %.300s is not this FMU's, %s: its model description and "
                 "binary do not belong together", what, !token ? "(NULL)" : shim_is_utf8(token) ? token : "(not UTF-8)",
                 expected);
        return 0;
    }
    return check_resources(s, resources);
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int shim_uri_path(const char* uri, char* out, size_t size)
{
    if (!uri || !size) return 0;
    const char* p = uri;
    int encoded = 0;
    if (!strncmp(p, "file:", 5)) {
        p += 5;
        encoded = 1;
        if (!strncmp(p, "//localhost/", 12)) p += 11;
        else if (!strncmp(p, "///", 3)) p += 2;
        else if (!strncmp(p, "//", 2)) return 0; /* another host */
    }
    if (*p != '/') return 0;
    size_t n = 0;
    for (; *p; p++) {
        char c = *p;
        if (encoded && c == '%') {
            int hi = hex(p[1]), lo = hi < 0 ? -1 : hex(p[2]);
            if (lo < 0) return 0;
            c = (char)(hi * 16 + lo);
            p += 2;
            if (!c) return 0;
        }
        if (n + 1 >= size) return 0;
        out[n++] = c;
    }
    out[n] = '\0';
    return 1;
}

/* ---- value references ---------------------------------------------------------------------- */

int shim_check_values(ShimBase* s, const char* function, const unsigned int* vr, size_t nvr,
                      const void* values, size_t nvalues)
{
    if (nvalues != nvr) {
        shim_say(s, SHIM_ERROR, "contactfmu: %s: nValues = %zu, but the %zu value references name scalar "
                 "variables: nValues must be %zu", function, nvalues, nvr, nvr);
        return 0;
    }
    if (nvr && (!vr || !values)) {
        shim_say(s, SHIM_ERROR, "contactfmu: %s: the %s array is NULL", function, vr ? "values" : "value reference");
        return 0;
    }
    for (size_t i = 0; i < nvr; i++)
        if (vr[i] >= CONTACTFMU_FIRST_PRIVATE_VR) {
            shim_say(s, SHIM_ERROR, "contactfmu: %s: value reference %u is not a variable of this FMU", function,
                     vr[i]);
            return 0;
        }
    return 1;
}

/* ---- FMU state --------------------------------------------------------------------------------
   pythonfmu's libraries dereference a NULL state pointer (the host crashes), take no state pointer
   handed back to the getter (they leaked the state it held), leave a freed pointer in the
   argument of the free function, and accept bytes that are no state of this FMU (the slave
   decodes them into a state marked invalid, which serializes as a NUL byte followed by the
   reason). */

static int no_state(ShimBase* s, const char* function)
{
    shim_say(s, SHIM_ERROR, "contactfmu: %s: the FMU state is NULL", function);
    return SHIM_ERROR;
}

/* If the slave marked `state` invalid, log the reason and return 1. Costs two serializations of
   a valid state: only after a deserialization. */
static int invalid_state(ShimBase* s, const ShimStateCalls* f, void* state)
{
    size_t size = 0;
    unsigned char first = 1;
    if (f->size(s->inner, state, &size) >= SHIM_DISCARD || size == 0) return 0;
    if (f->serialize(s->inner, state, &first, 1) >= SHIM_DISCARD || first != 0) return 0;
    char* text = (char*)malloc(size + 1);
    if (text && f->serialize(s->inner, state, text, size) < SHIM_DISCARD) {
        text[size] = '\0';
        shim_say(s, SHIM_ERROR, "%s", text + 1);
    } else {
        shim_say(s, SHIM_ERROR, "contactfmu: invalid FMU state");
    }
    free(text);
    return 1;
}

/* A state pointer handed back (not NULL) holds a state taken before: it is freed and the pointer
   holds the new state (both standards let the FMU reuse it). After an error *state is unchanged. */
int shim_get_state(ShimBase* s, const ShimStateCalls* f, const char* function, void** state)
{
    if (!state) return no_state(s, function);
    unsigned long before = s->errors;
    void* taken = NULL;
    int status = shim_ruled(s, before, f->get(s->inner, &taken));
    if (status >= SHIM_ERROR) {
        if (taken) f->free(s->inner, &taken);
        return status;
    }
    if (*state) f->free(s->inner, state);
    *state = taken;
    return status;
}

int shim_set_state(ShimBase* s, const ShimStateCalls* f, const char* function, void* state)
{
    if (!state) return no_state(s, function);
    unsigned long before = s->errors;
    return shim_ruled(s, before, f->set(s->inner, state));
}

/* The standard returns NULL in the argument; a NULL state is ignored. */
int shim_free_state(ShimBase* s, const ShimStateCalls* f, void** state)
{
    if (!state || !*state) return SHIM_OK;
    unsigned long before = s->errors;
    int status = shim_ruled(s, before, f->free(s->inner, state));
    if (status < SHIM_ERROR) *state = NULL;
    return status;
}

int shim_state_size(ShimBase* s, const ShimStateCalls* f, const char* function, void* state, size_t* size)
{
    if (!state || !size) return no_state(s, function);
    unsigned long before = s->errors;
    return shim_ruled(s, before, f->size(s->inner, state, size));
}

int shim_serialize_state(ShimBase* s, const ShimStateCalls* f, const char* function, void* state, void* bytes,
                         size_t size)
{
    if (!state || (!bytes && size)) return no_state(s, function);
    unsigned long before = s->errors;
    int status = shim_ruled(s, before, f->serialize(s->inner, state, bytes, size));
    if (status < SHIM_DISCARD && size > 0 && ((const char*)bytes)[0] == 0 && invalid_state(s, f, state))
        return SHIM_ERROR;
    return status;
}

/* Bytes that are no state of this FMU (altered, truncated, of another FMU): Error, the reason
   logged, *state NULL. */
int shim_deserialize_state(ShimBase* s, const ShimStateCalls* f, const char* function, const void* bytes,
                           size_t size, void** state)
{
    if (!state || (!bytes && size)) return no_state(s, function);
    unsigned long before = s->errors;
    void* made = NULL;
    int status = shim_ruled(s, before, f->deserialize(s->inner, bytes, size, &made));
    if (status < SHIM_DISCARD && made && !invalid_state(s, f, made)) {
        *state = made;
        return status;
    }
    if (made) f->free(s->inner, &made);
    *state = NULL;
    return status < SHIM_ERROR ? SHIM_ERROR : status;
}
