// CSQLite: the system SQLite (Debian's libsqlite3-dev), plus what Swift cannot import from sqlite3.h.
#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic; this is its (int, int*) form, e.g. SQLITE_DBCONFIG_DEFENSIVE.
static inline int csqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

#endif
