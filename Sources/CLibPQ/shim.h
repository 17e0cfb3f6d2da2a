#ifndef SERVERTRUST_CLIBPQ_SHIM_H
#define SERVERTRUST_CLIBPQ_SHIM_H
// Includes only.
#include <libpq-fe.h>
#endif
