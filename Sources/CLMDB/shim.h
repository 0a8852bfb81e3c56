#ifndef ONBOARD_CLMDB_SHIM_H
#define ONBOARD_CLMDB_SHIM_H
// LMDB's whole API is callable from Swift; the shim only pulls in the header.
#include <lmdb.h>
#endif
