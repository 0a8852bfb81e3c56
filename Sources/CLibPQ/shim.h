#ifndef ONBOARD_CLIBPQ_SHIM_H
#define ONBOARD_CLIBPQ_SHIM_H
// libpq's client API is callable from Swift as it is; the shim only pulls in the header
// (Debian's libpq-dev puts it in /usr/include/postgresql, which pkg-config names).
#include <libpq-fe.h>
#endif
