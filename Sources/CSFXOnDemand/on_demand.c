/* CSFXOnDemand is its header alone (include/sfx_on_demand.h); SwiftPM builds a C target from at
 * least one source file, and this one compiles the header by itself. */
#include "sfx_on_demand.h"
