#ifndef ONBOARD_CSQLITE_SHIM_H
#define ONBOARD_CSQLITE_SHIM_H
// SQLite's API as used by the benchmark's baseline is callable from Swift; the shim only pulls in the header.
#include <sqlite3.h>
#endif
