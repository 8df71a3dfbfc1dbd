// CLibPQ: the system libpq (Debian's libpq-dev), the PostgreSQL client library, for CodexStoragePostgres.
#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H

#include <libpq-fe.h>

#endif
