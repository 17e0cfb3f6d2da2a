#ifndef SERVERTRUST_CSQLITE_SHIM_H
#define SERVERTRUST_CSQLITE_SHIM_H
// Includes only: SQLITE_TRANSIENT (a macro the Clang importer cannot see) is wrapped in CCollectorShims.
#include <sqlite3.h>
#endif
