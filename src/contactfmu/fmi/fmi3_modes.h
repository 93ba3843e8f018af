/*
 * The FMI 3.0 co-simulation state machine as the status shim (fmi3_status_shim.c) enforces it:
 * the state an instance is in, the states in which each function may be called, and the refusal
 * of a call outside them (fmi3Error and a message naming the call and the state, as the standard
 * requires: "When detecting ... a function call not allowed in the current state according to
 * the respective state machine, the FMU must return fmi3Error").
 *
 * States: Instantiated, Initialization Mode, Event Mode, Step Mode, Terminated, and Intermediate
 * Update Mode (while the FMU's intermediateUpdate callback runs inside fmi3DoStep). The shim
 * calls that callback with intermediateVariableSetRequested = false and
 * intermediateVariableGetAllowed = true: inside it the getters are allowed, the setters are not,
 * nor any call that steps, changes the state or frees the FMU state (fmi3DoStep, fmi3Terminate,
 * fmi3Reset, the FMU state functions, the mode changes). fmi3FreeInstance cannot return a status:
 * called inside the callback it is deferred to the end of fmi3DoStep.
 *
 * Configuration Mode and Reconfiguration Mode are not supported (their functions are refused in
 * every state). Included by fmi3_status_shim.c only.
 */
#ifndef CONTACTFMU_FMI3_MODES_H
#define CONTACTFMU_FMI3_MODES_H

#include "shim_common.h"

typedef enum { MODE_INSTANTIATED, MODE_INITIALIZATION, MODE_EVENT, MODE_STEP, MODE_TERMINATED } Mode;

#define IN(mode) (1u << (mode))
#define IN_UPDATE (1u << 5) /* Intermediate Update Mode */
#define RUNNING (IN(MODE_INITIALIZATION) | IN(MODE_EVENT) | IN(MODE_STEP))
#define EVERY_MODE (IN(MODE_INSTANTIATED) | RUNNING | IN(MODE_TERMINATED))

/* Where each function may be called: FMI 3.0.2, section 2.3.3 "State Machine and Semantics"
   (docs/2_3_common_states.adoc: the super states FMU State Settable and Initialized, the states
   Instantiated, Initialization Mode, Event Mode, Terminated, each with its "Allowed Function
   Calls") and section 4.2.1 "State Machine for Co-Simulation" (docs/4_2_co-simulation_api.adoc:
   Step Mode, Intermediate Update Mode). */
/* FMU State Settable (every state from instantiation to fmi3FreeInstance): fmi3SetDebugLogging,
   fmi3Reset and the six FMU state functions */
#define MAY_SET_DEBUG_LOGGING (EVERY_MODE | IN_UPDATE)
#define MAY_RESET EVERY_MODE
#define MAY_USE_FMU_STATE EVERY_MODE
#define MAY_ENTER_INITIALIZATION IN(MODE_INSTANTIATED)  /* Instantiated */
#define MAY_EXIT_INITIALIZATION IN(MODE_INITIALIZATION) /* Initialization Mode */
#define MAY_ENTER_EVENT_MODE IN(MODE_STEP)              /* Step Mode, with eventModeUsed only */
#define MAY_UPDATE_DISCRETE_STATES IN(MODE_EVENT)       /* Event Mode */
#define MAY_ENTER_STEP_MODE IN(MODE_EVENT)              /* Event Mode */
#define MAY_DO_STEP IN(MODE_STEP)                       /* Step Mode */
/* Initialized (entered by fmi3ExitInitializationMode): Event Mode and Step Mode here */
#define MAY_TERMINATE (IN(MODE_EVENT) | IN(MODE_STEP))
/* fmi3Get{VariableType}: Instantiated (its table: "Get variable start values as defined in
   modelDescription.xml"), Initialization Mode, Event Mode, Step Mode, Terminated, and Intermediate
   Update Mode when the callback says intermediateVariableGetAllowed (the shim always does) */
#define MAY_GET (EVERY_MODE | IN_UPDATE)
/* fmi3Set{VariableType}: Instantiated, Initialization Mode, Event Mode, Step Mode (which variables:
   the slave decides by causality and variability); not Terminated; in Intermediate Update Mode
   only with intermediateVariableSetRequested, which the shim never sets */
#define MAY_SET (IN(MODE_INSTANTIATED) | RUNNING)
/* Not modelled: "If any function called in super state FMU State Settable returns fmi3Error, the
   FMU enters state Terminated" (2.3.3): a refused call leaves the state as it was, the instance
   usable (the project's rule in both standards); an importer that follows the standard calls
   only what Terminated allows after it anyway. */

static const char* const MODE_NAMES[] = {"Instantiated", "Initialization Mode", "Event Mode", "Step Mode",
                                         "Terminated"};

/* What the importer may do instead, by state. */
static const char* const MODE_HINTS[] = {
    "fmi3EnterInitializationMode first",
    "fmi3ExitInitializationMode first",
    "fmi3EnterStepMode first",
    "it is allowed in another state",
    "fmi3Reset first (after fmi3Terminate only the getters, fmi3SetDebugLogging, the FMU state functions, "
    "fmi3Reset and fmi3FreeInstance are allowed)",
};

/* 1 if `function` may be called in state `mode` (inside the intermediate-update callback if
   `in_update`), else 0 with the refusal logged. */
static inline int mode_allows(ShimBase* s, Mode mode, int in_update, unsigned allowed, const char* function)
{
    if (allowed & (in_update ? IN_UPDATE : IN(mode))) return 1;
    if (in_update)
        shim_say(s, SHIM_ERROR,
                 "contactfmu: %s is not allowed in Intermediate Update Mode (inside the intermediateUpdate "
                 "callback, which allows the getters only): refused",
                 function);
    else
        shim_say(s, SHIM_ERROR, "contactfmu: %s is not allowed in %s: refused (%s)", function, MODE_NAMES[mode],
                 MODE_HINTS[mode]);
    return 0;
}

#endif
