#ifndef ONBOARD_CBASELINE_H
#define ONBOARD_CBASELINE_H
// The C baselines of onboard-bench: what the store's LMDB work costs without Swift, written
// directly against LMDB and libsodium. See docs/benchmarks.md for what each one measures.
#include <stddef.h>
#include <stdint.h>

/// One pre-encoded event, as the Swift side hands it over. All pointers stay valid for the call.
typedef struct cb_event {
    /// The record's seq (the body already contains it).
    uint64_t seq;
    /// format byte ‖ hash ‖ previous hash ‖ body: the exact value the store writes.
    const uint8_t *record;
    size_t record_length;
    /// Event id, 16 bytes.
    const uint8_t *id;
    /// The prefix of the user's `by_user` keys (the pseudonym's first 8 bytes), or NULL when the
    /// event has no user. The index key is prefix ‖ seq.
    const uint8_t *user;
    size_t user_length;
    /// For the user's first record: the user's entry, appended to `user_keys` under the next
    /// user number (pseudonym ‖ key ‖ nonce ‖ sealed id); NULL otherwise.
    const uint8_t *entry;
    size_t entry_length;
    /// Session id, 16 bytes, or NULL.
    const uint8_t *session;
} cb_event;

typedef struct cb_store cb_store;

/// Layouts a baseline environment can have.
typedef enum cb_layout {
    /// The store's sub-databases (events, by_id, by_user, by_session, meta) and writes.
    CB_LAYOUT_STORE = 0,
    /// One database, one put per event: the floor.
    CB_LAYOUT_FLOOR = 1,
} cb_layout;

/// Opens (creating) an environment at the directory `path`. `relaxed` adds MDB_NOSYNC.
/// Returns 0 or an LMDB / errno code.
int cb_open(const char *path, cb_layout layout, int relaxed, size_t map_size_bytes, cb_store **out);
void cb_close(cb_store *store);

/// Store layout: one write transaction doing the store's reads and puts for `count` events,
/// recomputing each record's BLAKE2b-256 hash over previous hash ‖ body as the store's encoder does.
int cb_append_store(cb_store *store, const cb_event *events, size_t count);

/// Floor layout: one write transaction, one MDB_APPEND put per event of the pre-encoded value.
int cb_append_floor(cb_store *store, const cb_event *events, size_t count);

/// Store layout: the head in meta (seq and the last record's hash, 32 bytes into `hash`).
int cb_head(cb_store *store, uint64_t *seq, uint8_t *hash);

/// A read transaction with a cursor over every record in `events`; counts records and bytes.
int cb_scan(cb_store *store, uint64_t *records, uint64_t *bytes);

/// A user's history: range scan of by_user from the user's key prefix, and a read of every byte of each
/// record in events; with `verify`, also the store's per-record check (BLAKE2b-256 of previous
/// hash ‖ body against the stored hash; EIO on a mismatch). Counts records and bytes.
int cb_history(cb_store *store, const uint8_t *user, size_t user_length, int verify, uint64_t *records, uint64_t *bytes);

/// An open-addressing hash table of lockout keys → (locked_until, failures), the C
/// equivalent of LockoutEngine's key states for the decision latency baseline.
typedef struct cb_lockout cb_lockout;

cb_lockout *cb_lockout_create(size_t capacity);
void cb_lockout_destroy(cb_lockout *table);
/// Inserts or replaces a key (bytes are copied). Returns 0, or -1 when the table is full.
int cb_lockout_put(cb_lockout *table, const uint8_t *key, size_t key_length, int64_t locked_until_ms, int32_t failures);
/// The decision: 1 when locked at `now_ms` (now < locked_until), else 0; `failures` gets the
/// key's count (0 for an unknown key).
int cb_lockout_decide(const cb_lockout *table, const uint8_t *key, size_t key_length, int64_t now_ms, int32_t *failures);


/// Heap bytes in use (glibc mallinfo2: allocated arena bytes plus mmapped blocks), for the
/// memory measurements. 0 where mallinfo2 is unavailable.
size_t cb_heap_in_use_bytes(void);

/// CLOCK_MONOTONIC in nanoseconds: one timer for both sides of every latency measurement.
uint64_t cb_now_nanoseconds(void);

#endif
