// The C baselines of onboard-bench (see include/CBaseline.h and docs/benchmarks.md).
// Plain C against LMDB and libsodium: the physical limit the store's write path is compared with.
// clock_gettime and CLOCK_MONOTONIC under a strict -std=c11 as well as gnu11.
#define _POSIX_C_SOURCE 200809L

#include "CBaseline.h"

#include <errno.h>
#include <lmdb.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

enum {
    // Record framing of docs/format.md: format byte ‖ hash (32) ‖ previous hash (32) ‖ body.
    CB_HASH_BYTES = 32,
    CB_HASH_OFFSET = 1,
    CB_PREVIOUS_OFFSET = 1 + CB_HASH_BYTES,
    CB_HEADER_BYTES = 1 + 2 * CB_HASH_BYTES,
    CB_FORMAT_VERSION = 1,
    // Limits.maximumUserBytes in OnboardingModel: user ‖ 0x00 ‖ seq must fit an index key.
    CB_MAX_USER_BYTES = 256,
    CB_SEQ_BYTES = 8,
    CB_UUID_BYTES = 16,
    CB_HEAD_BYTES = CB_SEQ_BYTES + CB_HASH_BYTES,
};

struct cb_store {
    MDB_env *env;
    cb_layout layout;
    MDB_dbi events;
    MDB_dbi by_id;
    MDB_dbi by_user;
    MDB_dbi by_session;
    MDB_dbi meta;
    MDB_dbi user_keys;
    // The last user number written (a baseline environment is always new).
    uint64_t next_user;
    // Scratch for one record value; grows to the largest record seen.
    uint8_t *scratch;
    size_t scratch_capacity;
};

static const char head_key[] = "head";
// Written by cb_scan so the compiler cannot drop the reads of record bytes.
static volatile uint8_t cb_sink;

static void put_seq(uint8_t *out, uint64_t seq) {
    for (int index = 7; index >= 0; index--) {
        out[index] = (uint8_t)(seq & 0xff);
        seq >>= 8;
    }
}

static uint64_t get_seq(const uint8_t *bytes) {
    uint64_t seq = 0;
    for (int index = 0; index < 8; index++) {
        seq = (seq << 8) | bytes[index];
    }
    return seq;
}

static int open_database(MDB_txn *txn, const char *name, MDB_dbi *out) {
    return mdb_dbi_open(txn, name, MDB_CREATE, out);
}

int cb_open(const char *path, cb_layout layout, int relaxed, size_t map_size_bytes, cb_store **out) {
    *out = NULL;
    if (sodium_init() < 0) {
        return EIO;
    }
    cb_store *store = calloc(1, sizeof(*store));
    if (store == NULL) {
        return ENOMEM;
    }
    store->layout = layout;
    int rc = mdb_env_create(&store->env);
    if (rc != 0) {
        free(store);
        return rc;
    }
    // The store's environment: MDB_NOTLS always, MDB_NOSYNC in relaxed durability, 16 databases.
    unsigned int flags = MDB_NOTLS | (relaxed ? MDB_NOSYNC : 0);
    if ((rc = mdb_env_set_maxdbs(store->env, 16)) != 0 ||
        (rc = mdb_env_set_mapsize(store->env, map_size_bytes)) != 0 ||
        (rc = mdb_env_open(store->env, path, flags, 0600)) != 0) {
        mdb_env_close(store->env);
        free(store);
        return rc;
    }
    MDB_txn *txn = NULL;
    if ((rc = mdb_txn_begin(store->env, NULL, 0, &txn)) != 0) {
        cb_close(store);
        return rc;
    }
    if (layout == CB_LAYOUT_FLOOR) {
        rc = open_database(txn, "events", &store->events);
    } else {
        if ((rc = open_database(txn, "events", &store->events)) == 0 &&
            (rc = open_database(txn, "by_id", &store->by_id)) == 0 &&
            (rc = open_database(txn, "by_user", &store->by_user)) == 0 &&
            (rc = open_database(txn, "by_session", &store->by_session)) == 0 &&
            (rc = open_database(txn, "meta", &store->meta)) == 0 &&
            (rc = open_database(txn, "user_keys", &store->user_keys)) == 0) {
            MDB_val key = {sizeof(head_key) - 1, (void *)head_key};
            MDB_val value;
            rc = mdb_get(txn, store->meta, &key, &value);
            if (rc == MDB_NOTFOUND) {
                uint8_t head[CB_HEAD_BYTES] = {0};
                value.mv_size = sizeof(head);
                value.mv_data = head;
                rc = mdb_put(txn, store->meta, &key, &value, 0);
            }
        }
    }
    if (rc != 0) {
        mdb_txn_abort(txn);
        cb_close(store);
        return rc;
    }
    // mdb_txn_commit frees the transaction even when it fails.
    if ((rc = mdb_txn_commit(txn)) != 0) {
        cb_close(store);
        return rc;
    }
    *out = store;
    return 0;
}

void cb_close(cb_store *store) {
    if (store == NULL) {
        return;
    }
    mdb_env_close(store->env);
    free(store->scratch);
    free(store);
}

static int reserve_scratch(cb_store *store, size_t bytes) {
    if (bytes <= store->scratch_capacity) {
        return 0;
    }
    size_t capacity = store->scratch_capacity ? store->scratch_capacity : 512;
    while (capacity < bytes) {
        capacity *= 2;
    }
    uint8_t *grown = realloc(store->scratch, capacity);
    if (grown == NULL) {
        return ENOMEM;
    }
    store->scratch = grown;
    store->scratch_capacity = capacity;
    return 0;
}

int cb_append_store(cb_store *store, const cb_event *events, size_t count) {
    if (store->layout != CB_LAYOUT_STORE) {
        return EINVAL;
    }
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(store->env, NULL, 0, &txn);
    if (rc != 0) {
        return rc;
    }
    // As the store's stage(): read the head, check each id in by_id, then put.
    MDB_val head_name = {sizeof(head_key) - 1, (void *)head_key};
    MDB_val value;
    if ((rc = mdb_get(txn, store->meta, &head_name, &value)) != 0) {
        goto abort;
    }
    if (value.mv_size != CB_HEAD_BYTES) {
        rc = EINVAL;
        goto abort;
    }
    uint64_t head = get_seq(value.mv_data);
    uint8_t previous[CB_HASH_BYTES];
    memcpy(previous, (const uint8_t *)value.mv_data + CB_SEQ_BYTES, CB_HASH_BYTES);
    uint8_t seq_key[CB_SEQ_BYTES];
    uint8_t index_key[CB_MAX_USER_BYTES + 1 + CB_SEQ_BYTES];
    uint64_t seq = head;

    for (size_t index = 0; index < count; index++) {
        const cb_event *event = &events[index];
        seq = head + 1 + index;
        if (event->seq != seq || event->record_length <= CB_HEADER_BYTES || event->user_length > CB_MAX_USER_BYTES) {
            rc = EINVAL;
            goto abort;
        }
        MDB_val id = {CB_UUID_BYTES, (void *)event->id};
        rc = mdb_get(txn, store->by_id, &id, &value);
        if (rc == 0) {
            rc = EEXIST;
            goto abort;
        }
        if (rc != MDB_NOTFOUND) {
            goto abort;
        }
        // Encode: format ‖ BLAKE2b-256(previous ‖ body) ‖ previous ‖ body.
        if ((rc = reserve_scratch(store, event->record_length)) != 0) {
            goto abort;
        }
        uint8_t *record = store->scratch;
        size_t body_length = event->record_length - CB_HEADER_BYTES;
        record[0] = CB_FORMAT_VERSION;
        memcpy(record + CB_PREVIOUS_OFFSET, previous, CB_HASH_BYTES);
        memcpy(record + CB_HEADER_BYTES, event->record + CB_HEADER_BYTES, body_length);
        if (crypto_generichash(record + CB_HASH_OFFSET, CB_HASH_BYTES, record + CB_PREVIOUS_OFFSET,
                               CB_HASH_BYTES + body_length, NULL, 0) != 0) {
            rc = EIO;
            goto abort;
        }
        memcpy(previous, record + CB_HASH_OFFSET, CB_HASH_BYTES);

        put_seq(seq_key, seq);
        MDB_val key = {CB_SEQ_BYTES, seq_key};
        MDB_val data = {event->record_length, record};
        if ((rc = mdb_put(txn, store->events, &key, &data, MDB_APPEND)) != 0) {
            goto abort;
        }
        data.mv_size = CB_SEQ_BYTES;
        data.mv_data = seq_key;
        if ((rc = mdb_put(txn, store->by_id, &id, &data, MDB_NOOVERWRITE)) != 0) {
            goto abort;
        }
        MDB_val empty = {0, NULL};
        if (event->user != NULL) {
            memcpy(index_key, event->user, event->user_length);
            memcpy(index_key + event->user_length, seq_key, CB_SEQ_BYTES);
            key.mv_size = event->user_length + CB_SEQ_BYTES;
            key.mv_data = index_key;
            if ((rc = mdb_put(txn, store->by_user, &key, &empty, 0)) != 0) {
                goto abort;
            }
            if (event->entry != NULL) {
                // The user's first record: its entry goes to the end of user_keys, numbered.
                uint8_t number[CB_SEQ_BYTES];
                put_seq(number, ++store->next_user);
                MDB_val entry_key = {CB_SEQ_BYTES, number};
                MDB_val entry = {event->entry_length, (void *)event->entry};
                if ((rc = mdb_put(txn, store->user_keys, &entry_key, &entry, MDB_APPEND)) != 0) {
                    goto abort;
                }
            }
        }
        if (event->session != NULL) {
            memcpy(index_key, event->session, CB_UUID_BYTES);
            memcpy(index_key + CB_UUID_BYTES, seq_key, CB_SEQ_BYTES);
            key.mv_size = CB_UUID_BYTES + CB_SEQ_BYTES;
            key.mv_data = index_key;
            if ((rc = mdb_put(txn, store->by_session, &key, &empty, 0)) != 0) {
                goto abort;
            }
        }
    }
    if (count > 0) {
        uint8_t new_head[CB_HEAD_BYTES];
        put_seq(new_head, seq);
        memcpy(new_head + CB_SEQ_BYTES, previous, CB_HASH_BYTES);
        MDB_val data = {sizeof(new_head), new_head};
        if ((rc = mdb_put(txn, store->meta, &head_name, &data, 0)) != 0) {
            goto abort;
        }
    }
    return mdb_txn_commit(txn);
abort:
    mdb_txn_abort(txn);
    return rc;
}

int cb_append_floor(cb_store *store, const cb_event *events, size_t count) {
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(store->env, NULL, 0, &txn);
    if (rc != 0) {
        return rc;
    }
    uint8_t seq_key[CB_SEQ_BYTES];
    for (size_t index = 0; index < count; index++) {
        put_seq(seq_key, events[index].seq);
        MDB_val key = {CB_SEQ_BYTES, seq_key};
        MDB_val data = {events[index].record_length, (void *)events[index].record};
        if ((rc = mdb_put(txn, store->events, &key, &data, MDB_APPEND)) != 0) {
            mdb_txn_abort(txn);
            return rc;
        }
    }
    return mdb_txn_commit(txn);
}

int cb_head(cb_store *store, uint64_t *seq, uint8_t *hash) {
    if (store->layout != CB_LAYOUT_STORE) {
        return EINVAL;
    }
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return rc;
    }
    MDB_val key = {sizeof(head_key) - 1, (void *)head_key};
    MDB_val value;
    rc = mdb_get(txn, store->meta, &key, &value);
    if (rc == 0 && value.mv_size != CB_HEAD_BYTES) {
        rc = EINVAL;
    }
    if (rc == 0) {
        *seq = get_seq(value.mv_data);
        memcpy(hash, (const uint8_t *)value.mv_data + CB_SEQ_BYTES, CB_HASH_BYTES);
    }
    mdb_txn_abort(txn);
    return rc;
}

int cb_scan(cb_store *store, uint64_t *records, uint64_t *bytes) {
    *records = 0;
    *bytes = 0;
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return rc;
    }
    MDB_cursor *cursor = NULL;
    if ((rc = mdb_cursor_open(txn, store->events, &cursor)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    MDB_val key, value;
    uint64_t count = 0, total = 0;
    // Touch each record's first and last byte so the pages are really read, not only counted.
    uint8_t touched = 0;
    for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
        const uint8_t *data = value.mv_data;
        touched ^= data[0] ^ data[value.mv_size - 1];
        count++;
        total += value.mv_size;
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    if (rc != MDB_NOTFOUND) {
        return rc;
    }
    *records = count;
    *bytes = total;
    cb_sink = touched;
    return 0;
}

int cb_history(cb_store *store, const uint8_t *user, size_t user_length, int verify, uint64_t *records, uint64_t *bytes) {
    *records = 0;
    *bytes = 0;
    if (store->layout != CB_LAYOUT_STORE || user_length > CB_MAX_USER_BYTES) {
        return EINVAL;
    }
    uint8_t prefix[CB_MAX_USER_BYTES];
    memcpy(prefix, user, user_length);
    size_t prefix_length = user_length;
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return rc;
    }
    MDB_cursor *cursor = NULL;
    if ((rc = mdb_cursor_open(txn, store->by_user, &cursor)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    MDB_val key = {prefix_length, prefix}, value;
    uint64_t count = 0, total = 0;
    // Every byte of each record is read, as the store's decoder reads them all.
    uint8_t touched = 0;
    for (rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
        if (key.mv_size != prefix_length + CB_SEQ_BYTES || memcmp(key.mv_data, prefix, prefix_length) != 0) {
            break;
        }
        MDB_val seq_key = {CB_SEQ_BYTES, (uint8_t *)key.mv_data + prefix_length};
        MDB_val record;
        if ((rc = mdb_get(txn, store->events, &seq_key, &record)) != 0) {
            break;
        }
        const uint8_t *data = record.mv_data;
        if (record.mv_size <= CB_HEADER_BYTES) {
            rc = EIO;
            break;
        }
        if (verify) {
            // The store's integrity check: the stored hash is BLAKE2b-256(previous ‖ body).
            uint8_t hash[CB_HASH_BYTES];
            if (crypto_generichash(hash, CB_HASH_BYTES, data + CB_PREVIOUS_OFFSET, record.mv_size - CB_PREVIOUS_OFFSET,
                                   NULL, 0) != 0 || memcmp(hash, data + CB_HASH_OFFSET, CB_HASH_BYTES) != 0) {
                rc = EIO;
                break;
            }
        }
        for (size_t index = 0; index < record.mv_size; index++) {
            touched ^= data[index];
        }
        count++;
        total += record.mv_size;
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return rc;
    }
    *records = count;
    *bytes = total;
    cb_sink = touched;
    return 0;
}

// MARK: Lockout decision

typedef struct cb_lockout_slot {
    uint64_t hash;
    uint8_t *key; // NULL when the slot is empty
    size_t key_length;
    int64_t locked_until_ms;
    int32_t failures;
} cb_lockout_slot;

struct cb_lockout {
    cb_lockout_slot *slots;
    size_t mask;
    size_t count;
};

static uint64_t hash_key(const uint8_t *key, size_t length) {
    // FNV-1a, 64-bit: short keys, no allocation.
    uint64_t hash = 1469598103934665603ULL;
    for (size_t index = 0; index < length; index++) {
        hash ^= key[index];
        hash *= 1099511628211ULL;
    }
    return hash;
}

cb_lockout *cb_lockout_create(size_t capacity) {
    cb_lockout *table = calloc(1, sizeof(*table));
    if (table == NULL) {
        return NULL;
    }
    // At most half full, so probes stay short.
    size_t slots = 16;
    while (slots < capacity * 2) {
        slots *= 2;
    }
    table->slots = calloc(slots, sizeof(cb_lockout_slot));
    if (table->slots == NULL) {
        free(table);
        return NULL;
    }
    table->mask = slots - 1;
    return table;
}

void cb_lockout_destroy(cb_lockout *table) {
    if (table == NULL) {
        return;
    }
    for (size_t index = 0; index <= table->mask; index++) {
        free(table->slots[index].key);
    }
    free(table->slots);
    free(table);
}

static cb_lockout_slot *find_slot(const cb_lockout *table, const uint8_t *key, size_t length, uint64_t hash) {
    for (size_t index = hash & table->mask;; index = (index + 1) & table->mask) {
        cb_lockout_slot *slot = &table->slots[index];
        if (slot->key == NULL ||
            (slot->hash == hash && slot->key_length == length && memcmp(slot->key, key, length) == 0)) {
            return slot;
        }
    }
}

int cb_lockout_put(cb_lockout *table, const uint8_t *key, size_t key_length, int64_t locked_until_ms, int32_t failures) {
    uint64_t hash = hash_key(key, key_length);
    cb_lockout_slot *slot = find_slot(table, key, key_length, hash);
    if (slot->key == NULL) {
        if ((table->count + 1) * 2 > table->mask + 1) {
            return -1;
        }
        slot->key = malloc(key_length ? key_length : 1);
        if (slot->key == NULL) {
            return -1;
        }
        memcpy(slot->key, key, key_length);
        slot->key_length = key_length;
        slot->hash = hash;
        table->count++;
    }
    slot->locked_until_ms = locked_until_ms;
    slot->failures = failures;
    return 0;
}

int cb_lockout_decide(const cb_lockout *table, const uint8_t *key, size_t key_length, int64_t now_ms, int32_t *failures) {
    const cb_lockout_slot *slot = find_slot(table, key, key_length, hash_key(key, key_length));
    if (slot->key == NULL) {
        *failures = 0;
        return 0;
    }
    *failures = slot->failures;
    // As LockoutEngine.decide: locked while `now` is before the lock's end.
    return now_ms < slot->locked_until_ms ? 1 : 0;
}

size_t cb_heap_in_use_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

uint64_t cb_now_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}
